"""Step-time outliers: periodic or isolated slow steps and what they overlap
(docs/DIAGNOSE.md).

Rule: per rank with at least ``MIN_STEPS`` steady-state steps, a steady-state
step is slow when its work (its cycle minus collective and wait phases,
``steps.work_ns``: a rank waiting for another's hiccup is not slow itself) is
at least ``SLOW_FACTOR`` x the rank's median and at least ``MIN_EXCESS_NS``
above it; the finding fires when the slow steps' excess over the median is at
least ``MIN_SHARE`` of the rank's steady-state work. They are *periodic* when
at least three slow steps, two thirds of them included, fall on one phase of
the most common distance between consecutive slow step numbers (n mod
distance), that distance being at least 2. What they
overlap, compared with the normal steps: the phase (annotation) whose time per
step grows the most, the host's CPU utilization, the page faults and context
switches counted during them (when perf counted them). Severity by the share
of time lost: ``HIGH_SHARE`` high, ``MEDIUM_SHARE`` medium, else low. Cost:
the excess of the slow steps over the median, over the rank's steps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from smppy.diagnose.finding import Finding
from smppy.diagnose.steps import (
    median_ns,
    ms,
    rank_label,
    steady_steps,
    training_ranks,
    wait_predicate,
    work_ns,
)

MIN_STEPS = 10  # steady-state steps of a rank: fewer say too little about what is normal
SLOW_FACTOR = 2.0
MIN_EXCESS_NS = 5_000_000
MIN_SHARE = 0.10
MEDIUM_SHARE = 0.15
HIGH_SHARE = 0.25
CPU_SPIKE_POINTS = 20.0  # percentage points above the normal steps
FAULTS_FACTOR = 2.0


def _mean(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _period(numbers: list[int]) -> int | None:
    """The most common distance between slow steps, when at least three and two thirds of them
    fall on one phase of it (an isolated slow step among periodic ones keeps the period)."""
    if len(numbers) < 3:
        return None
    period = Counter(b - a for a, b in zip(numbers, numbers[1:])).most_common(1)[0][0]
    if period < 2:
        return None
    on_phase = Counter(n % period for n in numbers).most_common(1)[0][1]
    return period if on_phase >= 3 and on_phase >= 2 / 3 * len(numbers) else None


def _overlap(
    slow: list[dict[str, Any]], normal: list[dict[str, Any]], is_wait: Callable[[str], bool]
) -> dict[str, Any]:
    """What the slow steps have that the normal ones do not."""
    names = {n for s in slow + normal for n in s["phases"] if not is_wait(n)}
    growth = {
        n: sum(s["phases"].get(n, 0) for s in slow) / len(slow)
        - sum(s["phases"].get(n, 0) for s in normal) / len(normal)
        for n in names
    }
    phase = max(growth, key=growth.get) if growth else None
    counters = {}
    for key in ("cpu_utilization_percent", "page_faults", "context_switches"):
        counters[key] = {"slow": _mean([s[key] for s in slow]), "normal": _mean([s[key] for s in normal])}
    return {
        "phase": phase if phase is not None and growth[phase] > 0 else None,
        "phase_growth_ns": round(growth[phase]) if phase is not None else 0,
        "counters": counters,
    }


def _rank_outliers(rank: dict[str, Any], is_wait: Callable[[str], bool]) -> dict[str, Any] | None:
    steps = steady_steps(rank)
    work = [work_ns(s, is_wait) for s in steps]
    typical = median_ns(work)
    slow_at = [i for i, w in enumerate(work) if w >= max(SLOW_FACTOR * typical, typical + MIN_EXCESS_NS)]
    slow = [steps[i] for i in slow_at]
    normal = [s for i, s in enumerate(steps) if i not in slow_at]
    excess = sum(work[i] - typical for i in slow_at)
    total = sum(work)
    if not slow or not normal or excess < MIN_SHARE * total:
        return None
    numbers = [s["step"] for s in slow]
    return {
        "host": rank["host"],
        "rank": rank["rank"],
        "pid": rank["pid"],
        "median_work_ns": typical,
        "slow_steps": numbers,
        "slow_work_ns": [work[i] for i in slow_at],
        "period": _period(numbers),
        "excess_ns": excess,
        "excess_share": excess / total,
        "steps": len(steps),
        "steps_seen": rank["steps_seen"],
        "overlap": _overlap(slow, normal, is_wait),
    }


def _explain(worst: dict[str, Any]) -> tuple[str, str]:
    """The title's 'what it overlaps' clause and the recommendation."""
    overlap = worst["overlap"]
    cpu, faults = overlap["counters"]["cpu_utilization_percent"], overlap["counters"]["page_faults"]
    phase = overlap["phase"]
    if phase is not None and overlap["phase_growth_ns"] >= 0.5 * (
        sum(worst["slow_work_ns"]) / len(worst["slow_work_ns"]) - worst["median_work_ns"]
    ):
        when = f"every {worst['period']} steps" if worst["period"] else "in those steps"
        return (
            f"{phase!r} adds {ms(overlap['phase_growth_ns'])} {when}",
            f"Take {phase!r} off the training loop's critical path: run it asynchronously "
            "(a background thread or process; for checkpoints torch.distributed.checkpoint.async_save, "
            "or copy the state to CPU and write it from a thread) or less often",
        )
    if (
        cpu["slow"] is not None
        and cpu["normal"] is not None
        and cpu["slow"] - cpu["normal"] >= CPU_SPIKE_POINTS
    ):
        return (
            f"the host CPU is {cpu['slow']:.0f}% busy during them against {cpu['normal']:.0f}% otherwise",
            "Find the process or thread that takes the CPU during the slow steps (another job, a logger, "
            "data preprocessing on the host) and move it off the training host or give it fewer cores",
        )
    if faults["slow"] is not None and faults["normal"] and faults["slow"] >= FAULTS_FACTOR * faults["normal"]:
        return (
            f"they page-fault {faults['slow']:.0f} times against {faults['normal']:.0f} in normal steps",
            "Reduce memory churn in the slow steps: reuse buffers, pin host memory once, and check "
            "the host is not swapping",
        )
    return (
        "they overlap no annotated phase",
        "Annotate what runs in the slow steps (smppy.annotate around checkpoints, evaluation, logging) "
        "and rerun: the next diagnosis will name it",
    )


