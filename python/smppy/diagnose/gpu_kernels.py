"""Kernel-level findings (docs/DIAGNOSE.md, "GPU detectors"): many tiny kernels, FP32 kernels
on GPUs with tensor cores, copies from pageable memory, copies not overlapped
with compute, communication not overlapped with compute."""

from __future__ import annotations

from typing import Any

from smppy.diagnose._gpu_costs import gpu_steps, ms, per_step, percent, severity
from smppy.diagnose.finding import Finding

# Tiny kernels: run shorter than their launch call.
TINY_MIN_KERNELS = 100
TINY_MIN_COUNT_SHARE = 0.5
# FP32 on tensor cores: compute capability 7.0 (Volta) and later.
TENSOR_CORE_MIN_CAPABILITY = (7, 0)
FP32_MIN_SHARE = 0.2  # of kernel time
FP32_SPEEDUP = 2.0  # TF32/BF16 tensor-core kernels against FP32 ones, at least
# Pageable copies: a pinned copy runs at least this much faster (and may overlap compute).
PINNED_SPEEDUP = 2.0
# Copies and communication not overlapped: share of their own time and of step time.
EXPOSED_MIN_SHARE = 0.5
EXPOSED_MIN_STEP_SHARE = 0.05
MIN_STEP_SHARE = 0.01  # below this cost no kernel-level finding is worth reading


