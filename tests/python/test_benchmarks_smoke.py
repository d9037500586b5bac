"""The benchmarks' quick modes run, so they never rot. Nothing is timed here:
the numbers they print are for docs/BENCHMARKS.md, not for asserting."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO


@pytest.mark.parametrize(
    "script",
    [
        "python_annotate_bench.py",
        "trace_size.py",
        "page_fault_cost.py",
        "torch_auto_hooks.py",
        "scale_benchmark.py",
        "diagnose_benchmark.py",
        "s3_dask_benchmark.py",
        "collection_cpu_cost.py",
    ],
)
def test_benchmark_quick_mode_runs(script: str, tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / script), "--quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert any(word in proc.stdout for word in ("ratio", "bytes", "added per step", "share of one core"))


@pytest.mark.parametrize("script", ["parquet_export_benchmark.py", "export_benchmark.py"])
def test_export_workers_quick_mode_runs(script: str, tmp_path) -> None:
    """jobs=1 against jobs=2: the run fails if the two exports' files differ."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / script), "--workers", "--quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "speedup" in proc.stdout
