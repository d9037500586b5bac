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
from partial_summaries import summaries_via_partials
from smppy import _smppy
from smppy.trace import annotation_events, find_trace_files, open_trace

REPO = Path(__file__).resolve().parents[2]

# One annotated training step, both API styles, for scripts run with
# ``run_python`` (model, opt, x, y defined; indented for a loop body).
ANNOTATED_STEP = textwrap.indent(
    textwrap.dedent(
        """\
        with smppy.annotate("step"):
            with smppy.annotate("Forward"):
                out = model(x)
            h = smppy.annotation_begin("Loss")
            loss = torch.nn.functional.cross_entropy(out, y)
            smppy.annotation_end(h)
            with smppy.annotate("Backward"):
                opt.zero_grad()
                loss.backward()
            h = smppy.annotation_begin("Optimizer")
            opt.step()
            smppy.annotation_end(h)"""
    ),
    "    ",
)


@pytest.fixture(autouse=True)
def summaries_match_their_partials(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every job summary a test computes in this process (smppy.analysis.summarize,
    reports, the CLI in-process) is computed again from per-stream partial summaries
    merged in several orders; the test fails unless every JSON text is the same bytes."""
    direct = _smppy.summarize
    differences: list[str] = []

    def summarize_and_compare(paths: list[str], *options: Any, **named: Any) -> bytes:
        text = direct(paths, *options, **named)
        named.pop("progress", None)
        for how, other in summaries_via_partials(paths, *options[:4], **named).items():
            if other != text:
                differences.append(f"{paths}: the summary {how} differs from the direct one")
        return text

    monkeypatch.setattr(_smppy, "summarize", summarize_and_compare)
    yield
    assert not differences, "\n".join(differences)


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


EXAMPLE_JOB = "example-job"
EXAMPLE_STEPS = 12


@pytest.fixture(scope="session")
def example_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The main job, run once per test session: examples/pytorch_train.py for
    ``EXAMPLE_STEPS`` steps on 2 ranks under torchrun. Its job directory."""
    out = tmp_path_factory.mktemp("example")
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         str(REPO / "examples" / "pytorch_train.py"), "--steps", str(EXAMPLE_STEPS), "--out", str(out)],
        env={**os.environ, "SMP_JOB_NAME": EXAMPLE_JOB, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out / EXAMPLE_JOB
