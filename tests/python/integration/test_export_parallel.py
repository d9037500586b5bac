"""The timeline export (chrome, perfetto) on worker processes (--jobs): each writes the segments of a run
of rank processes, this process assembles the file; the same bytes as the export in one process."""

from __future__ import annotations

import gzip
import json
import zlib
from collections import defaultdict
from pathlib import Path

import export_job
import pytest
import synthetic_trace as st
import worker_crash
from conftest import counted_worker_pools
from smppy import cli
from smppy.analysis import _local_workers
from smppy.export import _parallel_timeline, export_timeline

pytestmark = [pytest.mark.slow, pytest.mark.torch]

FORMATS = {"chrome": "trace.json", "perfetto": "trace.perfetto-trace"}


@pytest.fixture(scope="module")
def synthetic_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three ranks on two hosts with kernels, launches, annotations and counters (export_job.py)."""
    return export_job.write_job(tmp_path_factory.mktemp("timeline") / "job")


def exported(traces: Path, out: Path, *args: str) -> bytes:
    assert cli.main(["export", str(traces), "-o", str(out), *args]) == 0
    return out.read_bytes()


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("job", ["synthetic_job", "example_job"])
def test_workers_write_the_bytes_of_one_process(
    job: str, format: str, compressed: bool, request, tmp_path: Path, monkeypatch
) -> None:
    traces = request.getfixturevalue(job)
    name = FORMATS[format] + (".gz" if compressed else "")
    one = exported(traces, tmp_path / "one" / name, "--format", format, "--jobs", "1")
    for jobs in ("2", "3"):
        assert exported(traces, tmp_path / jobs / name, "--format", format, "--jobs", jobs) == one, jobs
    # A worker started from a forkserver (what a threaded process gets) writes the same.
    monkeypatch.setattr(_local_workers, "_single_threaded", lambda: False)
    assert exported(traces, tmp_path / "forkserver" / name, "--format", format, "--jobs", "2") == one
    assert not [p.name for p in tmp_path.rglob(".smprof-export-*")], "parts left behind"


@pytest.mark.parametrize("format", FORMATS)
def test_gzip_output_is_one_member(synthetic_job: Path, tmp_path: Path, format: str) -> None:
    """Perfetto's trace processor reads a .gz trace up to the end of its first gzip member: the parts'
    segments must form one member, not a concatenation of members."""
    data = exported(synthetic_job, tmp_path / f"{format}.gz", "--format", format, "--jobs", "3")
    reader = zlib.decompressobj(wbits=31)  # a gzip member, as Perfetto reads one
    text = reader.decompress(data)
    assert reader.eof and reader.unused_data == b""
    assert text == gzip.decompress(data) == exported(synthetic_job, tmp_path / format, "--format", format)


def counter_job(directory: Path) -> Path:
    """host-a: rank 0 records cpu0, rank 1 records cpu0 and cpu1 (other values); host-b: rank 2, cpu0."""
    recorded = {
        0: ("host-a", {"cpu0.utilization": [(1, 10.0), (2, 20.0)]}),
        1: ("host-a", {"cpu0.utilization": [(1, 30.0)], "cpu1.utilization": [(2, 50.0)]}),
        2: ("host-b", {"cpu0.utilization": [(3, 70.0)]}),
    }
    start = export_job.JOB_START_NS
    for rank, (host, counters) in recorded.items():
        header = st.header(host=host, rank=rank, world_size=3, monotonic_ns=0, realtime_ns=start)
        header.pid = 100 + rank
        frame = st.pb().Frame(sequence=0)
        st.thread_index(frame, 1, "python")
        st.add_annotations(frame, [(0, export_job.MS, "step_0", 1, 0)])
        for name, samples in counters.items():
            st.add_counter(frame, name, "percent", [(ms * export_job.MS, v) for ms, v in samples], 0.01)
        st.write_trace(directory / f"rank{rank}.smprof", header, [frame], st.pb().Footer(frames_written=1))
    return directory


def test_machine_counters_once_per_host_from_the_first_rank_process_that_recorded_them(
    tmp_path: Path,
) -> None:
    """Rank 0 and rank 1 of host-a are written by different workers; each machine counter of a host is
    still shown once, on the host, from the first rank process (in export order) that recorded it."""
    traces = counter_job(tmp_path / "job")
    data = exported(traces, tmp_path / "trace.json", "--format", "chrome", "--jobs", "3")
    events = json.loads(data)["traceEvents"]
    pids = {e["args"]["name"]: e["pid"] for e in events if e.get("name") == "process_name"}
    series = defaultdict(list)
    for e in (e for e in events if e["ph"] == "C"):
        series[(e["pid"], e["name"])].append((round(e["ts"] / 1000), e["args"]["value"]))
    assert dict(series) == {
        (pids["host-a"], "cpu0.utilization"): [(1, 10.0), (2, 20.0)],
        (pids["host-a"], "cpu1.utilization"): [(2, 50.0)],
        (pids["host-b"], "cpu0.utilization"): [(3, 70.0)],
    }
    assert data == exported(traces, tmp_path / "one.json", "--format", "chrome", "--jobs", "1")


def test_export_defaults_to_the_usable_cores_from_4_mib(
    synthetic_job: Path, tmp_path: Path, monkeypatch
) -> None:
    pools = counted_worker_pools(monkeypatch, _parallel_timeline)
    monkeypatch.setattr(_local_workers, "usable_cores", lambda: 2)
    small = export_timeline(synthetic_job, tmp_path / "small.json")  # a small job: in this process
    assert pools == []
    monkeypatch.setattr(_local_workers, "IN_PROCESS_BELOW_BYTES", 0)
    cores = export_timeline(synthetic_job, tmp_path / "cores.json")
    export_timeline(synthetic_job, tmp_path / "ranks.json", ranks=[1])  # one rank process: in this process
    assert pools == [2]
    assert (tmp_path / "cores.json").read_bytes() == (tmp_path / "small.json").read_bytes()
    for key in ("files", "processes", "slices", "counter_samples", "flows", "file_bytes", "warnings"):
        assert cores[key] == small[key], key
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        export_timeline(synthetic_job, tmp_path / "zero.json", jobs=0)


def test_a_worker_that_dies_stops_the_export_with_a_clear_error(
    synthetic_job: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(_parallel_timeline, "timeline_part", worker_crash.kill_this_process)
    with pytest.raises(RuntimeError, match="worker process ended abruptly during the export.*--jobs 1"):
        export_timeline(synthetic_job, tmp_path / "killed.json", jobs=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "a partial file or parts left behind"


def test_damaged_files_give_the_file_and_warnings_of_one_process(tmp_path: Path) -> None:
    traces = export_job.write_job(tmp_path / "job")
    damaged = traces / "host-a" / "rank1.smprof"
    damaged.write_bytes(damaged.read_bytes()[:-40])
    (traces / "junk.smprof").write_bytes(b"not a trace")
    one = export_timeline(traces, tmp_path / "one.json", jobs=1)
    two = export_timeline(traces, tmp_path / "two.json", jobs=2)
    assert [w.split(": ")[1] for w in one["warnings"]] == ["skipped", "truncated"]
    assert two["warnings"] == one["warnings"]
    assert (tmp_path / "two.json").read_bytes() == (tmp_path / "one.json").read_bytes()
