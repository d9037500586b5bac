"""HTA (HolisticTraceAnalysis) reads `smprof export --format chrome --ranks R` files: one per rank,
each with Kineto's distributedInfo, categories, correlation links and ProfilerStep#N steps. A
synthetic 2-rank job with GPU kernels at known times, so the breakdowns' numbers are known; with
an all-reduce per step and its NCCL kernel, HTA's communication analyses run on it as on a Kineto
job and agree with smprof's own."""

from __future__ import annotations

from pathlib import Path

import pytest
import synthetic_trace as st
from smppy import analysis
from smppy.export import export_timeline

pytestmark = [pytest.mark.dask]

hta_analysis = pytest.importorskip("hta.trace_analysis")
hta_trace = pytest.importorskip("hta.common.trace")
ParserConfig = pytest.importorskip("hta.configs.parser_config").ParserConfig

MS = 1_000_000
JOB_START_NS = 1_700_000_000_000_000_000
STEPS = 4
STEP_MS = 10
KERNELS_MS = (2, 4)  # each step launches a 1 ms kernel at 2 ms and one at 4 ms into it
TID = 4242


# HTA 0.5's straggler analysis takes NCCL kernels by the name NCCL used before 2.19 (ncclKernel_*),
# not today's ncclDevKernel_*: the job's kernels are named the old way.
NCCL_KERNEL = "ncclKernel_AllReduce_RING_LL_Sum_float"


def write_rank(path: Path, rank: int, *, all_reduce: bool = False) -> None:
    """With ``all_reduce``, each step's all-reduce is called at 4 ms and launches its NCCL kernel; on
    the GPU it runs until 6 ms on both ranks, from 4.5 ms on rank 0 (overlapping the second kernel
    by 0.5 ms) and from 5.5 ms on rank 1: rank 1's GPU arrives 1 ms late."""
    pb = st.pb()
    frame = pb.Frame(sequence=0)
    st.thread_index(frame, TID, "python")
    annotations, api, gpu, calls = [], [], [], []
    for k in range(STEPS):
        base = k * STEP_MS * MS
        annotations.append((base, 8 * MS, f"ProfilerStep#{k}", TID, 0))
        for i, at_ms in enumerate(KERNELS_MS):
            correlation = 100 + 3 * k + i
            api.append((base + (at_ms - 1) * MS, 10_000, "cudaLaunchKernel", TID, correlation))
            gpu.append({"start": base + at_ms * MS, "dur": MS, "name": "gemm_kernel", "stream": 7,
                        "correlation_id": correlation, "kernel_class": 1})  # fmt: skip
        if all_reduce:
            correlation = 100 + 3 * k + 2
            calls.append((base + 4 * MS, 100_000, "allreduce_", "0", 2, rank, k + 1, 4096, TID))
            api.append((base + 4 * MS + 20_000, 10_000, "cuLaunchKernelEx", TID, correlation))
            start = base + (4_500_000 if rank == 0 else 5_500_000)
            gpu.append({"start": start, "dur": base + 6 * MS - start, "name": NCCL_KERNEL, "stream": 9,
                        "correlation_id": correlation, "kernel_class": 2})  # fmt: skip
    st.add_annotations(frame, annotations)
    st.add_api_calls(frame, api)
    st.add_gpu_activities(frame, gpu)
    if calls:
        st.add_collectives(frame, calls)
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


def test_hta_finds_the_straggler_and_the_overlap_of_the_collectives(tmp_path: Path) -> None:
    for rank in (0, 1):
        write_rank(tmp_path / "job" / f"rank{rank}.smprof", rank, all_reduce=True)
    hta_dir = tmp_path / "hta"
    hta_dir.mkdir()
    for rank in (0, 1):
        export_timeline(tmp_path / "job", hta_dir / f"rank{rank}.json.gz", format="chrome", ranks=[rank])

    # The collective calls' arguments under Kineto's names, as HTA's parser reads record_param_comms.
    config = ParserConfig(ParserConfig.get_minimum_args())
    config.add_args(ParserConfig.ARGS_COMMUNICATION)
    trace = hta_trace.Trace(trace_dir=str(hta_dir), parser_config=config)
    trace.load_traces()
    names = trace.symbol_table.get_sym_table()  # one for every rank
    for rank in (0, 1):
        df = trace.get_trace(rank)
        calls = df[df["name"].map(lambda i: names[i]) == "c10d::allreduce_"]
        assert len(calls) == STEPS - 1  # HTA leaves out the last step
        assert set(calls["collective_name"].map(lambda i: names[i] if isinstance(i, int) else i)) == {
            "allreduce"
        }
        assert set(calls["group_size"]) == {2} and set(calls["in_msg_nelems"]) == {1024}

    # HTA's straggler analysis: the rank whose NCCL kernels start last.
    analyzer = hta_analysis.TraceAnalysis(trace_dir=str(hta_dir))
    assert analyzer.get_potential_stragglers(num_candidates=1, visualize=False) == [1]
    # Its overlap of communication with compute: 0.5 of rank 0's 1.5 ms NCCL kernel, none of rank 1's.
    overlap = analyzer.get_comm_comp_overlap(visualize=False).set_index("rank")["comp_comm_overlap_pctg"]
    assert overlap[0] == pytest.approx(100 / 3, abs=0.5) and overlap[1] == pytest.approx(0.0)

    # smprof's own reading of the same job agrees: rank 1 arrives last on the GPU, 1 ms each time.
    collectives = analysis.summarize(tmp_path / "job")["collectives"]
    rank0, rank1 = sorted(collectives["ranks"], key=lambda r: r["rank"])
    assert collectives["instances_matched_on_device"] == STEPS
    assert rank1["device_last_arrivals"] == STEPS and rank0["device_wait_ns"] == STEPS * MS
