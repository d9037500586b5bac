"""Collective imbalance: ranks that pass different input sizes to the same collective instance
(docs/DIAGNOSE.md), from the collectives that ``TorchAutoSteps=1`` records and the summary matches
across ranks by process group and sequence number.

In a collective every rank must pass the same shape (all-to-all and scatter excepted, which the
summary leaves out): different bytes in one instance mean the ranks are out of step, a
rank-dependent branch or a last batch of another size, which NCCL turns into a hang or wrong
results. One finding for the job, high severity; it costs no measured time, so it has no cost.
"""

from __future__ import annotations

from typing import Any

from smppy.diagnose.finding import Finding


def detect(summary: dict[str, Any]) -> list[Finding]:
    collectives = summary.get("collectives") or {}
    count = collectives.get("instances_bytes_differ", 0)
    if not count:
        return []
    examples = collectives["bytes_differ_examples"]
    e = examples[0]
    ops = sorted({x["op"] for x in examples})
    return [
        Finding(
            id="collective_imbalance",
            title=(
                f"{count} collective instance(s) got different input sizes from their ranks, e.g. {e['op']} "
                f"#{e['sequence']} of group {e['group']}: rank {e['rank_min']} passed {e['bytes_min']} B, "
                f"rank {e['rank_max']} {e['bytes_max']} B; the ranks are out of step"
            ),
            severity="high",
            cost_per_step_ns=0,
            cost_total_ns=0,
            cost_basis="no time measured: a collective of mismatched sizes hangs or gives wrong results",
            evidence={
                "instances_bytes_differ": count,
                "instances_matched": collectives["instances_matched"],
                "ops": ops,
                "examples": examples,
            },
            recommendation=(
                "Make every rank call the same collectives in the same order with the same shapes (look for "
                "a rank-dependent branch or an uneven last batch: drop_last=True); "
                "TORCH_DISTRIBUTED_DEBUG=DETAIL makes c10d check each collective's shapes across ranks"
            ),
        )
    ]
