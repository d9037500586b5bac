"""Exposed communication on the host (``exposed_communication``, ``evidence.side`` ``"host"``;
docs/DIAGNOSE.md): the time the ranks' threads spend blocked in ``Work.wait()`` on their collectives
(the summary's ``collectives.ranks[].work_wait_ns``: the synchronous Python API's own wait, FSDP's, a
script's), beyond their wait for the last rank to arrive, which the straggler findings count. That
time is the transfer the host sat through instead of computing: on gloo and on the CPU what
overlapping the collective with compute (``async_op=True`` and a later wait, DDP's buckets) would
hide. The GPU side (NCCL kernels no compute kernel overlaps) is ``gpu_kernels``'.

A finding when, on some rank with steps, the blocked time beyond the arrival wait is at least
``MIN_SHARE`` of its step time and ``MIN_PER_STEP_NS`` per step. Cost: that time summed over the
ranks. Severity by the largest rank's share.
"""

from __future__ import annotations

from typing import Any

from smppy.diagnose.finding import Finding
from smppy.diagnose.steps import ms, rank_label, training_ranks

MIN_SHARE = 0.10
MIN_PER_STEP_NS = 1_000_000
HIGH_SHARE = 0.30
MEDIUM_SHARE = 0.15


def _key(rank: dict[str, Any]) -> tuple[str, int, int]:
    return rank["host"], rank["rank"], rank["pid"]


def detect(summary: dict[str, Any]) -> list[Finding]:
    collectives = summary.get("collectives") or {}
    steps = {_key(r): r for r in training_ranks(summary)}
    rows = []
    for rank in collectives.get("ranks", []):
        step_rank = steps.get(_key(rank))
        if step_rank is None or not rank.get("work_wait_ns"):
            continue
        exposed = max(0, rank["work_wait_ns"] - rank["wait_ns"])
        step_time = step_rank["cycle_time_ns"]  # its steps' cycles, summed
        rows.append((rank, exposed, step_time, step_rank["steps_seen"]))
    if not rows:
        return []
    worst, exposed, step_time, steps_seen = max(rows, key=lambda r: r[1] / r[2] if r[2] else 0.0)
    share = exposed / step_time if step_time else 0.0
    if share < MIN_SHARE or exposed / steps_seen < MIN_PER_STEP_NS:
        return []
    total = sum(r[1] for r in rows)
    ops = sorted((o for o in collectives["ops"] if o.get("work_wait_ns")), key=lambda o: -o["work_wait_ns"])
    top = ops[0]
    label = rank_label(worst, summary)
    return [
        Finding(
            id="exposed_communication",
            title=(
                f"{label[:1].upper()}{label[1:]} waits {ms(exposed / steps_seen)} per step "
                f"({100 * share:.0f}% of its step time) in Work.wait() for its collectives to transfer, "
                f"most in {top['op']!r} of group {top['group']}"
            ),
            severity="high" if share >= HIGH_SHARE else "medium" if share >= MEDIUM_SHARE else "low",
            cost_per_step_ns=round(exposed / steps_seen),
            cost_total_ns=total,
            cost_basis=(
                "each rank's time in Work.wait() on its collectives minus its wait for the last rank to "
                "arrive (counted by the straggler findings), summed over the ranks: the transfer the host "
                "sat through, which overlapping with compute would hide"
            ),
            evidence={
                "side": "host",
                "ranks": [
                    {
                        "host": r["host"],
                        "rank": r["rank"],
                        "pid": r["pid"],
                        "work_wait_ns": r["work_wait_ns"],
                        "arrival_wait_ns": r["wait_ns"],
                        "exposed_ns": e,
                        "step_time_ns": t,
                    }
                    for r, e, t, _ in rows
                ],
                "ops": [
                    {
                        "op": o["op"],
                        "group": o["group"],
                        "waits": o["waits"],
                        "work_wait_ns": o["work_wait_ns"],
                    }
                    for o in ops[:8]
                ],
            },
            recommendation=(
                "Overlap the collective with compute: issue it with async_op=True and call wait() only where "
                "its result is needed (DDP and FSDP do this for gradients), bucket small tensors into one "
                "call, or all-reduce less often (metrics every N steps)"
            ),
        )
    ]
