"""Stragglers: ranks consistently slower than the others, the phase
(annotation) that makes the difference, and the ranks that wait for them at
collectives (docs/DIAGNOSE.md).

A rank's *work* in a step (``steps.work_ns``) is its cycle minus the phases
that are collectives or waits for other ranks: in synchronous training every
rank's cycle is the same, and the straggler shows in its work while the
others' extra time sits in their collectives.

Rule: with at least two ranks, a rank whose median work per step exceeds the
median of the other ranks' by at least ``MIN_EXCESS`` of it and at least
``MIN_EXCESS_NS``, and is above the others' median at the same step number in
at least ``MIN_CONSISTENCY`` of their common steady-state steps. Severity by
excess: ``HIGH_EXCESS`` high, ``MEDIUM_EXCESS`` medium, else low. Cost: the
excess per step, which every other rank waits in synchronous training, over
every step and every other rank (rank-time).
"""

from __future__ import annotations

from statistics import median
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

MIN_EXCESS = 0.10
MIN_EXCESS_NS = 1_000_000
MIN_CONSISTENCY = 0.75
MEDIUM_EXCESS = 0.25
HIGH_EXCESS = 0.50


def _phase_means(steps: list[dict[str, Any]]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for step in steps:
        for name, ns in step["phases"].items():
            totals[name] = totals.get(name, 0.0) + ns
    return {name: total / len(steps) for name, total in totals.items()}


def detect(summary: dict[str, Any]) -> list[Finding]:
    ranks = training_ranks(summary)
    if len({(r["host"], r["rank"]) for r in ranks}) < 2:
        return []
    is_wait = wait_predicate(summary)
    steps = {id(r): steady_steps(r) for r in ranks}
    work = {id(r): {s["step"]: work_ns(s, is_wait) for s in steps[id(r)]} for r in ranks}
    medians = {id(r): median_ns(list(work[id(r)].values())) for r in ranks}
    phases = {id(r): _phase_means(steps[id(r)]) for r in ranks}
    findings = []
    for rank in ranks:
        others = [r for r in ranks if r is not rank]
        others_median = median_ns([medians[id(r)] for r in others])
        excess = medians[id(rank)] - others_median
        if excess < max(MIN_EXCESS * others_median, MIN_EXCESS_NS):
            continue
        common = [n for n in work[id(rank)] if all(n in work[id(r)] for r in others)]
        slower = [n for n in common if work[id(rank)][n] > median(work[id(r)][n] for r in others)]
        if not common or len(slower) < MIN_CONSISTENCY * len(common):
            continue
        names = {name for r in ranks for name in phases[id(r)]}
        diffs = {
            name: phases[id(rank)].get(name, 0.0) - median(phases[id(r)].get(name, 0.0) for r in others)
            for name in names
        }
        work_diffs = {n: d for n, d in diffs.items() if not is_wait(n) and d > 0}
        phase = max(work_diffs, key=work_diffs.get) if work_diffs else None
        waits = {n: -d for n, d in diffs.items() if is_wait(n) and d < 0}
        label = rank_label(rank, summary)
        share = excess / others_median if others_median else 0.0
        title = (
            f"{label[:1].upper()}{label[1:]} works {ms(excess)} (+{100 * share:.0f}%) longer per step "
            "than the other ranks"
        )
        if phase is not None:
            title += f"; {phase!r} accounts for {ms(work_diffs[phase])} of it"
        if waits:
            wait_name = max(waits, key=waits.get)
            title += f", while the others wait {ms(waits[wait_name])} longer in {wait_name!r}"
        if phase is None:
            recommendation = (
                f"Annotate the phases of {label}'s step (smppy.annotate) to see which one is slow, "
                "then balance the work or move the rank off its busier host"
            )
        else:
            recommendation = (
                f"Find why {phase!r} is slower on {label} (a larger data shard or batch, a busier host, "
                "a slower device) and even it out: every other rank waits for it at each synchronization"
            )
        severity = "high" if share >= HIGH_EXCESS else "medium" if share >= MEDIUM_EXCESS else "low"
        findings.append(
            Finding(
                id="straggler_rank",
                title=title,
                severity=severity,
                cost_per_step_ns=excess,
                cost_total_ns=excess * rank["steps_seen"] * len(others),
                cost_basis=(
                    "the straggler's median extra work per step (cycle minus collective/wait phases) over "
                    "the other ranks' median, which each other rank waits at the next synchronization, "
                    "times its steps and the number of other ranks"
                ),
                evidence={
                    "host": rank["host"],
                    "rank": rank["rank"],
                    "pid": rank["pid"],
                    "work_per_step_ns": medians[id(rank)],
                    "others_work_per_step_ns": others_median,
                    "steps_slower": len(slower),
                    "steps_compared": len(common),
                    "phase_excess_ns": {n: round(d) for n, d in sorted(diffs.items(), key=lambda kv: -kv[1])},
                    "others_wait_ns": {n: round(d) for n, d in waits.items()},
                },
                recommendation=recommendation,
            )
        )
    return findings
