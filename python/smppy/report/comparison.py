"""The comparison of two runs (``smprof diff RUN_A RUN_B --html OUT.html``) as one self-contained
HTML page: the ``smppy.diff`` dict drawn by ``assets/comparison.js`` in the report's page
(``html_document``). docs/DIFF.md lists the panels."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from smppy.report.html_document import plotly_bundle, render_html, write_page


def comparison_html(diff: dict[str, Any]) -> str:
    """The page (HTML text) for ``diff``, a ``smppy.diff.diff_summaries`` result."""
    written = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    title = f"smprof diff: {diff['a']['location']} vs {diff['b']['location']}"
    return render_html(
        title,
        {"diff": diff, "report": {"written": written}},
        plotly_bundle(),
        script="comparison.js",
        writer="smprof diff",
    )


def write_comparison(diff: dict[str, Any], output: str | Path) -> Path:
    """Writes the comparison page for ``diff`` to ``output``; returns its path."""
    return write_page(comparison_html(diff), output)
