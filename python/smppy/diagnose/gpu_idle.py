"""GPU idle inside steps, attributed (docs/DIAGNOSE.md, "GPU detectors"): one finding per
cause that costs at least MIN_SHARE of the GPUs' step time, with per-GPU evidence.

Communication (NCCL running, no compute) is reported by gpu_kernels'
``exposed_communication``, not here, so its time is not counted twice.
"""

from __future__ import annotations

from typing import Any

from smppy.diagnose._gpu_costs import gpu_steps, ms, per_step, percent, severity
from smppy.diagnose.finding import Finding

MIN_SHARE = 0.05  # of the GPUs' step time
MAX_EVIDENCE_GPUS = 8

# (key in gpu.idle, finding id, what the GPU waits for, the action)
CAUSES = (
    (
        "data_wait_ns",
        "gpu_idle_data_wait",
        "waiting for the next batch",
        "Load batches ahead of the GPU: DataLoader(num_workers>=4, pin_memory=True, prefetch_factor=2, "
        "persistent_workers=True), and move per-sample work (decoding, augmentation) into the workers.",
    ),
    (
        "sync_ns",
        "gpu_idle_sync",
        "while the host synchronizes with it",
        "Take synchronizations out of the step: no .item(), .cpu(), .numpy() or print of GPU tensors and no "
        "torch.cuda.synchronize() inside the loop (log every N steps instead); copy with non_blocking=True.",
    ),
    (
        "launch_bound_ns",
        "gpu_idle_launch_bound",
        "for kernel launches (launch-bound)",
        "Launch fewer, larger kernels: capture the step in a CUDA graph "
        "(torch.compile(mode='reduce-overhead') or torch.cuda.graphs), fuse small ops with torch.compile, "
        "or raise the batch size.",
    ),
    (
        "unexplained_ns",
        "gpu_idle_host_busy",
        "while the host does other work outside CUDA calls",
        "Find the host work between launches: annotate the training loop's phases with smppy.annotate and "
        "move the slow CPU work (logging, metrics, Python overhead) out of the step or to another thread.",
    ),
)


def detect(summary: dict[str, Any]) -> list[Finding]:
    idle = summary.get("gpu", {}).get("idle") or {}
    steps, step_time_ns = gpu_steps(summary)
    if step_time_ns <= 0:
        return []
    findings = []
    for key, finding_id, waiting_for, recommendation in CAUSES:
        cost_ns = int(idle.get(key, 0))
        share = cost_ns / step_time_ns
        if share < MIN_SHARE:
            continue
        gpus = sorted(idle["devices"], key=lambda d: -d[key])[:MAX_EVIDENCE_GPUS]
        findings.append(
            Finding(
                id=finding_id,
                title=f"GPUs idle {percent(share)} of step time {waiting_for} "
                f"({ms(per_step(cost_ns, steps))} per step)",
                severity=severity(share),
                cost_per_step_ns=per_step(cost_ns, steps),
                cost_total_ns=cost_ns,
                cost_basis=(
                    "The GPU time inside steps with no kernel or copy running while this was the cause, "
                    "summed over GPUs (gpu.idle); per step: divided by the steps of the processes with a GPU."
                ),
                evidence={
                    "share_of_step_time": share,
                    "idle_share": idle.get("idle_share", 0.0),
                    "steps": steps,
                    "step_time_ns": step_time_ns,
                    "gpus": [
                        {
                            "host": d["host"],
                            "rank": d["rank"],
                            "device": d["device"],
                            "time_ns": d[key],
                            "share_of_step_time": d[key] / d["step_time_ns"] if d["step_time_ns"] else 0.0,
                        }
                        for d in gpus
                    ],
                },
                recommendation=recommendation,
            )
        )
    return findings
