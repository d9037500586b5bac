"""The GPU detectors of ``smprof diagnose`` (docs/DIAGNOSE.md, "GPU detectors"), each both ways: it fires
on a synthetic trace built to have its problem (written through the real TraceWriter) and
stays silent on a balanced one. Every trace is ten 10 ms steps of one rank on one GPU."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import synthetic_trace as st
from smppy import analysis, diagnose
from smppy.cli import main
from smppy.diagnose import gpu_idle, gpu_kernels

US = 1_000
MS = 1_000_000
T0 = 1_000_000_000
STEP = 10 * MS
STEPS = 10
MAIN = 10
FP32, BF16 = 2, 5
PAGEABLE, PINNED, DEVICE = 1, 2, 3  # MemoryKind


class StepBuilder:
    """One step's rows: annotations, launch calls and the GPU work they launched."""

    def __init__(self, start: int, correlation: itertools.count, precision: int) -> None:
        self.start = start
        self.correlation = correlation
        self.precision = precision
        self.annotations: list[tuple] = []
        self.api_calls: list[tuple] = []
        self.gpu: list[dict] = []

    def kernel(
        self, at: int, dur: int, *, launch_at: int | None = None, launch_dur: int = 5 * US, **fields
    ) -> None:
        """A kernel at ``start + at`` (ns from the step's start), launched ``launch_dur`` long."""
        cid = next(self.correlation)
        launch = self.start + (at - 20 * US if launch_at is None else launch_at)
        self.api_calls.append((launch, launch_dur, "cudaLaunchKernel", MAIN, cid))
        row = {"start": self.start + at, "dur": dur, "name": "gemm", "correlation_id": cid, "kernel_class": 1}
        self.gpu.append({**row, "precision": self.precision, **fields})

    def kernels(self, begin: int, end: int, length: int = 1 * MS) -> None:
        """Back-to-back compute kernels over [begin, end) of the step."""
        for at in range(begin, end, length):
            self.kernel(at, min(length, end - at))

    def copy_htod(self, at: int, dur: int, host_memory: int = PINNED) -> None:
        cid = next(self.correlation)
        self.api_calls.append((self.start + at - 10 * US, 5 * US, "cudaMemcpyAsync", MAIN, cid))
        self.gpu.append(
            {
                "start": self.start + at,
                "dur": dur,
                "name": "Memcpy HtoD",
                "kind": 2,
                "copy_kind": 1,
                "bytes": 1 << 20,
                "correlation_id": cid,
                "src_memory_kind": host_memory,
                "dst_memory_kind": DEVICE,
            }
        )

    def host(self, at: int, dur: int, name: str) -> None:
        self.annotations.append((self.start + at, dur, name, MAIN, 1))

    def api(self, at: int, dur: int, name: str) -> None:
        self.api_calls.append((self.start + at, dur, name, MAIN, next(self.correlation)))


def write_job(
    root: Path, fill_step, *, precision: int = BF16, capability: tuple[int, int] = (9, 0), rank: int = 0
) -> Path:
    frame = st.pb().Frame(sequence=0)
    frame.strings.append(b"")
    st.add_device(
        frame,
        id=0,
        name="NVIDIA H200",
        uuid="GPU-0",
        sm_count=132,
        compute_capability_major=capability[0],
        compute_capability_minor=capability[1],
    )
    correlation = itertools.count(1)
    annotations, api_calls, gpu = [], [], []
    for i in range(STEPS):
        step = StepBuilder(T0 + i * STEP, correlation, precision)
        step.annotations.append((step.start, STEP, f"ProfilerStep#{i}", MAIN, 0))
        fill_step(step)
        annotations += step.annotations
        api_calls += step.api_calls
        gpu += step.gpu
    st.add_annotations(frame, annotations)
    st.add_api_calls(frame, api_calls)
    st.add_gpu_activities(frame, gpu)
    footer = st.pb().Footer()
    footer.stop.monotonic_ns = T0 + (STEPS + 1) * STEP
    st.write_trace(
        root / f"rank{rank}.smprof",
        st.header(rank=rank, world_size=2, monotonic_ns=T0, pid=5 + rank),
        [frame],
        footer,
    )
    return root


