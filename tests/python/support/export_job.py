"""A synthetic three-rank job with known contents, for the timeline export tests.

Two ranks on host-a, one on host-b; each rank's monotonic clock starts elsewhere, so only the clock
anchors put them on one wall clock. Every time below is "ms after the job's start" on that wall clock.
"""

from __future__ import annotations

from pathlib import Path

import synthetic_trace as st

JOB_START_NS = 1_700_000_000_000_000_000  # wall clock of rank 0's session start = the job's start
MS = 1_000_000

# rank -> (host, pid, tid, monotonic clock at the session start, wall offset of the start from the job's)
RANKS = {
    0: ("host-a", 100, 1001, 5_000 * MS, 0),
    1: ("host-a", 101, 1101, 90_000 * MS, 3 * MS),
    2: ("host-b", 200, 2001, 7 * MS, 1 * MS),
}
STEP_MS = 10  # step k runs from 10k to 10k+8 ms, on every rank
STEPS = 3
FORWARD = (1, 4)  # ms into the step, depth 1
INNER = (2, 3)  # ms into the step, depth 2, inside Forward

# Rank 0 only: one launch per step (correlation id 10 + step) of a kernel that starts 0.5 ms later.
KERNEL = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn"
CPU0_UTILIZATION = [(1, 50.0), (6, 75.0)]  # (ms, percent), recorded by both ranks of host-a
PERF_CYCLES = [(1, 1000), (6, 3000), (11, 6000)]  # cumulative, rank 0


def wall_ns(rank: int, ms: float) -> int:
    """Rank ``rank``'s monotonic time of wall time ``ms`` after the job's start."""
    _, _, _, mono, offset = RANKS[rank]
    return mono + round(ms * MS) - offset


def _frame(rank: int, sequence: int, steps: range):
    pb = st.pb()
    _, _, tid, _, _ = RANKS[rank]
    frame = pb.Frame(sequence=sequence)
    st.thread_index(frame, tid, "python")
    rows = []
    for k in steps:
        base = k * STEP_MS
        rows.append((wall_ns(rank, base), 8 * MS, f"step_{k}", tid, 0))
        rows.append((wall_ns(rank, base + FORWARD[0]), (FORWARD[1] - FORWARD[0]) * MS, "Forward", tid, 1))
        rows.append((wall_ns(rank, base + INNER[0]), (INNER[1] - INNER[0]) * MS, "inner", tid, 2))
    st.add_annotations(frame, rows)
    if rank == 0:
        api, gpu = [], []
        for k in steps:
            base = k * STEP_MS
            api.append((wall_ns(0, base + 1.5), 10_000, "cudaLaunchKernel", tid, 10 + k))
            gpu.append(
                {
                    "start": wall_ns(0, base + 2),
                    "dur": 1 * MS,
                    "name": KERNEL,
                    "stream": 7,
                    "correlation_id": 10 + k,
                    "kernel_class": 1,
                    "precision": 5,
                    "grid": (128, 2, 1),
                    "block": (256, 1, 1),
                    "registers_per_thread": 96,
                    "shared_memory_bytes": 49152,
                }
            )
        st.add_api_calls(frame, api)
        st.add_gpu_activities(frame, gpu)
    return frame


def _counters_frame(rank: int, sequence: int):
    frame = st.pb().Frame(sequence=sequence)
    if rank in (0, 1):
        st.add_counter(
            frame, "cpu0.utilization", "percent", [(wall_ns(rank, ms), v) for ms, v in CPU0_UTILIZATION], 0.01
        )
    st.add_counter(frame, "process.rss_bytes", "bytes", [(wall_ns(rank, 2), 1_000_000 * (rank + 1))])
    if rank == 0:
        st.add_counter(frame, "perf.cycles", "count", [(wall_ns(0, ms), v) for ms, v in PERF_CYCLES])
    return frame


def write_job(directory: Path) -> Path:
    """Writes the job's rank files under ``directory`` (one folder per host) and returns it."""
    pb = st.pb()
    for rank, (host, pid, _, mono, offset) in RANKS.items():
        header = st.header(
            host=host, rank=rank, world_size=len(RANKS), monotonic_ns=mono, realtime_ns=JOB_START_NS + offset
        )
        header.pid = pid
        # Steps 0-1 in one frame, step 2 in the next: tracks continue across frames.
        frames = [_frame(rank, 0, range(0, 2)), _frame(rank, 1, range(2, STEPS)), _counters_frame(rank, 2)]
        footer = pb.Footer(frames_written=len(frames))
        st.write_trace(directory / host / f"rank{rank}.smprof", header, frames, footer)
    return directory
