"""The step schedule and SMProfiler.step(): torch.profiler's semantics, one trace file per cycle."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import smppy
import torch.profiler
from conftest import read_annotations, start_session
from smppy.analysis.trace import find_trace_files

pytestmark = [pytest.mark.torch]


@pytest.mark.parametrize(
    ("wait", "warmup", "active", "repeat", "skip_first"),
    list(itertools.product([0, 2], [0, 1], [1, 3], [0, 2], [0, 3])),
)
def test_actions_are_torch_profilers(
    wait: int, warmup: int, active: int, repeat: int, skip_first: int
) -> None:
    ours = smppy.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first)
    torchs = torch.profiler.schedule(
        wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first
    )
    assert [ours.action(step).name for step in range(40)] == [torchs(step).name for step in range(40)]


def test_bad_schedules_and_keys_name_the_field() -> None:
    with pytest.raises(ValueError, match="active"):
        smppy.schedule(wait=1, warmup=1, active=0)
    with pytest.raises(ValueError, match="wait"):
        smppy.schedule(wait=-1, warmup=1, active=1)
    for key in ("ScheduleActive", "TorchAutoSteps", "TorchModuleDepth", "ProcessRole"):
        with pytest.raises(ValueError, match=f"'{key}'.*valid values"):
            smppy.SMProfiler.instance().configure({key: "three"})


def _steps_per_file(trace_dir: Path) -> list[list[str]]:
    return [
        [e["name"] for e in sorted(read_annotations(f), key=lambda e: e["ts_ns"])]
        for f in find_trace_files(trace_dir)
    ]


def test_schedule_keys_record_one_file_per_cycle(trace_dir: Path) -> None:
    profiler = start_session(
        trace_dir,
        ScheduleSkipFirst="1",
        ScheduleWait="1",
        ScheduleWarmup="1",
        ScheduleActive="2",
        ScheduleRepeat="2",
    )
    for step in range(12):
        assert profiler.step_num == step
        with smppy.annotate("work"):
            pass
        profiler.step()
    profiler.stop_profiling()
    assert _steps_per_file(trace_dir) == [
        ["ProfilerWarmup#2", "work", "ProfilerStep#3", "work", "ProfilerStep#4", "work"],
        ["ProfilerWarmup#6", "work", "ProfilerStep#7", "work", "ProfilerStep#8", "work"],
    ]


def test_schedule_argument_and_stop_mid_cycle(trace_dir: Path) -> None:
    config = {"RecordFile": str(trace_dir / "s%s.smprof")}
    profiler = smppy.SMProfiler.instance()
    profiler.configure(config, schedule=smppy.schedule(wait=0, warmup=0, active=3))
    profiler.start_profiling()
    for _ in range(4):
        profiler.step()
    profiler.stop_profiling()
    assert not profiler.is_profiling
    assert _steps_per_file(trace_dir) == [
        ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"],
        ["ProfilerStep#3", "AfterLastStep"],  # the step open at stop reached no step(): not a step
    ]


def test_without_schedule_steps_start_at_the_first_step_call(trace_dir: Path) -> None:
    profiler = start_session(trace_dir)
    for _ in range(3):
        profiler.step()
    profiler.stop_profiling()
    profiler.step()  # after stop: a no-op
    assert _steps_per_file(trace_dir) == [["ProfilerStep#1", "ProfilerStep#2", "AfterLastStep"]]


def test_manual_steps_before_start_record_step_zero(trace_dir: Path) -> None:
    smppy.SMProfiler.instance().use_manual_steps()
    profiler = start_session(trace_dir)
    profiler.step()
    profiler.stop_profiling()
    assert _steps_per_file(trace_dir) == [["ProfilerStep#0", "AfterLastStep"]]
