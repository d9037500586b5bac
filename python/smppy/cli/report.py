"""``smprof report DIR -o report.html``: the job's dashboard as one self-contained HTML file
(``smppy.report``, docs/REPORT.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from smppy.cli import options
from smppy.cli.messages import warn
from smppy.report import DEFAULT_TOP_K, write_report
from smppy.report.html_document import PlotlyMissingError
from smppy.report.terminal_progress import TerminalProgress


def _run(args: argparse.Namespace) -> int:
    progress = TerminalProgress(sys.stderr, label="reading traces")
    warnings: list[str] = []  # said once the progress line is done
    try:
        out = write_report(
            args.path,
            args.output,
            top_k=args.top_k,
            progress=progress,
            warn=warnings.append,
            **options.summary_options(args),
        )
    except PlotlyMissingError as e:
        print(f"smprof: error: {e}", file=sys.stderr)
        return 2
    finally:
        progress.finish()
    for warning in warnings:
        warn(warning)
    print(out)
    return 0


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write the job's dashboard as one self-contained HTML file",
        description="Write the job's dashboard (docs/REPORT.md) as one HTML file that opens offline.",
    )
    options.add_path(parser)
    parser.add_argument(
        "-o", "--output", default="report.html", help="the HTML file to write (default report.html)"
    )
    parser.add_argument(
        "--top-k",
        type=int,
        default=DEFAULT_TOP_K,
        help=f"kernels shown before 'other' as the page opens (default {DEFAULT_TOP_K}; adjustable there)",
    )
    options.add_summary_options(parser)
    parser.set_defaults(func=_run)
