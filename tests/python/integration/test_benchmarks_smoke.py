"""The benchmarks' quick modes run, so they never rot. Nothing is timed here:
the numbers they print are for docs/BENCHMARKS.md, not for asserting."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import REPO

pytestmark = [pytest.mark.slow]


# Each script's quick mode and the line of results it must print (a number where the line has one).
QUICK_RESULTS = {
    "python_annotate_bench.py": r"ns/op",
    "trace_size.py": r"bytes per event +\d+\.\d\d",
    "page_fault_cost.py": r"ns per fault",
    "torch_auto_hooks.py": r"added per step: +-?\d+\.\d us",
    "scale_benchmark.py": r"N = +\d+: +\d+ s \(",
    "diagnose_benchmark.py": r"ratio diagnose / summary: \d+\.\d\dx",
    "s3_dask_benchmark.py": r"client bytes ratio \d+\.\d{4}, wall ratio \d+\.\d\d",
    "collection_cpu_cost.py": r"\| variant \| thread \| share of one core \|",
}


@pytest.mark.parametrize("script", sorted(QUICK_RESULTS))
def test_benchmark_quick_mode_runs(script: str, tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / script), "--quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(QUICK_RESULTS[script], proc.stdout), proc.stdout


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
