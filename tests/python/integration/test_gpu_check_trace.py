"""scripts/gpu_check_trace.py, the judge of scripts/gpu_check.sh, checked here without a GPU: its
--self-test writes a good trace set shaped like a GPU run's (examples/cuda and every PyTorch
scenario), which must pass every row, and one mutation per assertion, each of which must fail its
own rows and no other; every row must fail on some mutation. (The GPU run itself needs a GPU.)"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "gpu_check_trace.py"


def self_test_module():
    sys.path.insert(0, str(SCRIPT.parent))  # it imports gpu_check_trace
    spec = importlib.util.spec_from_file_location(
        "gpu_check_selftest", SCRIPT.parent / "gpu_check_selftest.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_check_selftest"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def test_every_row_passes_the_good_set_and_fails_on_its_own_mutation() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--self-test"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "good set: " in proc.stdout and ", 0 failing" in proc.stdout, proc.stdout
    assert "0 problems" in proc.stdout and "WRONG" not in proc.stdout, proc.stdout


def test_without_the_apps_truth_the_torch_rows_still_run_and_one_row_fails(tmp_path: Path) -> None:
    # gpu_check.sh goes on to the PyTorch part when examples/cuda cannot start,
    # and passes why instead of the truth JSON.
    synthetic = self_test_module()
    _, torch_dir = synthetic.write_set(synthetic.good_set(), tmp_path / "run")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "check", "cuda_app exited with 127", "--torch", str(torch_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = [line for line in proc.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 1 and "cuda_app exited with 127" in failed[0], proc.stdout
    assert "PASS  queued: every one of 300 kernels queued at a stop without sync arrives" in proc.stdout


def test_gpu_check_without_a_gpu_exits_2_and_says_so(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "BUNDLE.txt").write_text("commit: test\n")
    # A driver's nvidia-smi on a machine whose GPU is gone: it lists none and fails.
    nvidia_smi = tmp_path / "nvidia-smi"
    nvidia_smi.write_text("#!/bin/sh\necho 'No devices were found'\nexit 6\n")
    nvidia_smi.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:/usr/bin:/bin", "OUT": str(tmp_path / "out")}
    proc = subprocess.run(
        ["bash", str(SCRIPT.parent / "gpu_check.sh"), "--bundle", str(bundle)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no GPU here" in proc.stdout, proc.stdout
