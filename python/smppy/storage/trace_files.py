"""Which files are smprof rank files: ``find_trace_files(path)`` lists them under a directory,
recognised by their magic bytes whatever their names (``*.smprof``, SageMaker Profiler's
``smpfile_<pid>_<time>.raw``, ``*.smpraw``, ...), damaged ``*.smprof`` files too, a session's
rotated files right after its first. The reader owns the magic (``_smppy.has_trace_magic``); this
module sits in ``storage/`` so that the upload and the S3 mirror, which sit below the analysis, can
list files without importing it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from smppy import _smppy

TRACE_SUFFIX = ".smprof"

# A rotated file's name: the first file's name with ".NNNN" before its extension.
_ROTATED = re.compile(r"^(?P<stem>.+)\.(?P<index>\d{4,})(?P<ext>\.[^.]*)?$")


def _session_order(path: Path) -> tuple[str, int]:
    """Sorts a session's rotated files right after its first file, by index."""
    match = _ROTATED.match(path.name)
    if match is None:
        return str(path), 0
    return str(path.with_name(match["stem"] + (match["ext"] or ""))), int(match["index"])


def is_trace_file(path: str | os.PathLike[str]) -> bool:
    """True if ``path`` is a file that starts with the trace magic bytes, whatever its name."""
    return _smppy.has_trace_magic(os.fspath(path))


def _looks_like_trace(path: Path) -> bool:
    # A damaged *.smprof file is listed too, so that reading it reports what is wrong.
    return path.suffix == TRACE_SUFFIX or is_trace_file(path)


def find_trace_files(path: str | os.PathLike[str]) -> list[Path]:
    """``path`` itself if it is a trace file, else every trace file below it, sorted: files that
    start with the trace magic bytes, whatever their names, and ``*.smprof`` files (damaged ones
    too, for their readers to report). Raises ValueError for a named file that is neither."""
    p = Path(path)
    if p.is_file():
        if not _looks_like_trace(p):
            raise ValueError(f"{p} is not an smprof trace (it does not start with the trace magic bytes)")
        return [p]
    if not p.is_dir():
        raise FileNotFoundError(f"no such file or directory: {p}")
    return sorted((f for f in p.rglob("*") if f.is_file() and _looks_like_trace(f)), key=_session_order)
