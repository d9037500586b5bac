"""A script annotated the way SageMaker Profiler users annotate (tests/python/support/
sagemaker_style_train.py: ``step_N``, ``DataLoad``, ``Forward``, ``Backward``, ``Optimizer``) on two
torchrun ranks, its batches taking about half of each step to load: diagnose finds the input
pipeline bound by the user's own ``DataLoad``, and summary, diagnose, report and diff give one
figure for the wait."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from report_page import embedded_payload
from smppy import analysis
from smppy.diagnose.input_wait import input_wait_sentence
from smppy.diff import diff_summaries
from smppy.report import build_report

pytestmark = [pytest.mark.slow, pytest.mark.torch]

SCRIPT = Path(__file__).parents[1] / "support" / "sagemaker_style_train.py"
STEPS = 16


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sagemaker_style")
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         str(SCRIPT), str(out), "--steps", str(STEPS)],
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _smprof(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "smppy.cli", *args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _input_finding(job: Path) -> dict[str, Any]:
    findings = json.loads(_smprof("diagnose", str(job), "--json"))["findings"]
    matching = [f for f in findings if f["id"] == "input_pipeline_bound"]
    assert len(matching) == 1, [f["title"] for f in findings]
    return matching[0]


def test_diagnose_takes_the_users_data_load_as_input_wait(job: Path) -> None:
    finding = _input_finding(job)
    assert finding["evidence"]["data_annotations"] == ["DataLoad"]
    assert "taken as input wait: DataLoad" in finding["cost_basis"]
    assert "--data-wait-pattern" in finding["cost_basis"]  # how to change it
    # Every step but the first, the warm-up.
    assert [r["steps"] for r in finding["evidence"]["ranks"]] == [STEPS - 1, STEPS - 1]


def test_summary_diagnose_report_and_diff_give_one_wait_figure(job: Path) -> None:
    finding = _input_finding(job)
    summary = json.loads(_smprof("summary", str(job), "--json"))
    wait = summary["input_pipeline_wait"]
    assert round(wait["step_percent"] / 100, 4) == finding["evidence"]["wait_share"]
    assert wait["wait_per_step_ns"] == finding["cost_per_step_ns"]
    assert wait["names"] == ["DataLoad"] and wait["steady_steps"] == 2 * (STEPS - 1)
    # The text: the title's share, rounded, is the summary line's.
    text = _smprof("summary", str(job))
    line = next(line for line in text.splitlines() if line.startswith("input-pipeline wait: "))
    assert line == f"input-pipeline wait: {input_wait_sentence(wait)}"
    assert f"Steps wait {wait['step_percent']:.0f}% of their time" in finding["title"]
    assert [r["steps"]["count"] for r in summary["ranks"]] == [STEPS, STEPS]
    # The report's steps panel shows the summary's line; diff compares the same figure.
    assert embedded_payload(build_report(str(job)))["report"]["input_wait"] == input_wait_sentence(wait)
    same = diff_summaries(analysis.summarize(job), analysis.summarize(job))
    row = next(r for r in same["steps"] if r["name"] == "input-pipeline wait per step")
    assert row["a_ns"] == row["b_ns"] == wait["wait_per_step_ns"]
