"""``smprof diagnose DIR|s3://...``: why the run is slow and what to change,
most costly finding first (docs/DIAGNOSE.md); ``--json`` prints the findings."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

from smppy import analysis
from smppy._inputs import add_summary_arguments, require_readable, summary_input
from smppy.diagnose import Finding, diagnose
from smppy.diagnose.steps import ms


def finding_lines(finding: Finding, number: int) -> list[str]:
    """A finding as terminal text: its title, cost and recommendation."""
    if finding.cost_total_ns:
        cost = (
            f"costs ~{ms(finding.cost_per_step_ns)} per step, {finding.cost_total_ns / 1e9:.2f} rank-s in all"
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


def cmd_diagnose(args: argparse.Namespace) -> int:
    path = summary_input(args.path)
    summary = analysis.summarize(
        path,
        step_pattern=args.step_pattern,
        data_wait_pattern=args.data_wait_pattern,
        max_profiled_steps=args.max_profiled_steps,
    )
    require_readable(summary, args.path)
    findings = diagnose(summary)
    if args.json:
        out: dict[str, Any] = {"findings": [f.to_json() for f in findings], "warnings": summary["warnings"]}
        json.dump(out, sys.stdout, indent=1)
        print()
    else:
        print_findings(findings)
        for w in summary["warnings"]:
            print(f"warning: {w}")
    return 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("diagnose", help="why the run is slow and what to change, most costly first")
    p.add_argument("path", help="a trace file, a directory of them (searched recursively) or s3://...")
    p.add_argument("--json", action="store_true", help="print the findings as JSON")
    add_summary_arguments(p)
    p.set_defaults(func=cmd_diagnose)
