"""``smprof diff RUN_A RUN_B``: what changed from run A to run B (docs/DIFF.md), as terminal
tables, JSON (``--json``) or a comparison page (``--html``), and a regression gate for CI
(``--fail-if-slower 5%``: exit status 1 when B's mean step time, or span without steps, is more
than 5% above A's)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from smppy import analysis
from smppy.analysis._inputs import require_readable, summary_input
from smppy.cli import options
from smppy.cli.messages import warn_grouped
from smppy.cli.terminal_text import ms, short, table
from smppy.diff import diff_summaries
from smppy.report.comparison import write_comparison
from smppy.report.html_document import PlotlyMissingError

# Kernels each summary lists by time: the ones compared by name (the rest as one row).
LISTED_KERNELS = 50
_PERCENT = re.compile(r"(\d+(?:\.\d*)?|\.\d+)%")


def slowdown_threshold(text: str) -> float:
    """``--fail-if-slower``'s value, "5%" or "2.5%", as a fraction (0.05)."""
    match = _PERCENT.fullmatch(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a percentage: give a number of 0 or more followed by %, such as 5% or 2.5%"
        )
    return float(match.group(1)) / 100


def _change(row: dict[str, Any]) -> str:
    if row["a_ns"] is None:
        return "new in B"
    if row["b_ns"] is None:
        return "gone in B"
    relative = "" if row["change"] is None else f" ({100 * row['change']:+.1f}%)"
    return f"{row['change_ns'] / 1e6:+.3f} ms{relative}"


def _value(ns: int | None) -> str:
    return "-" if ns is None else ms(ns)


def _values(row: dict[str, Any]) -> list[str]:
    return [_value(row["a_ns"]), _value(row["b_ns"]), _change(row)]


def _print_rows(title: str, rows: list[dict[str, Any]], top: int, width: int = 60) -> None:
    if not rows:
        return
    shown = rows[:top]
    more = f", {len(rows) - len(shown)} more unchanged or smaller" if len(rows) > len(shown) else ""
    print(f"\n{title} (by change{more}):")
    table(
        ["", "A", "B", "change"],
        [[short(r["name"], width)] + _values(r) for r in shown],
    )


def print_diff(d: dict[str, Any], top: int) -> None:
    for side in ("a", "b"):
        run = d[side]
        print(
            f"{side.upper()}: {run['location']}  job {', '.join(run['jobs']) or '-'}, ranks {run['ranks']},"
            f" {run['steps']} steps, span {run['span_ns'] / 1e9:.3f} s"
        )
    h = d["headline"]
    print(f"\n{h['name']}: {_value(h['a_ns'])} -> {_value(h['b_ns'])}, {_change(h)}")
    _print_rows("step time", d["steps"], top)
    _print_rows("annotations, total time", d["annotations"], top, width=40)
    _print_rows("kernels, total time", d["kernels"], top)
    _print_rows("GPU time", d["gpu"], top)
    _print_rows("collectives, wait for the last rank", d["collectives"], top)
    findings = d["findings"]
    if findings:
        print("\nfindings (estimated cost over the run):")
        where = {"a": "A only", "b": "B only", "both": "both"}
        table(
            ["finding", "in", "A", "B", "change"],
            [
                [short(f"{r['name']}: {r['title']}"), where[r["presence"]]] + _values(r)
                for r in findings[:top]
            ],
        )
    else:
        print("\nfindings: none in either run")


def gate(d: dict[str, Any], threshold: float) -> str | None:
    """Why run B fails the ``--fail-if-slower`` gate, or None when it passes."""
    h = d["headline"]
    if h["change"] is None:
        raise ValueError(f"--fail-if-slower: run A has no {h['name']} to compare with (no steps, empty span)")
    if h["change"] <= threshold:
        return None
    return (
        f"{h['name']} is {100 * h['change']:.1f}% slower in B ({ms(h['a_ns'])} -> {ms(h['b_ns'])}),"
        f" more than --fail-if-slower {100 * threshold:g}%"
    )


def _summary(location: str, args: argparse.Namespace) -> dict[str, Any]:
    summary = analysis.summarize(
        summary_input(location), top_k=LISTED_KERNELS, **options.summary_options(args)
    )
    require_readable(summary, location)
    return summary


def cmd_diff(args: argparse.Namespace) -> int:
    if args.top < 1:
        raise ValueError(f"--top must be at least 1, not {args.top}")
    a = _summary(args.run_a, args)
    b = _summary(args.run_b, args)
    d = diff_summaries(a, b, a_location=args.run_a, b_location=args.run_b)
    for side in ("a", "b"):
        warn_grouped(d[side]["warnings"], prefix=f"run {side.upper()}: ")
    failure = None if args.fail_if_slower is None else gate(d, args.fail_if_slower)
    if args.html:
        try:
            written = write_comparison(d, args.html)
        except PlotlyMissingError as e:
            print(f"smprof: error: {e}", file=sys.stderr)
            return 2
        print(written, file=sys.stderr if args.json else sys.stdout)
    if args.json:
        gate_json = None
        if args.fail_if_slower is not None:
            gate_json = {"threshold": args.fail_if_slower, "failed": failure is not None, "reason": failure}
        json.dump({**d, "gate": gate_json}, sys.stdout, indent=1)
        print()
    else:
        print_diff(d, args.top)
    if failure:
        print(f"smprof diff: regression: {failure}", file=sys.stderr)
        return 1
    if args.fail_if_slower is not None and not args.json:
        print(f"\nregression gate passed: within --fail-if-slower {100 * args.fail_if_slower:g}%")
    return 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "diff",
        help="compare two runs: step, annotation, kernel and GPU time, findings; a regression gate",
        description="Compare run B against run A (docs/DIFF.md). Each RUN is a trace file, a directory "
        "of them (searched recursively) or an s3:// prefix.",
    )
    p.add_argument("run_a", metavar="RUN_A", help="the baseline run")
    p.add_argument("run_b", metavar="RUN_B", help="the run compared with it")
    p.add_argument("--json", action="store_true", help="print the comparison (docs/DIFF.md) as JSON")
    p.add_argument(
        "--html", metavar="OUT.html", help="also write the comparison as one self-contained HTML page"
    )
    p.add_argument(
        "--fail-if-slower",
        metavar="PCT%",
        type=slowdown_threshold,
        help="exit with status 1 when B's mean step time (the span when there are no steps) is more than "
        "PCT%% above A's, e.g. 5%%",
    )
    options.add_summary_options(p)
    p.add_argument("--top", type=int, default=10, help="rows per table (default 10)")
    p.set_defaults(func=cmd_diff)
