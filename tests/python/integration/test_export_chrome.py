"""`smprof export --format chrome`: the Trace Event Format file, checked structurally against a
synthetic job with known contents (export_job.py) and a real PyTorch training run."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import export_job as job
import pytest
from conftest import run_python
from smppy import _smppy, analysis, cli
from smppy.export import export_timeline, parse_int_ranges

pytestmark = [pytest.mark.torch, pytest.mark.dask]


def load(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        document = json.load(f)
    return document["traceEvents"]


def export(tmp_path: Path, *args: str, name: str = "trace.json.gz") -> list[dict]:
    out = tmp_path / name
    assert cli.main(["export", str(tmp_path / "job"), "--format", "chrome", "-o", str(out), *args]) == 0
    return load(out)


@pytest.fixture
def job_dir(tmp_path: Path) -> Path:
    return job.write_job(tmp_path / "job")


def process_ids(events: list[dict]) -> dict[str, int]:
    return {e["args"]["name"]: e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}


def thread_names(events: list[dict]) -> dict[tuple[int, int], str]:
    return {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in events
        if e["ph"] == "M" and e["name"] == "thread_name"
    }


def ms(ts_us: float) -> float:
    return round(ts_us / 1000, 6)


def test_processes_threads_and_sort_order(job_dir: Path, tmp_path: Path) -> None:
    events = export(tmp_path)
    pids = process_ids(events)
    assert set(pids) == {
        "host-a",
        "host-a / rank 0 (pid 100)",
        "host-a / rank 1 (pid 101)",
        "host-b",
        "host-b / rank 2 (pid 200)",
    }
    sort = {e["pid"]: e["args"]["sort_index"] for e in events if e["name"] == "process_sort_index"}
    ordered = sorted(pids, key=lambda name: sort[pids[name]])
    assert ordered == sorted(pids)  # each host, then its ranks
    names = thread_names(events)
    rank0 = pids["host-a / rank 0 (pid 100)"]
    assert names[(rank0, 1001)] == "python"
    tracks = {name: tid for (pid, tid), name in names.items() if pid == rank0}
    assert set(tracks) == {"python", "CUDA API python (1001)", "GPU 0 stream 7"}
    thread_sort = {
        (e["pid"], e["tid"]): e["args"]["sort_index"] for e in events if e["name"] == "thread_sort_index"
    }
    assert (
        thread_sort[(rank0, tracks["python"])]
        < thread_sort[(rank0, tracks["CUDA API python (1001)"])]
        < thread_sort[(rank0, tracks["GPU 0 stream 7"])]
    )


def test_annotations_are_complete_events_nested_on_one_wall_clock(job_dir: Path, tmp_path: Path) -> None:
    events = export(tmp_path)
    assert not [e for e in events if e["ph"] in ("B", "E")]
    pids = process_ids(events)
    slices = [e for e in events if e["ph"] == "X" and e["cat"] == "user_annotation"]
    assert Counter(e["name"] for e in slices) == {
        **{f"step_{k}": 3 for k in range(job.STEPS)},
        "Forward": 3 * job.STEPS,
        "inner": 3 * job.STEPS,
    }
    # Every rank's step k starts at 10k ms on the job's clock, whatever its monotonic clock said.
    for e in slices:
        if e["name"].startswith("step_"):
            assert ms(e["ts"]) == job.STEP_MS * int(e["name"][5:])
            assert ms(e["dur"]) == 8
    # Depth survives as containment on the thread's track: inner in Forward in the step.
    for pid in (pids[f"host-a / rank {r} (pid {p})"] for r, p in ((0, 100), (1, 101))):
        mine = [e for e in slices if e["pid"] == pid]
        for inner in (e for e in mine if e["name"] == "inner"):
            forward = [e for e in mine if e["name"] == "Forward" and e["ts"] <= inner["ts"]]
            parent = max(forward, key=lambda e: e["ts"])
            assert parent["ts"] + parent["dur"] >= inner["ts"] + inner["dur"]
            assert parent["tid"] == inner["tid"]


def test_kernels_carry_their_arguments_and_flows_join_launches(job_dir: Path, tmp_path: Path) -> None:
    events = export(tmp_path)
    kernels = [e for e in events if e["ph"] == "X" and e["cat"] == "kernel"]
    launches = [e for e in events if e["ph"] == "X" and e["cat"] == "cuda_runtime"]
    assert len(kernels) == len(launches) == job.STEPS
    assert kernels[0]["name"] == job.KERNEL
    assert kernels[0]["args"] == {
        "correlation": 10,
        "device": 0,
        "stream": 7,
        "grid": "128x2x1",
        "block": "256x1x1",
        "registers_per_thread": 96,
        "shared_memory_bytes": 49152,
        "precision": "bf16",
        "class": "compute",
    }
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    finishes = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == job.STEPS and starts.keys() == finishes.keys()

    def enclosing(flow: dict, candidates: list[dict]) -> dict:
        (match,) = [
            e
            for e in candidates
            if (e["pid"], e["tid"]) == (flow["pid"], flow["tid"])
            and e["ts"] <= flow["ts"] <= e["ts"] + e["dur"]
        ]
        return match

    for flow_id, start in starts.items():
        finish = finishes[flow_id]
        assert finish["bp"] == "e"
        launch, kernel = enclosing(start, launches), enclosing(finish, kernels)
        assert launch["args"]["correlation"] == kernel["args"]["correlation"] == flow_id & 0xFFFFFFFF
        assert ms(kernel["ts"]) - ms(launch["ts"]) == 0.5


def test_counters_once_per_host_with_perf_deltas_and_gpu_utilization(job_dir: Path, tmp_path: Path) -> None:
    events = export(tmp_path)
    pids = process_ids(events)
    series = defaultdict(list)
    for e in (e for e in events if e["ph"] == "C"):
        series[(e["pid"], e["name"])].append((ms(e["ts"]), e["args"]["value"]))
    rank0 = pids["host-a / rank 0 (pid 100)"]
    assert series[(pids["host-a"], "cpu0.utilization")] == [(ms, v) for ms, v in job.CPU0_UTILIZATION]
    assert [k for k in series if k[1] == "cpu0.utilization"] == [(pids["host-a"], "cpu0.utilization")]
    assert series[(rank0, "perf.cycles")] == [(6, 2000), (11, 3000)]
    assert series[(pids["host-b / rank 2 (pid 200)"], "process.rss_bytes")] == [(2, 3_000_000)]
    # Kernels run 2-3 ms into each step: 1 ms buckets fully busy there, idle between.
    expected = [(0, 0.0)]
    for k in range(job.STEPS):
        expected += [(job.STEP_MS * k + 2, 100.0), (job.STEP_MS * k + 3, 0.0)]
    assert series[(rank0, "gpu0.utilization")] == expected


def test_ranks_and_time_window_cut_the_trace(job_dir: Path, tmp_path: Path) -> None:
    events = export(tmp_path, "--ranks", "0,2", "--start", "0.0095", "--end", "0.0125")
    assert set(process_ids(events)) == {
        "host-a",
        "host-a / rank 0 (pid 100)",
        "host-b",
        "host-b / rank 2 (pid 200)",
    }
    slices = [e for e in events if e["ph"] == "X"]
    assert slices
    for e in slices:  # everything overlaps [9.5 ms, 12.5 ms]
        assert ms(e["ts"]) <= 12.5 and ms(e["ts"] + e["dur"]) >= 9.5
    assert {e["name"] for e in slices if e["cat"] == "user_annotation"} == {"step_1", "Forward", "inner"}
    # The launch at 11.5 ms and its kernel at 12 ms are both inside: one arrow.
    assert [e["ph"] for e in events if e["ph"] in "sf"] == ["s", "f"]
    absolute = export(
        tmp_path,
        "--start",
        str(job.JOB_START_NS + 9_500_000),
        "--end",
        str(job.JOB_START_NS + 12_500_000),
        "--ranks",
        "0,2",
        name="absolute.json",
    )
    assert [e for e in absolute if e["ph"] == "X"] == slices


def test_window_from_steps(job_dir: Path, tmp_path: Path) -> None:
    # Step 1 runs 10-18 ms on rank 0 (smppy.analysis finds it from the step_1 annotation).
    events = export(tmp_path, "--steps", "1", "--ranks", "0")
    slices = [e for e in events if e["ph"] == "X"]
    assert {e["name"] for e in slices if e["cat"] == "user_annotation"} == {"step_1", "Forward", "inner"}
    assert all(ms(e["ts"]) <= 18 and ms(e["ts"] + e["dur"]) >= 10 for e in slices)
    assert [e["ph"] for e in events if e["ph"] in "sf"] == ["s", "f"]


def test_window_from_steps_loads_no_table(
    job_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The export finds the steps' window in C++, from the rank files it exports: no steps table in
    # pandas (smppy.analysis.load), in this process or on workers.
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("export --steps loaded the steps table")

    monkeypatch.setattr(analysis, "load", refuse)
    monkeypatch.setattr(_smppy, "read_tables", refuse)
    one = export(tmp_path, "--steps", "1", "--ranks", "0", "--jobs", "1", name="one.json")
    assert {e["name"] for e in one if e.get("cat") == "user_annotation"} == {"step_1", "Forward", "inner"}
    for ranks in ("0", "0,2"):
        by_one = export(tmp_path, "--steps", "1-2", "--ranks", ranks, "--jobs", "1", name="a.json")
        by_two = export(tmp_path, "--steps", "1-2", "--ranks", ranks, "--jobs", "2", name="b.json")
        assert by_one == by_two, ranks


@pytest.mark.parametrize("jobs", [1, 2])
def test_missing_steps_name_the_range_the_job_and_the_ranks(job_dir: Path, tmp_path: Path, jobs: int) -> None:
    out = tmp_path / "out" / "t.json"
    with pytest.raises(ValueError) as error:
        export_timeline(job_dir, out, steps=(40, 42), jobs=jobs)
    assert str(error.value) == f"--steps: no step 40-42 in {job_dir}"
    with pytest.raises(ValueError) as error:
        export_timeline(job_dir, out, steps=(1, 1), ranks=[7, 8], jobs=jobs)
    assert str(error.value) == f"--steps: no step 1-1 in {job_dir} for ranks [7, 8]"
    with pytest.raises(ValueError, match="the window is empty: --end is before --start"):
        export_timeline(job_dir, out, steps=(1, 1), start=1e9, jobs=jobs)
    assert not out.parent.exists()  # nothing written, and no folder made for it


def test_one_rank_export_carries_kineto_distributed_info(job_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "rank1.json"
    export_timeline(tmp_path / "job", out, format="chrome", ranks=[1])
    document = json.loads(out.read_text())
    assert document["distributedInfo"] == {"rank": 1, "world_size": len(job.RANKS)}
    # HTA finds a file's rank with this regex on the file's first matching line.
    assert re.search(r'"rank":\s+(\d+)', out.read_text().splitlines()[0]).group(1) == "1"
    export_timeline(tmp_path / "job", tmp_path / "all.json", format="chrome")
    assert "distributedInfo" not in json.loads((tmp_path / "all.json").read_text())


def test_plain_json_and_python_api(job_dir: Path, tmp_path: Path) -> None:
    result = export_timeline(tmp_path / "job", tmp_path / "t.json", format="chrome", ranks=[1])
    assert result["files"] == 1 and result["processes"] == 2 and result["flows"] == 0
    assert result["job_start_wall_ns"] == job.JOB_START_NS
    assert (tmp_path / "t.json").stat().st_size == result["file_bytes"]
    assert load(tmp_path / "t.json")


def test_bad_arguments_name_the_option(job_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert parse_int_ranges("0,2-3", "--ranks") == [0, 2, 3]
    with pytest.raises(ValueError, match="--ranks"):
        parse_int_ranges("0,x", "--ranks")
    assert (
        cli.main(["export", str(job_dir), "-o", str(tmp_path / "x.json"), "--start", "5", "--end", "1"]) == 2
    )
    assert "--end is before --start" in capsys.readouterr().err


TRAIN = """
import time
import smppy, torch
config = smppy.Config()
config.profiler = {{
    "RecordFile": "{out}/train_%p.smprof", "FlushIntervalMs": "20", "CpuSampleIntervalMs": "10"
}}
profiler = smppy.SMProfiler.instance()
profiler.configure(config)
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(256, 16), torch.randint(0, 4, (256,))
profiler.start_profiling()
for step in range({steps}):
    with smppy.annotate(f"step_{{step}}"):
        with smppy.annotate("Forward"):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        with smppy.annotate("Backward"):
            opt.zero_grad()
            loss.backward()
        opt.step()
time.sleep(0.1)  # a few CPU samples
profiler.stop_profiling()
"""


def test_real_pytorch_training_run_exports(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    steps = 12
    proc = run_python(TRAIN.format(out=tmp_path / "job", steps=steps), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    events = export(tmp_path)
    slices = [e for e in events if e["ph"] == "X"]
    counts = Counter(e["name"] for e in slices)
    assert counts["Forward"] == counts["Backward"] == steps
    assert sum(1 for name in counts if name.startswith("step_")) == steps
    assert len(process_ids(events)) == 2  # the host and the rank
    assert any(e["ph"] == "C" and e["name"] == "process.rss_bytes" for e in events)
