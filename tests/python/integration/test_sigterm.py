"""SIGTERM (schedulers, spot interruptions): a real training run killed with SIGTERM stops its
session first (every completed step in the trace, the footer written) and then ends as SIGTERM
ends it; a script's own SIGTERM handler is still called; StopOnSigterm=0 opts out."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ANNOTATED_STEP
from smppy.analysis.trace import annotation_events, find_trace_files, open_trace

pytestmark = [pytest.mark.torch]

pytest.importorskip("torch")

TRAIN = """
import signal, sys
import torch
import smppy

{handler}
config = smppy.Config()
config.profiler = {{"RecordFile": "{out}/rank%r.smprof", "StopOnSigterm": "{stop_on_sigterm}"}}
profiler = smppy.SMProfiler.instance()
profiler.configure(config)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(256, 32), torch.randint(0, 4, (256,))
profiler.start_profiling()
steps = 0
while True:
{train_step}
    steps += 1
    print(steps, flush=True)
"""

OWN_HANDLER = """
def on_sigterm(signum, frame):
    print("own handler called", flush=True)
    sys.exit(3)

signal.signal(signal.SIGTERM, on_sigterm)
"""

STEPS_BEFORE_KILL = 30


def train_then_sigterm(tmp_path: Path, handler: str = "", stop_on_sigterm: str = "1") -> tuple[int, int, str]:
    """Runs the training script, sends SIGTERM after some steps; returns (exit status, the last
    step the script reported before the signal, its stdout after that)."""
    script = TRAIN.format(
        handler=handler,
        out=tmp_path,
        stop_on_sigterm=stop_on_sigterm,
        train_step=textwrap.indent(textwrap.dedent(ANNOTATED_STEP), "    "),
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        reported = 0
        while reported < STEPS_BEFORE_KILL:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            reported = int(line)
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return proc.returncode, reported, rest


def steps_in_trace(tmp_path: Path) -> tuple[int, dict | None]:
    (path,) = find_trace_files(tmp_path)
    trace = open_trace(path)
    steps = sum(e["name"] == "step" for e in annotation_events(trace))
    return steps, trace.footer  # read to the end: the footer is known now


def test_sigterm_writes_the_footer_and_every_completed_step_then_ends_the_process(tmp_path: Path):
    status, reported, _ = train_then_sigterm(tmp_path)
    assert status == -signal.SIGTERM, "then ends as SIGTERM does"
    steps, footer = steps_in_trace(tmp_path)
    assert footer is not None
    assert steps >= reported, "nothing completed before the signal is lost"


def test_a_scripts_own_sigterm_handler_is_still_called(tmp_path: Path):
    status, reported, rest = train_then_sigterm(tmp_path, handler=OWN_HANDLER)
    assert "own handler called" in rest
    assert status == 3, "the script's handler decides how the process ends"
    steps, footer = steps_in_trace(tmp_path)
    assert footer is not None
    assert steps >= reported


def test_stop_on_sigterm_0_leaves_sigterm_alone(tmp_path: Path):
    status, _, _ = train_then_sigterm(tmp_path, stop_on_sigterm="0")
    assert status == -signal.SIGTERM
    _, footer = steps_in_trace(tmp_path)
    assert footer is None, "killed at once, as without smprof"
