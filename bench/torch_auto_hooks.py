#!/usr/bin/env python3
"""What smppy's automatic PyTorch mode (``TorchAutoSteps=1``) adds to one training step.

    python3 bench/torch_auto_hooks.py            # about 30 s
    python3 bench/torch_auto_hooks.py --quick    # a few seconds

The smallest step there is: a 1x1 linear layer, ``backward()`` and an SGD
``optimizer.step()``, so that the step is little more than what the hooks
wrap (the optimizer step hooks, ``Tensor.backward``: one ``ProfilerStep#N``
and one ``Backward`` annotation per step). Blocks of steps without a session
alternate with blocks in a session with ``TorchAutoSteps=1`` (CPU sampling
and perf off, to isolate the hooks), one intra-op thread; each block's CPU
time per step (``time.process_time_ns``: all threads, the drain included) is
compared with the plain blocks' in the same run. Prints the medians, the
added microseconds per step and that cost as a share of 2 ms and 40 ms steps
(docs/BENCHMARKS.md, section 4). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import smppy
import torch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few blocks of few steps")
    args = parser.parse_args()
    blocks, steps = (3, 500) if args.quick else (9, 4000)
    torch.set_num_threads(1)
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    x = torch.ones(1, 1)

    def cpu_ns_per_step() -> float:
        start = time.process_time_ns()
        for _ in range(steps):
            model(x).sum().backward()
            optimizer.step()
        return (time.process_time_ns() - start) / steps

    profiler = smppy.SMProfiler.instance()
    plain, auto = [], []
    with tempfile.TemporaryDirectory() as directory:
        config = {
            "RecordFile": os.path.join(directory, "rank%r_pid%p_s%s.smprof"),
            "TorchAutoSteps": "1",
            "EnablePerf": "0",
            "CpuProfilingDurationS": "0",
        }
        cpu_ns_per_step()  # warm-up
        for _ in range(blocks):
            plain.append(cpu_ns_per_step())
            profiler.configure(config)
            profiler.start_profiling()
            auto.append(cpu_ns_per_step())
            profiler.stop_profiling()
    base, hooked = statistics.median(plain), statistics.median(auto)
    added_us = (hooked - base) / 1e3
    print(f"{blocks} blocks of {steps} steps each way, CPU time per step, median")
    print(f"  plain step:               {base / 1e3:8.1f} us")
    print(f"  TorchAutoSteps=1 step:    {hooked / 1e3:8.1f} us  ({hooked / base:.2f}x)")
    print(f"  added per step:           {added_us:8.1f} us")
    for step_ms in (2, 40):
        print(f"  share of a {step_ms:>2} ms step:     {100 * added_us / (step_ms * 1e3):8.2f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
