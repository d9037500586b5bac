"""scripts/gpu_check_trace.py, the judge of scripts/gpu_check.sh, run here on synthetic traces shaped
like examples/cuda's: it passes a trace that matches the program's ground truth and fails, naming the
row, one that does not. (The GPU run itself needs a GPU.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import synthetic_trace as st

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_check_trace.py"
SCALE = "smprof_scale(float*, int, int)"
ADD = "smprof_add(const float*, float*, int, int)"
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


def check(truth: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "check", str(truth)], capture_output=True, text=True, timeout=120
    )


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
