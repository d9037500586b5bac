"""One self-contained HTML file: the page template with its stylesheet, the chart library, the
dashboard script and the data inlined, so the report opens offline and makes no network request.

Everything from a trace (kernel and annotation names, hosts, command lines) travels as JSON data
in a ``<script type="application/json">`` element and reaches the page only through
``textContent`` and plotly's text rendering, never as HTML. The JSON is escaped so that no byte
sequence in a name can close the element or open a comment, and a Content-Security-Policy allows
only the page's own inline scripts (by hash) and no connections at all.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from importlib import resources
from pathlib import Path
from typing import Any

# Characters that must not appear literally inside an inline <script> element: "<" and ">" would
# let "</script>" or "<!--" through, "&" is escaped for symmetry with HTML-safe JSON encoders, and
# U+2028/U+2029 (line separators that older JavaScript parsers reject) are already escaped by
# ensure_ascii.
_SCRIPT_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


class PlotlyMissingError(RuntimeError):
    """The optional plotly package, whose bundled JavaScript the report inlines, is not installed."""


def plotly_bundle() -> str:
    """The minified plotly.js shipped inside the installed ``plotly`` Python package."""
    try:
        import plotly
    except ImportError as e:
        raise PlotlyMissingError(
            "smprof report needs the plotly package for its charts (its bundled plotly.min.js is "
            "inlined into the report): pip install plotly"
        ) from e
    bundle = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not bundle.is_file():
        raise PlotlyMissingError(f"plotly {plotly.__version__} does not ship {bundle}; reinstall plotly")
    return bundle.read_text(encoding="utf-8")


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities replaced by None: JSON.parse accepts neither."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def script_safe_json(data: Any) -> str:
    """``data`` as JSON that can sit inside a ``<script>`` element whatever strings it holds."""
    text = json.dumps(_finite(data), ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    for char, escaped in _SCRIPT_UNSAFE.items():
        text = text.replace(char, escaped)
    return text


def script_safe_source(source: str) -> str:
    """JavaScript source made safe to inline: "</script" can only occur inside its string or regex
    literals or comments, where "<\\/script" means the same."""
    return re.sub(r"</(script)", r"<\\/\1", source, flags=re.IGNORECASE)


def _csp_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def render_html(
    title: str, data: Any, chart_library: str, *, script: str = "dashboard.js", writer: str = "smprof report"
) -> str:
    """The page for ``data`` (the JSON that ``script``, an asset drawing on ``page.js``, renders),
    with ``chart_library`` (``plotly_bundle()``) inlined; ``writer`` names the command in its footer."""
    scripts = [script_safe_source(s) for s in (chart_library, _asset("page.js"), _asset(script))]
    # Nothing from the network: scripts only by hash, no connect, font, frame or form targets.
    # Plotly adds inline styles, and makes data:/blob: images for its PNG download.
    policy = "; ".join(
        [
            "default-src 'none'",
            "script-src " + " ".join(_csp_hash(s) for s in scripts),
            "style-src 'unsafe-inline'",
            "img-src data: blob:",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )
    page = _asset("dashboard.html")
    replacements = {
        "{{CSP}}": policy,
        "{{TITLE}}": html.escape(title),
        "{{STYLE}}": _asset("dashboard.css"),
        "{{DATA}}": script_safe_json(data),
        "{{PLOTLY}}": scripts[0],
        "{{PAGE}}": scripts[1],
        "{{DASHBOARD}}": scripts[2],
        "{{WRITER}}": html.escape(writer),
    }
    # One pass, so a placeholder-like string inside one part is never substituted again.
    out = []
    rest = page
    while (start := rest.find("{{")) >= 0:
        end = rest.index("}}", start) + 2
        out.append(rest[:start])
        out.append(replacements[rest[start:end]])
        rest = rest[end:]
    out.append(rest)
    return "".join(out)


def write_page(page: str, output: str | Path) -> Path:
    """Writes ``page`` to ``output``, making its folder; returns its path."""
    out = Path(output)
    if out.parent != Path():
        out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out
