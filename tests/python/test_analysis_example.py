"""The summary of the real example training run (2 ranks under torchrun) counts the steps
and annotations the script made."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO
from smppy import analysis

STEPS = 12


def test_example_run_summary_matches_what_the_script_did(tmp_path: Path) -> None:
    env = {**os.environ, "SMP_JOB_NAME": "summary-job", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "2",
            str(REPO / "examples" / "pytorch_train.py"),
            "--steps",
            str(STEPS),
            "--out",
            str(tmp_path),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    s = analysis.summarize(tmp_path)
    assert s["job"]["ranks"] == [0, 1]
    assert s["steps"]["stats"]["count"] == 2 * STEPS
    assert [p["stats"]["count"] for p in s["steps"]["per_rank"]] == [STEPS, STEPS]
    counts = {a["name"]: a["stats"]["count"] for a in s["annotations"]}
    for name in ("step", "Forward", "Loss", "Backward", "Optimizer"):
        assert counts[name] == 2 * STEPS, name
    assert all(f["complete"] for f in s["job"]["files"])
    steps = analysis.load(tmp_path).steps
    assert sorted(steps["step"]) == sorted(list(range(STEPS)) * 2)
