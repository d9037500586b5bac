"""The job's dashboard as one self-contained HTML file (``smprof report DIR -o report.html``), and the
comparison page of two runs (``comparison.py``, ``smprof diff --html``).

The numbers come from ``smppy.analysis.summarize`` (docs/ANALYSIS.md defines them); this package
only puts that summary into a page (``html_document``) that draws it (``assets/dashboard.js``).
docs/REPORT.md lists the panels.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any, Callable

from smppy import analysis
from smppy.analysis._dask_cluster import DaskScheduler
from smppy.analysis._inputs import require_readable, summary_input
from smppy.analysis.session_end import end_label
from smppy.analysis.warning_groups import grouped_warnings
from smppy.diagnose import diagnose
from smppy.diagnose.input_wait import input_pipeline_wait, input_wait_sentence
from smppy.diagnose.steps import OUTLIER_FACTOR, outlying_steps
from smppy.report.html_document import plotly_bundle, render_html, write_page

DEFAULT_TOP_K = 10
# Kernels the summary lists by time and by launches: the page's k can go up to this, and the
# "top 15" panels need at least 15.
LISTED_KERNELS = 50
LISTED_OUTLIERS = 20  # the steps panel's table of outlying steps
# Annotation names the page lists (its picker, GPU time per annotation), by total time; the rest
# is one "not listed" line, so a job of 200,000 distinct names makes a page of bounded size
# (the full tables: analysis.summarize, smprof export --format parquet).
LISTED_ANNOTATIONS = 200


def _listed_annotations(summary: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The summary with its annotation tables cut to LISTED_ANNOTATIONS names, and what was cut
    (names, calls, total time), None when nothing was."""
    rows = summary["annotations"]  # by total time, descending
    gpu_rows = summary["gpu"]["per_annotation"]
    if len(rows) <= LISTED_ANNOTATIONS and len(gpu_rows) <= LISTED_ANNOTATIONS:
        return summary, None
    rest = rows[LISTED_ANNOTATIONS:]
    cut = {
        "names": len(rest),
        "count": sum(a["stats"]["count"] for a in rest),
        "total_ns": sum(a["stats"]["total_ns"] for a in rest),
    }
    gpu = {**summary["gpu"], "per_annotation": gpu_rows[:LISTED_ANNOTATIONS]}
    return {**summary, "annotations": rows[:LISTED_ANNOTATIONS], "gpu": gpu}, cut


def build_report(
    location: str,
    *,
    top_k: int = DEFAULT_TOP_K,
    step_pattern: str | None = None,
    data_wait_pattern: str | None = None,
    max_profiled_steps: int = analysis.DEFAULT_MAX_PROFILED_STEPS,
    progress: Callable[[int, int], None] | None = None,
    jobs: int | None = None,
    scheduler: str | DaskScheduler | None = None,
    warn: Callable[[str], None] | None = None,
) -> str:
    """The report page (HTML text) for the traces at ``location``; the summary's options are
    ``analysis.summarize``'s. ``warn`` gets each of the page's warnings too. Raises
    FileNotFoundError or ValueError when there is nothing to report: no trace file, or none that
    could be read."""
    if top_k < 1:
        raise ValueError(f"--top-k must be at least 1, not {top_k}")
    chart_library = plotly_bundle()  # before reading the traces: a missing plotly fails fast
    summary = analysis.summarize(
        summary_input(location),
        step_pattern=step_pattern,
        data_wait_pattern=data_wait_pattern,
        max_profiled_steps=max_profiled_steps,
        top_k=max(top_k, LISTED_KERNELS),
        progress=progress,
        jobs=jobs,
        scheduler=scheduler,
    )
    require_readable(summary, location)
    payload = _payload(summary, top_k)
    for warning in payload["report"]["warnings"] if warn else ():
        warn(warning)
    return render_html(_title(summary), payload, chart_library)


def write_report(location: str, output: str | Path, **options: Any) -> Path:
    """Writes the report for the traces at ``location`` to ``output``; returns its path."""
    return write_page(build_report(location, **options), output)


def _title(summary: dict[str, Any]) -> str:
    jobs = summary["job"]["jobs"]
    return "smprof report: " + (", ".join(jobs) if jobs else "trace")


def _payload(summary: dict[str, Any], top_k: int) -> dict[str, Any]:
    written = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    findings = [f.to_json() for f in diagnose(summary)]
    wait = input_pipeline_wait(summary)
    report = {
        "top_k": top_k,
        "written": written,
        "warnings": grouped_warnings(summary["warnings"]),
        "input_wait": input_wait_sentence(wait) if wait else None,  # the summary's line, word for word
        "ends": [end_label(r["end"]) for r in summary["ranks"]],  # as the summary's "ended" column
        "outlying_steps": {
            "factor": OUTLIER_FACTOR,
            "listed": LISTED_OUTLIERS,
            "steps": outlying_steps(summary),
        },
    }
    listed, report["annotations_not_listed"] = _listed_annotations(summary)
    return {"summary": listed, "findings": findings, "report": report}
