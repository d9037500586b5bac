"""Collectives on GPUs, from a synthetic two-rank NCCL job written through the real TraceWriter
(there is no GPU here): each ``allreduce_`` call, its ``cuLaunchKernelEx`` on the same thread and
the NCCL kernel with that correlation id. Rank 1's host enqueues first, but its GPU reaches the
NCCL kernel 30 ms after rank 0's (a longer compute kernel before it): the summary links every
kernel to its call and matches the instances on the kernels' starts, and ``diagnose`` names rank 1
from the device's arrivals, where the host's alone would name rank 0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import synthetic_trace as st
from smppy import analysis
from smppy.cli import main
from smppy.diagnose import diagnose
from smppy.diff import diff_summaries

MS = 1_000_000
STEPS = 10
NCCL_KERNEL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"


def _rank_frame(rank: int, late_ms: int) -> Any:
    frame = st.pb().Frame(sequence=0)
    host_arrival, compute_end = (10 * MS, 20 * MS) if rank == 0 else (5 * MS, (20 + late_ms) * MS)
    steps, calls, api, gpu = [], [], [], []
    for k in range(1, STEPS + 1):
        t = k * 100 * MS
        steps.append((t, 100 * MS, f"step_{k}", 7, 0))
        api.append((t + MS, 5_000, "cudaLaunchKernel", 7, 2 * k))
        gpu.append(
            {"start": t + 2 * MS, "dur": compute_end - 2 * MS, "name": "sm90_gemm", "correlation_id": 2 * k}
        )
        call = t + host_arrival
        calls.append((call, 50_000, "allreduce_", "0", 2, rank, k, 4096, 7))
        api.append((call + 10_000, 5_000, "cuLaunchKernelEx", 7, 2 * k + 1))
        gpu.append(
            {
                "start": t + compute_end,
                "dur": 60 * MS - compute_end,
                "name": NCCL_KERNEL,
                "kernel_class": 2,
                "stream": 9,
                "correlation_id": 2 * k + 1,
            }
        )
    st.add_annotations(frame, steps)
    st.add_collectives(frame, calls)
    st.add_api_calls(frame, api)
    st.add_gpu_activities(frame, gpu)
    return frame


def _summary(directory: Path, late_ms: int = 30) -> dict[str, Any]:
    """Rank 1's GPU reaches each all-reduce ``late_ms`` after rank 0's."""
    pb = st.pb()
    for rank in (0, 1):
        header = st.header(host="host-a", rank=rank, world_size=2, realtime_ns=1_700_000_000_000_000_000)
        header.pid = 10 + rank
        frames = [_rank_frame(rank, late_ms)]
        st.write_trace(directory / f"rank{rank}.smprof", header, frames, pb.Footer(frames_written=1))
    return analysis.summarize(directory)


def test_nccl_kernels_link_to_their_calls_and_match_on_the_device(tmp_path: Path) -> None:
    collectives = _summary(tmp_path)["collectives"]
    assert collectives["kernels_linked"] == 2 * STEPS and collectives["kernels_not_linked"] == 0
    assert collectives["instances_matched"] == collectives["instances_matched_on_device"] == STEPS
    (op,) = collectives["ops"]
    assert op["kernels"] == 2 * STEPS
    assert op["device_ns"] == STEPS * (40 * MS + 10 * MS)
    assert op["device_wait_ns"] == STEPS * 30 * MS
    assert abs(op["device_skew"]["p50_ns"] - 30 * MS) <= 0.05 * 30 * MS
    rank0, rank1 = sorted(collectives["ranks"], key=lambda r: r["rank"])
    # On the host rank 0 arrives last; on the device rank 1 does, and rank 0 waits 30 ms each time.
    assert rank0["last_arrivals"] == STEPS and rank1["wait_ns"] == STEPS * 5 * MS
    assert rank1["device_last_arrivals"] == STEPS and rank1["device_late_by_ns"] == STEPS * 30 * MS
    assert rank0["device_wait_ns"] == STEPS * 30 * MS and rank0["device_last_arrivals"] == 0
    assert rank0["device_ns"] == STEPS * 40 * MS


def test_diagnose_names_the_rank_whose_gpu_arrives_last(tmp_path: Path) -> None:
    findings = [f for f in diagnose(_summary(tmp_path)) if f.id == "straggler_rank"]
    (finding,) = [f for f in findings if f.evidence.get("rule") == "collectives"]
    assert finding.evidence["rank"] == 1 and finding.evidence["clock"] == "device"
    assert finding.evidence["collective"] == "allreduce_"
    assert finding.evidence["others_wait_ns"] == {"rank 0": STEPS * 30 * MS}
    assert finding.cost_total_ns == STEPS * 30 * MS
    assert "on the GPU" in finding.title and "NCCL kernels' starts" in finding.cost_basis
    assert all(f.evidence["rank"] != 0 for f in findings)


def test_the_summary_prints_the_waits_on_the_gpu(tmp_path: Path, capsys: Any) -> None:
    _summary(tmp_path)
    assert main(["summary", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "GPU wait" in out and "on the GPU (10 instances matched on their NCCL kernels' starts)" in out
    on_gpu = out.split("on the GPU (")[1].splitlines()
    rank1 = next(line for line in on_gpu if "rank 1" in line)
    assert "10 of 10" in rank1  # it arrived last on the GPU at every instance


def test_diff_compares_the_waits_on_the_gpu(tmp_path: Path) -> None:
    d = diff_summaries(_summary(tmp_path / "a"), _summary(tmp_path / "b", late_ms=10))
    rows = {r["name"]: r for r in d["collectives"]}
    op = rows["allreduce_ (group 0) GPU wait"]
    assert (op["a_ns"], op["b_ns"]) == (STEPS * 30 * MS, STEPS * 10 * MS)
    assert op["instances_matched_on_device_b"] == STEPS
    assert rows["rank 0 GPU wait"]["change_ns"] == -STEPS * 20 * MS
    assert rows["rank 1 GPU wait"]["device_last_arrivals_a"] == STEPS
