"""A plain PyTorch training script, with no profiler code: profile it with

    smprof run -- torchrun --standalone --nproc-per-node 2 examples/plain_train.py --steps 40

Trains a small MLP on a synthetic dataset (no download) with
DistributedDataParallel over gloo on the CPU, its batches loaded by
DataLoader workers started with ``spawn`` (what CUDA jobs use). Under
``smprof run`` every optimizer step becomes ``ProfilerStep#N``, the wait for
each batch ``InputWait``, each ``loss.backward()`` ``Backward``, and the
workers write traces labelled as workers of their rank.
"""

from __future__ import annotations

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2, help="DataLoader worker processes (spawn)")
    args = parser.parse_args()

    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group("gloo")
    torch.manual_seed(0)
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32 * args.steps, 32, generator=g)
    y = (x @ torch.randn(32, 8, generator=g)).argmax(dim=1)
    loader = DataLoader(
        TensorDataset(x, y),
        batch_size=32,
        num_workers=args.workers,
        multiprocessing_context="spawn" if args.workers else None,
    )
    model: nn.Module = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 8))
    if distributed:
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step, (inputs, labels) in enumerate(loader):
        if step == args.steps:
            break
        optimizer.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(inputs), labels).backward()
        optimizer.step()
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
