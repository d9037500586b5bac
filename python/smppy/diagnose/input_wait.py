"""Input-pipeline wait: the one figure ``smprof summary``, ``diagnose``, ``report`` and ``diff`` give
for how long steps wait for their batches (docs/ANALYSIS.md "input_pipeline_wait").

It is measured over the steady-state steps of every rank (docs/DIAGNOSE.md: each rank's steps but
its first) as the wait inside them (annotations fully matching the summary's ``data_wait_pattern``,
any case, nested ones once) over their cycles. The first step is start-up (spawned DataLoader
workers importing torch can take seconds before the first batch) and is shown apart, as the
warm-up.
"""

from __future__ import annotations

import re
from typing import Any

from smppy.diagnose.steps import cycle_ns, ms, per_step_ns, steady_steps, traced_workers, training_ranks


def _warm_up(ranks: list[dict[str, Any]], summary: dict[str, Any]) -> dict[str, Any] | None:
    """The longest first step of the ranks, with its wait and whether its rank has traced workers."""
    firsts = [(r["steps"][0], r) for r in ranks if r["steps"]]
    if not firsts:
        return None
    step, rank = max(firsts, key=lambda f: f[0]["dur_ns"])
    return {
        "host": rank["host"],
        "rank": rank["rank"],
        "step": step["step"],
        "dur_ns": step["dur_ns"],
        "wait_ns": step["data_wait_ns"],
        "traced_workers": traced_workers(summary, rank["pid"]),
    }


def input_pipeline_wait(summary: dict[str, Any]) -> dict[str, Any] | None:
    """The input-pipeline wait of a summary dict; None when no annotation matches the pattern.

    ``step_percent`` (the wait's share of the steady-state step cycles, None with fewer than three
    steady steps on every rank), ``wait_per_step_ns`` and ``steady_steps`` over the training ranks;
    ``per_rank`` the same per rank, in ``training_ranks`` order; ``warm_up`` the longest first
    step (``dur_ns``, ``wait_ns``); ``count`` and ``total_ns`` every matching annotation, first
    steps and the time after the last step included."""
    pattern = summary["step_profile"]["data_wait_pattern"]
    matcher = re.compile(pattern, re.IGNORECASE)
    waits = [a["stats"] for a in summary["annotations"] if matcher.fullmatch(a["name"])]
    if not waits:
        return None
    ranks = training_ranks(summary)
    per_rank = []
    for rank in ranks:
        steps = steady_steps(rank)
        wait = sum(s["data_wait_ns"] for s in steps)
        cycle = sum(cycle_ns(s) for s in steps)
        per_rank.append(
            {
                "host": rank["host"],
                "rank": rank["rank"],
                "pid": rank["pid"],
                "steady_steps": len(steps),
                "wait_ns": wait,
                "cycle_ns": cycle,
                "step_percent": 100.0 * wait / cycle if cycle else None,
                "wait_per_step_ns": per_step_ns(wait, len(steps)),
            }
        )
    wait_total = sum(r["wait_ns"] for r in per_rank)
    cycle_total = sum(r["cycle_ns"] for r in per_rank)
    steps_total = sum(r["steady_steps"] for r in per_rank)
    # The names taken as wait inside the ranks' steps (their phases), else every matching name.
    inside = {p["name"] for r in ranks for p in r["phases"] if p["data"]}
    names = sorted(inside or {a["name"] for a in summary["annotations"] if matcher.fullmatch(a["name"])})
    return {
        "annotation": pattern,
        "names": names,
        "count": sum(w["count"] for w in waits),
        "total_ns": sum(w["total_ns"] for w in waits),
        "steady_steps": steps_total,
        "ranks": len(per_rank),
        "wait_ns": wait_total,
        "wait_per_step_ns": per_step_ns(wait_total, steps_total),
        "step_percent": 100.0 * wait_total / cycle_total if cycle_total else None,
        "per_rank": per_rank,
        "warm_up": _warm_up(ranks, summary),
    }


def input_wait_sentence(wait: dict[str, Any]) -> str:
    """The figure as one line of text, the warm-up apart (the summary's and the report's)."""
    names = ", ".join(wait["names"][:4]) + (", ..." if len(wait["names"]) > 4 else "")
    if wait["step_percent"] is None:
        text = (
            f"{ms(wait['total_ns'])} in {wait['count']} annotation(s) ({names}); "
            "too few steps for a steady-state share"
        )
    else:
        text = (
            f"{wait['step_percent']:.1f}% of steady-state step time, {ms(wait['wait_per_step_ns'])} per step "
            f"over {wait['steady_steps']} steps of {wait['ranks']} rank(s) ({names})"
        )
    warm = wait["warm_up"]
    if warm and wait["step_percent"] is not None:
        text += f"; warm-up apart: first step {ms(warm['dur_ns'])}"
        if warm["wait_ns"] >= warm["dur_ns"] / 2:
            cause = "DataLoader workers starting" if warm["traced_workers"] else "waiting for the first batch"
            text += f", {ms(warm['wait_ns'])} of it {cause}"
    return text
