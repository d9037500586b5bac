"""scripts/gpu_probe.py, the issue-33 probe run on a lent GPU: here, without one, it exits 2 and says so,
and its parent side (one process per scenario, a time limit that turns a stuck scenario into a HANG row,
the table) works. (The scenarios themselves need a GPU.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "gpu_probe.py"


def probe(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    # A driver's nvidia-smi on a machine whose GPU is gone: it lists none and fails.
    nvidia_smi = tmp_path / "nvidia-smi"
    nvidia_smi.write_text("#!/bin/sh\necho 'No devices were found'\nexit 6\n")
    nvidia_smi.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path / "out"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_without_a_gpu_it_exits_2_and_says_so(tmp_path: Path) -> None:
    proc = probe(tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no GPU here" in proc.stdout, proc.stdout


def test_a_stuck_scenario_is_a_hang_row_and_the_others_still_run(tmp_path: Path) -> None:
    proc = probe(tmp_path, "--cpu-rehearsal", "--only", "sleep_forever,graphs", "--budget", "12")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    table = proc.stdout.split("==== gpu_probe table ====")[1]
    assert "HANG     sleep_forever  why=killed after 10 s" in table, proc.stdout
    assert "graphs" in table, proc.stdout
    assert (tmp_path / "out" / "probe.json").is_file()
