#!/usr/bin/env python3
"""What smppy's perf counters add to each page fault of the job.

    python3 bench/page_fault_cost.py            # 25 rounds, about 1 minute
    python3 bench/page_fault_cost.py --quick    # 3 rounds, a few seconds

A loop that does nothing but take page faults (map 4 MiB, write it, unmap: 1,024
faults) is timed by its thread's CPU time (user and system: the kernel's
fault handling, with any perf hook in it), in rounds that alternate four
variants: no session (the baseline), a session with the default collectors,
the same with the default PerfEvents plus page-faults (the default before it
left, docs/CONFIG.md), and page-faults alone. Every session writes into a
temporary directory, removed at exit. The table gives the median CPU time per
iteration, its ratio to the baseline's median, and the cost per fault; a second
no-session series is the noise floor. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import mmap
import statistics
import sys
import tempfile
import time

import smppy
from bench_common import machine_line

MIB4 = 4 << 20
FAULTS = MIB4 // mmap.PAGESIZE
BUF = b"x" * MIB4
DEFAULT_EVENTS = (
    "cycles,instructions,cache-misses,branch-misses,ref-cycles,task-clock,context-switches,cpu-migrations"
)
VARIANTS = {
    "no session": None,
    "no session (noise floor)": None,
    "default collection": {},
    "default + page-faults (old default)": {"PerfEvents": DEFAULT_EVENTS + ",page-faults"},
    "page-faults alone": {"PerfEvents": "page-faults"},
}


def fault_loop(iterations: int) -> float:
    """CPU ns of this thread per iteration of map, write, unmap."""
    start = time.thread_time_ns()
    for _ in range(iterations):
        m = mmap.mmap(-1, MIB4)
        m.write(BUF)
        m.close()
    return (time.thread_time_ns() - start) / iterations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    args = parser.parse_args()
    rounds, iterations = (3, 10) if args.quick else (25, 40)
    print(
        f"page_fault_cost: smppy {smppy.__version__}, {rounds} rounds x {iterations} iterations "
        f"of {FAULTS} faults"
    )
    print(machine_line())
    profiler = smppy.SMProfiler.instance()
    ns: dict[str, list[float]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="smprof-faults-") as tmpdir:
        fault_loop(iterations)  # warm-up
        for _ in range(rounds):
            for name, settings in VARIANTS.items():
                if settings is None:
                    ns[name].append(fault_loop(iterations))
                    continue
                profiler.configure(
                    {"RecordFile": tmpdir + "/faults_%s.smprof", "EnableCuda": "0", **settings}
                )
                profiler.start_profiling()
                ns[name].append(fault_loop(iterations))
                profiler.stop_profiling()
    base = statistics.median(ns["no session"])
    print(f"\n{'variant':<38} {'median ms/iter':>14} {'ratio':>7} {'ns per fault':>12}")
    for name, values in ns.items():
        median = statistics.median(values)
        print(f"{name:<38} {median / 1e6:14.3f} {median / base:6.3f}x {(median - base) / FAULTS:+12.0f}")
    print(
        "CPU time of the faulting thread; the collectors' own threads are not in it (their cost: "
        "cpu_sampler_benchmark). Medians of the same run; nothing is asserted."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
