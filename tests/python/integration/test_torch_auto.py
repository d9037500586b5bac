"""Automatic PyTorch mode: optimizer steps as ProfilerStep#N, InputWait, DataLoaderFetch, Backward,
module scopes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import smppy
import torch
from conftest import read_annotations, start_session

pytestmark = [pytest.mark.torch]

BATCHES = 3


def _train(profiler_steps: bool = False) -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.utils.data.TensorDataset(torch.randn(BATCHES * 4, 4), torch.randint(0, 2, (BATCHES * 4,)))
    for x, y in torch.utils.data.DataLoader(data, batch_size=4):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        if profiler_steps:
            smppy.SMProfiler.instance().step()


def _names(trace_dir: Path) -> list[str]:
    return [e["name"] for e in sorted(read_annotations(trace_dir), key=lambda e: e["ts_ns"])]


def test_optimizer_steps_input_wait_and_backward(trace_dir: Path) -> None:
    profiler = start_session(trace_dir, TorchAutoSteps="1")
    _train()
    profiler.stop_profiling()
    events = read_annotations(trace_dir)
    counts = Counter(e["name"] for e in events)
    # The last __next__ ends the epoch (StopIteration): what it opened reaches no optimizer step, and the
    # stop records it as the tail it is, not as a step.
    steps = {f"ProfilerStep#{n}": 1 for n in range(BATCHES)}
    assert counts == {
        "InputWait": BATCHES + 1,
        "DataLoaderFetch": BATCHES,
        "Backward": BATCHES,
        "AfterLastStep": 1,
        **steps,
    }
    by_name = {e["name"]: e for e in events if e["name"].startswith(("ProfilerStep#", "AfterLastStep"))}
    waits = sorted((e for e in events if e["name"] == "InputWait"), key=lambda e: e["ts_ns"])
    first, second = by_name["ProfilerStep#0"], by_name["ProfilerStep#1"]
    assert first["ts_ns"] <= waits[0]["ts_ns"]
    assert first["ts_ns"] + first["dur_ns"] <= second["ts_ns"]
    last, tail = by_name[f"ProfilerStep#{BATCHES - 1}"], by_name["AfterLastStep"]
    assert last["ts_ns"] + last["dur_ns"] <= tail["ts_ns"] <= waits[-1]["ts_ns"]


def test_module_scopes_to_the_set_depth(trace_dir: Path) -> None:
    profiler = start_session(trace_dir, TorchAutoSteps="1", TorchModuleDepth="1")
    _train()
    profiler.stop_profiling()
    counts = Counter(_names(trace_dir))
    assert counts["nn.Module: Sequential"] == BATCHES
    assert "nn.Module: Linear" not in counts


def test_manual_steps_turn_automatic_steps_off(trace_dir: Path) -> None:
    profiler = start_session(trace_dir, TorchAutoSteps="1")
    profiler.use_manual_steps()
    _train(profiler_steps=True)
    profiler.stop_profiling()
    steps = [n for n in _names(trace_dir) if n.startswith(("ProfilerStep#", "AfterLastStep"))]
    # step() ends each step and opens the next: the one open at stop is the tail after the last step.
    assert steps == [f"ProfilerStep#{n}" for n in range(BATCHES)] + ["AfterLastStep"]


def test_hooks_record_nothing_without_torch_auto_steps(trace_dir: Path) -> None:
    profiler = start_session(trace_dir, TorchAutoSteps="1")
    profiler.stop_profiling()
    profiler = start_session(trace_dir / "off")
    _train()
    profiler.stop_profiling()
    assert _names(trace_dir / "off") == []


def _collective_calls(trace_dir: Path) -> list[str]:
    from smppy.analysis.trace import events, open_trace

    return [
        e["op"] for file in sorted(trace_dir.glob("*.smprof")) for e in events(open_trace(str(file)))
        if e["type"] == "collective"
    ]  # fmt: skip


def _autograd_cpu_kernel(op: str) -> str:
    """The AutogradCPU line of the c10d op's dispatch table."""
    dump = torch._C._dispatch_dump(f"c10d::{op}")
    return next(line for line in dump.splitlines() if line.startswith("AutogradCPU"))


def test_the_api_records_collectives_and_steps_aside_between_runs(trace_dir: Path) -> None:
    """An SMP script's session (no TorchAutoSteps) records the collectives (TorchCollectives=1, the
    default), annotates nothing itself, and between runs the dispatcher skips smprof's kernel
    (a fallthrough over it) until a run records again; TorchCollectives=0 records none."""
    import torch.distributed as dist

    dist.init_process_group("gloo", store=dist.FileStore(str(trace_dir / "store"), 1), rank=0, world_size=1)
    try:
        x = torch.ones(4)
        profiler = start_session(trace_dir / "api")
        for _ in range(3):
            dist.all_reduce(x)
        dist.broadcast(x, src=0)
        profiler.stop_profiling()
        assert _collective_calls(trace_dir / "api") == ["allreduce_"] * 3 + ["broadcast_"]
        assert _names(trace_dir / "api") == []
        assert "fallthrough" in _autograd_cpu_kernel("allreduce_")

        profiler = start_session(trace_dir / "off", TorchCollectives="0")
        dist.all_reduce(x)
        profiler.stop_profiling()
        assert _collective_calls(trace_dir / "off") == []
        assert "fallthrough" in _autograd_cpu_kernel("allreduce_")

        profiler = start_session(trace_dir / "again")
        assert "fallthrough" not in _autograd_cpu_kernel("allreduce_")
        dist.all_reduce(x)
        profiler.stop_profiling()
        assert _collective_calls(trace_dir / "again") == ["allreduce_"]
    finally:
        dist.destroy_process_group()


def test_each_calls_work_wait_is_recorded_with_it(trace_dir: Path) -> None:
    """An async all-reduce waited for 50 ms later, a synchronous one (the Python API waits inside
    it), and one whose Work nobody waits for (recorded at the stop, without a wait)."""
    import time

    import torch.distributed as dist
    from smppy.analysis.trace import events, open_trace

    dist.init_process_group("gloo", store=dist.FileStore(str(trace_dir / "store"), 1), rank=0, world_size=1)
    try:
        x = torch.ones(1 << 16)
        profiler = start_session(trace_dir / "t")
        work = dist.all_reduce(x, async_op=True)
        time.sleep(0.05)
        work.wait()
        dist.all_reduce(x)
        unwaited = dist.all_reduce(x, async_op=True)
        profiler.stop_profiling()
        del unwaited
    finally:
        dist.destroy_process_group()
    (file,) = (trace_dir / "t").glob("*.smprof")
    rows = sorted(
        (e for e in events(open_trace(str(file))) if e["type"] == "collective"), key=lambda e: e["ts_ns"]
    )
    assert [r["op"] for r in rows] == ["allreduce_"] * 3
    waited, synchronous, never = rows
    assert waited["wait_start_ns"] - waited["ts_ns"] >= 50_000_000 and waited["wait_dur_ns"] > 0
    assert synchronous["wait_start_ns"] >= synchronous["ts_ns"] + synchronous["dur_ns"]
    assert (never["wait_start_ns"], never["wait_dur_ns"]) == (0, 0)
