"""One finding of ``smprof diagnose`` (docs/DIAGNOSE.md): what is slow, the
evidence as numbers, what it costs, and the one action to take.

Every detector is a function ``detect(summary: dict) -> list[Finding]`` of the
summary dict of docs/ANALYSIS.md, so diagnosing a job costs one summary.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

SEVERITIES = ("high", "medium", "low")


@dataclass(frozen=True)
class Finding:
    id: str  # stable, snake_case: "input_pipeline_bound"
    title: str  # one line, numbers first: "Steps wait 38% of their time for the next batch"
    severity: str  # one of SEVERITIES
    cost_per_step_ns: int  # estimated time this problem costs per step (0 when the job has no steps)
    cost_total_ns: int  # the same over the whole run (summed over ranks: rank-seconds)
    cost_basis: str  # how the cost was estimated, one sentence
    evidence: dict[str, Any]  # JSON-able numbers: ranks, steps, annotations, kernels, time ranges
    recommendation: str  # one concrete action

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"Finding.severity: {self.severity!r} is not one of {', '.join(SEVERITIES)}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
