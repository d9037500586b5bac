"""The phase rule's two-rank mirror (smppy.diagnose.stragglers._without_mirrors): with two ranks the
rule reads both ways, and only the reading whose wait phase can hide a collective stays."""

from __future__ import annotations

from dataclasses import replace

from smppy.diagnose.finding import Finding
from smppy.diagnose.stragglers import _without_mirrors


def _phases_finding(rank: int, phase: str, wait_phase: str) -> Finding:
    return Finding(
        id="straggler_rank",
        title=f"rank {rank} spends longer in {phase!r}",
        severity="medium",
        cost_per_step_ns=25_000_000,
        cost_total_ns=250_000_000,
        cost_basis="test",
        evidence={"rule": "phases", "rank": rank, "phase": phase, "wait_phase": wait_phase},
        recommendation="test",
    )


def _ranks(findings: list[Finding]) -> list[int]:
    return [f.evidence["rank"] for f in findings]


def test_the_reading_that_waits_in_backward_stays() -> None:
    slow_forward = _phases_finding(1, "Forward", "Backward")
    slow_backward = _phases_finding(0, "Backward", "Forward")
    assert _ranks(_without_mirrors([slow_forward, slow_backward])) == [1]
    assert _ranks(_without_mirrors([slow_backward, slow_forward])) == [1]


def test_a_collective_name_beats_a_backward_pass() -> None:
    waits_in_all_reduce = _phases_finding(1, "Backward", "all_reduce")
    waits_in_backward = _phases_finding(0, "all_reduce", "Backward")
    assert _ranks(_without_mirrors([waits_in_all_reduce, waits_in_backward])) == [1]


def test_a_tie_keeps_neither_reading() -> None:
    """Neither Forward nor DataLoad can hide a collective: no evidence which rank is the straggler."""
    assert (
        _without_mirrors(
            [_phases_finding(1, "Forward", "DataLoad"), _phases_finding(0, "DataLoad", "Forward")]
        )
        == []
    )
    assert (
        _without_mirrors(
            [_phases_finding(1, "Backward", "Backward_2"), _phases_finding(0, "Backward_2", "Backward")]
        )
        == []
    )


def test_findings_that_are_not_mirrors_all_stay() -> None:
    work = replace(_phases_finding(2, "Forward", "Backward"), evidence={"rule": "work", "rank": 2})
    unrelated = [_phases_finding(1, "Forward", "Backward"), _phases_finding(0, "Optimizer", "DataLoad"), work]
    assert _ranks(_without_mirrors(unrelated)) == [1, 0, 2]