def detect(summary: dict[str, Any]) -> list[Finding]:
    is_wait = wait_predicate(summary)
    ranks = training_ranks(summary, min_steps=MIN_STEPS)
    outliers = [o for o in (_rank_outliers(r, is_wait) for r in ranks) if o]
    if not outliers:
        return []
    worst = max(outliers, key=lambda o: o["excess_ns"])
    label = rank_label(next(r for r in training_ranks(summary) if r["pid"] == worst["pid"]), summary)
    slow = worst["slow_steps"]
    mean_slow = sum(worst["slow_work_ns"]) / len(slow)
    if worst["period"]:
        what = f"One step in {worst['period']} takes"
    else:
        what = f"{len(slow)} of {worst['steps']} steps take" if len(slow) > 1 else "One step takes"
    clause, recommendation = _explain(worst)
    share = sum(o["excess_ns"] for o in outliers) / sum(o["excess_ns"] / o["excess_share"] for o in outliers)
    cost_total = sum(round(o["excess_ns"] / o["steps"] * o["steps_seen"]) for o in outliers)
    steps_total = sum(o["steps_seen"] for o in outliers)
    severity = "high" if share >= HIGH_SHARE else "medium" if share >= MEDIUM_SHARE else "low"
    return [
        Finding(
            id="step_time_outliers",
            title=(
                f"{what} {ms(mean_slow)} instead of {ms(worst['median_work_ns'])} "
                f"({label}, {100 * share:.0f}% of step time): {clause}"
            ),
            severity=severity,
            cost_per_step_ns=round(cost_total / steps_total) if steps_total else 0,
            cost_total_ns=cost_total,
            cost_basis=(
                "the slow steps' work (cycle minus collective and wait phases) above the rank's "
                "median, summed, extrapolated from the steady-state steps to every step of the rank, "
                "summed over ranks"
            ),
            evidence={"ranks": outliers},
            recommendation=recommendation,
        )
    ]
