"""Synthetic trace files with known contents, written by libsmprof's own TraceWriter.

The messages come from proto/smprof/trace.proto, compiled for Python with protoc
once per process (the installed package carries only the C++ side). Tests build
FileHeader/Frame/Footer messages with known ground truth and write them with
``write_trace``; readers then see exactly what a session would have written.
"""

from __future__ import annotations

import functools
import importlib
import subprocess
import sys
import tempfile
from pathlib import Path

from smppy import _smppy

PROTO_DIR = Path(__file__).resolve().parents[2] / "proto" / "smprof"


@functools.cache
def pb():
    """The generated ``trace_pb2`` module."""
    out = Path(tempfile.mkdtemp(prefix="smprof-pb2-"))
    proto = PROTO_DIR / "trace.proto"
    subprocess.run(["protoc", f"-I{PROTO_DIR}", f"--python_out={out}", str(proto)], check=True)
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module("trace_pb2")
    finally:
        sys.path.remove(str(out))


def set_starts(table, starts_ns) -> None:
    """Fills a table's ``base_ns``/``start_delta_ns`` from absolute, sorted start times."""
    starts = list(starts_ns)
    table.base_ns = starts[0] if starts else 0
    previous = table.base_ns
    for start in starts:
        table.start_delta_ns.append(start - previous)
        previous = start


def header(*, host="host-a", rank=0, world_size=1, job="job-1", monotonic_ns=0, realtime_ns=0, **fields):
    """A FileHeader with the fields every reader needs; ``fields`` sets any others."""
    h = pb().FileHeader(format_version=1, library_version="test", host=host, rank=rank)
    h.world_size = world_size
    h.job = job
    h.start.monotonic_ns = monotonic_ns
    h.start.realtime_ns = realtime_ns
    for name, value in fields.items():
        field = getattr(h, name)
        if hasattr(field, "extend"):
            field.extend(value)
        else:
            setattr(h, name, value)
    return h


def write_trace(path, header_message, frames=(), footer=None, compression_level: int = 3) -> Path:
    """Writes a rank file: the header, each frame, then the footer (if given)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = _smppy.RawTraceWriter(str(path), compression_level)
    writer.header(header_message.SerializeToString())
    for frame in frames:
        writer.frame(frame.SerializeToString())
    if footer is not None:
        writer.footer(footer.SerializeToString())
    writer.close()
    return path
