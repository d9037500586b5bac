"""GPU time per annotation when kernels are launched by threads with no open annotation:
PyTorch's autograd threads launch the backward pass while ``Backward`` is open on the main
thread. Such work goes to the innermost annotation open in the process at its launch,
marked inferred; what no annotation covered is the summary's unattributed share
(docs/ANALYSIS.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
import synthetic_trace as st
from smppy import analysis

MS = 1_000_000
T0 = 1_000_000_000
MAIN, AUTOGRAD = 10, 20


def training_step_trace(root: Path) -> None:
    frame = st.pb().Frame(sequence=0)
    frame.strings.append(b"")
    st.add_annotations(
        frame,
        [
            (T0, 100 * MS, "step", MAIN, 0),
            (T0 + 5 * MS, 35 * MS, "forward", MAIN, 1),
            (T0 + 50 * MS, 45 * MS, "Backward", MAIN, 1),
        ],
    )
    st.add_api_calls(
        frame,
        [
            (T0 + 10 * MS, 20_000, "cudaLaunchKernel", MAIN, 1),  # under forward, on its thread
            (T0 + 60 * MS, 20_000, "cudaLaunchKernel", AUTOGRAD, 2),  # the backward pass
            (T0 + 70 * MS, 20_000, "cudaLaunchKernel", AUTOGRAD, 3),
            (T0 + 120 * MS, 20_000, "cudaLaunchKernel", AUTOGRAD, 4),  # after the step: no annotation open
        ],
    )
    st.add_external_correlations(frame, [(1, 7, 5, "forward")])
    st.add_gpu_activities(
        frame,
        [
            {"start": T0 + 12 * MS, "dur": 5 * MS, "name": "gemm_fwd", "correlation_id": 1},
            {"start": T0 + 62 * MS, "dur": 4 * MS, "name": "gemm_dgrad", "correlation_id": 2},
            {"start": T0 + 72 * MS, "dur": 6 * MS, "name": "gemm_wgrad", "correlation_id": 3},
            {"start": T0 + 121 * MS, "dur": 1 * MS, "name": "stray", "correlation_id": 4},
        ],
    )
    footer = st.pb().Footer()
    footer.stop.monotonic_ns = T0 + 200 * MS
    st.write_trace(root / "rank0.smprof", st.header(monotonic_ns=T0, pid=5), [frame], footer)


def test_backward_gets_the_kernels_its_autograd_thread_launched(tmp_path: Path) -> None:
    training_step_trace(tmp_path)
    gpu = analysis.summarize(tmp_path)["gpu"]
    per_annotation = {
        a["name"]: (a["gpu_time_ns"], a["activities"], a["inferred_gpu_time_ns"], a["inferred_activities"])
        for a in gpu["per_annotation"]
    }
    assert per_annotation == {"Backward": (10 * MS, 2, 10 * MS, 2), "forward": (5 * MS, 1, 0, 0)}
    attribution = gpu["attribution"]
    assert attribution["attributed_time_ns"] == 15 * MS
    assert attribution["inferred_time_ns"] == 10 * MS
    assert attribution["unattributed_time_ns"] == 1 * MS
    assert attribution["unattributed_share"] == pytest.approx(1 / 16)


def compacted_correlations_trace(root: Path, compact: bool) -> None:
    """Two kernels launched under ``forward``, their external correlations written as the
    drain writes them: a column whose rows all hold one value is stored as that one value."""
    frame = st.pb().Frame(sequence=0)
    frame.strings.append(b"")
    st.add_annotations(frame, [(T0, 40 * MS, "forward", MAIN, 0)])
    st.add_api_calls(
        frame,
        [
            (T0 + 10 * MS, 20_000, "cudaLaunchKernel", MAIN, 1),
            (T0 + 20 * MS, 20_000, "cudaLaunchKernel", MAIN, 2),
        ],
    )
    st.add_external_correlations(frame, [(1, 7, 5, "forward"), (2, 7, 5, "forward")])
    if compact:
        table = frame.external_correlations
        for column in (table.external_id, table.external_kind, table.name_index):
            del column[1:]
    st.add_gpu_activities(
        frame,
        [
            {"start": T0 + 12 * MS, "dur": 5 * MS, "name": "gemm", "correlation_id": 1},
            {"start": T0 + 22 * MS, "dur": 3 * MS, "name": "gemm", "correlation_id": 2},
        ],
    )
    footer = st.pb().Footer(frames_written=1)
    footer.stop.monotonic_ns = T0 + 100 * MS
    st.write_trace(root / "rank0.smprof", st.header(monotonic_ns=T0, pid=5), [frame], footer)


def test_constant_external_correlation_columns_join_like_full_ones(tmp_path: Path) -> None:
    summaries = []
    for compact in (False, True):
        root = tmp_path / ("compact" if compact else "full")
        root.mkdir()
        compacted_correlations_trace(root, compact)
        summaries.append(analysis.summarize(root))
    full, compact = summaries
    assert compact["warnings"] == full["warnings"] == []
    assert compact["gpu"]["per_annotation"] == full["gpu"]["per_annotation"]
    assert [
        (a["name"], a["gpu_time_ns"], a["inferred_activities"]) for a in compact["gpu"]["per_annotation"]
    ] == [("forward", 8 * MS, 0)]


def test_inferred_attribution_matches_a_brute_force_search(tmp_path: Path) -> None:
    """Random overlapping ranges and launches out of time order: each kernel goes to the
    last range by (start, depth) that starts at or before its launch and ends after it."""
    random = __import__("random").Random(5)
    starts = random.sample(range(0, 4_000_000, 7), 400)
    ranges = [
        (T0 + s, random.choice([3_000, 40_000, 900_000]), f"r{k}", MAIN, random.randrange(4))
        for k, s in enumerate(starts)
    ]
    launches = [T0 + random.randrange(-100_000, 5_000_000) for _ in range(600)]
    frame = st.pb().Frame(sequence=0)
    frame.strings.append(b"")
    st.add_annotations(frame, ranges)
    st.add_api_calls(frame, [(t, 1_000, "cudaLaunchKernel", AUTOGRAD, i + 1) for i, t in enumerate(launches)])
    # GPU rows in another order than their launches.
    st.add_gpu_activities(
        frame,
        [
            {
                "start": T0 + 6_000_000 + random.randrange(10**6),
                "dur": 10 + i,
                "name": "k",
                "correlation_id": i + 1,
            }
            for i in range(600)
        ],
    )
    footer = st.pb().Footer(frames_written=1)
    footer.stop.monotonic_ns = T0 + 10 * MS
    st.write_trace(tmp_path / "rank0.smprof", st.header(monotonic_ns=T0, pid=5), [frame], footer)

    expected: dict[str, list[int]] = {}
    by_start = sorted(ranges, key=lambda r: (r[0], r[4]))
    for i, t in enumerate(launches):
        open_ranges = [r for r in by_start if r[0] <= t < r[0] + r[1]]
        if open_ranges:
            totals = expected.setdefault(open_ranges[-1][2], [0, 0])
            totals[0] += 10 + i
            totals[1] += 1
    gpu = analysis.summarize(tmp_path)["gpu"]
    inferred = {
        a["name"]: [a["inferred_gpu_time_ns"], a["inferred_activities"]] for a in gpu["per_annotation"]
    }
    assert len(expected) > 50
    assert inferred == expected
