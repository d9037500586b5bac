"""The analysis of a job's traces: ``summarize(path)`` (the summary dict of
docs/ANALYSIS.md, computed by the C++ aggregators in src/analysis/) and
``load(path)`` (tables of kernels, copies, annotations, steps, counters and API
calls for notebooks: pandas DataFrames when pandas is installed, else dicts of
column lists)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from smppy import _smppy

DEFAULT_STEP_PATTERN: str = _smppy.DEFAULT_STEP_PATTERN
DEFAULT_DATA_WAIT_PATTERN: str = _smppy.DEFAULT_DATA_WAIT_PATTERN

Progress = Callable[[int, int], None]


def _paths(path: str | os.PathLike[str] | list[str | os.PathLike[str]]) -> list[str]:
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
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The summary of every rank file under ``path`` (a file, a directory
    searched recursively, or a list of them), as the JSON-able dict that
    docs/ANALYSIS.md specifies. ``progress(done_bytes, total_bytes)`` is called
    after each frame and each file. ``data_wait_pattern`` (a regex, whole name)
    names the annotations during which the host waits for input data (default
    ``InputWait``), for the GPU idle breakdown. Raises ValueError for a bad option (naming it),
    FileNotFoundError for a missing path; damaged files are ``warnings``."""
    text = _smppy.summarize(
        _paths(path),
        step_pattern=step_pattern or "",
        data_wait_pattern=data_wait_pattern or "",
        top_k=top_k,
        max_buckets=max_buckets,
        reorder_window_ns=reorder_window_ns,
        progress=progress,
    )
    return json.loads(text.decode("utf-8", errors="replace"))


TABLES = ("annotations", "steps", "kernels", "copies", "api_calls", "counters")


def _frame(columns: dict[str, list[Any]]) -> Any:
    """A pandas DataFrame of ``columns`` when pandas is importable, else the columns."""
    try:
        import pandas
    except ImportError:
        return columns
    return pandas.DataFrame(columns)


class Job:
    """Every event of a job as tables (see ``load``). ``warnings`` lists the
    files read only in part and why."""

    def __init__(self, tables: dict[str, dict[str, list[Any]]], warnings: list[str]) -> None:
        self.warnings = warnings
        self._tables = tables

    def table(self, name: str) -> Any:
        """The table ``name`` (one of TABLES)."""
        if name not in self._tables:
            loaded = ", ".join(self._tables)
            raise ValueError(f"table: {name!r} not loaded; valid: {', '.join(TABLES)}; loaded: {loaded}")
        return _frame(self._tables[name])

    @property
    def annotations(self) -> Any:
        return self.table("annotations")

    @property
    def steps(self) -> Any:
        return self.table("steps")

    @property
    def kernels(self) -> Any:
        return self.table("kernels")

    @property
    def copies(self) -> Any:
        return self.table("copies")

    @property
    def api_calls(self) -> Any:
        return self.table("api_calls")

    @property
    def counters(self) -> Any:
        return self.table("counters")


def load(
    path: str | os.PathLike[str] | list[str | os.PathLike[str]],
    *,
    step_pattern: str | None = None,
    tables: tuple[str, ...] = TABLES,
) -> Job:
    """Every event under ``path`` as tables on the job's wall clock
    (docs/ANALYSIS.md lists the columns). Holds all events in memory: for
    notebooks; ``summarize`` is the bounded-memory way. ``tables`` limits what
    is decoded and kept (e.g. ``("steps",)`` to find a step's time window)."""
    unknown = set(tables) - set(TABLES)
    if unknown:
        raise ValueError(f"tables: unknown {sorted(unknown)}; valid: {', '.join(TABLES)}")
    found, warnings = _smppy.read_tables(_paths(path), step_pattern=step_pattern or "", tables=set(tables))
    return Job(found, list(warnings))
