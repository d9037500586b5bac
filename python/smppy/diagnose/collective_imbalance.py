"""Collective imbalance: ranks out of step in their collectives (docs/DIAGNOSE.md), from the
collectives that ``TorchAutoSteps=1`` records and the summary matches across ranks by process
group and sequence number.

In a collective every rank must call the same op, in the same order, with the same shape (all-to-all
and scatter excepted, which the summary leaves out of the bytes). Three readings, one finding each,
high severity; they cost no measured time, so they have no cost:

- ``op``: at one sequence number of a group, one rank called another op than the others (a
  rank-dependent branch): NCCL or gloo then hangs or mixes up the data.
- ``calls``: the ranks of a group that spans every profiled process called an op a different number
  of times, by more than ``CALLS_TOLERANCE`` calls and ``CALLS_TOLERANCE_SHARE`` of the most (the
  profiled windows may stop a few calls apart).
- ``bytes``: different input bytes in one instance (a last batch of another size).
"""

from __future__ import annotations

from typing import Any

from smppy.diagnose.finding import Finding

CALLS_TOLERANCE = 2
CALLS_TOLERANCE_SHARE = 0.01

_RECOMMENDATION = (
    "Make every rank call the same collectives in the same order with the same shapes (look for a "
    "rank-dependent branch or an uneven last batch: drop_last=True); TORCH_DISTRIBUTED_DEBUG=DETAIL makes "
    "c10d check each collective's op and shapes across ranks"
)


def _finding(kind: str, title: str, evidence: dict[str, Any]) -> Finding:
    return Finding(
        id="collective_imbalance",
        title=title,
        severity="high",
        cost_per_step_ns=0,
        cost_total_ns=0,
        cost_basis="no time measured: collectives out of step hang or give wrong results",
        evidence={"kind": kind, **evidence},
        recommendation=_RECOMMENDATION,
    )


def _ops_differ(collectives: dict[str, Any]) -> list[Finding]:
    count = collectives.get("instances_op_differ", 0)
    if not count:
        return []
    examples = collectives["op_differ_examples"]
    e = examples[0]
    return [
        _finding(
            "op",
            f"{count} collective instance(s) were called as different ops by their ranks, e.g. "
            f"#{e['sequence']} of group {e['group']}: rank {e['rank']} called {e['op']}, "
            f"rank {e['other_rank']} {e['other_op']}; the ranks are out of step",
            {"instances_op_differ": count, "examples": examples},
        )
    ]


def _calls_differ(collectives: dict[str, Any]) -> list[Finding]:
    differ = []
    for op in collectives.get("ops", []):
        per_rank = op["calls_per_rank"]
        if op["point_to_point"] or len(per_rank) < 2 or op["group_size"] != len(per_rank):
            continue
        low = min(per_rank, key=lambda r: r["calls"])
        high = max(per_rank, key=lambda r: r["calls"])
        gap = high["calls"] - low["calls"]
        if gap > CALLS_TOLERANCE and gap > CALLS_TOLERANCE_SHARE * high["calls"]:
            differ.append(
                {
                    "op": op["op"],
                    "group": op["group"],
                    "calls_min": low["calls"],
                    "rank_min": low["rank"],
                    "calls_max": high["calls"],
                    "rank_max": high["rank"],
                }
            )
    if not differ:
        return []
    e = differ[0]
    return [
        _finding(
            "calls",
            f"{len(differ)} collective op(s) were called a different number of times by the ranks of their "
            f"group, e.g. {e['op']} of group {e['group']}: rank {e['rank_min']} {e['calls_min']} times, rank "
            f"{e['rank_max']} {e['calls_max']} times; the ranks are out of step",
            {"ops": differ},
        )
    ]


def _bytes_differ(collectives: dict[str, Any]) -> list[Finding]:
    count = collectives.get("instances_bytes_differ", 0)
    if not count:
        return []
    examples = collectives["bytes_differ_examples"]
    e = examples[0]
    return [
        _finding(
            "bytes",
            f"{count} collective instance(s) got different input sizes from their ranks, e.g. {e['op']} "
            f"#{e['sequence']} of group {e['group']}: rank {e['rank_min']} passed {e['bytes_min']} B, "
            f"rank {e['rank_max']} {e['bytes_max']} B; the ranks are out of step",
            {
                "instances_bytes_differ": count,
                "instances_matched": collectives["instances_matched"],
                "ops": sorted({x["op"] for x in examples}),
                "examples": examples,
            },
        )
    ]


def detect(summary: dict[str, Any]) -> list[Finding]:
    collectives = summary.get("collectives") or {}
    return [*_ops_differ(collectives), *_calls_differ(collectives), *_bytes_differ(collectives)]
