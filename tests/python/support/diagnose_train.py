"""A small real PyTorch training loop for the diagnose tests, with one problem
switched on by a flag (or none: the balanced run). Automatic PyTorch mode
annotates steps (``ProfilerStep#N``) and ``InputWait``; the loop adds
``Forward`` and, under torchrun, an ``all_reduce`` of the gradients; with ``--ddp`` the model is
DistributedDataParallel instead, whose reducer all-reduces inside ``loss.backward()``, annotated
``Backward`` as SMP users annotate it (no collective annotated); ``--fsdp`` shards it with FSDP2's
``fully_shard`` instead, ``--fsdp1`` with FSDP1's ``FullyShardedDataParallel``; ``--bare``
leaves out the loop's own annotations (the collectives that ``TorchAutoSteps`` records are all
there is to see a straggler by).

    python diagnose_train.py OUT [--slow-data] [--slow-rank R] [--ddp | --fsdp | --fsdp1] [--bare]
                                [--checkpoint-every N] [--threads T] [--one-core] [--step-sleep S]
                                [--metrics-mb M]

What it computes does not depend on the machine's speed: the heavy steps (``--threads`` above 1)
compute for a fixed CPU time per usable core, not a fixed number of products, so every step fills
the cores on a fast CPU and a slow one alike.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
from pathlib import Path

import smppy
import torch
import torch.distributed as dist

STEP_SLEEP_S = 0.01  # every step idles this long (--step-sleep): the balanced run leaves the CPU free
# Heavy steps compute for this much CPU time per usable core: 100 ms on every core whatever its speed.
HEAVY_STEP_CPU_S = 0.1


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


def raise_priority() -> None:
    """On a machine shared with other work (a CI runner, a build), raise this run's priority where
    permitted, so that its own threads are what fills the cores. With the kernel's autogroups
    (CONFIG_SCHED_AUTOGROUP, /proc/sys/kernel/sched_autogroup_enabled) a process's nice value weighs
    only against the processes of its own session, other sessions share the CPU as groups: so the
    run also takes a session of its own and raises that group's priority."""
    for change in (lambda: os.nice(-20), os.setsid, lambda: Path("/proc/self/autogroup").write_text("-20")):
        try:
            change()
        except OSError:  # not permitted, already a session leader, or a kernel without autogroups
            pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--slow-data", action="store_true", help="each batch takes ~30 ms to load")
    parser.add_argument("--slow-rank", type=int, default=-1, help="this rank's Forward takes 40 ms longer")
    parser.add_argument("--ddp", action="store_true", help="DistributedDataParallel; Backward annotated")
    parser.add_argument("--fsdp", action="store_true", help="FSDP2 fully_shard; Backward annotated")
    parser.add_argument("--fsdp1", action="store_true", help="FSDP1 FullyShardedDataParallel on the CPU")
    parser.add_argument("--bare", action="store_true", help="no annotations of the loop's own")
    parser.add_argument("--checkpoint-every", type=int, default=0, help="save a checkpoint every N steps")
    parser.add_argument(
        "--metrics-mb", type=int, default=0, help="all-reduce M MB of metrics each step, synchronously"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads; more: heavy matmuls")
    parser.add_argument("--one-core", action="store_true", help="pinned to one core (a narrow cpuset)")
    parser.add_argument(
        "--step-sleep", type=float, default=STEP_SLEEP_S, help="idle time of a light step (s)"
    )
    args = parser.parse_args()

    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if distributed else 0
    torch.manual_seed(rank)
    if args.one_core:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    torch.set_num_threads(args.threads)
    cores = len(os.sched_getaffinity(0))
    heavy = args.threads > 1
    if heavy:
        raise_priority()

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
    if args.ddp:
        model = torch.nn.parallel.DistributedDataParallel(model)
    if args.fsdp:
        from torch.distributed.fsdp import fully_shard

        for layer in model:
            if isinstance(layer, torch.nn.Linear):
                fully_shard(layer)
        fully_shard(model)
    if args.fsdp1:
        from torch.distributed.fsdp import FullyShardedDataParallel

        model = FullyShardedDataParallel(model, device_id=torch.device("cpu"), use_orig_params=True)
    wrapped = args.ddp or args.fsdp or args.fsdp1

    def annotate(name: str) -> contextlib.AbstractContextManager[object]:
        return contextlib.nullcontext() if args.bare else smppy.annotate(name)

    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    # Threads up to the cores: large products, each a long parallel region that keeps every core
    # busy. More threads than cores: small products, short parallel regions, each of which hands
    # the cores from thread to thread (the context switches of oversubscription, many times the
    # detector's threshold on any CPU, where large products make it a matter of the CPU's speed).
    size = 64 if args.threads > cores else 768
    weights = torch.randn(size, size)
    metrics = torch.ones(args.metrics_mb << 18)  # float32: M MB

    profiler.start_profiling()
    for step, (x, y) in enumerate(loader):
        with annotate("Forward"):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            if heavy:
                # process_time counts every thread of the process.
                until = time.process_time() + HEAVY_STEP_CPU_S * min(args.threads, cores)
                while time.process_time() < until:
                    weights = torch.tanh(weights @ weights)
            else:
                time.sleep(args.step_sleep)
            if rank == args.slow_rank:
                time.sleep(0.04)
        opt.zero_grad()
        if wrapped:
            with annotate("Backward"):
                loss.backward()  # the reducer's all-reduce: rank 0 waits for the slow rank here
        else:
            loss.backward()
        if distributed and not wrapped:
            with annotate("all_reduce"):
                for p in model.parameters():
                    dist.all_reduce(p.grad)
        opt.step()
        if args.metrics_mb:
            dist.all_reduce(metrics)  # the host waits for the transfer, overlapping nothing
        if args.checkpoint_every and step % args.checkpoint_every == args.checkpoint_every - 1:
            with annotate("checkpoint"):
                torch.save(model.state_dict(), Path(args.out) / f"ckpt_rank{rank}.pt")
                time.sleep(0.15)  # a slow disk
    profiler.stop_profiling()
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
