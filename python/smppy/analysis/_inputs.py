"""Where the analysis commands read traces from: a local path (file or directory), or
``s3://bucket/prefix``, mirrored into a local cache first (``smppy.s3_cache``, docs/S3.md), or,
for a summary on a Dask cluster, read by the workers themselves (``summary_input``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smppy import analysis
from smppy.trace import find_trace_files


def resolve_input(location: str) -> Path:
    """The local file or directory holding the traces named by ``location``.

    Raises FileNotFoundError, or ValueError (``smppy.s3.S3Error``) for S3 problems."""
    if location.startswith("s3://"):
        from smppy.s3 import S3Uri
        from smppy.s3_cache import mirror

        return mirror(S3Uri.parse(location))
    path = Path(location)
    if not path.exists():
        raise FileNotFoundError(f"no such file or directory: {location}")
    return path


def resolve_traces(location: str) -> Path:
    """``resolve_input``, refusing a location without any trace file: FileNotFoundError for a
    directory without one, ValueError for a named file that is not a trace."""
    path = resolve_input(location)
    if not find_trace_files(path):
        raise FileNotFoundError(f"no smprof trace files under {location}")
    return path


def summary_input(location: str) -> str | Path:
    """What ``analysis.summarize`` takes for ``location``: an ``s3://`` location as it is (the
    summary reads it from the mirror, or on a Dask cluster from S3 itself, and names its files
    ``s3://bucket/key``), else ``resolve_traces(location)``."""
    return location if location.startswith("s3://") else resolve_traces(location)


def require_readable(summary: dict[str, Any], location: str) -> None:
    """Raises ValueError, with the reasons, when the summary of ``location`` read no file at all."""
    if not summary["job"]["files"]:
        reasons = "; ".join(summary["warnings"]) or "no trace file could be read"
        raise ValueError(f"no readable smprof trace under {location}: {reasons}")


def add_summary_arguments(parser: Any) -> None:
    """The summary's name patterns and step list length as options of an analysis command."""
    parser.add_argument(
        "--step-pattern",
        default=None,
        help=f"regex for step annotations (full match; default {analysis.DEFAULT_STEP_PATTERN})",
    )
    parser.add_argument(
        "--data-wait-pattern",
        default=None,
        help="regex for annotations during which the host waits for input data "
        f"(full match; default {analysis.DEFAULT_DATA_WAIT_PATTERN})",
    )
    parser.add_argument(
        "--max-profiled-steps",
        type=int,
        default=analysis.DEFAULT_MAX_PROFILED_STEPS,
        help="steps per process listed one by one in the summary's step_profile "
        f"(the totals count every step; default {analysis.DEFAULT_MAX_PROFILED_STEPS})",
    )
