"""The job summary: ``summarize(path)`` (the summary dict of docs/ANALYSIS.md, computed by the C++
aggregators in src/analysis/), the same summary in parts that can be computed anywhere and merged
(``job_streams``, ``partial_summary``, ``merge_partial_summaries``, ``summary_from_partial``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from smppy import _smppy
from smppy.analysis._dask_cluster import DaskScheduler
from smppy.analysis._parallel_summary import s3_summary_text, summary_text
from smppy.analysis.session_end import end_warnings

DEFAULT_STEP_PATTERN: str = _smppy.DEFAULT_STEP_PATTERN
DEFAULT_DATA_WAIT_PATTERN: str = _smppy.DEFAULT_DATA_WAIT_PATTERN
DEFAULT_MAX_PROFILED_STEPS: int = _smppy.DEFAULT_MAX_PROFILED_STEPS

Progress = Callable[[int, int], None]

# One process stream of a job: ``host``, ``rank``, ``pid``, ``session_index``,
# ``worker_of_pid``, ``files`` (paths in file_index order), ``bytes``,
# ``origin_ns`` (the job's earliest start); picklable (it travels as bytes).
ProcessStream = _smppy.ProcessStream


def _summary_dict(text: bytes) -> dict[str, Any]:
    """The C++ summary's JSON as a dict, with a warning for each session that ended abnormally."""
    summary: dict[str, Any] = json.loads(text.decode("utf-8", errors="replace"))
    summary["warnings"].extend(end_warnings(summary))
    return summary


def input_paths(path: str | os.PathLike[str] | list[str | os.PathLike[str]]) -> list[str]:
    """``path`` (one or a list) as a list of existing paths; FileNotFoundError names a missing one."""
    items = path if isinstance(path, list | tuple) else [path]
    out = []
    for item in items:
        if not os.path.exists(item):
            raise FileNotFoundError(f"no such file or directory: {item}")
        out.append(os.fspath(item))
    return out


def summarize(
    path: str | os.PathLike[str] | list[str | os.PathLike[str]],
    *,
    step_pattern: str | None = None,
    data_wait_pattern: str | None = None,
    top_k: int = 15,
    max_buckets: int = 200,
    reorder_window_ns: int = 5_000_000_000,
    max_profiled_steps: int = DEFAULT_MAX_PROFILED_STEPS,
    progress: Progress | None = None,
    jobs: int | None = None,
    scheduler: str | DaskScheduler | None = None,
) -> dict[str, Any]:
    """The summary of every rank file under ``path`` (a file, a directory
    searched recursively, a list of them, or ``s3://bucket/prefix``: docs/S3.md),
    as the JSON-able dict that docs/ANALYSIS.md specifies. ``progress(done_bytes, total_bytes)`` is called
    after each frame and each file (after each task on workers).
    ``data_wait_pattern`` (a regex, whole name, any case; default ``InputWait`` and the usual
    names of data phases, ``DataLoad``, ``get_batch``...) names the annotations during which the
    host waits for input data. ``max_profiled_steps``:
    the steps per process listed one by one in ``step_profile`` (the totals count
    every step). Process streams are
    summarized on ``jobs`` worker processes (default: the usable cores; 1: in
    this process) or, with ``scheduler`` (``tcp://HOST:PORT``, default
    ``$SMPROF_DASK_SCHEDULER``, or a ``DaskScheduler`` with its timeouts), on an
    existing Dask cluster whose workers read the files by path, or an ``s3://``
    location's objects from S3; the result is the same whichever way. Raises
    ValueError for a bad option (naming it), FileNotFoundError for a missing
    path, RuntimeError when a worker process dies or the cluster cannot be
    used (one line naming what was found); damaged files are ``warnings``."""
    options = {
        "step_pattern": step_pattern or "",
        "top_k": top_k,
        "max_buckets": max_buckets,
        "reorder_window_ns": reorder_window_ns,
        "data_wait_pattern": data_wait_pattern or "",
        "max_profiled_steps": max_profiled_steps,
    }
    if isinstance(path, str) and path.startswith("s3://"):
        text = s3_summary_text(path, options, jobs=jobs, scheduler=scheduler, progress=progress)
    else:
        text = summary_text(input_paths(path), options, jobs=jobs, scheduler=scheduler, progress=progress)
    return _summary_dict(text)


@dataclass(frozen=True)
class JobStreams:
    """The trace files of a job grouped into process streams (the files of
    one process session, rotated ones in order), as the summary reads them;
    ``warnings`` names the files skipped (headers that could not be read)."""

    streams: list[ProcessStream]
    warnings: list[str]


def job_streams(path: str | os.PathLike[str] | list[str | os.PathLike[str]]) -> JobStreams:
    """The process streams of every trace file under ``path`` (a file, a directory searched
    recursively, or a list of them), sorted by host, rank, pid and session."""
    streams, warnings = _smppy.job_streams(input_paths(path))
    return JobStreams(streams, warnings)


def partial_summary(
    streams: ProcessStream | Sequence[ProcessStream],
    *,
    step_pattern: str | None = None,
    data_wait_pattern: str | None = None,
    top_k: int = 15,
    max_buckets: int = 200,
    reorder_window_ns: int = 5_000_000_000,
    max_profiled_steps: int = DEFAULT_MAX_PROFILED_STEPS,
    progress: Progress | None = None,
) -> bytes:
    """The summary of some process streams of one job (from ``job_streams``) as a partial
    summary: compact versioned bytes that ``merge_partial_summaries`` merges in any order
    and grouping. The options are ``summarize``'s; partials merge only with partials of
    the same options."""
    items = [streams] if isinstance(streams, ProcessStream) else list(streams)
    return _smppy.partial_summary(
        items,
        step_pattern=step_pattern or "",
        data_wait_pattern=data_wait_pattern or "",
        top_k=top_k,
        max_buckets=max_buckets,
        reorder_window_ns=reorder_window_ns,
        max_profiled_steps=max_profiled_steps,
        progress=progress,
    )


def merge_partial_summaries(partials: Iterable[bytes]) -> bytes:
    """One partial summary holding every stream of ``partials`` (at least one). Raises
    ValueError for damaged bytes, partials of other options or jobs, or a stream in two."""
    return _smppy.merge_partial_summaries(list(partials))


def summary_from_partial(partial: bytes, warnings: Sequence[str] = ()) -> dict[str, Any]:
    """The summary dict of a partial summary: for the partials of every stream of a job,
    merged, exactly ``summarize``'s. ``warnings``: the job's ``JobStreams.warnings``."""
    text = _smppy.summary_from_partial(partial, list(warnings))
    return _summary_dict(text)
