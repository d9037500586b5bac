"""Where the analysis commands read traces from: a local path (file or directory), or
``s3://bucket/prefix``, mirrored into a local cache first (``smppy.storage.s3_cache``, docs/S3.md), or,
for a summary on a Dask cluster, read by the workers themselves (``summary_input``).

A summary's directory is listed once, by the C++ JobReader: ``summary_input`` does not walk it, and
``require_readable`` tells an empty location from one whose traces could not be read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smppy.analysis.trace import find_trace_files


def resolve_input(location: str) -> Path:
    """The local file or directory holding the traces named by ``location``.

    Raises FileNotFoundError, or ValueError (``smppy.storage.s3.S3Error``) for S3 problems."""
    if location.startswith("s3://"):
        from smppy.storage.s3 import S3Uri
        from smppy.storage.s3_cache import mirror

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
    ``s3://bucket/key``); a local directory as it is (the summary lists it, once); a local file
    once checked to be a trace (ValueError otherwise). FileNotFoundError for a missing path."""
    if location.startswith("s3://"):
        return location
    path = resolve_input(location)
    if path.is_file():
        find_trace_files(path)  # a file that is not a trace: ValueError naming it
    return path


def require_readable(summary: dict[str, Any], location: str) -> None:
    """Raises FileNotFoundError when there was no trace file under ``location``, ValueError (with the
    reasons) when the summary of ``location`` could read none of them."""
    if not summary["job"]["files"]:
        if not summary["warnings"]:
            raise FileNotFoundError(f"no smprof trace files under {location}")
        reasons = "; ".join(summary["warnings"])
        raise ValueError(f"no readable smprof trace under {location}: {reasons}")
