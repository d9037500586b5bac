#!/usr/bin/env python3
"""What recording collectives (``TorchCollectives=1``, ``TorchAutoSteps=1``, docs/PYTORCH.md
"Collectives") adds to a collective call and to a DDP step.

    python3 bench/collective_hook_benchmark.py            # about a minute
    python3 bench/collective_hook_benchmark.py --quick    # a few seconds

One process, a one-rank gloo group (the calls go through the whole dispatcher
and gloo path; no peer to wait for, so the numbers are the host's cost alone).
Two workloads: a synchronous ``all_reduce`` of one float, and a DDP step of a
small MLP (forward, ``backward()`` with the reducer's bucket all-reduce,
``optimizer.step()``). Three ways, CPU time per call or step
(``time.process_time_ns``: every thread, the drain and gloo's included):
``plain``, before the hooks exist; ``between runs``, after a
``stop_profiling()`` (the dispatcher kernel registered, a fallthrough over
it); ``recording``, a session with ``TorchAutoSteps=1`` (CPU sampling and
perf off). The last two alternate in blocks; the medians and the ratios
against ``plain`` are printed.
A measurement, not a test (docs/BENCHMARKS.md section 26).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable

import smppy
import torch
import torch.distributed as dist


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few blocks of few calls")
    args = parser.parse_args()
    blocks, calls, steps = (2, 300, 50) if args.quick else (7, 3000, 400)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as directory:
        dist.init_process_group("gloo", init_method=f"file://{directory}/store", rank=0, world_size=1)
        one = torch.ones(1)
        model = torch.nn.parallel.DistributedDataParallel(
            torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
        )
        optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
        x = torch.randn(32, 256)

        def per_call() -> float:
            start = time.process_time_ns()
            for _ in range(calls):
                dist.all_reduce(one)
            return (time.process_time_ns() - start) / calls

        def per_step() -> float:
            start = time.process_time_ns()
            for _ in range(steps):
                model(x).sum().backward()
                optimizer.step()
            return (time.process_time_ns() - start) / steps

        workloads: dict[str, Callable[[], float]] = {"all_reduce call": per_call, "DDP step": per_step}
        results: dict[str, dict[str, list[float]]] = {
            w: {"plain": [], "idle": [], "rec": []} for w in workloads
        }
        for name, run in workloads.items():
            run()  # warm-up
            results[name]["plain"] = [run() for _ in range(blocks)]
        profiler = smppy.SMProfiler.instance()
        config = {
            "RecordFile": os.path.join(directory, "rank%r_pid%p_s%s.smprof"),
            "TorchAutoSteps": "1",
            "EnablePerf": "0",
            "CpuProfilingDurationS": "0",
        }
        for _ in range(blocks):
            for name, run in workloads.items():
                results[name]["idle"].append(run())
                profiler.configure(config)
                profiler.start_profiling()
                results[name]["rec"].append(run())
                profiler.stop_profiling()
        dist.destroy_process_group()
    print(f"{blocks} blocks each way ({calls} calls, {steps} steps a block), CPU time, median")
    for name, r in results.items():
        plain, idle, rec = (statistics.median(r[k]) for k in ("plain", "idle", "rec"))
        print(
            f"  {name:16s} plain {plain / 1e3:8.1f} us   between runs {idle / 1e3:8.1f} us"
            f" ({idle / plain:.2f}x)   recording {rec / 1e3:8.1f} us"
            f" ({rec / plain:.2f}x, {(rec - plain) / 1e3:+.1f} us)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
