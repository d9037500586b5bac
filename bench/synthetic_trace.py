"""Synthetic trace files with known contents, written by libsmprof's own TraceWriter.

The messages come from proto/smprof/trace.proto, compiled for Python with protoc
once per process (the installed package carries only the C++ side). Tests build
FileHeader/Frame/Footer messages with known ground truth and write them with
``write_trace``; readers then see exactly what a session would have written.

The writer is ``_smprof_testing.RawTraceWriter``, from the test-only extension that is
built with the tests and never installed (src/testing/). It is imported from the
directory ``SMPROF_TESTING_MODULE_DIR`` names, by default ``build/test/testing`` of this
checkout, where ``scripts/test.sh`` builds it; ``scripts/dev_python.sh`` builds one and
sets the variable. Without it, importing this module fails saying how to build it.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
PROTO_DIR = REPO / "proto" / "smprof"
TESTING_MODULE = "_smprof_testing"
TESTING_MODULE_DIR_ENV = "SMPROF_TESTING_MODULE_DIR"
DEFAULT_TESTING_MODULE_DIR = REPO / "build" / "test" / "testing"


def import_testing_module() -> ModuleType:
    """The test-only extension ``_smprof_testing``, from ``$SMPROF_TESTING_MODULE_DIR`` (default
    build/test/testing of this checkout). Raises RuntimeError naming the directory and how to build
    it (not ImportError, which pytest.importorskip would turn into a silent skip)."""
    if TESTING_MODULE in sys.modules:
        return sys.modules[TESTING_MODULE]
    named = os.environ.get(TESTING_MODULE_DIR_ENV)
    directory = Path(named or DEFAULT_TESTING_MODULE_DIR)
    spec = importlib.machinery.PathFinder.find_spec(TESTING_MODULE, [str(directory)])
    if spec is None or spec.loader is None:
        where = f"${TESTING_MODULE_DIR_ENV}" if named else f"the default; ${TESTING_MODULE_DIR_ENV} is unset"
        raise RuntimeError(
            f"{TESTING_MODULE}, the test-only extension that writes synthetic traces, is not in {directory} "
            f"({where}). Build it with the tests: "
            f"cmake -S . -B build/test -G Ninja -DSMPROF_BUILD_TESTING_MODULE=ON "
            f'-Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" && ninja -C build/test {TESTING_MODULE} '
            f"(scripts/test.sh does), or use a dev build: "
            f'eval "$(bash scripts/dev_python.sh build/dev)", which sets ${TESTING_MODULE_DIR_ENV}.'
        )
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError as e:  # built for another Python
        raise RuntimeError(
            f"{spec.origin} does not load into {sys.executable}: {e}. Rebuild it for this Python: "
            f"cmake -DPython_EXECUTABLE={sys.executable} (as scripts/test.sh configures build/test)."
        ) from e
    sys.modules[TESTING_MODULE] = module
    return module


_testing = import_testing_module()


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
    writer = _testing.RawTraceWriter(str(path), compression_level)
    writer.header(header_message.SerializeToString())
    for frame in frames:
        writer.frame(frame.SerializeToString())
    if footer is not None:
        writer.footer(footer.SerializeToString())
    writer.close()
    return path


# ---- frame tables: helpers that fill a Frame's columns from plain rows ------------------------------


def string_index(frame, text: str | bytes) -> int:
    """The index of ``text`` in the frame's string table (bytes: str is UTF-8 encoded),
    appended if missing."""
    data = text.encode() if isinstance(text, str) else text
    for i, s in enumerate(frame.strings):
        if s == data:
            return i
    frame.strings.append(data)
    return len(frame.strings) - 1


def thread_index(frame, tid: int, name: str = "") -> int:
    """The index of thread ``tid`` in the frame's thread table, appended if missing."""
    for i, t in enumerate(frame.threads):
        if t.tid == tid:
            return i
    frame.threads.add(tid=tid, name=name.encode())
    return len(frame.threads) - 1


def add_annotations(frame, rows) -> None:
    """Fills ``frame.annotations`` from ``(start_ns, dur_ns, name, tid, depth)`` rows."""
    rows = sorted(rows)
    table = frame.annotations
    set_starts(table, (r[0] for r in rows))
    for _, dur, name, tid, depth in rows:
        table.dur_ns.append(dur)
        table.name_index.append(string_index(frame, name))
        table.thread_index.append(thread_index(frame, tid))
        table.depth.append(depth)


def add_collectives(frame, rows) -> None:
    """Fills ``frame.collectives`` from ``(start_ns, call_dur_ns, op, group, group_size, group_rank,
    sequence, bytes, tid)`` rows (dtype float32, async), each maybe followed by its Work.wait()'s
    ``wait_offset_ns, wait_dur_ns``."""
    rows = sorted(rows)
    table = frame.collectives
    set_starts(table, (r[0] for r in rows))
    waits = any(len(r) > 9 for r in rows)
    for _, dur, op, group, size, group_rank, sequence, nbytes, tid, *wait in rows:
        if waits:
            offset, wait_dur = wait or (0, 0)
            table.wait_offset_ns.append(offset)
            table.wait_dur_ns.append(wait_dur)
        table.call_dur_ns.append(dur)
        table.op_index.append(string_index(frame, op))
        table.group_index.append(string_index(frame, group))
        table.group_size.append(size)
        table.group_rank.append(group_rank)
        table.sequence.append(sequence)
        table.bytes.append(nbytes)
        table.dtype_index.append(string_index(frame, "float32"))
        table.async_op.append(True)
        table.thread_index.append(thread_index(frame, tid))


