"""A small real PyTorch training loop for the diagnose tests, with one problem
switched on by a flag (or none: the balanced run). Automatic PyTorch mode
annotates steps (``ProfilerStep#N``) and ``InputWait``; the loop adds
``Forward`` and, under torchrun, an ``all_reduce`` of the gradients.

    python diagnose_train.py OUT [--slow-data] [--slow-rank R] [--checkpoint-every N] [--threads T]
                                [--one-core]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import smppy
import torch
import torch.distributed as dist

STEP_SLEEP_S = 0.01  # every step idles this long: the balanced run leaves the CPU free


class Batches(torch.utils.data.Dataset):
    """Random samples; with ``sleep_s``, each costs that long to 'load'."""

    def __init__(self, samples: int, sleep_s: float) -> None:
        self.x = torch.randn(samples, 64)
        self.y = torch.randint(0, 4, (samples,))
        self.sleep_s = sleep_s

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        if self.sleep_s:
            time.sleep(self.sleep_s)
        return self.x[i], self.y[i]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--slow-data", action="store_true", help="each batch takes ~30 ms to load")
    parser.add_argument("--slow-rank", type=int, default=-1, help="this rank's Forward takes 40 ms longer")
    parser.add_argument("--checkpoint-every", type=int, default=0, help="save a checkpoint every N steps")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads; more: heavy matmuls")
    parser.add_argument("--one-core", action="store_true", help="pinned to one core (a narrow cpuset)")
    args = parser.parse_args()

    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    torch.manual_seed(rank)
    if args.one_core:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    torch.set_num_threads(args.threads)
    heavy = args.threads > 1
    if heavy:
        # On a machine shared with other work (a CI runner, a build), raise this run's priority
        # where permitted, so that its own threads are what saturates the cores.
        try:
            os.nice(-10)
        except PermissionError:
            pass

    config = smppy.Config()
    config.profiler = {
        "RecordFile": str(Path(args.out) / "rank%r_pid%p.smprof"),
        "TorchAutoSteps": "1",
        "CpuSampleIntervalMs": "10",
        "EnableCuda": "0",
    }
    profiler = smppy.SMProfiler.instance()
    profiler.configure(config)

    batch = 8
    data = Batches(batch * args.steps, 0.004 if args.slow_data else 0.0)
    loader = torch.utils.data.DataLoader(data, batch_size=batch)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    weights = torch.randn(384, 384)

    profiler.start_profiling()
    for step, (x, y) in enumerate(loader):
        with smppy.annotate("Forward"):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            if heavy:
                for _ in range(10):
                    weights = torch.tanh(weights @ weights)
            else:
                time.sleep(STEP_SLEEP_S)
            if rank == args.slow_rank:
                time.sleep(0.04)
        opt.zero_grad()
        loss.backward()
        if distributed:
            with smppy.annotate("all_reduce"):
                for p in model.parameters():
                    dist.all_reduce(p.grad)
        opt.step()
        if args.checkpoint_every and step % args.checkpoint_every == args.checkpoint_every - 1:
            with smppy.annotate("checkpoint"):
                torch.save(model.state_dict(), Path(args.out) / f"ckpt_rank{rank}.pt")
                time.sleep(0.15)  # a slow disk
    profiler.stop_profiling()
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
