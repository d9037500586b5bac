"""A real PyTorch training run profiled with smppy, unchanged SageMaker Profiler style.

Trains a small MLP classifier on a synthetic dataset (made here, no download)
with DistributedDataParallel over gloo when launched by torchrun, on the CPU:

    torchrun --standalone --nproc-per-node 2 examples/pytorch_train.py --steps 100

Every step is annotated (``step`` > ``Forward``, ``Loss``, ``Backward``,
``Optimizer``), with both API styles; each rank writes one trace file.
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

try:
    import smprof
except ImportError:
    import smppy as smprof


def make_dataset(samples: int, features: int, classes: int, seed: int = 0) -> TensorDataset:
    """Points labelled by a fixed random linear teacher: learnable, reproducible."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(samples, features, generator=g)
    teacher = torch.randn(features, classes, generator=g)
    y = (x @ teacher).argmax(dim=1)
    return TensorDataset(x, y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--out", default="smprof-out", help="trace directory")
    args = parser.parse_args()

    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size > 1:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if world_size > 1 else 0
    torch.manual_seed(rank)
    torch.set_num_threads(1)

    config = smprof.Config()
    config.profiler = {
        "EnableCuda": "1" if torch.cuda.is_available() else "0",
        "RecordFile": os.path.join(args.out, "%j", "%h", "rank%r_pid%p_%t.smprof"),
    }
    profiler = smprof.SMProfiler.instance()
    profiler.configure(config)

    features, classes = 32, 8
    dataset = make_dataset(args.batch_size * 64, features, classes)
    sampler = torch.utils.data.distributed.DistributedSampler(dataset) if world_size > 1 else None
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None)
    model: nn.Module = nn.Sequential(
        nn.Linear(features, args.hidden),
        nn.ReLU(),
        nn.Linear(args.hidden, args.hidden),
        nn.ReLU(),
        nn.Linear(args.hidden, classes),
    )
    if world_size > 1:
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    profiler.start_profiling()
    started = time.perf_counter()
    step, epoch, loss = 0, 0, torch.tensor(0.0)
    while step < args.steps:
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            if step == args.steps:
                break
            with smprof.annotate("step"):
                with smprof.annotate("Forward"):
                    logits = model(x)
                handle = smprof.annotation_begin("Loss")
                loss = loss_fn(logits, y)
                smprof.annotation_end(handle)
                with smprof.annotate("Backward"):
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                with smprof.annotate("Optimizer"):
                    optimizer.step()
            step += 1
        epoch += 1
    elapsed = time.perf_counter() - started
    profiler.stop_profiling()

    trace = profiler.last_session()
    print(
        f"rank {rank}: {step} steps in {elapsed:.2f} s, final loss {loss.item():.4f}, "
        f"{trace['annotations_written']} annotations -> {trace['path']} ({trace['bytes_written']} bytes)"
    )
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
