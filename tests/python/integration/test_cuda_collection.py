"""GPU collection on a machine without a GPU: EnableCuda decides whether smprof tries, and the
trace and ``smprof info`` say why there is no GPU data (docs/GPU.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_python
from machine import cuda_driver_loads
from smppy.analysis.trace import annotation_events, find_trace_files, open_trace

# What a machine without a CUDA driver does: not only where there is no GPU device (/dev/nvidiactl),
# also where the driver library is installed without one (an image built for GPUs, a lost GPU): there
# libsmprof finds a driver, and these tests cannot happen.
without_a_driver = pytest.mark.skipif(
    cuda_driver_loads(),
    reason="libcuda.so.1 loads here (a CUDA driver): tests/cpp and scripts/gpu_check.sh cover it",
)

WARNING = "GPU activity is not recorded"
SMPROF_CLI = "import sys; from smppy.cli import main; sys.exit(main(sys.argv[1:]))"


def profile(tmp_path: Path, enable_cuda: str | None) -> tuple[subprocess.CompletedProcess, list[Path]]:
    settings = {"RecordFile": f"{tmp_path}/trace_%s.smprof"}
    if enable_cuda is not None:
        settings["EnableCuda"] = enable_cuda
    proc = run_python(
        f"""
        import smppy
        c = smppy.Config(); c.profiler = {settings!r}
        p = smppy.SMProfiler.instance(); p.configure(c)
        for _ in range(2):
            p.start_profiling()
            with smppy.annotate("step"):
                pass
            p.stop_profiling()
        """,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    return proc, find_trace_files(tmp_path)


def cuda_status(path: Path) -> dict:
    header = open_trace(path).header
    return next(c for c in header["collectors"] if c["name"] == "cuda")


def smprof_info(path: Path) -> str:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from smppy.cli import main; sys.exit(main(sys.argv[1:]))",
            "info",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@without_a_driver
def test_enable_cuda_1_without_a_driver_warns_once_and_records_why(tmp_path: Path) -> None:
    proc, files = profile(tmp_path, "1")
    assert proc.stderr.count(WARNING) == 1, proc.stderr
    assert "EnableCuda=1" in proc.stderr and "no CUDA driver" in proc.stderr
    assert len(files) == 2
    for file in files:
        trace = open_trace(file)
        assert [a["name"] for a in annotation_events(trace)] == ["step"], "CPU profiling went on"
        status = cuda_status(file)
        assert status["active"] is False
        assert "no CUDA driver" in status["reason"]
        assert f"collector cuda: off ({status['reason']})" in smprof_info(file)
        # Whichever CUPTI this machine has (its version is the toolkit's, not smprof's).
        assert trace.header["cupti_version"] > 0, "libcupti was loaded and asked"


@without_a_driver
def test_enable_cuda_auto_is_quiet_without_a_driver(tmp_path: Path) -> None:
    proc, files = profile(tmp_path, None)
    assert WARNING not in proc.stderr
    for file in files:
        assert cuda_status(file)["reason"] == "EnableCuda=auto and no CUDA driver (libcuda.so.1 not found)"
        assert open_trace(file).header["config"]["EnableCuda"] == "auto"
        assert open_trace(file).header["cupti_version"] == 0, "auto does not even load libcupti here"


def test_enable_cuda_0_says_disabled(tmp_path: Path) -> None:
    proc, files = profile(tmp_path, "0")
    assert WARNING not in proc.stderr
    for file in files:
        assert cuda_status(file)["reason"] == "disabled by EnableCuda"


def test_importing_smppy_loads_no_cuda_library(tmp_path: Path) -> None:
    proc = run_python(
        """
        import smppy
        from pathlib import Path
        maps = Path("/proc/self/maps").read_text()
        print("libcupti" in maps, "libcuda.so" in maps)
        """,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False"]
