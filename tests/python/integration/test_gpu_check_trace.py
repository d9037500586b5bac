"""scripts/gpu_check_trace.py, the judge of scripts/gpu_check.sh, run here on synthetic traces shaped
like examples/cuda's: it passes a trace that matches the program's ground truth and fails, naming the
row, one that does not. (The GPU run itself needs a GPU.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import synthetic_trace as st

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "gpu_check_trace.py"
# As CUPTI names examples/cuda's kernels on a GPU (an H200, 2026-12-04).
SCALE = "(anonymous namespace)::smprof_scale(float*, int, int)"
ADD = "(anonymous namespace)::smprof_add(float const*, float*, int, int)"
TID = 4242


def write_app_trace(tmp_path: Path, add_annotation: str = "add_phase") -> tuple[Path, Path]:
    """A trace of 3 scale and 2 add launches, copies, memsets, syncs and GEMMs, and its truth JSON."""
    frame = st.pb().Frame(sequence=0)
    st.add_device(frame, id=0, name="NVIDIA H200", uuid="GPU-0", sm_count=132)
    activities, api, external = [], [], []

    def launch(start: int, dur: int, name: str, annotation: str, **fields) -> None:
        correlation_id = len(api) + 1
        activities.append(
            {"start": start, "dur": dur, "name": name, "correlation_id": correlation_id, **fields}
        )
        api.append((start - 5_000, 3_000, "cudaLaunchKernel", TID, correlation_id))
        if annotation:
            external.append((correlation_id, 1, 5, annotation))

    for i in range(3):
        launch(1_000_000 + i * 200_000, 100_000, SCALE, "scale_phase", precision=2)
    for i in range(2):
        launch(2_000_000 + i * 200_000, 50_000, ADD, add_annotation, precision=2)
    for copy_kind in (1, 8, 2):  # HtoD, DtoD, DtoH
        launch(3_000_000 + copy_kind * 10_000, 1_000, "Memcpy", "copies", kind=2, copy_kind=copy_kind)
    launch(3_500_000, 500, "Memset", "copies", kind=3)
    launch(3_600_000, 500, "Memset", "", kind=3)
    for i in range(3):
        launch(4_000_000 + i * 100_000, 20_000, "sm90_xmma_gemm_f32f32_tf32f32", "gemm_fp32", precision=2)
        launch(5_000_000 + i * 100_000, 10_000, "nvjet_hsh_128x256", "gemm_fp16", precision=4)
    activities += [
        {"start": 2_900_000 + i, "dur": 10, "name": "Stream synchronize", "kind": 4} for i in range(2)
    ]
    st.add_gpu_activities(frame, activities)
    st.add_api_calls(frame, api)
    st.add_external_correlations(frame, external)
    cuda = st.pb().CollectorStatus(name="cuda", active=True)
    header = st.header(
        collectors=[cuda],
        cupti_version=130001,
        cuda_driver_version=13000,
        gpu_timebase="cupti timestamp callback: CLOCK_MONOTONIC",
    )
    footer = st.pb().Footer(gpu_records_dropped=0, cupti_records_dropped=0)
    footer.stop.monotonic_ns = 10_000_000
    trace = st.write_trace(tmp_path / "cuda_app.smprof", header, [frame], footer)
    truth = {
        "trace": str(trace),
        "kernels": {
            "smprof_scale": {"count": 3, "annotation": "scale_phase", "event_ns": [101_000, 99_000, 104_000]},
            "smprof_add": {"count": 2, "annotation": "add_phase", "event_ns": [51_000, 52_000]},
        },
        "memcpy": {"HtoD": 1, "DtoD": 1, "DtoH": 1},
        "memset": 2,
        "gemm": {
            "gemm_fp32": {"calls": 3, "precision": "fp32"},
            "gemm_fp16": {"calls": 3, "precision": "fp16"},
        },
    }
    truth_path = tmp_path / "truth.json"
    truth_path.write_text(json.dumps(truth))
    return trace, truth_path


def check(truth: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "check", str(truth), *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )


AUTOGRAD_TID = 5151
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, MulFunctor>(int, float, float)"


def write_session(path: Path, launches: list[tuple[str, int]], annotations=()) -> None:
    """A session of `train`'s shape: one kernel per (annotation, launching thread) in `launches`, with its
    launch record and, for a non-empty annotation, its external correlation; `annotations` as
    add_annotations rows."""
    frame = st.pb().Frame(sequence=0)
    st.add_device(frame, id=0, name="NVIDIA H200", uuid="GPU-0", sm_count=132)
    activities, api, external = [], [], []
    for i, (annotation, tid) in enumerate(launches):
        correlation_id = i + 1
        start = 1_000_000 + i * 20_000
        activities.append(
            {"start": start, "dur": 10_000, "name": ELEMENTWISE, "correlation_id": correlation_id}
        )
        api.append((start - 5_000, 3_000, "cudaLaunchKernel", tid, correlation_id))
        if annotation:
            external.append((correlation_id, 1, 5, annotation))
    st.add_gpu_activities(frame, activities)
    st.add_api_calls(frame, api)
    st.add_external_correlations(frame, external)
    st.add_annotations(frame, annotations)
    header = st.header(
        collectors=[st.pb().CollectorStatus(name="cuda", active=True)],
        cupti_version=130001,
        cuda_driver_version=13000,
        gpu_timebase="cupti timestamp callback: CLOCK_MONOTONIC",
    )
    footer = st.pb().Footer(gpu_records_dropped=0, cupti_records_dropped=0)
    footer.stop.monotonic_ns = 1_000_000 + len(launches) * 20_000 + 1_000_000
    st.write_trace(path, header, [frame], footer)


def write_torch_traces(tmp_path: Path, unsynced_kept: int = 200, backward_open: bool = True) -> Path:
    """The four traces and the truth of `gpu_check_trace.py train`, as a GPU would leave them: in each
    step two forward launches, one backward launch from autograd's thread (no annotation of its own,
    inside 'Backward' unless `backward_open` is False) and one optimizer launch."""
    directory = tmp_path / "torch"
    steps, launches = [], []
    for step in range(20):
        start = 1_000_000 + step * 80_000  # the launches' API calls start 5 us before these
        steps += [(start - 10_000, 80_000, "step", TID, 0), (start - 10_000, 40_000, "Forward", TID, 1)]
        if backward_open:
            steps.append((start + 30_000, 15_000, "Backward", TID, 1))
        steps.append((start + 50_000, 20_000, "Optimizer", TID, 1))
        launches += [("Forward", TID), ("Forward", TID), ("", AUTOGRAD_TID), ("Optimizer", TID)]
    write_session(directory / "torch_train_1.smprof", launches, steps)
    write_session(directory / "torch_unsynced_1.smprof", [("unsynced", TID)] * unsynced_kept)
    write_session(directory / "torch_after_profiler_1.smprof", [("after_profiler", TID)] * 50)
    phases = ("before_profiler", "profiler_inside", "after_profiler_inside")
    write_session(directory / "torch_profiler_inside_1.smprof", [(p, TID) for p in phases for _ in range(50)])
    truth = {"steps": 20, "unsynced": 200, **dict.fromkeys(phases, 50), "after_profiler": 50}
    (directory / "torch_truth.json").write_text(json.dumps({**truth, "torch_profiler_kernels": 52}))
    return directory


def test_a_trace_matching_the_ground_truth_passes_every_row(tmp_path: Path) -> None:
    _, truth = write_app_trace(tmp_path)
    proc = check(truth)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FAIL" not in proc.stdout
    assert "PASS  cuda_app: smprof_scale launches" in proc.stdout
    assert "0 failed" in proc.stdout


def test_a_kernel_under_the_wrong_annotation_fails_its_row(tmp_path: Path) -> None:
    _, truth = write_app_trace(tmp_path, add_annotation="scale_phase")
    proc = check(truth)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = [line for line in proc.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 1 and "smprof_add attributed to 'add_phase'" in failed[0], proc.stdout


def test_the_torch_traces_of_a_good_run_pass_every_row(tmp_path: Path) -> None:
    _, truth = write_app_trace(tmp_path)
    proc = check(truth, "--torch", str(write_torch_traces(tmp_path)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for row in (
        "torch: backward kernels (autograd threads) launched inside 'Backward'",
        "torch: stop without sync keeps every queued kernel",
        "torch: a session after torch.profiler counts every kernel",
        "torch.profiler during a session: 'after_profiler_inside' kernels",
        "torch (started after .cuda()): device metadata",
    ):
        assert f"PASS  {row}" in proc.stdout, proc.stdout


def test_kernels_lost_at_a_stop_without_sync_fail_their_row(tmp_path: Path) -> None:
    _, truth = write_app_trace(tmp_path)
    proc = check(truth, "--torch", str(write_torch_traces(tmp_path, unsynced_kept=150)))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = [line for line in proc.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 1 and "150 of 200" in failed[0], proc.stdout


def test_backward_kernels_outside_backward_fail_their_row(tmp_path: Path) -> None:
    _, truth = write_app_trace(tmp_path)
    proc = check(truth, "--torch", str(write_torch_traces(tmp_path, backward_open=False)))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = [line for line in proc.stdout.splitlines() if line.startswith("FAIL")]
    # The trace row, and the summary's row where the summary infers attribution.
    assert failed and all("'Backward'" in line for line in failed), proc.stdout
    assert any("launched inside 'Backward'" in line and line.endswith("0/20") for line in failed), proc.stdout


def test_without_the_apps_truth_the_torch_rows_still_run_and_one_row_fails(tmp_path: Path) -> None:
    # gpu_check.sh goes on to the PyTorch part when examples/cuda cannot start,
    # and passes why instead of the truth JSON.
    write_app_trace(tmp_path)
    proc = check(Path("cuda_app exited with 127"), "--torch", str(write_torch_traces(tmp_path)))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failed = [line for line in proc.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 1 and "cuda_app exited with 127" in failed[0], proc.stdout
    assert "PASS  torch: stop without sync keeps every queued kernel" in proc.stdout, proc.stdout


def test_gpu_check_without_a_gpu_exits_2_and_says_so(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "BUNDLE.txt").write_text("commit: test\n")
    # A driver's nvidia-smi on a machine whose GPU is gone: it lists none and fails.
    nvidia_smi = tmp_path / "nvidia-smi"
    nvidia_smi.write_text("#!/bin/sh\necho 'No devices were found'\nexit 6\n")
    nvidia_smi.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:/usr/bin:/bin", "OUT": str(tmp_path / "out")}
    proc = subprocess.run(
        ["bash", str(SCRIPT.parent / "gpu_check.sh"), "--bundle", str(bundle)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no GPU here" in proc.stdout, proc.stdout
