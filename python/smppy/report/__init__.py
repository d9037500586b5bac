"""``smprof report DIR -o report.html``: the job's dashboard as one self-contained HTML file.

The numbers come from ``smppy.analysis.summarize`` (docs/ANALYSIS.md defines them); this package
only puts that summary into a page (``html_document``) that draws it (``assets/dashboard.js``).
docs/REPORT.md lists the panels.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path
from typing import Any, Callable

from smppy import analysis
from smppy._inputs import require_readable, summary_input
from smppy._parallel_summary import add_worker_arguments
from smppy.diagnose import diagnose
from smppy.report.html_document import PlotlyMissingError, plotly_bundle, render_html, write_page
from smppy.report.terminal_progress import TerminalProgress

DEFAULT_TOP_K = 10
# Kernels the summary lists by time and by launches: the page's k can go up to this, and the
# "top 15" panels need at least 15.
LISTED_KERNELS = 50


def build_report(
    location: str,
    *,
    top_k: int = DEFAULT_TOP_K,
    step_pattern: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
) -> str:
    """The report page (HTML text) for the traces at ``location``. Raises FileNotFoundError or
    ValueError when there is nothing to report: no trace file, or none that could be read."""
    if top_k < 1:
        raise ValueError(f"--top-k must be at least 1, not {top_k}")
    chart_library = plotly_bundle()  # before reading the traces: a missing plotly fails fast
    summary = analysis.summarize(
        summary_input(location),
        step_pattern=step_pattern,
        top_k=max(top_k, LISTED_KERNELS),
        progress=progress,
        jobs=jobs,
        scheduler=scheduler,
    )
    require_readable(summary, location)
    return render_html(_title(summary), _payload(summary, top_k), chart_library)


def write_report(location: str, output: str | Path, **options: Any) -> Path:
    """Writes the report for the traces at ``location`` to ``output``; returns its path."""
    return write_page(build_report(location, **options), output)


def _title(summary: dict[str, Any]) -> str:
    jobs = summary["job"]["jobs"]
    return "smprof report: " + (", ".join(jobs) if jobs else "trace")


def _payload(summary: dict[str, Any], top_k: int) -> dict[str, Any]:
    written = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    findings = [f.to_json() for f in diagnose(summary)]
    return {"summary": summary, "findings": findings, "report": {"top_k": top_k, "written": written}}


def _run(args: argparse.Namespace) -> int:
    progress = TerminalProgress(sys.stderr, label="reading traces")
    try:
        out = write_report(
            args.path,
            args.output,
            top_k=args.top_k,
            step_pattern=args.step_pattern,
            progress=progress,
            jobs=args.jobs,
            scheduler=args.scheduler,
        )
    except PlotlyMissingError as e:
        print(f"smprof: error: {e}", file=sys.stderr)
        return 2
    finally:
        progress.finish()
    print(out)
    return 0


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write the job's dashboard as one self-contained HTML file",
        description="Write the job's dashboard (docs/REPORT.md) as one HTML file that opens offline.",
    )
    parser.add_argument("path", help="a trace file, a directory of them (searched recursively) or s3://...")
    parser.add_argument(
        "-o", "--output", default="report.html", help="the HTML file to write (default report.html)"
    )
    parser.add_argument(
        "--top-k",
        type=int,
        default=DEFAULT_TOP_K,
        help=f"kernels shown before 'other' as the page opens (default {DEFAULT_TOP_K}; adjustable there)",
    )
    parser.add_argument(
        "--step-pattern",
        default=None,
        help="regular expression that step annotation names fully match (docs/ANALYSIS.md has the default)",
    )
    add_worker_arguments(parser)
    parser.set_defaults(func=_run)
