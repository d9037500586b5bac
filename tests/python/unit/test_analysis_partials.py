"""Partial summaries (docs/ANALYSIS.md, "Partial summaries"): the job summary computed
per process stream into bytes that merge in any order and grouping, whose merged
summary is the direct one byte for byte; the streams come from the C++ JobReader
(``job_streams``). conftest.py checks every summary of the suite the same way; these
tests pin down the API, its errors and a job that exercises every aggregate."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from gpu_job import T0, synthetic_gpu_job
from partial_summaries import summaries_via_partials
from smppy import _smppy, analysis


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
