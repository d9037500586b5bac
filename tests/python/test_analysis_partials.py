"""Partial summaries (docs/ANALYSIS.md, "Partial summaries"): the job summary computed
per process stream into bytes that merge in any order and grouping, whose merged
summary is the direct one byte for byte; the streams come from the C++ JobReader
(``job_streams``). conftest.py checks every summary of the suite the same way; these
tests pin down the API, its errors and a job that exercises every aggregate."""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import pytest
import synthetic_trace as st
from partial_summaries import summaries_via_partials
from smppy import _smppy, analysis

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000  # the wall clock of the job's start


def gpu_frame(rng: random.Random, sequence: int, start: int, device: int):
    """One frame of a training rank: steps with nested annotations, launches, their
    kernels and copies (some out of start order), external correlations, CPU counters."""
    frame = st.pb().Frame(sequence=sequence)
    frame.strings.append(b"")
    annotations, calls, work, correlations = [], [], [], []
    for step in range(4):
        t = start + step * 20 * MS
        annotations += [
            (t, 18 * MS, f"ProfilerStep#{sequence * 4 + step}", 1, 0),
            (t + MS, 8 * MS, "forward", 1, 1),
        ]
        for k in range(6):
            cid = sequence * 1000 + step * 10 + k + 1
            launch = t + MS + k * MS + rng.randrange(MS // 2)
            tid = 1 if k < 3 else 2  # the second thread launches outside every annotation: inferred
            calls.append((launch, 20_000, "cudaLaunchKernel", tid, cid))
            if k == 0:
                correlations.append((cid, cid, 5, "forward"))
            kind = 2 if k == 5 else 1
            work.append(
                {
                    "start": launch + rng.randrange(10_000, 3 * MS),
                    "dur": rng.randrange(1_000, 2 * MS),
                    "name": f"kernel_{rng.randrange(20)}" if kind == 1 else "copy",
                    "kind": kind,
                    "device": device,
                    "correlation_id": cid,
                    "precision": rng.randrange(10),
                    "bytes": 4096 if kind == 2 else 0,
                    "copy_kind": 1 if kind == 2 else 0,
                }
            )
    st.add_annotations(frame, annotations)
    st.add_api_calls(frame, calls)
    st.add_external_correlations(frame, correlations)
    st.add_gpu_activities(frame, work)
    st.add_device(frame, id=device, name="Synthetic GPU", uuid=f"GPU-{device}", sm_count=132)
    samples = [(start + i * 10 * MS, rng.randrange(101)) for i in range(1, 9)]
    st.add_counter(frame, "cpu.utilization", "percent", samples)
    st.add_counter(frame, "cpu0.utilization", "percent", samples[::2])
    return frame


def synthetic_gpu_job(root: Path, ranks: int = 5) -> Path:
    """``ranks`` ranks on two hosts, one session rotated over two files, a second
    session of one process, a truncated file and a file whose header does not read."""
    rng = random.Random(15)
    for rank in range(ranks):
        host = f"host-{rank % 2}"
        for session in (0, 1) if rank == 1 else (0,):
            files = 2 if rank == 2 else 1
            for index in range(files):
                start = T0 + rank * 3 * MS + session * 500 * MS + index * 200 * MS
                header = st.header(
                    host=host,
                    rank=rank,
                    world_size=ranks,
                    monotonic_ns=start - T0,
                    realtime_ns=start,
                    pid=100 + rank,
                    session_index=session,
                    file_index=index,
                )
                header.collectors.add(name="cuda", active=True)
                frames = [gpu_frame(rng, i, start - T0 + i * 90 * MS, rank % 2) for i in range(2)]
                footer = st.pb().Footer()
                footer.stop.monotonic_ns = start - T0 + 190 * MS
                footer.stop.realtime_ns = start + 190 * MS
                footer.annotations_dropped = rank
                footer.gpu_collection.incomplete_records = 1
                name = f"rank{rank}_s{session}" + (f".{index:04d}" if index else "") + ".smprof"
                st.write_trace(root / host / name, header, frames, footer)
    damaged = root / "host-1" / "rank3_s0.smprof"
    damaged.write_bytes(damaged.read_bytes()[:-300])
    (root / "host-0" / "not-a-trace.smprof").write_bytes(b"SMPROF\x00\x09 garbage")
    return root


@pytest.fixture
def job(tmp_path: Path) -> Path:
    return synthetic_gpu_job(tmp_path / "job")


def test_job_streams_group_files_as_the_summary_reads_them(job: Path) -> None:
    streams = analysis.job_streams(job)
    keys = [(s.host, s.rank, s.pid, s.session_index) for s in streams.streams]
    assert keys == sorted(keys)
    assert len(keys) == 6  # 5 ranks, rank 1 twice (two sessions)
    rotated = next(s for s in streams.streams if s.rank == 2)
    assert [Path(f).name for f in rotated.files] == ["rank2_s0.smprof", "rank2_s0.0001.smprof"]
    assert {s.origin_ns for s in streams.streams} == {T0}
    assert len(streams.warnings) == 1 and "not-a-trace.smprof: skipped" in streams.warnings[0]


def test_merged_partials_give_the_direct_summary_byte_for_byte(job: Path) -> None:
    options = ("ProfilerStep#(\\d+)", "InputWait|DataLoader.*", 3, 50, 5_000_000_000)
    direct = _smppy.summarize([str(job)], *options)
    summary = analysis.summarize(job)
    assert summary["gpu"]["kernels"]["distinct"] > 3  # top-k cuts the list: "other" is merged too
    assert summary["gpu"]["attribution"]["inferred_time_ns"] > 0
    assert summary["drops"]["annotations_dropped"] > 0 and summary["cpu"]["hosts"]
    assert any("truncated" in w for w in summary["warnings"])
    for how, text in summaries_via_partials([str(job)], *options).items():
        assert text == direct, how


def test_merging_is_associative_and_order_free_to_the_byte(job: Path) -> None:
    streams = analysis.job_streams(job).streams
    a, b, c = (analysis.partial_summary(group) for group in (streams[:2], streams[2:3], streams[3:]))
    merge = analysis.merge_partial_summaries
    left = merge([merge([a, b]), c])
    assert merge([a, merge([b, c])]) == left
    assert merge([c, a, b]) == left
    assert merge([left]) == left
    assert analysis.partial_summary(streams) == left


def test_the_python_api_gives_summarize_s_dict(job: Path) -> None:
    streams = analysis.job_streams(job)
    partials = [analysis.partial_summary(s, top_k=4, data_wait_pattern="Fetch") for s in streams.streams]
    merged = analysis.merge_partial_summaries(reversed(partials))
    summary = analysis.summary_from_partial(merged, streams.warnings)
    assert summary == analysis.summarize(job, top_k=4, data_wait_pattern="Fetch")
    assert summary["gpu"]["idle"]["data_wait_pattern"] == "Fetch"


def test_progress_counts_the_bytes_of_the_streams_read(job: Path) -> None:
    streams = analysis.job_streams(job).streams[:3]
    calls: list[tuple[int, int]] = []
    analysis.partial_summary(streams, progress=lambda done, total: calls.append((done, total)))
    total = sum(s.bytes for s in streams)
    assert calls[-1] == (total, total)
    assert all(t == total for _, t in calls) and [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_a_stream_pickles_and_summarizes_the_same_elsewhere(job: Path) -> None:
    stream = analysis.job_streams(job).streams[2]
    copy = pickle.loads(pickle.dumps(stream))
    assert (copy.host, copy.rank, copy.pid, copy.files, copy.bytes, copy.origin_ns) == (
        stream.host,
        stream.rank,
        stream.pid,
        stream.files,
        stream.bytes,
        stream.origin_ns,
    )
    assert analysis.partial_summary(copy) == analysis.partial_summary(stream)


def test_partials_that_cannot_merge_are_value_errors(job: Path) -> None:
    streams = analysis.job_streams(job).streams
    first = analysis.partial_summary(streams[0])
    with pytest.raises(ValueError, match="overlap"):
        analysis.merge_partial_summaries([first, analysis.partial_summary(streams[:2])])
    with pytest.raises(ValueError, match="different options"):
        analysis.merge_partial_summaries([first, analysis.partial_summary(streams[1], top_k=3)])
    with pytest.raises(ValueError, match="different options"):
        analysis.merge_partial_summaries(
            [first, analysis.partial_summary(streams[1], data_wait_pattern="Fetch")]
        )
    with pytest.raises(ValueError, match="data_wait_pattern"):
        analysis.partial_summary(streams[1], data_wait_pattern="(")
    one_host = analysis.job_streams(job / "host-1").streams  # a job of its own: a later origin
    assert one_host[0].origin_ns > streams[0].origin_ns
    with pytest.raises(ValueError, match="job origins"):
        analysis.merge_partial_summaries([first, analysis.partial_summary(one_host[0])])
    with pytest.raises(ValueError, match="not all of one job"):
        analysis.partial_summary([streams[0], one_host[0]])
    with pytest.raises(ValueError, match="no partial summaries"):
        analysis.merge_partial_summaries([])
    with pytest.raises(ValueError, match="not a partial summary"):
        analysis.summary_from_partial(b"\x05hello")
    for cut in (1, len(first) // 2, len(first) - 1):
        with pytest.raises(ValueError, match="damaged"):
            analysis.summary_from_partial(first[:cut])
    with pytest.raises(ValueError, match="damaged"):
        analysis.summary_from_partial(first + b"\x00")
