"""The installed ``smprof`` console script, run as a user runs it."""

from __future__ import annotations

import shutil
import subprocess


def smprof(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("smprof")
    assert exe, "the smprof console script is installed with the package"
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)