GPU_ACTIVITY_DEFAULTS = {
    "kind": 1,
    "device": 0,
    "context": 1,
    "stream": 7,
    "correlation_id": 0,
    "kernel_class": 0,
    "precision": 0,
    "bytes": 0,
    "copy_kind": 0,
    "peer_device": 0,
    "src_memory_kind": 0,
    "dst_memory_kind": 0,
    "graph_id": 0,
    "graph_node_id": 0,
    "grid": (0, 0, 0),
    "block": (0, 0, 0),
    "shared_memory_bytes": 0,
    "registers_per_thread": 0,
}


def add_gpu_activities(frame, rows) -> None:
    """Fills ``frame.gpu`` from dicts with ``start``, ``dur``, ``name`` and any of
    GPU_ACTIVITY_DEFAULTS' keys (``kind`` is a GpuKind: 1 kernel, 2 memcpy, 3 memset, 4 sync)."""
    rows = sorted(({**GPU_ACTIVITY_DEFAULTS, **r} for r in rows), key=lambda r: r["start"])
    table = frame.gpu
    set_starts(table, (r["start"] for r in rows))
    for r in rows:
        table.dur_ns.append(r["dur"])
        table.name_index.append(string_index(frame, r["name"]))
        for column in (
            "kind",
            "device",
            "context",
            "stream",
            "correlation_id",
            "kernel_class",
            "precision",
            "bytes",
            "copy_kind",
            "peer_device",
            "src_memory_kind",
            "dst_memory_kind",
            "graph_id",
            "graph_node_id",
            "shared_memory_bytes",
            "registers_per_thread",
        ):
            getattr(table, column).append(r[column])
        for axis, i in (("x", 0), ("y", 1), ("z", 2)):
            getattr(table, f"grid_{axis}").append(r["grid"][i])
            getattr(table, f"block_{axis}").append(r["block"][i])


def add_api_calls(frame, rows) -> None:
    """Fills ``frame.api_calls`` from ``(start_ns, dur_ns, name, tid, correlation_id)`` rows (runtime API)."""
    rows = sorted(rows)
    table = frame.api_calls
    set_starts(table, (r[0] for r in rows))
    for _, dur, name, tid, correlation_id in rows:
        table.dur_ns.append(dur)
        table.name_index.append(string_index(frame, name))
        table.thread_index.append(thread_index(frame, tid))
        table.correlation_id.append(correlation_id)
        table.domain.append(1)


def add_markers(frame, rows) -> None:
    """Fills ``frame.markers`` from ``(start_ns, dur_ns, name, tid)`` rows (default NVTX domain)."""
    rows = sorted(rows)
    table = frame.markers
    set_starts(table, (r[0] for r in rows))
    for _, dur, name, tid in rows:
        table.dur_ns.append(dur)
        table.name_index.append(string_index(frame, name))
        table.domain_index.append(string_index(frame, ""))
        table.thread_index.append(thread_index(frame, tid))


def add_external_correlations(frame, rows) -> None:
    """Fills ``frame.external_correlations`` from ``(correlation_id, external_id, external_kind, name)``
    rows; ``name`` is the annotation for smprof's own kind (5), "" for others."""
    table = frame.external_correlations
    for correlation_id, external_id, external_kind, name in rows:
        table.correlation_id.append(correlation_id)
        table.external_id.append(external_id)
        table.external_kind.append(external_kind)
        table.name_index.append(string_index(frame, name))


def add_overheads(frame, rows) -> None:
    """Fills ``frame.overheads`` from ``(start_ns, dur_ns, name, tid)`` rows."""
    rows = sorted(rows)
    table = frame.overheads
    set_starts(table, (r[0] for r in rows))
    for _, dur, name, tid in rows:
        table.dur_ns.append(dur)
        table.name_index.append(string_index(frame, name))
        table.thread_index.append(thread_index(frame, tid))


def add_device(frame, **fields) -> None:
    """Adds a GpuDevice with ``fields`` (id, name, uuid, sm_count, ...)."""
    frame.devices.add(**fields)


def add_context(frame, context_id: int, device: int) -> None:
    frame.contexts.add(id=context_id, device=device)


def add_counter(frame, name: str, unit: str, samples, resolution: float = 1.0) -> None:
    """Adds one counter series from ``(ts_ns, value)`` samples (values multiples of ``resolution``)."""
    frame.counter_tracks.add(name=name, unit=unit, resolution=resolution)
    series = frame.counters.add(track_index=len(frame.counter_tracks) - 1)
    previous_ts = previous_units = 0
    for ts, value in samples:
        units = round(value / resolution)
        series.ts_delta_ns.append(ts - previous_ts)
        series.value_delta.append(units - previous_units)
        previous_ts, previous_units = ts, units
