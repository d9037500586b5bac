"""bench/compare_torch_profiler.py's smoke mode runs and prints its table, so the
script never rots. Nothing is timed: its numbers are for docs/BENCHMARKS.md."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.torch]


def test_compare_torch_profiler_quick_mode_prints_the_table(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "compare_torch_profiler.py"), "--quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for model in ("== large:", "== tiny:"):
        assert model in out, out
    for row in ("no profiler", "smppy", "smppy automatic mode", "torch.profiler", "target:"):
        assert row in out, out
