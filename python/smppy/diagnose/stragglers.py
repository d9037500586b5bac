"""Stragglers: ranks consistently slower than the others, the phase
(annotation) that makes the difference, and the ranks that wait for them
(docs/DIAGNOSE.md).

Three rules:

- *Collectives.* From the collective calls recorded under ``TorchAutoSteps``
  (the summary's ``collectives``, matched across ranks by process group and
  sequence number), with or without annotations: a rank that arrives last at
  ``MIN_CONSISTENCY`` of the collective instances it joins, on average at
  least ``MIN_EXCESS_NS`` after the rank before it, while each other rank
  waits for it at least ``MIN_EXCESS`` of their step cycle (when there are
  steps). The cost is the others' measured wait. On GPUs, where the host only
  enqueues the collective and may run ahead of its device, the arrivals are
  the NCCL kernels' starts (``device_*``) wherever instances were matched on
  the device. The phase that is longer on
  it (its forward, its input wait) is named when the steps have phases. It
  decides the phase rule's two-way readings (a reading of another rank is
  the same wait seen from the other side), and a rank the work or phase rule
  names carries it as ``evidence["collectives"]``.
- *Work.* A rank's work in a step (``steps.work_ns``) is its cycle minus the
  phases that are collectives or waits for other ranks: in synchronous
  training every rank's cycle is the same, and the straggler shows in its work
  while the others' extra time sits in their collectives. A rank whose median
  work per step exceeds the median of the other ranks' by at least
  ``MIN_EXCESS`` of it and at least ``MIN_EXCESS_NS``.
- *Phases.* Where the collective is not annotated (DDP's reducer all-reduces
  inside ``loss.backward()``, so the others wait inside the user's
  ``Backward``), every rank's work is its whole cycle and the work rule sees
  nothing. A rank whose phase P (not a wait) is longer than the other ranks'
  median P by at least ``MIN_EXCESS`` of their cycle and ``MIN_EXCESS_NS``,
  while the others spend at least ``MIN_COMPENSATION`` of that excess more in
  some phase Q: P is where the rank is slow, Q where the others wait for it.

  With two ranks the phase rule reads both ways (rank 1 slow in ``Forward``,
  rank 0 waiting in ``Backward``; or the reverse): the reading whose wait
  phase can hide a collective (a collective's name, then a backward pass)
  stays, and neither when that does not decide.

Both need the rank above the others' median at the same step number (its work,
or its P) in at least ``MIN_CONSISTENCY`` of their common steady-state steps.
Severity by excess over the others' median: ``HIGH_EXCESS`` high,
``MEDIUM_EXCESS`` medium, else low. Cost: the time each other rank waits per
step (the excess; by the phases rule, the smaller of the excess and the
others' extra time in Q), over every step and every other rank (rank-time).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from statistics import median
from typing import Any

from smppy.diagnose.finding import Finding
from smppy.diagnose.steps import (
    COLLECTIVE,
    cycle_ns,
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
MIN_COMPENSATION = 0.5
MEDIUM_EXCESS = 0.25
HIGH_EXCESS = 0.50


def _phase_means(steps: list[dict[str, Any]]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for step in steps:
        for name, ns in step["phases"].items():
            totals[name] = totals.get(name, 0.0) + ns
    return {name: total / len(steps) for name, total in totals.items()}


def _consistently_above(mine: dict[int, float], others: list[dict[int, float]]) -> tuple[int, int]:
    """(steps where ``mine`` is above the others' median at the same step, steps in common)."""
    common = [n for n in mine if all(n in o for o in others)]
    return sum(mine[n] > median(o[n] for o in others) for n in common), len(common)


def _severity(share: float) -> str:
    return "high" if share >= HIGH_EXCESS else "medium" if share >= MEDIUM_EXCESS else "low"


class _Ranks:
    """The training ranks' steady steps, work and phase means, computed once."""

    def __init__(self, summary: dict[str, Any]) -> None:
        self.summary = summary
        self.ranks = training_ranks(summary)
        self.is_wait: Callable[[str], bool] = wait_predicate(summary)
        self.steps = {id(r): steady_steps(r) for r in self.ranks}
        self.work = {
            id(r): {s["step"]: work_ns(s, self.is_wait) for s in self.steps[id(r)]} for r in self.ranks
        }
        self.cycles = {id(r): median_ns([cycle_ns(s) for s in self.steps[id(r)]]) for r in self.ranks}
        self.phases = {id(r): _phase_means(self.steps[id(r)]) for r in self.ranks}

    def phase_diffs(self, rank: dict[str, Any], others: list[dict[str, Any]]) -> dict[str, float]:
        """Per phase name: this rank's mean per step minus the others' median."""
        names = {name for r in self.ranks for name in self.phases[id(r)]}
        return {
            name: self.phases[id(rank)].get(name, 0.0)
            - median(self.phases[id(r)].get(name, 0.0) for r in others)
            for name in names
        }

    def per_step(self, rank: dict[str, Any], phase: str) -> dict[int, float]:
        return {s["step"]: s["phases"].get(phase, 0) for s in self.steps[id(rank)]}


def _finding(
    ranks: _Ranks,
    rank: dict[str, Any],
    others: list[dict[str, Any]],
    *,
    title: str,
    recommendation: str,
    cost_per_step_ns: float,
    share: float,
    cost_basis: str,
    evidence: dict[str, Any],
) -> Finding:
    return Finding(
        id="straggler_rank",
        title=title,
        severity=_severity(share),
        cost_per_step_ns=cost_per_step_ns,
        cost_total_ns=cost_per_step_ns * rank["steps_seen"] * len(others),
        cost_basis=cost_basis,
        evidence={"host": rank["host"], "rank": rank["rank"], "pid": rank["pid"], **evidence},
        recommendation=recommendation,
    )


def _by_work(ranks: _Ranks, rank: dict[str, Any], others: list[dict[str, Any]]) -> Finding | None:
    medians = {id(r): median_ns(list(ranks.work[id(r)].values())) for r in [rank, *others]}
    others_median = median_ns([medians[id(r)] for r in others])
    excess = medians[id(rank)] - others_median
    if excess < max(MIN_EXCESS * others_median, MIN_EXCESS_NS):
        return None
    slower, compared = _consistently_above(ranks.work[id(rank)], [ranks.work[id(r)] for r in others])
    if not compared or slower < MIN_CONSISTENCY * compared:
        return None
    is_wait = ranks.is_wait
    diffs = ranks.phase_diffs(rank, others)
    work_diffs = {n: d for n, d in diffs.items() if not is_wait(n) and d > 0}
    phase = max(work_diffs, key=work_diffs.get) if work_diffs else None
    waits = {n: -d for n, d in diffs.items() if is_wait(n) and d < 0}
    label = rank_label(rank, ranks.summary)
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
    return _finding(
        ranks,
        rank,
        others,
        title=title,
        recommendation=recommendation,
        cost_per_step_ns=excess,
        share=share,
        cost_basis=(
            "the straggler's median extra work per step (cycle minus collective/wait phases) over "
            "the other ranks' median, which each other rank waits at the next synchronization, "
            "times its steps and the number of other ranks"
        ),
        evidence={
            "rule": "work",
            "work_per_step_ns": medians[id(rank)],
            "others_work_per_step_ns": others_median,
            "steps_slower": slower,
            "steps_compared": compared,
            "phase_excess_ns": {n: round(d) for n, d in sorted(diffs.items(), key=lambda kv: -kv[1])},
            "others_wait_ns": {n: round(d) for n, d in waits.items()},
        },
    )


def _by_phases(ranks: _Ranks, rank: dict[str, Any], others: list[dict[str, Any]]) -> Finding | None:
    diffs = ranks.phase_diffs(rank, others)
    own = {n: d for n, d in diffs.items() if not ranks.is_wait(n) and d > 0}
    if not own:
        return None
    phase = max(own, key=own.get)
    excess = own[phase]
    others_cycle = median_ns([ranks.cycles[id(r)] for r in others])
    if excess < max(MIN_EXCESS * others_cycle, MIN_EXCESS_NS):
        return None
    longer_for_others = {n: -d for n, d in diffs.items() if d < 0 and n != phase}
    if not longer_for_others:
        return None
    wait_phase = max(longer_for_others, key=longer_for_others.get)
    waited = longer_for_others[wait_phase]
    if waited < MIN_COMPENSATION * excess:
        return None
    slower, compared = _consistently_above(
        ranks.per_step(rank, phase), [ranks.per_step(r, phase) for r in others]
    )
    if not compared or slower < MIN_CONSISTENCY * compared:
        return None
    label = rank_label(rank, ranks.summary)
    share = excess / others_cycle if others_cycle else 0.0
    title = (
        f"{label[:1].upper()}{label[1:]} spends {ms(excess)} longer per step in {phase!r} than the other "
        f"ranks, who wait about as long ({ms(waited)}) in {wait_phase!r}"
    )
    return _finding(
        ranks,
        rank,
        others,
        title=title,
        recommendation=(
            f"Find why {phase!r} is slower on {label} (a larger data shard or batch, a busier host, a slower "
            f"device) and even it out: the other ranks wait for it inside {wait_phase!r}, where their "
            "collective (DDP's all-reduce runs inside loss.backward()) cannot finish before it arrives"
        ),
        cost_per_step_ns=min(excess, waited),
        share=share,
        cost_basis=(
            f"the smaller of the straggler's extra time per step in {phase!r} and the other ranks' extra "
            f"time in {wait_phase!r} (their median), which each other rank waits, times its steps and the "
            "number of other ranks"
        ),
        evidence={
            "rule": "phases",
            "phase": phase,
            "wait_phase": wait_phase,
            "others_cycle_ns": others_cycle,
            "steps_slower": slower,
            "steps_compared": compared,
            "phase_excess_ns": {n: round(d) for n, d in sorted(diffs.items(), key=lambda kv: -kv[1])},
            "others_wait_ns": {wait_phase: round(waited)},
        },
    )


def _rank_key(rank: dict[str, Any]) -> tuple[str, int, int]:
    return rank["host"], rank["rank"], rank["pid"]


def _by_collectives(ranks: _Ranks) -> list[Finding]:
    collectives = ranks.summary.get("collectives") or {}
    # The device's arrivals where the NCCL kernels were matched, else the host's.
    on_device = collectives.get("instances_matched_on_device", 0) > 0
    p = "device_" if on_device else ""
    matched_key = "instances_matched_on_device" if on_device else "instances_matched"
    rows = [r for r in collectives.get("ranks", []) if r[matched_key] > 0]
    if len(rows) < 2:
        return []
    top_op = next((o for o in collectives["ops"] if o[f"{p}wait_ns"] > 0 and not o["point_to_point"]), None)
    step_ranks = {_rank_key(r): r for r in ranks.ranks}
    findings = []
    for row in rows:
        matched, last = row[matched_key], row[f"{p}last_arrivals"]
        if last == 0 or last < MIN_CONSISTENCY * matched:
            continue
        late_by = row[f"{p}late_by_ns"] / last
        if late_by < MIN_EXCESS_NS:
            continue
        others = [r for r in rows if r is not row]
        others_wait = sum(r[f"{p}wait_ns"] for r in others)
        step_rank = step_ranks.get(_rank_key(row))
        steps = step_rank["steps_seen"] if step_rank else 0
        cycle = ranks.cycles[id(step_rank)] if step_rank else 0
        per_step = others_wait / len(others) / steps if steps else 0.0
        if cycle and per_step < MIN_EXCESS * cycle:
            continue
        label = rank_label(row, ranks.summary)
        title = (
            f"{label[:1].upper()}{label[1:]} arrives last at {100 * last / matched:.0f}% of the {matched} "
            f"collectives it joins{' on the GPU' if on_device else ''}, {ms(late_by)} after the rank before "
            "it on average"
        )
        if top_op is not None:
            title += f" ({top_op['op']!r} waits the most)"
        title += f"; the other ranks wait {ms(others_wait / len(others))} each for it"
        if steps:
            title += f" ({ms(per_step)} per step)"
        evidence: dict[str, Any] = {
            "rule": "collectives",
            "clock": "device" if on_device else "host",
            "host": row["host"],
            "rank": row["rank"],
            "pid": row["pid"],
            "collective": top_op["op"] if top_op else None,
            "group": top_op["group"] if top_op else None,
            "instances_matched": matched,
            "last_arrivals": last,
            "late_by_mean_ns": round(late_by),
            "others_wait_ns": {rank_label(r, ranks.summary): r[f"{p}wait_ns"] for r in others},
        }
        phase = None
        step_others = [step_ranks[_rank_key(r)] for r in others if _rank_key(r) in step_ranks]
        if step_rank and step_others:
            diffs = ranks.phase_diffs(step_rank, step_others)
            own = {n: d for n, d in diffs.items() if not ranks.is_wait(n) and d > 0}
            evidence["phase_excess_ns"] = {
                n: round(d) for n, d in sorted(diffs.items(), key=lambda kv: -kv[1])
            }
            if own:
                phase = max(own, key=own.get)
                evidence["phase"] = phase
                title += f"; its {phase!r} is {ms(own[phase])} longer per step than the others'"
        where = f"{phase!r} on {label}" if phase else f"{label}'s step before its collectives"
        findings.append(
            Finding(
                id="straggler_rank",
                title=title,
                severity=_severity(per_step / cycle if cycle else 0.0),
                cost_per_step_ns=round(per_step),
                cost_total_ns=others_wait,
                cost_basis=(
                    "the other ranks' measured wait in the collectives they share with it (each one's time "
                    "from its own arrival to the last arrival, summed over the matched instances and ranks"
                    + ("; arrivals are the NCCL kernels' starts)" if on_device else ")")
                ),
                evidence=evidence,
                recommendation=(
                    f"Find why {where} takes longer (a larger data shard or batch, a busier host, a slower "
                    "device) and even it out: every other rank waits for it at each collective"
                    + ("" if phase else "; annotate the step's phases (smppy.annotate) to see which one")
                ),
            )
        )
    return findings


def _hides_a_collective(phase: str) -> int:
    """How likely the others' wait is inside ``phase``: 2 for a collective's name, 1 for a backward
    pass (DDP's all-reduce and FSDP's reduce-scatter run inside ``loss.backward()``), else 0."""
    if COLLECTIVE.search(phase):
        return 2
    return 1 if "backward" in phase.lower() else 0


def _without_mirrors(findings: list[Finding]) -> list[Finding]:
    """With two ranks (or two halves) the phase rule reads both ways: rank 1 slow in Forward with
    rank 0 waiting in Backward, or rank 0 slow in Backward with rank 1 waiting in Forward. The
    reading whose wait phase can hide a collective stays; when neither does better, neither."""
    by_phases = [f for f in findings if f.evidence.get("rule") == "phases"]
    dropped: set[int] = set()
    for f in by_phases:
        mirrors = [
            g
            for g in by_phases
            if g is not f
            and (g.evidence["phase"], g.evidence["wait_phase"])
            == (f.evidence["wait_phase"], f.evidence["phase"])
        ]
        for g in mirrors:
            if _hides_a_collective(f.evidence["wait_phase"]) <= _hides_a_collective(g.evidence["wait_phase"]):
                dropped.add(id(f))
    return [f for f in findings if id(f) not in dropped]


def detect(summary: dict[str, Any]) -> list[Finding]:
    ranks = _Ranks(summary)
    by_collectives = {_rank_key(f.evidence): f for f in _by_collectives(ranks)}
    findings = []
    if len({(r["host"], r["rank"]) for r in ranks.ranks}) >= 2:
        for rank in ranks.ranks:
            others = [r for r in ranks.ranks if r is not rank]
            finding = _by_work(ranks, rank, others) or _by_phases(ranks, rank, others)
            if finding is not None:
                findings.append(finding)
        findings = _without_mirrors(findings)
    if by_collectives:
        # The collectives say which rank the others wait for: a phase reading of another rank is the
        # same wait seen from the other side.
        findings = [
            f for f in findings if f.evidence["rule"] != "phases" or _rank_key(f.evidence) in by_collectives
        ]
    named = {_rank_key(f.evidence) for f in findings}
    findings = [
        replace(f, evidence={**f.evidence, "collectives": by_collectives[_rank_key(f.evidence)].evidence})
        if _rank_key(f.evidence) in by_collectives
        else f
        for f in findings
    ]
    return findings + [f for key, f in by_collectives.items() if key not in named]
