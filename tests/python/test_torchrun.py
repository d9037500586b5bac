"""The example training script on 2 ranks under torchrun: one file per rank."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from conftest import REPO, read_annotations
from smppy.trace import find_trace_files, open_trace

STEPS = 20


def test_two_rank_torchrun_writes_one_file_per_rank(tmp_path: Path) -> None:
    env = {**os.environ, "SMP_JOB_NAME": "ci-job", "OMP_NUM_THREADS": "1"}
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
    files = find_trace_files(tmp_path / "ci-job")
    assert len(files) == 2
    headers = [open_trace(f).header for f in files]
    assert sorted(h["rank"] for h in headers) == [0, 1]
    assert {h["world_size"] for h in headers} == {2}
    assert {h["rank_source"] for h in headers} == {"torchrun"}
    assert {h["job"] for h in headers} == {"ci-job"}
    assert len({h["pid"] for h in headers}) == 2
    for f in files:
        counts = Counter(e["name"] for e in read_annotations(f))
        assert counts == {name: STEPS for name in ("step", "Forward", "Loss", "Backward", "Optimizer")}
