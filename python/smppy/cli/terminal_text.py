"""Terminal text the commands share: durations, shortened names, aligned tables and findings."""

from __future__ import annotations

import textwrap
from typing import Any

from smppy.diagnose import Finding
from smppy.diagnose.steps import ms as finding_ms


def ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def table(headers: list[str], rows: list[list[Any]], indent: str = "  ") -> None:
    """Prints ``rows`` under ``headers``: the first column left-aligned, the others right-aligned."""
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        print(
            indent
            + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
        )
        if n == 0:
            print(indent + "  ".join("-" * w for w in widths))


def short(name: str, width: int = 60) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."


def finding_lines(finding: Finding, number: int) -> list[str]:
    """A finding as terminal text: its title, cost and recommendation."""
    if finding.cost_total_ns:
        cost = (
            f"costs ~{finding_ms(finding.cost_per_step_ns)} per step, "
            f"{finding.cost_total_ns / 1e9:.2f} rank-s in all"
        )
    else:
        cost = "cost not estimated"
    wrap = textwrap.TextWrapper(width=100, initial_indent="     ", subsequent_indent="     ")
    return [
        f"{number:>2}. [{finding.severity}] {finding.title}",
        *wrap.wrap(cost + f" ({finding.cost_basis})"),
        *wrap.wrap("-> " + finding.recommendation),
    ]


def print_findings(findings: list[Finding], limit: int | None = None) -> None:
    shown = findings[:limit] if limit is not None else findings
    if not findings:
        print("no findings: no detector found a problem in this run")
    for n, finding in enumerate(shown, 1):
        print("\n".join(finding_lines(finding, n)))
    if len(shown) < len(findings):
        print(f"    ... {len(findings) - len(shown)} more: smprof diagnose")
