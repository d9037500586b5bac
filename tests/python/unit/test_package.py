"""What ships with the package: the stub, py.typed, the console script."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import smppy


def test_stub_and_py_typed_ship_and_match_the_public_api() -> None:
    package = Path(smppy.__file__).parent
    assert (package / "py.typed").exists()
    stub = ast.parse((package / "__init__.pyi").read_text())
    stubbed = {node.name for node in stub.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))} | {
        node.target.id for node in stub.body if isinstance(node, ast.AnnAssign)
    }
    assert stubbed == set(smppy.__all__)


def test_the_extension_and_the_preload_library_are_the_native_binaries_that_ship() -> None:
    # _smppy carries the core inside (hidden). libsmprof.so is only the LD_PRELOAD entry point
    # `smprof run` gives native programs: Python never loads it, so no second profiler state.
    package = Path(smppy.__file__).parent
    assert sorted(p.name for p in package.glob("*.so*")) == sorted(
        [Path(smppy._smppy.__file__).name, "libsmprof.so"]
    )
    assert "libsmprof" not in Path("/proc/self/maps").read_text()


def test_console_script_is_installed() -> None:
    assert shutil.which("smprof")
