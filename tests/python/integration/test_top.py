"""``smprof top --once --json`` on a real two-rank job while it runs (torchrun, gloo, the diagnose
loop with 300 steps of 50 ms): each rank's current step as the job writes it, its steps per second and
step times, no problem reported for the files still being written, the step moving on between two
snapshots of one running job, and every rank ended with its last step once the job is over."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.torch]

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "diagnose_train.py"
STEPS = 300  # 15 s or more of steps: room for a slow machine's snapshots while the job runs


def _top(directory: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "smppy.cli",
            "top",
            str(directory),
            "--once",
            "--json",
            "--findings-every",
            "-1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def _until(directory: Path, job: subprocess.Popen, done: Any) -> dict[str, Any]:
    """Snapshots every 0.3 s until ``done(snapshot)``; fails if the job ends first."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert job.poll() is None, "the job ended before the snapshot was taken"
        snapshot = _top(directory)
        assert snapshot["problems"] == []
        if done(snapshot):
            return snapshot
        time.sleep(0.3)
    raise AssertionError("no such snapshot in 120 s")


def test_top_follows_a_running_job_and_sees_it_end(tmp_path: Path) -> None:
    out = tmp_path / "job"
    job = subprocess.Popen(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", str(SCRIPT),
         str(out), "--steps", str(STEPS), "--step-sleep", "0.05", "--bare"],
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    try:
        out.mkdir(parents=True, exist_ok=True)

        def both_stepping(s: dict[str, Any]) -> bool:
            return len(s["ranks"]) == 2 and all((r["step"] or 0) >= 5 for r in s["ranks"])

        first = _until(out, job, both_stepping)
        assert [r["rank"] for r in first["ranks"]] == [0, 1]
        for r in first["ranks"]:
            assert not r["ended"] and r["steps_per_s"] > 0 and r["files"] == 1
            assert r["last_step_ns"] >= 50_000_000 and r["median_step_ns"] >= 50_000_000  # the 50 ms sleep
            assert 0 <= r["input_wait_share"] < 1 and r["cpu_utilization_percent"] is not None
            assert r["gpu_busy_share"] is None  # no GPU here
        step = first["ranks"][0]["step"]
        later = _until(out, job, lambda s: s["ranks"][0]["step"] >= step + 5)
        assert not later["ranks"][0]["ended"]
    finally:
        output, _ = job.communicate(timeout=300)
    assert job.returncode == 0, output
    last = _top(out)
    assert last["problems"] == []
    for r in last["ranks"]:
        assert r["ended"] and r["step"] == STEPS - 1 and r["steps_kept"] == 100
