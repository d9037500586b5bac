"""The analysis of a job's traces, the one façade a notebook (and every command) meets first:

- ``summarize(path)``: the summary dict of docs/ANALYSIS.md (bounded memory, C++ aggregators), on
  worker processes or a Dask cluster with ``jobs=``/``scheduler=`` (``summary.py``,
  ``_parallel_summary.py``); the same summary in parts: ``job_streams``, ``partial_summary``,
  ``merge_partial_summaries``, ``summary_from_partial``;
- ``load(path)``: every event as tables (``tables.py``; pandas DataFrames when pandas is installed,
  lazy Dask DataFrames with ``engine="dask"``, ``_dask_tables.py``);
- the readers underneath: ``trace`` (rank files frame by frame), ``trace_info`` (what ``smprof
  info`` reports), ``gpu_events``;
- ``input_pipeline_wait(summary)``: how long steps wait for their batches, the one figure every
  command gives (``smppy/diagnose/input_wait.py``).

The modules behind it may move; these names stay.
"""

from __future__ import annotations

import os

from smppy.analysis._dask_cluster import DaskScheduler
from smppy.analysis.summary import (
    DEFAULT_DATA_WAIT_PATTERN,
    DEFAULT_MAX_PROFILED_STEPS,
    DEFAULT_STEP_PATTERN,
    JobStreams,
    ProcessStream,
    Progress,
    input_paths,
    job_streams,
    merge_partial_summaries,
    partial_summary,
    summarize,
    summary_from_partial,
)
from smppy.analysis.tables import ENGINES, TABLES, Job, read_job, table_frame
from smppy.diagnose.input_wait import input_pipeline_wait


def load(
    path: str | os.PathLike[str] | list[str | os.PathLike[str]],
    *,
    step_pattern: str | None = None,
    tables: tuple[str, ...] = TABLES,
    engine: str = "pandas",
) -> Job:
    """Every event under ``path`` as tables on the job's wall clock
    (docs/ANALYSIS.md lists the columns). Holds all events in memory: for
    notebooks; ``summarize`` is the bounded-memory way. ``tables`` limits what
    is decoded and kept (e.g. ``("steps",)`` to find a step's time window).

    ``engine="dask"``: lazy Dask DataFrames instead, one partition per process
    stream, read only when computed (same columns and dtypes); ``warnings``
    then lists only the files whose header is unreadable."""
    unknown = set(tables) - set(TABLES)
    if unknown:
        raise ValueError(f"tables: unknown {sorted(unknown)}; valid: {', '.join(TABLES)}")
    if engine not in ENGINES:
        raise ValueError(f"engine: must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "dask":
        from smppy.analysis._dask_tables import load_lazy

        return load_lazy(input_paths(path), step_pattern=step_pattern or "", tables=tables)
    return read_job(input_paths(path), step_pattern=step_pattern or "", tables=tables)


__all__ = [
    "DEFAULT_DATA_WAIT_PATTERN",
    "DEFAULT_MAX_PROFILED_STEPS",
    "DEFAULT_STEP_PATTERN",
    "DaskScheduler",
    "ENGINES",
    "Job",
    "JobStreams",
    "ProcessStream",
    "Progress",
    "TABLES",
    "input_pipeline_wait",
    "job_streams",
    "load",
    "merge_partial_summaries",
    "partial_summary",
    "summarize",
    "summary_from_partial",
    "table_frame",
]