def _capability(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return (int(major or 0), int(minor or 0))


def _tiny_kernels(summary: dict[str, Any], steps: int, step_time_ns: int) -> list[Finding]:
    launch = summary["gpu"].get("kernel_launch") or {}
    kernels = int(launch.get("kernels_joined", 0))
    share = float(launch.get("tiny_count_share", 0.0))
    cost_ns = int(launch.get("tiny_launch_time_ns", 0)) - int(launch.get("tiny_kernel_time_ns", 0))
    step_share = cost_ns / step_time_ns if step_time_ns else 0.0
    if kernels < TINY_MIN_KERNELS or share < TINY_MIN_COUNT_SHARE or step_share < MIN_STEP_SHARE:
        return []
    tiny = int(launch["tiny_kernels"])
    return [
        Finding(
            id="tiny_kernels",
            title=f"{percent(share)} of kernels ({tiny:,}) run shorter than their launch call: "
            f"{ms(per_step(cost_ns, steps))} of launch overhead per step",
            severity=severity(step_share),
            cost_per_step_ns=per_step(cost_ns, steps),
            cost_total_ns=cost_ns,
            cost_basis=(
                "The launch calls' time of the kernels that ran shorter than their launch, minus those "
                "kernels' time: host time spent launching beyond what the GPU ran (gpu.kernel_launch)."
            ),
            evidence={
                "kernels_joined": kernels,
                "tiny_kernels": tiny,
                "tiny_count_share": share,
                "tiny_kernel_time_ns": launch["tiny_kernel_time_ns"],
                "tiny_launch_time_ns": launch["tiny_launch_time_ns"],
                "tiny_time_share": launch["tiny_time_share"],
                "top_kernels_by_launches": [
                    {"name": k["name"], "launches": k["launches"], "time_ns": k["time_ns"]}
                    for k in summary["gpu"]["kernels"]["by_launches"][:5]
                    if not k["other"]
                ],
            },
            recommendation=(
                "Launch fewer, larger kernels: torch.compile the model to fuse the small ops, capture the "
                "step in a CUDA graph (torch.compile(mode='reduce-overhead')), or raise the batch size."
            ),
        )
    ]


def _fp32_on_tensor_cores(summary: dict[str, Any], steps: int, step_time_ns: int) -> list[Finding]:
    devices = [
        d
        for d in summary["job"].get("devices", [])
        if _capability(d.get("compute_capability", "0.0")) >= TENSOR_CORE_MIN_CAPABILITY
    ]
    fp32 = next((p for p in summary["gpu"].get("precision", []) if p["precision"] == "FP32"), None)
    if not devices or fp32 is None or fp32["share"] < FP32_MIN_SHARE:
        return []
    cost_ns = int(fp32["time_ns"] * (1 - 1 / FP32_SPEEDUP))
    step_share = cost_ns / step_time_ns if step_time_ns else fp32["share"]
    return [
        Finding(
            id="fp32_on_tensor_cores",
            title=f"{percent(fp32['share'])} of kernel time runs in FP32 on GPUs with tensor cores "
            f"({ms(fp32['time_ns'])} over {fp32['count']:,} kernels)",
            severity=severity(step_share),
            cost_per_step_ns=per_step(cost_ns, steps),
            cost_total_ns=cost_ns,
            cost_basis=(
                f"The FP32 kernels' time times {1 - 1 / FP32_SPEEDUP:.2f}: TF32, BF16 or FP16 tensor-core "
                f"kernels run them at least {FP32_SPEEDUP:g}x faster (gpu.precision)."
            ),
            evidence={
                "fp32_time_ns": fp32["time_ns"],
                "fp32_kernels": fp32["count"],
                "fp32_share_of_kernel_time": fp32["share"],
                "devices": [
                    {
                        "host": d["host"],
                        "rank": d["rank"],
                        "name": d["name"],
                        "compute_capability": d["compute_capability"],
                    }
                    for d in devices
                ],
            },
            recommendation=(
                "Run the forward and backward pass under torch.autocast('cuda', dtype=torch.bfloat16) "
                "(or at least set torch.backends.cuda.matmul.allow_tf32 = True and "
                "torch.backends.cudnn.allow_tf32 = True)."
            ),
        )
    ]


def _pageable_copies(summary: dict[str, Any], steps: int, step_time_ns: int) -> list[Finding]:
    pageable = summary["gpu"].get("pageable_copies") or {}
    time_ns = int(pageable.get("time_ns", 0))
    cost_ns = int(time_ns * (1 - 1 / PINNED_SPEEDUP))
    step_share = cost_ns / step_time_ns if step_time_ns else 0.0
    if time_ns == 0 or step_share < MIN_STEP_SHARE:
        return []
    return [
        Finding(
            id="pageable_copies",
            title=f"{pageable['count']:,} host-device copies ({ms(time_ns)}, "
            f"{percent(pageable['time_share'])} of host copy time) use pageable host memory",
            severity=severity(step_share),
            cost_per_step_ns=per_step(cost_ns, steps),
            cost_total_ns=cost_ns,
            cost_basis=(
                f"The pageable copies' time times {1 - 1 / PINNED_SPEEDUP:.2f}: from pinned memory they run "
                f"at least {PINNED_SPEEDUP:g}x faster, without a staging copy (gpu.pageable_copies)."
            ),
            evidence={
                "pageable_copies": pageable["count"],
                "pageable_time_ns": time_ns,
                "pageable_bytes": pageable["bytes"],
                "host_copies": pageable["host_copies"],
                "host_copy_time_ns": pageable["host_copy_time_ns"],
                "time_share": pageable["time_share"],
            },
            recommendation=(
                "Copy from pinned memory: DataLoader(pin_memory=True) (or tensor.pin_memory() for your own "
                "buffers), then tensor.to('cuda', non_blocking=True) so the copy can overlap compute."
            ),
        )
    ]


def _not_overlapped(
    summary: dict[str, Any], steps: int, step_time_ns: int, what: str, finding_id: str, recommendation: str
) -> list[Finding]:
    overlap = summary["gpu"].get("overlap") or {}
    total_ns = int(overlap.get(f"{what}_ns", 0))
    exposed_ns = int(overlap.get(f"{what}_exposed_ns", 0))
    exposed_share = exposed_ns / total_ns if total_ns else 0.0
    step_share = exposed_ns / step_time_ns if step_time_ns else 0.0
    if exposed_share < EXPOSED_MIN_SHARE or step_share < EXPOSED_MIN_STEP_SHARE:
        return []
    label = "copy" if what == "copy" else "communication (NCCL)"
    gpus = sorted(overlap["devices"], key=lambda d: -d[f"{what}_exposed_ns"])[:8]
    return [
        Finding(
            id=finding_id,
            title=f"{percent(exposed_share)} of GPU {label} time overlaps no compute: "
            f"{percent(step_share)} of step time ({ms(per_step(exposed_ns, steps))} per step)",
            severity=severity(step_share),
            cost_per_step_ns=per_step(exposed_ns, steps),
            cost_total_ns=exposed_ns,
            cost_basis=(
                f"The {label} time during which no compute kernel ran on the same GPU, summed over GPUs "
                "(gpu.overlap): the time overlapping it with compute would save at most."
            ),
            evidence={
                **({"side": "gpu"} if what == "communication" else {}),
                f"{what}_ns": total_ns,
                f"{what}_exposed_ns": exposed_ns,
                "exposed_share": exposed_share,
                "share_of_step_time": step_share,
                "gpus": [
                    {
                        "host": d["host"],
                        "rank": d["rank"],
                        "device": d["device"],
                        f"{what}_ns": d[f"{what}_ns"],
                        f"{what}_exposed_ns": d[f"{what}_exposed_ns"],
                    }
                    for d in gpus
                ],
            },
            recommendation=recommendation,
        )
    ]


def detect(summary: dict[str, Any]) -> list[Finding]:
    if summary.get("gpu", {}).get("reason", "") != "":
        return []
    steps, step_time_ns = gpu_steps(summary)
    return [
        *_tiny_kernels(summary, steps, step_time_ns),
        *_fp32_on_tensor_cores(summary, steps, step_time_ns),
        *_pageable_copies(summary, steps, step_time_ns),
        *_not_overlapped(
            summary,
            steps,
            step_time_ns,
            "copy",
            "copies_not_overlapped",
            "Overlap the copies with compute: DataLoader(pin_memory=True) and "
            "tensor.to('cuda', non_blocking=True), and prefetch the next batch on a side CUDA stream "
            "while the current step computes.",
        ),
        *_not_overlapped(
            summary,
            steps,
            step_time_ns,
            "communication",
            "exposed_communication",
            "Overlap gradient communication with the backward pass: use DistributedDataParallel (or FSDP "
            "with backward_prefetch) instead of all-reducing after backward, and tune bucket_cap_mb so "
            "buckets start early.",
        ),
    ]
