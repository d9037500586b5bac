"""What ships with the package: the native binaries and the console script (the stub and py.typed:
test_stubs.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import smppy


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
