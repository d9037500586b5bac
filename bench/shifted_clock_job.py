"""A two-rank gloo job (CPU) whose rank 1 has its realtime clock shifted on purpose.

    torchrun --standalone --nproc-per-node 2 bench/shifted_clock_job.py TRACE_DIR SHIFT_NS

Rank 1 sets ``SMPROF_TEST_REALTIME_SHIFT_NS`` (test-only: the clock anchor adds
it to every realtime reading) before its first session, so its trace says
its clock reads SHIFT_NS off rank 0's; the clock-alignment rounds taken at
start and stop must recover it. Used by tests/python/test_clock_alignment.py
and bench/clock_alignment_benchmark.py.
"""

from __future__ import annotations

import os
import sys

import torch
import torch.distributed as dist

if os.environ["RANK"] == "1":
    os.environ["SMPROF_TEST_REALTIME_SHIFT_NS"] = sys.argv[2]
import smppy  # noqa: E402

dist.init_process_group("gloo")
torch.set_num_threads(1)
config = smppy.Config()
config.profiler = {"RecordFile": os.path.join(sys.argv[1], "rank%r_pid%p.smprof")}
profiler = smppy.SMProfiler.instance()
profiler.configure(config)
profiler.start_profiling()
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    with smppy.annotate("step"):
        opt.zero_grad()
        model(torch.randn(8, 16)).sum().backward()
        opt.step()
profiler.stop_profiling()
dist.destroy_process_group()
