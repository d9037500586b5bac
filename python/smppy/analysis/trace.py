"""Reading smprof rank files from Python.

``open_trace(path)`` reads one file frame by frame (bounded memory) through
the C++ reader; ``events(trace)`` (or ``annotation_events``,
``counter_events``) turns its frames into event dicts;
``find_trace_files(path)`` lists the rank files under a directory, recognised by
their magic bytes whatever their names (``*.smprof``, SageMaker Profiler's
``smpfile_<pid>_<time>.raw``, ``*.smpraw``, ...), and damaged ``*.smprof`` files;
``iter_events(path)`` yields every event of them as the dicts that
``smprof dump --json`` prints (docs/TRACE_FORMAT.md lists the fields).

With file rotation (RotateIntervalS) a session writes several files, each
complete and readable alone: ``rank0.smprof``, ``rank0.0001.smprof``, ...
``find_trace_files`` lists them in that order, and
``smppy.analysis.job_streams`` groups them by session in ``file_index`` order,
to be read as one stream.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smppy import _smppy
from smppy.analysis.gpu_events import frame_gpu_events

# Listing rank files is storage's (it sits below the analysis); users find it here too.
from smppy.storage.trace_files import TRACE_SUFFIX, find_trace_files, is_trace_file  # noqa: F401


@dataclass
class RankTrace:
    """One rank file: its header, then its frames as you iterate."""

    path: Path
    _file: Any = field(repr=False)

    @property
    def header(self) -> dict[str, Any]:
        return self._file.header

    @property
    def footer(self) -> dict[str, Any] | None:
        """The footer, once iteration has reached it (None if the process
        never stopped profiling, or the file is damaged)."""
        return self._file.footer

    @property
    def problem(self) -> str | None:
        """Why reading stopped early ("truncated ..."/"corrupt ... at byte N"), or None."""
        return self._file.problem

    def frames(self) -> Iterator[dict[str, Any]]:
        """Each frame as a dict of columns (see ``_smppy.TraceFile``)."""
        while (frame := self._file.next_frame()) is not None:
            yield frame


def open_trace(path: str | os.PathLike[str]) -> RankTrace:
    """Open one rank file; raises ValueError if it is not a readable trace."""
    return RankTrace(Path(path), _smppy.TraceFile(os.fspath(path)))


def _frame_annotations(frame: dict[str, Any], where: dict[str, Any]) -> Iterator[dict[str, Any]]:
    columns = frame["annotations"]
    threads = frame["threads"]
    for start, dur, name, tid, depth in zip(
        columns["start_ns"],
        columns["dur_ns"],
        columns["name"],
        columns["tid"],
        columns["depth"],
    ):
        yield {
            "type": "annotation",
            "name": name,
            "ts_ns": start,
            "dur_ns": dur,
            "tid": tid,
            "thread": threads.get(tid, ""),
            "depth": depth,
            **where,
        }


def _frame_counters(frame: dict[str, Any], where: dict[str, Any]) -> Iterator[dict[str, Any]]:
    c = frame["counters"]
    for ts, value, name, unit in zip(c["ts_ns"], c["value"], c["name"], c["unit"]):
        yield {"type": "counter", "name": name, "ts_ns": ts, "value": value, "unit": unit, **where}


def _frame_collectives(frame: dict[str, Any], where: dict[str, Any]) -> Iterator[dict[str, Any]]:
    c = frame["collectives"]
    threads = frame["threads"]
    keys = ("op", "group", "group_size", "group_rank", "sequence", "bytes", "dtype", "async_op", "tid")
    keys += ("wait_start_ns", "wait_dur_ns")
    for start, dur, *values in zip(c["start_ns"], c["call_dur_ns"], *(c[k] for k in keys)):
        row = dict(zip(keys, values))
        yield {
            "type": "collective",
            "ts_ns": start,
            "dur_ns": dur,
            **row,
            "thread": threads.get(row["tid"], ""),
            **where,
        }


def _events_of(trace: RankTrace, *kinds) -> Iterator[dict[str, Any]]:
    """Frame by frame, the events that each of ``kinds`` makes of a frame."""
    header = trace.header
    where = {"rank": header["rank"], "host": header["host"], "pid": header["pid"]}
    for frame in trace.frames():
        for kind in kinds:
            yield from kind(frame, where)


def annotation_events(trace: RankTrace) -> Iterator[dict[str, Any]]:
    """The file's annotations as event dicts, frame by frame."""
    return _events_of(trace, _frame_annotations)


def counter_events(trace: RankTrace) -> Iterator[dict[str, Any]]:
    """The file's counter samples as event dicts, frame by frame."""
    return _events_of(trace, _frame_counters)


def events(trace: RankTrace) -> Iterator[dict[str, Any]]:
    """Every event of the file as a dict, frame by frame: a frame's
    annotations, then its counter samples, then its collective calls, then its
    GPU events (``smppy.analysis.gpu_events``)."""
    return _events_of(trace, _frame_annotations, _frame_counters, _frame_collectives, frame_gpu_events)


def iter_events(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Every event of every rank file under ``path``, file by file (``file_events``)."""
    for file in find_trace_files(path):
        yield from file_events(open_trace(file))


def file_events(trace: RankTrace) -> Iterator[dict[str, Any]]:
    """A ``{"type": "file", ...}`` record of the file's metadata, then its events."""
    header = trace.header
    yield {
        "type": "file",
        "path": str(trace.path),
        "rank": header["rank"],
        "world_size": header["world_size"],
        "host": header["host"],
        "pid": header["pid"],
        "job": header["job"],
        "start": header["start"],
        "forked_child": header["forked_child"],
        "parent_trace": header["parent_trace"],
        "file_index": header["file_index"],
        "previous_file": header["previous_file"],
    }
    yield from events(trace)
