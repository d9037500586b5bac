"""torch.profiler recording when a session starts: it shares CUPTI with smprof, so
start_profiling says so (docs/GPU.md, "Collection: other CUPTI users")."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_python

pytestmark = [pytest.mark.torch]

NOTICE = "torch.profiler is recording in this process"


def start_under(tmp_path: Path, torch_profiler_open: bool) -> str:
    proc = run_python(
        f"""
        import contextlib, warnings
        import torch, smppy
        warnings.simplefilter("always")
        c = smppy.Config(); c.profiler = {{"RecordFile": "{tmp_path}/t_%s.smprof", "EnableCuda": "0"}}
        p = smppy.SMProfiler.instance(); p.configure(c)
        cpu_only = [torch.profiler.ProfilerActivity.CPU]
        profiled = {torch_profiler_open}
        opened = torch.profiler.profile(activities=cpu_only) if profiled else contextlib.nullcontext()
        with opened:
            p.start_profiling()
            torch.ones(4).sum()
            p.stop_profiling()
        """,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def test_a_session_started_inside_torch_profiler_says_so(tmp_path: Path) -> None:
    assert NOTICE in start_under(tmp_path, torch_profiler_open=True)


def test_no_notice_without_torch_profiler(tmp_path: Path) -> None:
    assert NOTICE not in start_under(tmp_path, torch_profiler_open=False)
