"""Input-pipeline bound: steps wait for their next batch (docs/DIAGNOSE.md).

Rule: over the steady-state steps of every rank, the input-pipeline wait
(``input_wait.py``, the figure every command gives: annotations matching the
summary's data pattern, ``InputWait`` of automatic PyTorch mode or the names
users give their data phases) is at least ``MIN_SHARE`` of the step cycle
and at least ``MIN_WAIT_NS`` per step. Severity by share: ``HIGH_SHARE`` high,
``MEDIUM_SHARE`` medium, else low. Cost: the measured wait per step (what a
loader that keeps up would save), over every step of every rank.
"""

from __future__ import annotations

from typing import Any

from smppy.diagnose.finding import Finding
from smppy.diagnose.input_wait import input_pipeline_wait
from smppy.diagnose.steps import cycle_ns, ms, rank_label, steady_steps, traced_workers, training_ranks

MIN_SHARE = 0.10
MIN_WAIT_NS = 1_000_000
MEDIUM_SHARE = 0.20
HIGH_SHARE = 0.40
FETCH_ANNOTATION = "DataLoaderFetch"


def _fetch_mean_ns(summary: dict[str, Any]) -> int | None:
    stats = next((a["stats"] for a in summary["annotations"] if a["name"] == FETCH_ANNOTATION), None)
    return stats["mean_ns"] if stats and stats["count"] else None


def detect(summary: dict[str, Any]) -> list[Finding]:
    wait = input_pipeline_wait(summary)
    if wait is None or wait["step_percent"] is None:
        return []
    rows, cost_total = [], 0
    for rank, row in zip(training_ranks(summary), wait["per_rank"]):  # per_rank is in that order
        cost_total += row["wait_per_step_ns"] * rank["steps_seen"]
        rows.append(
            {
                "host": row["host"],
                "rank": row["rank"],
                "pid": row["pid"],
                "label": rank_label(rank, summary),
                "wait_share": row["wait_ns"] / row["cycle_ns"] if row["cycle_ns"] else 0.0,
                "wait_per_step_ns": row["wait_per_step_ns"],
                "steps_waiting": sum(
                    1 for s in steady_steps(rank) if s["data_wait_ns"] >= MIN_SHARE * cycle_ns(s)
                ),
                "steps": row["steady_steps"],
                "traced_workers": traced_workers(summary, rank["pid"]),
            }
        )
    share = wait["step_percent"] / 100
    per_step = wait["wait_per_step_ns"]
    if share < MIN_SHARE or per_step < MIN_WAIT_NS:
        return []
    worst = max(rows, key=lambda r: r["wait_share"])
    names = wait["names"]
    fetch = _fetch_mean_ns(summary)
    workers = worst["traced_workers"]
    if workers == 0:
        recommendation = (
            "Load batches in background processes so the next batch is ready when the step ends: "
            "DataLoader(num_workers=4, pin_memory=True, persistent_workers=True), raising num_workers "
            "until the wait is gone"
        )
    else:
        recommendation = (
            f"Give the DataLoader more than its {workers} worker(s) (or a larger prefetch_factor), "
            "or make the dataset's __getitem__ cheaper"
        )
    if fetch is not None:
        recommendation += f"; one batch fetch ({FETCH_ANNOTATION}) takes {ms(fetch)}"
    severity = "high" if share >= HIGH_SHARE else "medium" if share >= MEDIUM_SHARE else "low"
    return [
        Finding(
            id="input_pipeline_bound",
            title=(
                f"Steps wait {100 * share:.0f}% of their time ({ms(per_step)} per step) for the next batch"
                + (f"; worst {worst['label']} at {100 * worst['wait_share']:.0f}%" if len(rows) > 1 else "")
            ),
            severity=severity,
            cost_per_step_ns=per_step,
            cost_total_ns=cost_total,
            cost_basis=(
                "the measured input-pipeline wait inside steady-state steps, per step, times every step "
                "of every rank: what a loader that keeps up would save; taken as input wait: "
                f"{', '.join(names)} (matched by the data-wait pattern; --data-wait-pattern REGEX changes it)"
            ),
            evidence={
                "wait_share": round(share, 4),
                "wait_per_step_ns": per_step,
                "data_annotations": names,
                "batch_fetch_mean_ns": fetch,
                "ranks": rows,
            },
            recommendation=recommendation,
        )
    ]
