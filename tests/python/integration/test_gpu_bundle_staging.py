"""scripts/gpu_bundle_stage_python.sh, how scripts/gpu_bundle.sh puts the Python packages into a GPU
bundle: every file of python/smppy and python/smprof, subpackages and data files included, and no built
library or bytecode cache. (After the issue-27 re-cut moved modules into subpackages, the bundle's old
top-level-only copy would have left smppy.analysis, which gpu_check_trace.py imports, behind.)"""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "scripts" / "gpu_bundle_stage_python.sh"


def package_files(python: Path) -> set[str]:
    return {
        str(path.relative_to(python))
        for package in ("smppy", "smprof")
        for path in (python / package).rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and not (path.name.endswith(".so") or ".so." in path.name)
    }


def test_every_package_file_and_no_built_library_is_staged(tmp_path: Path) -> None:
    dest = tmp_path / "bundle" / "python"
    subprocess.run(["bash", str(SCRIPT), str(dest)], check=True, timeout=60)
    staged = {str(path.relative_to(dest)) for path in dest.rglob("*") if path.is_file()}
    assert staged == package_files(REPO / "python")
    # What the bundle's scripts import beyond smppy itself, and a subpackage's data files.
    needed = {"smppy/analysis/__init__.py", "smppy/analysis/trace.py", "smppy/report/assets/dashboard.js"}
    assert needed <= staged, needed - staged
    assert not any(name.endswith(".so") or ".so." in name or "__pycache__" in name for name in staged)
