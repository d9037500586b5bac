"""The CUDA collector builds from the PyPI CUDA header wheels alone (issue 13, item 4).

In a mount namespace that hides this machine's CUDA toolkit (every /usr/local/cuda* and nvcc on PATH),
CMake runs with a venv's Python that has only PyPI CUDA wheels:

- the CUDA 13 ones (nvidia-cuda-cupti, nvidia-cuda-runtime, nvidia-cuda-crt: CUPTI headers, cuda.h and
  the crt/host_defines.h it includes, all in nvidia/cu13/include): the collector's sources compile;
- the CUDA 12.9 ones (nvidia-cuda-cupti-cu12: nvidia/cuda_cupti/include, CUPTI_API_VERSION 28;
  nvidia-cuda-runtime-cu12: cuda.h in nvidia/cuda_runtime/include; nvidia-cuda-nvcc-cu12, the only cu12
  wheel with crt/host_defines.h: nvidia/cuda_nvcc/include): the collector's sources compile too, with
  CUDA 12's record structs (src/collectors/cuda/cupti_record_types.h);
- the CUDA 12.9 runtime wheel without the nvcc one: no crt/host_defines.h, refused loudly; the warning
  names what is missing and the wheels to install;
- `pip wheel` of the source tree with pip's build isolation, from a venv holding what a CUDA 12 PyTorch
  brings (the cupti and runtime wheels, not nvcc): the isolated build environment gets the CUDA 13
  header wheels from pyproject.toml's build requirements, and the collector is configured (issue 33,
  item 8). Only the configure step runs (build target `help`, no install component).

The venvs and build trees are cached under $SMPROF_TEST_CACHE (default ~/.cache/smprof-tests), so only
the first run downloads the wheels (about 27 MiB) and compiles; the collector's objects are compiled,
not the whole library, to keep the test short.
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
CACHE = Path(os.environ.get("SMPROF_TEST_CACHE", Path.home() / ".cache" / "smprof-tests")) / "pip-cuda"

CUDA13_WHEELS = ["nvidia-cuda-cupti==13.0.85", "nvidia-cuda-runtime==13.0.96", "nvidia-cuda-crt==13.0.88"]
CUDA12_WHEELS = [
    "nvidia-cuda-cupti-cu12==12.9.79",
    "nvidia-cuda-runtime-cu12==12.9.79",
    "nvidia-cuda-nvcc-cu12==12.9.86",
]
# The sources that include the CUPTI headers (CMakeLists.txt's CUPTI block).
COLLECTOR_SOURCES = [
    "activity_buffer_pool.cc",
    "activity_decoder.cc",
    "cuda_collection.cc",
    "cupti_collector.cc",
    "cupti_library.cc",
]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="hiding the CUDA toolkit needs root and unshare (a mount namespace)",
)


def venv_with(name: str, packages: list[str]) -> Path:
    venv = CACHE / f"venv-{name}"
    python = venv / "bin" / "python"
    marker = venv / "installed.txt"
    if not marker.exists() or marker.read_text() != "\n".join(packages):
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        if packages:
            subprocess.run(
                [str(python), "-m", "pip", "install", "--quiet", "--no-deps", *packages],
                check=True,
            )
        marker.write_text("\n".join(packages))
    return python


def without_toolkit(script: str) -> str:
    """Runs the shell `script` with the toolkit hidden; its output."""
    empty = CACHE / "empty"
    empty.mkdir(parents=True, exist_ok=True)
    toolkits = sorted({os.path.realpath(d) for d in glob.glob("/usr/local/cuda*") if os.path.isdir(d)})
    hide = [f"mount --bind {shlex.quote(str(empty))} {shlex.quote(d)}" for d in toolkits]
    nvcc = shutil.which("nvcc")
    if nvcc:
        hide.append(f"mount --bind /dev/null {shlex.quote(nvcc)}")
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH", "CUDAToolkit_ROOT")}
    result = subprocess.run(
        ["unshare", "-m", "sh", "-c", " && ".join([*hide, script])],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return result.stdout + result.stderr


def build_without_toolkit(name: str, python: Path, targets: list[str]) -> str:
    """Configures (and builds `targets`) with the toolkit hidden; the configure output."""
    build = CACHE / f"build-{name}"
    for stale in ["CMakeCache.txt", *targets]:  # each run configures and compiles afresh
        (build / stale).unlink(missing_ok=True)
    configure = [
        "cmake", "-S", str(REPO), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
        "-DSMPROF_BUILD_TESTS=OFF", "-DSMPROF_BUILD_BENCHMARKS=OFF", "-DSMPROF_INSTALL=OFF",
        f"-DPython3_EXECUTABLE={python}",
    ]  # fmt: skip
    script = shlex.join(configure)
    if targets:
        script += " && " + shlex.join(["ninja", "-C", str(build), "-j", "2", *targets])
    return without_toolkit(script)


def site_packages(python: Path) -> Path:
    code = "import sysconfig; print(sysconfig.get_path('platlib'))"
    return Path(subprocess.check_output([str(python), "-c", code], text=True).strip())


def assert_collector_built(name: str, packages: list[str], cupti: str, cuda: str, crt: str) -> None:
    python = venv_with(name, packages)
    objects = [f"CMakeFiles/smprof.dir/src/collectors/cuda/{source}.o" for source in COLLECTOR_SOURCES]
    output = build_without_toolkit(name, python, objects)
    include = site_packages(python) / "nvidia"
    found = (
        f"CUPTI headers from {include / cupti} and cuda.h from {include / cuda} and crt/ from {include / crt}"
    )
    assert f"CUDA collector built with {found}" in output, output
    for obj in objects:
        assert (CACHE / f"build-{name}" / obj).stat().st_size > 0, obj


def test_the_collector_builds_from_the_cuda13_wheels_alone() -> None:
    assert_collector_built("cu13", CUDA13_WHEELS, "cu13/include", "cu13/include", "cu13/include")


def test_the_collector_builds_from_the_cuda12_wheels_alone() -> None:
    assert_collector_built(
        "cu12", CUDA12_WHEELS, "cuda_cupti/include", "cuda_runtime/include", "cuda_nvcc/include"
    )


def test_the_cuda12_wheels_without_crt_are_refused_loudly() -> None:
    python = venv_with("cu12-no-nvcc", CUDA12_WHEELS[:2])
    output = " ".join(build_without_toolkit("cu12-no-nvcc", python, []).split())  # CMake wraps warnings
    assert "CPU-ONLY BUILD: the CUDA collector is NOT built" in output, output
    assert "or crt/host_defines.h (SMPROF_CUDA_CRT_INCLUDE_DIR-NOTFOUND)" in output, output
    assert "nvidia-cuda-cupti-cu12, nvidia-cuda-runtime-cu12 and nvidia-cuda-nvcc-cu12" in output, output


def test_an_isolated_source_build_next_to_a_cuda_pytorch_gets_the_collector(tmp_path: Path) -> None:
    python = venv_with("cu12-torch", CUDA12_WHEELS[:2])  # a CUDA 12 PyTorch's cupti and runtime wheels
    wheel = [
        str(python), "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path), str(REPO),
        "-C", "build.targets=help", "-C", "install.components=none",
    ]  # fmt: skip
    output = without_toolkit(shlex.join(wheel))
    # pip's isolated environment (pip-build-env-*/overlay), not the venv's site-packages nor a toolkit.
    line = next((x for x in output.splitlines() if "smprof: CUDA collector built with" in x), "")
    assert "pip-build-env-" in line and "/nvidia/cu13/include" in line, output[-6000:]
    assert str(site_packages(python)) not in line, line
