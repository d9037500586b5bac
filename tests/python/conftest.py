"""Shared fixtures: sessions writing into a temporary directory, and reading
their traces back through the real reader."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import smppy
from smppy import _smppy
from smppy.analysis.trace import annotation_events, find_trace_files, open_trace

REPO = Path(__file__).resolve().parents[2]
# The tests' shared helpers (support/) and the synthetic trace writer the benchmarks share with them
# (bench/synthetic_trace.py) are imported by module name. synthetic_trace writes with the test-only
# extension _smprof_testing from the build tree ($SMPROF_TESTING_MODULE_DIR, default build/test/testing;
# docs/TESTING.md), and fails saying how to build it where it is missing.
sys.path[:0] = [str(Path(__file__).resolve().parent / "support"), str(REPO / "bench")]

from partial_summaries import summaries_via_partials  # noqa: E402
from timeline_parts import timelines_via_parts  # noqa: E402

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


def _each_call_checked(
    monkeypatch: pytest.MonkeyPatch, function: str, disagreements: Callable[..., list[str]]
) -> Iterator[None]:
    """Wraps ``_smppy.<function>`` for a test: after each call, ``disagreements(result, *arguments)``
    names the other ways of computing the result that gave something else; the test fails if any did."""
    direct = getattr(_smppy, function)
    differences: list[str] = []

    def checked(*args: Any, **named: Any) -> Any:
        result = direct(*args, **named)
        differences.extend(disagreements(result, *args, **named))
        return result

    monkeypatch.setattr(_smppy, function, checked)
    yield
    assert not differences, "\n".join(differences)


@pytest.fixture(autouse=True)
def summaries_match_their_partials(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every job summary a test computes in this process (smppy.analysis.summarize,
    reports, the CLI in-process) is computed again from per-stream partial summaries
    merged in several orders; the test fails unless every JSON text is the same bytes."""

    def disagreements(
        text: bytes, paths: list[str], *options: Any, progress: Any = None, **named: Any
    ) -> list[str]:
        ways = summaries_via_partials(paths, *options[:4], **named)
        return [
            f"{paths}: the summary {how} differs from the direct one"
            for how, other in ways.items()
            if other != text
        ]

    yield from _each_call_checked(monkeypatch, "summarize", disagreements)


@pytest.fixture(autouse=True)
def timelines_match_their_parts(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every timeline a test exports in this process (smprof export --format chrome|perfetto) is
    written again in parts, cut in several ways, and assembled; the test fails unless every file is
    the same bytes as the direct one."""

    def disagreements(
        result: dict[str, Any],
        files: list[str],
        path: str,
        format: str,
        *,
        gzip: bool = False,
        **options: Any,
    ) -> list[str]:
        written = Path(path).read_bytes()
        ways = timelines_via_parts(files, format, gzip, **options)
        return [
            f"{path}: the timeline assembled {how} differs from the direct one"
            for how, other in ways.items()
            if other != written
        ]

    yield from _each_call_checked(monkeypatch, "export_timeline", disagreements)


def counted_worker_pools(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[int]:
    """The worker counts of the pools that ``module`` starts with ``on_local_workers`` from now on."""
    pools: list[int] = []
    on_local_workers = module.on_local_workers

    def counted(task: Any, items: Any, jobs: int, **arguments: Any) -> Any:
        pools.append(jobs)
        return on_local_workers(task, items, jobs, **arguments)

    monkeypatch.setattr(module, "on_local_workers", counted)
    return pools


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
