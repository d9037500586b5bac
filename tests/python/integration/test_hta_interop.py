"""HTA (HolisticTraceAnalysis) reads `smprof export --format chrome --ranks R` files: one per rank,
each with Kineto's distributedInfo, categories, correlation links and ProfilerStep#N steps. A
synthetic 2-rank job with GPU kernels at known times, so the breakdowns' numbers are known."""

from __future__ import annotations

from pathlib import Path

import pytest
import synthetic_trace as st
from smppy.export import export_timeline

pytestmark = [pytest.mark.dask]

hta_analysis = pytest.importorskip("hta.trace_analysis")

MS = 1_000_000
JOB_START_NS = 1_700_000_000_000_000_000
STEPS = 4
STEP_MS = 10
KERNELS_MS = (2, 4)  # each step launches a 1 ms kernel at 2 ms and one at 4 ms into it
TID = 4242


def write_rank(path: Path, rank: int) -> None:
    pb = st.pb()
    frame = pb.Frame(sequence=0)
    st.thread_index(frame, TID, "python")
    annotations, api, gpu = [], [], []
    for k in range(STEPS):
        base = k * STEP_MS * MS
        annotations.append((base, 8 * MS, f"ProfilerStep#{k}", TID, 0))
        for i, at_ms in enumerate(KERNELS_MS):
            correlation = 100 + 2 * k + i
            api.append((base + (at_ms - 1) * MS, 10_000, "cudaLaunchKernel", TID, correlation))
            gpu.append({"start": base + at_ms * MS, "dur": MS, "name": "gemm_kernel", "stream": 7,
                        "correlation_id": correlation, "kernel_class": 1})  # fmt: skip
    st.add_annotations(frame, annotations)
    st.add_api_calls(frame, api)
    st.add_gpu_activities(frame, gpu)
    header = st.header(rank=rank, world_size=2, monotonic_ns=0, realtime_ns=JOB_START_NS)
    header.pid = 1000 + rank
    st.write_trace(path, header, [frame], pb.Footer(frames_written=1))


def test_hta_loads_every_rank_and_runs_its_breakdowns(tmp_path: Path) -> None:
    for rank in (0, 1):
        write_rank(tmp_path / "job" / f"rank{rank}.smprof", rank)
    hta_dir = tmp_path / "hta"
    hta_dir.mkdir()
    for rank in (0, 1):
        export_timeline(tmp_path / "job", hta_dir / f"rank{rank}.json.gz", format="chrome", ranks=[rank])

    analyzer = hta_analysis.TraceAnalysis(trace_dir=str(hta_dir))
    assert sorted(analyzer.t.traces) == [0, 1]
    assert analyzer.t.get_iterations(0) == list(range(STEPS - 1))  # HTA leaves out the last step

    temporal = analyzer.get_temporal_breakdown(visualize=False).set_index("rank")
    # Kernels of steps 0-2 (HTA drops the last step's): 2-25 ms with 6 ms of compute.
    kept = (STEPS - 1) * len(KERNELS_MS)
    for rank in (0, 1):
        assert temporal.loc[rank, "compute_time(us)"] == pytest.approx(kept * 1000)
        assert temporal.loc[rank, "kernel_time(us)"] == pytest.approx(((STEPS - 2) * STEP_MS + 5 - 2) * 1000)

    idle, _ = analyzer.get_idle_time_breakdown(ranks=[0, 1], visualize=False)
    assert sorted(idle["rank"].unique()) == [0, 1]
    assert set(idle["stream"]) == {7}
    # Gaps between the kept kernels: 1 ms inside each of steps 0-2, and 7 ms between steps, where the
    # GPU waits for the host (the next launch comes after the last kernel ended).
    for rank in (0, 1):
        mine = idle[idle["rank"] == rank].set_index("idle_category")["idle_time"]
        assert mine.sum() == pytest.approx((STEPS - 1) * 1000 + (STEPS - 2) * 7000)
        assert mine["host_wait"] == pytest.approx((STEPS - 2) * 7000)
