"""The package a user installs is portable and self-contained: its one native binary, _smppy,
exports only its init function, needs nothing beyond manylinux_2_34 (glibc 2.34, libm, libgcc_s,
libz), runs
where Debian's protobuf, zstd and libpfm are absent, and builds from a read-only source tree."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import smppy
from conftest import REPO, run_python

pytestmark = [pytest.mark.slow]

EXTENSION = Path(smppy._smppy.__file__)
MANYLINUX_GLIBC = (2, 34)  # scripts/build_wheel.sh tags the wheel manylinux_2_34
ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libz.so.1", "libgcc_s.so.1", "ld-linux-x86-64.so.2"}
# The Debian shared libraries a build that did not carry its own copies would load.
DEBIAN_LIBRARIES = ("libprotobuf-lite.so.32", "libprotobuf.so.32", "libzstd.so.1", "libpfm.so.4")


def test_extension_exports_only_its_init_function() -> None:
    check = subprocess.run(
        [sys.executable, str(REPO / "tests/exports/check_exports.py"), str(EXTENSION),
         str(REPO / "tests/exports/_smppy.txt")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr


def test_extension_needs_only_the_system_libraries_of_manylinux_2_34() -> None:
    dynamic = subprocess.run(
        ["readelf", "-d", str(EXTENSION)], capture_output=True, text=True, check=True
    ).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", dynamic))
    assert needed <= ALLOWED_NEEDED, needed - ALLOWED_NEEDED
    versions = subprocess.run(
        ["readelf", "-V", str(EXTENSION)], capture_output=True, text=True, check=True
    ).stdout
    required = set(re.findall(r"Name: ([A-Z]+_[0-9.]+)", versions))
    # libstdc++ is inside: no GLIBCXX_3.4.30 that an older libstdc++ loaded first would lack.
    assert all(v.startswith(("GLIBC_", "GCC_", "ZLIB_")) for v in required), required
    newest = max(
        tuple(int(n) for n in v.removeprefix("GLIBC_").split(".")[:2])
        for v in required
        if v.startswith("GLIBC_2")
    )
    assert newest <= MANYLINUX_GLIBC, f"needs GLIBC_{newest}, newer than manylinux_2_34"


PROFILE = """
import smppy, smppy.analysis
config = smppy.Config()
config.profiler = {{"RecordFile": "{out}/rank%r_pid%p.smprof"}}
profiler = smppy.SMProfiler.instance()
profiler.configure(config)
profiler.start_profiling()
for _ in range(3):
    with smppy.annotate("step"):
        pass
profiler.stop_profiling()
print([(a["name"], a["stats"]["count"]) for a in smppy.analysis.summarize("{out}")["annotations"]])
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare(1)")
def test_imports_and_profiles_with_debian_protobuf_zstd_and_libpfm_hidden(tmp_path: Path) -> None:
    libdir = Path("/usr/lib/x86_64-linux-gnu")
    hidden = [libdir / name for name in DEBIAN_LIBRARIES if (libdir / name).exists()]
    assert hidden, f"none of {DEBIAN_LIBRARIES} in {libdir}: nothing to hide"
    script = tmp_path / "profile.py"
    script.write_text(PROFILE.format(out=tmp_path))
    # A private mount namespace in which each library file reads as empty (/dev/null).
    mounts = " && ".join(f"mount --bind /dev/null {path}" for path in hidden)
    proc = subprocess.run(
        ["unshare", "-m", "sh", "-c", f'{mounts} && exec "$0" "$1"', sys.executable, str(script)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "[('step', 3)]"


def test_pip_install_from_a_read_only_source_tree(tmp_path: Path) -> None:
    source, site = tmp_path / "src", tmp_path / "site"
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split("\0")  # fmt: skip
    for name in filter(None, files):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    subprocess.run(["chmod", "-R", "a-w", str(source)], check=True)
    (tmp_path / "tmp").mkdir()
    # scripts/build_wheel.sh builds the same layout, so ccache serves the compiles.
    env = {"TMPDIR": str(tmp_path / "tmp")}
    if shutil.which("ccache"):
        env |= {"CMAKE_C_COMPILER_LAUNCHER": "ccache", "CMAKE_CXX_COMPILER_LAUNCHER": "ccache",
                "CCACHE_BASEDIR": str(tmp_path)}  # fmt: skip
    try:
        install = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--target",
             str(site), str(source)],
            env={**os.environ, **env}, capture_output=True, text=True, timeout=1500,
        )  # fmt: skip
        assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
        assert not list(source.glob("build*")), "the build wrote into the source tree"
        # The test-only extension (src/testing/) is built with the tests, never installed.
        assert not list(site.rglob("_smprof_testing*")), list(site.rglob("_smprof_testing*"))
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(source)], check=True)
    code = PROFILE.format(out=tmp_path) + "print(smppy.__file__)\n"
    proc = run_python(code, cwd=tmp_path, env={"PYTHONPATH": str(site)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["[('step',", "3)]", str(site / "smppy" / "__init__.py")]
