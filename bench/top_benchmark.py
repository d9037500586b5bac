#!/usr/bin/env python3
"""What a refresh of ``smprof top`` costs on a job of many ranks (issue 29 item 4), against the
summary of the same directory measured in the same run.

    python3 bench/top_benchmark.py            # 64 ranks x 600 frames (10 minutes at one frame a second)
    python3 bench/top_benchmark.py --quick    # 8 ranks x 60 frames

Each rank file is ten minutes of a job at one frame per second (``FlushIntervalMs`` 1000): per frame
four steps of 250 ms (``ProfilerStep#N``) with an ``InputWait`` each, 200 kernels, and the CPU
counters, written by libsmprof's TraceWriter (bench/synthetic_trace.py). ``smprof top`` follows
the files: its first refresh reads everything written so far, later ones only what was appended
since. Measured in one process, median of 3: the first refresh of a fresh ``LiveJob``; a refresh
with nothing new (listing and checking every file: the floor of each refresh); and, as the
baseline, ``smppy.analysis.summarize`` of the directory (what re-reading the job each refresh
would cost instead), with the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import synthetic_trace as st
from smppy import analysis
from smppy.analysis.live import LiveJob

STEP_NS = 250_000_000
KERNELS = 200


def frame_of(sequence: int) -> object:
    """One second of a rank: four steps with their input wait, 200 kernels, CPU counters."""
    frame = st.pb().Frame(sequence=sequence)
    base = sequence * 1_000_000_000
    rows = []
    for k in range(4):
        start = base + k * STEP_NS
        rows.append((start, STEP_NS - 1_000, f"ProfilerStep#{4 * sequence + k}", 7, 0))
        rows.append((start + 1_000, 20_000_000, "InputWait", 7, 1))
    st.add_annotations(frame, rows)
    st.add_gpu_activities(
        frame, [{"start": base + i * 4_000_000, "dur": 3_000_000, "name": "gemm"} for i in range(KERNELS)]
    )
    st.add_counter(
        frame, "cpu.utilization", "percent", [(base + t * 100_000_000, 55.0) for t in range(10)], 0.01
    )
    return frame


def write_job(directory: Path, ranks: int, frames: int) -> None:
    for rank in range(ranks):
        header = st.header(
            host=f"node{rank // 8}", rank=rank, world_size=ranks, realtime_ns=1_700_000_000_000_000_000
        )
        header.pid = 1000 + rank
        st.write_trace(directory / f"rank{rank}.smprof", header, (frame_of(i) for i in range(frames)))


def seconds(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 ranks x 60 frames, one run")
    args = parser.parse_args()
    ranks, frames, runs = (8, 60, 1) if args.quick else (64, 600, 3)
    with tempfile.TemporaryDirectory(prefix="smprof-top-bench-") as tmp:
        job = Path(tmp)
        write_job(job, ranks, frames)
        size = sum(f.stat().st_size for f in job.glob("*.smprof"))
        first, idle, summary = [], [], []
        for _ in range(runs):
            live = LiveJob(job)
            first.append(seconds(live.refresh))
            idle.append(seconds(live.refresh))
            summary.append(seconds(lambda: analysis.summarize(job)))
        snapshot = live.refresh()
        assert len(snapshot["ranks"]) == ranks and snapshot["ranks"][0]["step"] == 4 * frames - 1, snapshot
    f, i, s = (statistics.median(x) for x in (first, idle, summary))
    print(f"{ranks} ranks x {frames} frames ({size / 2**20:.1f} MiB), median of {runs}")
    print(f"  summarize (baseline)    {s:8.3f} s")
    print(f"  first refresh           {f:8.3f} s  ({f / s:.2f}x the summary)")
    print(f"  refresh with nothing new {i:7.4f} s  ({i / s:.4f}x the summary)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
