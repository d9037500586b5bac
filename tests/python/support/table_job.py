"""A synthetic GPU job for the table readers (Parquet export, Dask tables): every table has rows.

Two hosts, four ranks; each rank runs ``STEPS`` steps launching ``len(KERNELS)`` kernels of rank- and
step-dependent durations, one host-to-device copy and one memset per step, and samples two counters. Rank
3's session is rotated into two files (one stream), and rank 1 ran two sessions (two streams of one pid),
so the readers see every way files group into process streams.
"""

from __future__ import annotations

from pathlib import Path

import synthetic_trace as st

MS = 1_000_000
JOB_START_NS = 1_750_000_000_000_000_000
RANKS = {0: "host-a", 1: "host-a", 2: "host-b", 3: "host-b"}
KERNELS = ("gemm_bf16", "flash_attn_fwd", "layer_norm", "nccl_all_reduce", "softmax", "relu")
STEPS = 6


def _kernel_ms(rank: int, step: int, k: int) -> float:
    """A duration that orders the kernels differently on each rank."""
    return 0.1 + ((k * 7 + rank * 3) % len(KERNELS)) * 0.2 + step * 0.01


def _frame(rank: int, sequence: int, steps: range, mono: int) -> object:
    frame = st.pb().Frame(sequence=sequence)
    tid = 1000 + rank
    annotations, api_calls, gpu = [], [], []
    for step in steps:
        t = mono + step * 10 * MS
        annotations.append((t, 9 * MS, f"ProfilerStep#{step}", tid, 0))
        annotations.append((t + MS, 4 * MS, "Forward", tid, 1))
        for k, name in enumerate(KERNELS):
            correlation = step * 100 + k + 1
            start = t + MS + k * MS // 2
            api_calls.append((start - 20_000, 5_000, "cudaLaunchKernel", tid, correlation))
            gpu.append(
                {"start": start, "dur": round(_kernel_ms(rank, step, k) * MS), "name": name,
                 "correlation_id": correlation, "precision": 5, "stream": 7 + k % 2}
            )  # fmt: skip
        gpu.append({"start": t + 6 * MS, "dur": MS // 4, "name": "Memcpy HtoD", "kind": 2, "copy_kind": 1,
                    "bytes": 4096 * (step + 1), "correlation_id": step * 100 + 99})  # fmt: skip
        gpu.append({"start": t + 7 * MS, "dur": MS // 8, "name": "Memset", "kind": 3, "bytes": 64})
    st.add_annotations(frame, annotations)
    st.add_api_calls(frame, api_calls)
    st.add_gpu_activities(frame, gpu)
    st.add_counter(frame, "cpu.utilization", "percent", [(mono + s * 10 * MS, 40.0 + s) for s in steps], 0.01)
    st.add_counter(frame, "process.rss_bytes", "bytes", [(mono + s * 10 * MS + 1, 1e9 + rank) for s in steps])
    return frame


def _write_session(root: Path, rank: int, pid: int, session: int, file_steps: list[range]) -> None:
    mono = (rank + 1) * 1000 * MS + session * 500 * MS
    for file_index, steps in enumerate(file_steps):
        header = st.header(
            host=RANKS[rank],
            rank=rank,
            world_size=len(RANKS),
            monotonic_ns=mono,
            realtime_ns=JOB_START_NS + rank * MS + session * 500 * MS,
            pid=pid,
            session_index=session,
            file_index=file_index,
        )
        frames = [_frame(rank, 0, steps, mono)]
        footer = st.pb().Footer(frames_written=len(frames))
        name = f"rank{rank}_pid{pid}_s{session}_f{file_index}.smprof"
        st.write_trace(root / RANKS[rank] / name, header, frames, footer)


def write_job(root: Path) -> Path:
    """Writes the job under ``root`` (one folder per host) and returns ``root``."""
    for rank in RANKS:
        pid = 100 + rank
        if rank == 3:
            _write_session(root, rank, pid, 0, [range(0, STEPS // 2), range(STEPS // 2, STEPS)])
        else:
            _write_session(root, rank, pid, 0, [range(STEPS)])
        if rank == 1:
            _write_session(root, rank, pid, 1, [range(2)])
    return root
