"""``smprof diagnose``: why a run is slow and what to change (docs/DIAGNOSE.md).

Each detector is a module of this package with ``detect(summary) -> list[Finding]``
over the summary dict of docs/ANALYSIS.md; ``diagnose`` runs them all and ranks
the findings by what they cost over the whole run.
"""

from __future__ import annotations

import importlib
from typing import Any

from smppy.diagnose.finding import SEVERITIES, Finding

# The detector modules, in the order their findings are listed when they cost the same.
_DETECTOR_MODULES: tuple[str, ...] = (
    "input_pipeline",
    "stragglers",
    "collective_imbalance",
    "host_communication",
    "step_outliers",
    "cpu_saturation",
    "gpu_idle",
    "gpu_kernels",
)


def diagnose(summary: dict[str, Any]) -> list[Finding]:
    """The findings of every detector on ``summary``, most costly first."""
    findings: list[Finding] = []
    for name in _DETECTOR_MODULES:
        findings.extend(importlib.import_module(f"smppy.diagnose.{name}").detect(summary))
    return sorted(findings, key=lambda f: (-f.cost_total_ns, SEVERITIES.index(f.severity)))


__all__ = ["Finding", "SEVERITIES", "diagnose"]
