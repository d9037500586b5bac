"""``smprof diagnose DIR|s3://...``: why the run is slow and what to change,
most costly finding first (docs/DIAGNOSE.md); ``--json`` prints the findings."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from smppy import analysis
from smppy.analysis._inputs import require_readable, summary_input
from smppy.cli import options
from smppy.cli.messages import warn_grouped
from smppy.cli.terminal_text import print_findings
from smppy.diagnose import diagnose


def cmd_diagnose(args: argparse.Namespace) -> int:
    summary = analysis.summarize(summary_input(args.path), **options.summary_options(args))
    require_readable(summary, args.path)
    warn_grouped(summary["warnings"])
    findings = diagnose(summary)
    if args.json:
        out: dict[str, Any] = {"findings": [f.to_json() for f in findings], "warnings": summary["warnings"]}
        json.dump(out, sys.stdout, indent=1)
        print()
    else:
        print_findings(findings)
    return 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("diagnose", help="why the run is slow and what to change, most costly first")
    options.add_path(p)
    options.add_json(p, "the findings")
    options.add_summary_options(p)
    p.set_defaults(func=cmd_diagnose)
