"""A training script written for SageMaker Profiler, as its users write them: the profiler set up
through ``Config().profiler`` and ``configure``, every phase annotated by hand with the user's own
names (``step_N``, ``DataLoad``, ``Forward``, ``Backward``, ``Optimizer``), no automatic PyTorch
mode. Each batch takes ``--load-ms`` to load in the training process (no DataLoader workers), of a
step of about ``--load-ms`` + ``--compute-ms``.

    torchrun --nproc-per-node 2 sagemaker_style_train.py OUT [--steps N] [--load-ms MS] [--compute-ms MS]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import smppy
import torch
import torch.distributed as dist


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--load-ms", type=float, default=33)
    parser.add_argument("--compute-ms", type=float, default=28)
    args = parser.parse_args()

    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group("gloo")
    torch.manual_seed(0)
    torch.set_num_threads(1)

    config = smppy.Config()
    config.profiler = {"RecordFile": str(Path(args.out) / "rank%r_pid%p.smprof"), "EnableCuda": "0"}
    profiler = smppy.SMProfiler.instance()
    profiler.configure(config)

    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
    if distributed:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    profiler.start_profiling()
    for step in range(args.steps):
        with smppy.annotate(f"step_{step}"):
            load = smppy.annotation_begin("DataLoad")
            time.sleep(args.load_ms / 1000)  # reading and decoding the batch
            x, y = torch.randn(32, 64), torch.randint(0, 4, (32,))
            smppy.annotation_end(load)
            with smppy.annotate("Forward"):
                loss = torch.nn.functional.cross_entropy(model(x), y)
                time.sleep(args.compute_ms / 2000)
            with smppy.annotate("Backward"):
                opt.zero_grad()
                loss.backward()
                time.sleep(args.compute_ms / 2000)
            with smppy.annotate("Optimizer"):
                opt.step()
    profiler.stop_profiling()
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
