"""Warnings of every command: one ``smprof: warning: ...`` line each on stderr, never on stdout, so
that a command's output stays what it says it is (a table, JSON, a path) when it is piped."""

from __future__ import annotations

import sys

from smppy.analysis.warning_groups import grouped_warnings


def warn(message: str) -> None:
    print(f"smprof: warning: {message}", file=sys.stderr)


def warn_grouped(warnings: list[str], prefix: str = "") -> None:
    """The summary's warnings, each distinct one once (``grouped_warnings``)."""
    for warning in grouped_warnings(warnings):
        warn(prefix + warning)
