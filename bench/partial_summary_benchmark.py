#!/usr/bin/env python3
"""The job summary through partial summaries against the direct one, on the same job in the same run.

    python3 bench/partial_summary_benchmark.py            # 8 ranks, 1.1 M and 4.5 M events, 3 runs each
    python3 bench/partial_summary_benchmark.py --quick    # 8 ranks, 112 k and 448 k events, 1 run

Writes an 8-rank job with report_benchmark.py's writer (one file per rank: steps, phases,
kernels from 200 names, copies and their launches). For each size, in this process, in turn:
the baseline, ``_smppy.summarize`` (the direct summary, one pass over every stream), and the
same summary through partials: ``job_streams`` (headers), one ``partial_summary`` per stream,
``merge_partial_summaries`` of them all and ``summary_from_partial``. Reported: CPU seconds
(process_time: the machine is shared) of each part, the ratio partial path / direct, the size
of a stream's partial (bytes, and per trace byte) and of the merged partial. The JSON of both
paths is compared byte for byte (the run fails on a difference). Nothing else is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from report_benchmark import write_job
from smppy import _smppy

RANKS = 8
WIDTH = (10, 8, 9, 10, 6, 14, 10, 7, 12, 16, 10, 9)  # of the printed columns


def _cpu(fn, *args):
    """``fn(*args)`` and the CPU seconds it took."""
    start = time.process_time()
    result = fn(*args)
    return result, time.process_time() - start


def via_partials(paths: list[str]) -> tuple[bytes, dict[str, float], list[int], int]:
    """The summary through partials; CPU seconds per part; each stream's partial size; the merged size."""
    seconds: dict[str, float] = {}
    (streams, warnings), seconds["job_streams"] = _cpu(_smppy.job_streams, paths)
    partials = []
    seconds["partial_summary"] = 0.0
    for stream in streams:
        partial, spent = _cpu(_smppy.partial_summary, [stream])
        partials.append(partial)
        seconds["partial_summary"] += spent
    merged, seconds["merge"] = _cpu(_smppy.merge_partial_summaries, partials)
    text, seconds["summary_from_partial"] = _cpu(_smppy.summary_from_partial, merged, warnings)
    return text, seconds, [len(p) for p in partials], len(merged)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="112 k and 448 k events, one run")
    parser.add_argument("--repeat", type=int, default=None, help="runs per measurement (default 3; quick 1)")
    args = parser.parse_args()
    sizes = (112_000, 448_000) if args.quick else (1_120_000, 4_480_000)
    repeat = args.repeat or (1 if args.quick else 3)
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} cpus, load {load:.1f}; {RANKS} ranks; {repeat} run(s); CPU seconds")
    columns = ("events", "trace MB", "direct s", "partials s", "ratio", "of which: list", "per stream")
    columns += ("merge", "from partial", "partial B/stream", "B/trace MB", "merged B")
    print(" ".join(f"{c:>{WIDTH[i]}}" for i, c in enumerate(columns)))
    with tempfile.TemporaryDirectory(prefix="smprof-partial-bench-") as tmp:
        for wanted in sizes:
            job = Path(tmp) / f"job-{wanted}"
            events = write_job(job, wanted, RANKS)
            paths = [str(job)]
            trace_bytes = sum(f.stat().st_size for f in job.rglob("*.smprof"))
            direct_runs, partial_runs = [], []
            for _ in range(repeat):
                direct, spent = _cpu(_smppy.summarize, paths)
                direct_runs.append(spent)
                text, parts, sizes_b, merged_b = via_partials(paths)
                partial_runs.append(parts)
                if text != direct:
                    sys.exit(f"{events} events: the summary through partials differs from the direct one")
            direct_s = statistics.median(direct_runs)
            part = {k: statistics.median(r[k] for r in partial_runs) for k in partial_runs[0]}
            total = sum(part.values())
            per_stream = statistics.median(sizes_b)
            cells = (
                f"{events:,}",
                f"{trace_bytes / 1e6:.1f}",
                f"{direct_s:.3f}",
                f"{total:.3f}",
                f"{total / direct_s:.2f}",
                f"{part['job_streams']:.4f}",
                f"{part['partial_summary'] / RANKS:.4f}",
                f"{part['merge']:.4f}",
                f"{part['summary_from_partial']:.4f}",
                f"{per_stream:,.0f}",
                f"{per_stream / (trace_bytes / RANKS / 1e6):,.0f}",
                f"{merged_b:,}",
            )
            print(" ".join(f"{c:>{WIDTH[i]}}" for i, c in enumerate(cells)))


if __name__ == "__main__":
    main()
