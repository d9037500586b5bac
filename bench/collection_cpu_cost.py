#!/usr/bin/env python3
"""The CPU time smprof's own threads take while a model trains, thread by thread.

    python3 bench/collection_cpu_cost.py            # 5 rounds of 5 s per variant, about 2 minutes
    python3 bench/collection_cpu_cost.py --quick    # 1 round of 1 s

The large model of compare_torch_profiler.py trains (annotated as there) under a session of each
variant in turn, in rounds: the default collection, the default without perf counters
(``EnablePerf=0``), and annotations only (no CPU sampling). smprof names its threads
(``smprof-drain``, ``smprof-sampler``, ``smprof-sigterm``); each one's time on a CPU is read from
``/proc/self/task/<tid>/schedstat`` (ns, exact, whatever else the machine runs) at the end of the
session. The table gives, per variant, the median over the rounds of each thread's share of one core
and of its CPU time per training step; the step's own CPU time (all threads, ``process_time``) and wall
time are the comparison. Step time is not the measure here (section 4 of docs/BENCHMARKS.md: too noisy on a
shared 2-core VM); what these threads take is CPU the training does not get when it fills the cores.
Sessions write into a temporary directory. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import smppy
import torch
from bench_common import machine_line
from compare_torch_profiler import build_large

VARIANTS = {
    "default collection": {},
    "default, EnablePerf=0": {"EnablePerf": "0"},
    "annotations only": {"CpuProfilingDurationS": "0", "EnablePerf": "0"},
}
THREADS = ("smprof-drain", "smprof-sampler", "smprof-sigterm")


def thread_cpu_ns() -> dict[str, int]:
    """Time on a CPU (ns) of each of this process's smprof threads, by name."""
    out: dict[str, int] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as comm:
                name = comm.read().strip()
            if name in THREADS:
                with open(f"/proc/self/task/{tid}/schedstat") as schedstat:
                    out[name] = out.get(name, 0) + int(schedstat.read().split()[0])
        except OSError:
            continue  # a thread that ended meanwhile
    return out


def session_round(trainer, settings: dict[str, str], seconds: float, directory: str) -> dict[str, float]:
    """Trains under a session of ``settings`` for ``seconds``: each smprof thread's ns per second and per
    step, and the steps' CPU ns per step."""
    profiler = smppy.SMProfiler.instance()
    profiler.configure({"RecordFile": directory + "/cost_%p_%s.smprof", "EnableCuda": "0", **settings})
    profiler.start_profiling()
    start, cpu_start, steps = time.perf_counter(), time.process_time_ns(), 0
    while time.perf_counter() - start < seconds:
        trainer.run_smppy(1)
        steps += 1
    wall, cpu = time.perf_counter() - start, time.process_time_ns() - cpu_start
    threads = thread_cpu_ns()  # before stop: the threads end with the session
    profiler.stop_profiling()
    row = {"step_cpu_ns": cpu / steps, "step_wall_ns": wall * 1e9 / steps}
    for name in THREADS:
        row[f"{name}_per_s"] = threads.get(name, 0) / wall
        row[f"{name}_per_step"] = threads.get(name, 0) / steps
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    args = parser.parse_args()
    rounds, seconds = (1, 1.0) if args.quick else (5, 5.0)
    trainer = build_large(torch.device("cpu"), 16)
    trainer.run_plain(10)  # warm-up: the intra-op pool exists before the first session
    print(f"collection_cpu_cost: smppy {smppy.__version__}, {rounds} rounds of {seconds:.0f} s per variant, "
          f"torch threads {torch.get_num_threads()}")  # fmt: skip
    print(machine_line())
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="smprof-cost-") as directory:
        for _ in range(rounds):
            for name, settings in VARIANTS.items():
                rows[name].append(session_round(trainer, settings, seconds, directory))
    print("| variant | thread | share of one core | us per step | share of the step's CPU | min to max |")
    print("|---|---|---:|---:|---:|---:|")
    for name, runs in rows.items():
        step_cpu = statistics.median(r["step_cpu_ns"] for r in runs)
        for thread in (*THREADS, "all"):
            keys = THREADS if thread == "all" else (thread,)
            per_s = statistics.median(sum(r[f"{k}_per_s"] for k in keys) for r in runs)
            per_step = statistics.median(sum(r[f"{k}_per_step"] for k in keys) for r in runs)
            shares = [sum(r[f"{k}_per_step"] for k in keys) / r["step_cpu_ns"] for r in runs]
            cells = [f"{per_s / 1e7:.3f}%", f"{per_step / 1e3:.1f}", f"{per_step / step_cpu:.3%}"]
            cells.append(f"{min(shares):.3%} to {max(shares):.3%}")
            print(f"| {name} | {thread} | {' | '.join(cells)} |")
        step_wall = statistics.median(r["step_wall_ns"] for r in runs)
        step = f"(the step: CPU, all threads; wall {step_wall / 1e3:.0f} us)"
        print(f"| {name} | {step} | | {step_cpu / 1e3:.0f} | | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
