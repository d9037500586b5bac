"""The job summary computed per process stream elsewhere and merged here
(docs/ANALYSIS.md, "Every core and a Dask cluster"): on worker processes of
this machine (``jobs``) or on the workers of an existing ``dask.distributed``
cluster (``scheduler``). Workers receive streams (paths or ``s3://`` objects,
never trace bytes), read their files themselves and return partial summaries;
the parent merges them as they arrive, so it holds one merged partial at a time."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from smppy import _smppy
from smppy.analysis._dask_cluster import DaskScheduler, run_on_cluster
from smppy.analysis._local_workers import (
    on_local_workers,
    stays_in_process,
    task_groups,
    worker_count,
)

SCHEDULER_ENV = "SMPROF_DASK_SCHEDULER"
# Partials held in the parent before they are merged into the running result.
MERGE_BATCH = 32

Progress = Callable[[int, int], None]


def scheduler_from_env(scheduler: str | DaskScheduler | None) -> str | DaskScheduler | None:
    """``scheduler`` when given, else ``$SMPROF_DASK_SCHEDULER`` (None when unset or empty)."""
    return scheduler or os.environ.get(SCHEDULER_ENV) or None


def stream_partial(stream: Any, options: dict[str, Any]) -> bytes:
    """The partial summary of one process stream: what a Dask task computes."""
    return _smppy.partial_summary([stream], **options)


def streams_partial(streams: Sequence[Any], options: dict[str, Any]) -> bytes:
    """The partial summary of some process streams: what a local worker's task computes."""
    return _smppy.partial_summary(list(streams), **options)


def _merge_as_they_come(
    partials: Iterable[tuple[int, bytes]], total_bytes: int, progress: Progress | None
) -> bytes:
    """Merges ``(trace bytes it covers, partial)`` pairs into one partial."""
    # Merging decodes every partial it is given: pending ones are merged MERGE_BATCH at a
    # time into the running result, not one by one (the result grows with the streams).
    pending: list[bytes] = []
    done = 0
    for covered, partial in partials:
        pending.append(partial)
        if len(pending) > MERGE_BATCH:
            pending = [_smppy.merge_partial_summaries(pending)]
        done += covered
        if progress:
            progress(done, total_bytes)
    return _smppy.merge_partial_summaries(pending)


def _on_local_workers(
    streams: Sequence[Any], options: dict[str, Any], jobs: int
) -> Iterable[tuple[int, bytes]]:
    groups = task_groups(streams, jobs)
    for group, partial in on_local_workers(streams_partial, groups, jobs, work="summary", options=options):
        yield sum(stream.bytes for stream in group), partial


def _on_dask(
    streams: Sequence[Any],
    scheduler: str | DaskScheduler,
    task: Callable[..., bytes],
    *per_stream: Sequence[Any],
    **common: Any,
) -> Iterable[tuple[int, bytes]]:
    """``(stream.bytes, task(stream, *its items of per_stream, **common))`` for each stream, computed
    on the cluster's workers, as they finish (``_dask_cluster.py``: bounded waits, lost workers)."""
    for i, partial in run_on_cluster(scheduler, task, streams, *per_stream, **common):
        yield streams[i].bytes, partial


def _in_this_process(streams: Sequence[Any], jobs: int | None, scheduler: str | DaskScheduler | None) -> bool:
    return len(streams) <= 1 if scheduler is not None else stays_in_process(streams, jobs)


def summary_text(
    paths: list[str],
    options: dict[str, Any],
    *,
    jobs: int | None,
    scheduler: str | DaskScheduler | None,
    progress: Progress | None,
) -> bytes:
    """The summary JSON text of the trace files under ``paths``: in this process for
    ``jobs=1``, a single stream, or (``jobs`` not given) under 4 MiB of traces, else merged
    from per-stream partials computed on ``jobs`` local worker processes (default: the
    usable cores) or on the Dask cluster at ``scheduler`` (a ``tcp://HOST:PORT`` address;
    default ``$SMPROF_DASK_SCHEDULER``).
    The text is the same, byte for byte, whichever way."""
    scheduler = scheduler_from_env(scheduler)
    if scheduler is None and worker_count(jobs) == 1:
        return _smppy.summarize(paths, progress=progress, **options)
    # The files are listed once, here: in this process too the summary reads these streams.
    streams, warnings = _smppy.job_streams(paths)
    return streams_summary_text(streams, warnings, options, jobs=jobs, scheduler=scheduler, progress=progress)


def streams_summary_text(
    streams: Sequence[Any],
    warnings: list[str],
    options: dict[str, Any],
    *,
    jobs: int | None,
    scheduler: str | DaskScheduler | None,
    progress: Progress | None,
) -> bytes:
    """``summary_text`` of streams already grouped (``job_streams``), which name and read their
    files as they say (``ProcessStream.with_files``): the same text as for their files' paths
    but for the names."""
    scheduler = scheduler_from_env(scheduler)
    if _in_this_process(streams, jobs, scheduler):
        partial = _smppy.partial_summary(list(streams), progress=progress, **options)
        return _smppy.summary_from_partial(partial, warnings)
    if scheduler is not None:
        partials = _on_dask(streams, scheduler, stream_partial, options=options)
    else:
        partials = _on_local_workers(streams, options, worker_count(jobs))
    total = sum(stream.bytes for stream in streams)
    return _smppy.summary_from_partial(_merge_as_they_come(partials, total, progress), warnings)


def s3_summary_text(
    location: str,
    options: dict[str, Any],
    *,
    jobs: int | None,
    scheduler: str | DaskScheduler | None,
    progress: Progress | None,
) -> bytes:
    """The summary JSON text of the trace objects under ``location`` (``s3://bucket/prefix``),
    its files named ``s3://bucket/key``: on the Dask cluster at ``scheduler`` (default
    ``$SMPROF_DASK_SCHEDULER``), whose workers download their streams' objects themselves while
    this process reads only the objects' ends (``smppy.storage._s3_streams``); without one, from the
    local mirror (``smppy.storage.s3_cache``) as ``summary_text`` would. Raises FileNotFoundError without
    trace objects, ValueError when no header could be read."""
    from smppy.storage import _s3_streams
    from smppy.storage.s3 import S3Uri

    uri = S3Uri.parse(location)
    scheduler = scheduler_from_env(scheduler)
    if scheduler is None:
        streams, warnings = _s3_streams.mirrored_streams(uri)
        return streams_summary_text(streams, warnings, options, jobs=jobs, scheduler=None, progress=progress)
    streams, warnings, etags = _s3_streams.job_streams(uri)
    if not streams:
        raise ValueError(f"no readable smprof trace under {location}: {'; '.join(warnings)}")
    stream_etags = [[etags[name] for name in stream.files] for stream in streams]
    partials = _on_dask(streams, scheduler, _s3_streams.stream_partial, stream_etags, options=options)
    total = sum(stream.bytes for stream in streams)
    return _smppy.summary_from_partial(_merge_as_they_come(partials, total, progress), warnings)
