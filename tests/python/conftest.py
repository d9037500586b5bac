"""Shared fixtures: sessions writing into a temporary directory, and reading
their traces back through the real reader."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import smppy
from smppy.trace import annotation_events, find_trace_files, open_trace

REPO = Path(__file__).resolve().parents[2]


def start_session(trace_dir: Path, **settings: str) -> smppy.SMProfiler:
    """Configure and start the process's profiler writing under ``trace_dir``."""
    config = smppy.Config()
    config.profiler = {"RecordFile": str(trace_dir / "rank%r_pid%p_s%s.smprof"), **settings}
    profiler = smppy.SMProfiler.instance()
    profiler.configure(config)
    profiler.start_profiling()
    return profiler


def read_annotations(path: Path) -> list[dict[str, Any]]:
    """Every annotation event of the trace file(s) at ``path``."""
    events: list[dict[str, Any]] = []
    for file in find_trace_files(path):
        trace = open_trace(file)
        events.extend(annotation_events(trace))
        assert trace.problem is None, trace.problem
        assert trace.footer is not None, f"{file} has no footer"
    return events


@pytest.fixture
def trace_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh directory for this test's traces; any session left running is stopped."""
    yield tmp_path
    if smppy.SMProfiler.instance().is_profiling:
        smppy.SMProfiler.instance().stop_profiling()


def run_python(
    code: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (sessions are process-wide state)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
