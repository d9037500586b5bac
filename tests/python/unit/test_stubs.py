"""The type stub of the extension: python/smppy/_smppy.pyi is what pybind11-stubgen generates from
the built ``smppy._smppy``, and mypy's stubtest finds it consistent with the module at run time
(argument names, defaults, keyword-only markers, what exists). The package's own modules are typed
Python; ``py.typed`` ships so that type checkers read them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import smppy

PACKAGE = Path(smppy.__file__).parent
ALLOWLIST = Path(__file__).parents[1] / "support" / "stubtest_allowlist.txt"
REGENERATE = "pybind11-stubgen smppy._smppy -o OUT && cp OUT/smppy/_smppy.pyi python/smppy/"


def test_py_typed_ships() -> None:
    assert (PACKAGE / "py.typed").exists()


def test_the_stub_is_the_one_generated_from_the_extension(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pybind11_stubgen", "smppy._smppy", "-o", str(tmp_path)],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=120,
    )
    generated = (tmp_path / "smppy" / "_smppy.pyi").read_text()
    assert (PACKAGE / "_smppy.pyi").read_text() == generated, f"the bindings changed: {REGENERATE}"


def test_stubtest_finds_the_stub_consistent_with_the_extension(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "smppy._smppy", "--allowlist", str(ALLOWLIST)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
