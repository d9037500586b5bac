"""The steady-state steps of each rank in the summary's ``step_profile``
(docs/ANALYSIS.md), shared by the CPU-side detectors (docs/DIAGNOSE.md).

A step's *cycle* is its duration plus the gap since the previous step ended:
what one iteration really costs, including work between steps (a checkpoint
saved after ``optimizer.step()``). Steady-state steps leave out the first
step (start-up: workers spawning, first compilation); the time after the last
step boundary is not a step (``AfterLastStep``, docs/PYTORCH.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from statistics import median
from typing import Any

# Phases that are collectives or waits for other ranks, by name (case-insensitive).
COLLECTIVE = re.compile(
    r"all_?reduce|all_?gather|reduce_?scatter|broadcast|barrier|all_?to_?all|collective|nccl|gloo|"
    r"wait|sync",
    re.IGNORECASE,
)


def cycle_ns(step: dict[str, Any]) -> int:
    return step["dur_ns"] + step["gap_before_ns"]


def wait_predicate(summary: dict[str, Any]) -> Callable[[str], bool]:
    """Whether a phase name is a collective or a wait for other ranks; an input-pipeline wait
    (a data phase) is the rank's own work."""
    data = {p["name"] for r in summary["step_profile"]["per_rank"] for p in r["phases"] if p["data"]}
    return lambda name: name not in data and COLLECTIVE.search(name) is not None


def work_ns(step: dict[str, Any], is_wait: Callable[[str], bool]) -> int:
    """The step's cycle minus its collective and wait phases: the rank's own time in it."""
    return cycle_ns(step) - sum(ns for name, ns in step["phases"].items() if is_wait(name))


def steady_steps(rank: dict[str, Any]) -> list[dict[str, Any]]:
    return rank["steps"][1:]


# A step longer than this many times its rank's median steady-state step stands out: the report
# lists it and draws the distribution on a log axis (SageMaker's StepOutlier and issue 29's
# SlowStepFactor use the same factor of 3).
OUTLIER_FACTOR = 3


def outlying_steps(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The kept steps of the rank processes (not their workers) longer than ``OUTLIER_FACTOR`` times
    their rank's median steady-state step, longest first: the warm-up (each rank's first step) and
    the outliers, each with ``host``, ``rank``, ``pid``, ``step``, ``dur_ns``, ``times_median`` and
    ``kind`` ("warm-up" or "outlier")."""
    out = []
    for rank in summary.get("step_profile", {}).get("per_rank", []):
        steady = steady_steps(rank)
        if rank["worker_of_pid"] or not steady:
            continue
        typical = median_ns([s["dur_ns"] for s in steady])
        for i, step in enumerate(rank["steps"]):
            if typical and step["dur_ns"] > OUTLIER_FACTOR * typical:
                out.append(
                    {
                        "host": rank["host"],
                        "rank": rank["rank"],
                        "pid": rank["pid"],
                        "step": step["step"],
                        "dur_ns": step["dur_ns"],
                        "times_median": step["dur_ns"] / typical,
                        "kind": "warm-up" if i == 0 else "outlier",
                    }
                )
    return sorted(out, key=lambda s: -s["dur_ns"])


def training_ranks(summary: dict[str, Any], min_steps: int = 3) -> list[dict[str, Any]]:
    """The rank processes (not their workers) with at least ``min_steps`` steady steps."""
    ranks = summary.get("step_profile", {}).get("per_rank", [])
    return [r for r in ranks if not r["worker_of_pid"] and len(steady_steps(r)) >= min_steps]


def traced_workers(summary: dict[str, Any], pid: int) -> int:
    """The DataLoader workers of rank process ``pid`` that wrote traces."""
    return sum(1 for p in summary["job"]["processes"] if p["worker_of_pid"] == pid)


def rank_label(rank: dict[str, Any], summary: dict[str, Any]) -> str:
    hosts = summary["job"]["hosts"]
    return f"rank {rank['rank']}" + (f" on {rank['host']}" if len(hosts) > 1 else "")


def per_step_ns(total_ns: float, steps: int) -> int:
    return round(total_ns / steps) if steps else 0


def median_ns(values: list[float]) -> int:
    return round(median(values)) if values else 0


def ms(ns: float) -> str:
    """A duration for a title: ``38 ms``, ``1.2 s``, ``450 us``."""
    if abs(ns) >= 10e9:
        return f"{ns / 1e9:.0f} s"
    if abs(ns) >= 1e9:
        return f"{ns / 1e9:.1f} s"
    if abs(ns) >= 10e6:
        return f"{ns / 1e6:.0f} ms"
    if abs(ns) >= 1e6:
        return f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e3:.0f} us"