def balanced(step: StepBuilder) -> None:
    """The GPU computes for the whole step; the batch's copy overlaps a kernel."""
    step.kernels(50 * US, STEP - 50 * US)
    step.copy_htod(2 * MS, 500 * US)


def data_wait(step: StepBuilder) -> None:
    step.host(0, 4 * MS, "InputWait")
    step.kernels(4 * MS, STEP)


def synchronizing(step: StepBuilder) -> None:
    step.kernels(0, 5 * MS)
    step.api(4 * MS, 5 * MS, "cudaStreamSynchronize")  # returns at 9 ms: the GPU waits 4 ms
    step.kernels(9 * MS, STEP)


def launch_bound(step: StepBuilder) -> None:
    """300 kernels of 3 us, each launched by a 25 us call: the GPU waits for every launch."""
    for k in range(300):
        step.kernel(k * 30 * US + 26 * US, 3 * US, launch_at=k * 30 * US, launch_dur=25 * US)


def host_busy(step: StepBuilder) -> None:
    step.kernels(0, 4 * MS)
    step.kernels(8 * MS, STEP)  # 4 ms with the host outside any CUDA call


def exposed_copy(step: StepBuilder) -> None:
    step.copy_htod(0, 3 * MS)
    step.kernels(3 * MS, STEP)


