"""What the GPU detectors (gpu_idle, gpu_kernels) share: the step count and
step time their costs are measured against, severity by share, number formats."""

from __future__ import annotations

from typing import Any

# Severity by the share of step time a finding costs (docs/DIAGNOSE.md, "GPU detectors").
HIGH_SHARE = 0.25
MEDIUM_SHARE = 0.10


def gpu_steps(summary: dict[str, Any]) -> tuple[int, int]:
    """(steps, step GPU-time): steps summed over the processes with a GPU, and the
    step time summed over their GPUs (``gpu.idle``); (0, 0) in a summary without them."""
    idle = summary.get("gpu", {}).get("idle") or {}
    return int(idle.get("steps", 0)), int(idle.get("step_time_ns", 0))


def per_step(total_ns: int, steps: int) -> int:
    return total_ns // steps if steps > 0 else 0


def severity(share: float) -> str:
    if share >= HIGH_SHARE:
        return "high"
    return "medium" if share >= MEDIUM_SHARE else "low"


def ms(ns: float) -> str:
    return f"{ns / 1e6:.3g} ms"


def percent(share: float) -> str:
    return f"{100 * share:.0f}%"