def exposed_communication(step: StepBuilder) -> None:
    step.kernels(0, 6 * MS)
    step.kernel(6 * MS, 37 * MS // 10, name="ncclDevKernel_AllReduce_Sum_f32_RING_LL", kernel_class=2)


def finding_ids(summary: dict) -> set[str]:
    return {f.id for f in gpu_idle.detect(summary) + gpu_kernels.detect(summary)}


def test_a_balanced_job_has_no_gpu_finding(tmp_path: Path) -> None:
    summary = analysis.summarize(write_job(tmp_path, balanced))
    assert summary["gpu"]["idle"]["steps"] == STEPS
    assert summary["gpu"]["idle"]["idle_share"] < 0.02
    assert summary["gpu"]["overlap"]["copy_exposed_ns"] == 0
    assert finding_ids(summary) == set()


def test_waiting_for_data_is_its_own_cause(tmp_path: Path) -> None:
    summary = analysis.summarize(write_job(tmp_path, data_wait))
    idle = summary["gpu"]["idle"]
    assert idle["data_wait_ns"] == STEPS * 4 * MS
    assert idle["step_time_ns"] == STEPS * STEP
    assert finding_ids(summary) == {"gpu_idle_data_wait"}
    (finding,) = gpu_idle.detect(summary)
    assert finding.cost_total_ns == STEPS * 4 * MS
    assert finding.cost_per_step_ns == 4 * MS
    assert finding.severity == "high"
    assert finding.title.startswith("GPUs idle 40% of step time waiting for the next batch")
    assert finding.evidence["gpus"] == [
        {"host": "host-a", "rank": 0, "device": 0, "time_ns": STEPS * 4 * MS, "share_of_step_time": 0.4}
    ]
    assert "pin_memory=True" in finding.recommendation


def test_the_evidence_names_the_gpu_that_waits(tmp_path: Path) -> None:
    write_job(tmp_path, balanced, rank=0)
    write_job(tmp_path, data_wait, rank=1)
    (finding,) = gpu_idle.detect(analysis.summarize(tmp_path))
    assert finding.id == "gpu_idle_data_wait"
    assert finding.severity == "medium"  # 40 ms of the two GPUs' 200 ms of step time
    assert finding.cost_per_step_ns == 2 * MS  # 40 ms over the two ranks' 20 steps
    assert [(g["rank"], g["time_ns"], g["share_of_step_time"]) for g in finding.evidence["gpus"]] == [
        (1, STEPS * 4 * MS, 0.4),
        (0, 0, 0.0),
    ]


def test_a_data_wait_pattern_names_the_users_own_annotation(tmp_path: Path) -> None:
    def fetch(step: StepBuilder) -> None:
        step.host(0, 2 * MS, "shard_reader")  # no usual name of a data phase
        step.kernels(2 * MS, STEP)

    write_job(tmp_path, fetch)
    assert analysis.summarize(tmp_path)["gpu"]["idle"]["data_wait_ns"] == 0
    summary = analysis.summarize(tmp_path, data_wait_pattern="shard_.*")
    assert summary["options"]["data_wait_pattern"] == "shard_.*"
    assert summary["gpu"]["idle"]["data_wait_ns"] == STEPS * 2 * MS
    with pytest.raises(ValueError, match="data_wait_pattern: not a valid regular expression"):
        analysis.summarize(tmp_path, data_wait_pattern="shard_(")


def test_the_default_data_wait_pattern_knows_a_users_fetch_batch(tmp_path: Path) -> None:
    def fetch(step: StepBuilder) -> None:
        step.host(0, 2 * MS, "Fetch_Batch")
        step.kernels(2 * MS, STEP)

    write_job(tmp_path, fetch)
    assert analysis.summarize(tmp_path)["gpu"]["idle"]["data_wait_ns"] == STEPS * 2 * MS


def test_smprof_summary_takes_a_data_wait_pattern(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def fetch(step: StepBuilder) -> None:
        step.host(0, 2 * MS, "fetch_batch")
        step.kernels(2 * MS, STEP)

    write_job(tmp_path, fetch)
    assert main(["summary", str(tmp_path), "--json", "--data-wait-pattern", "fetch_batch"]) == 0
    idle = json.loads(capsys.readouterr().out)["gpu"]["idle"]
    assert (idle["data_wait_pattern"], idle["data_wait_ns"]) == ("fetch_batch", STEPS * 2 * MS)


def test_synchronizations_are_their_own_cause(tmp_path: Path) -> None:
    summary = analysis.summarize(write_job(tmp_path, synchronizing))
    assert summary["gpu"]["idle"]["sync_ns"] == STEPS * 4 * MS
    assert finding_ids(summary) == {"gpu_idle_sync"}


def test_many_tiny_kernels_make_the_gpu_launch_bound(tmp_path: Path) -> None:
    summary = analysis.summarize(write_job(tmp_path, launch_bound))
    launch = summary["gpu"]["kernel_launch"]
    assert launch["kernels_joined"] == launch["tiny_kernels"] == STEPS * 300
    assert launch["tiny_launch_time_ns"] == STEPS * 300 * 25 * US
    assert summary["gpu"]["idle"]["launch_bound_ns"] == STEPS * 300 * 25 * US
    assert finding_ids(summary) == {"gpu_idle_launch_bound", "tiny_kernels", "gpu_idle_host_busy"}
    tiny = next(f for f in gpu_kernels.detect(summary) if f.id == "tiny_kernels")
    assert tiny.cost_total_ns == STEPS * 300 * (25 - 3) * US
    assert tiny.title.startswith("100% of kernels (3,000) run shorter than their launch call")
    assert "CUDA graph" in tiny.recommendation


def test_idle_with_the_host_outside_cuda_is_unexplained(tmp_path: Path) -> None:
    summary = analysis.summarize(write_job(tmp_path, host_busy))
    # The next kernel's 5 us launch call is launch-bound; the rest of the 4 ms gap is not explained.
    assert summary["gpu"]["idle"]["launch_bound_ns"] == STEPS * 5 * US
    assert summary["gpu"]["idle"]["unexplained_ns"] == STEPS * (4 * MS - 5 * US)
    assert finding_ids(summary) == {"gpu_idle_host_busy"}


def test_copies_that_no_kernel_overlaps(tmp_path: Path) -> None:
    summary = analysis.summarize(write_job(tmp_path, exposed_copy))
    overlap = summary["gpu"]["overlap"]
    assert overlap["copy_exposed_ns"] == overlap["copy_ns"] == STEPS * 3 * MS
    assert summary["gpu"]["idle"]["idle_ns"] == 0  # the copy engine works: not idle
    assert finding_ids(summary) == {"copies_not_overlapped"}
    (finding,) = gpu_kernels.detect(summary)
    assert finding.cost_per_step_ns == 3 * MS
    assert "non_blocking=True" in finding.recommendation


def test_copies_from_pageable_memory(tmp_path: Path) -> None:
    def pageable(step: StepBuilder) -> None:
        step.kernels(50 * US, STEP - 50 * US)
        step.copy_htod(2 * MS, 2 * MS, host_memory=PAGEABLE)  # overlapped, but from pageable memory

    summary = analysis.summarize(write_job(tmp_path, pageable))
    copies = summary["gpu"]["pageable_copies"]
    assert (copies["count"], copies["time_ns"], copies["time_share"]) == (STEPS, STEPS * 2 * MS, 1.0)
    assert copies["memory_kind_known"] == STEPS
    assert finding_ids(summary) == {"pageable_copies"}
    (finding,) = gpu_kernels.detect(summary)
    assert finding.cost_per_step_ns == 1 * MS
    assert finding.title.startswith("10 host-device copies (20 ms, 100% of host copy time) use pageable")
    assert "pin_memory=True" in finding.recommendation


def test_communication_that_no_kernel_overlaps(tmp_path: Path) -> None:
    summary = analysis.summarize(write_job(tmp_path, exposed_communication))
    overlap = summary["gpu"]["overlap"]
    assert overlap["communication_exposed_ns"] == STEPS * 37 * MS // 10
    assert summary["gpu"]["idle"]["communication_ns"] == STEPS * 37 * MS // 10
    # Reported once, by gpu_kernels; the rest of the step (0.3 ms) is idle but below the threshold.
    assert finding_ids(summary) == {"exposed_communication"}


def test_fp32_kernels_on_tensor_core_gpus(tmp_path: Path) -> None:
    summary = analysis.summarize(write_job(tmp_path / "a100", balanced, precision=FP32, capability=(8, 0)))
    assert finding_ids(summary) == {"fp32_on_tensor_cores"}
    (finding,) = gpu_kernels.detect(summary)
    fp32_time = next(p["time_ns"] for p in summary["gpu"]["precision"] if p["precision"] == "FP32")
    assert finding.cost_total_ns == fp32_time // 2
    assert "torch.autocast" in finding.recommendation
    # The same kernels on a GPU without tensor cores: nothing to gain.
    pascal = analysis.summarize(write_job(tmp_path / "p100", balanced, precision=FP32, capability=(6, 0)))
    assert finding_ids(pascal) == set()


def test_diagnose_ranks_the_gpu_findings_by_cost(tmp_path: Path) -> None:
    summary = analysis.summarize(write_job(tmp_path, launch_bound))
    findings = diagnose.diagnose(summary)
    assert [f.id for f in findings][:2] == ["gpu_idle_launch_bound", "tiny_kernels"]
    costs = [f.cost_total_ns for f in findings]
    assert costs == sorted(costs, reverse=True)
    assert all(f.to_json()["cost_basis"] for f in findings)


def test_a_job_without_gpu_has_no_gpu_finding(tmp_path: Path) -> None:
    frame = st.pb().Frame(sequence=0)
    frame.strings.append(b"")
    st.add_annotations(frame, [(T0 + i * STEP, STEP, f"ProfilerStep#{i}", MAIN, 0) for i in range(STEPS)])
    st.write_trace(tmp_path / "rank0.smprof", st.header(monotonic_ns=T0, pid=5), [frame])
    summary = analysis.summarize(tmp_path)
    assert summary["gpu"]["idle"]["devices"] == []
    assert finding_ids(summary) == set()
