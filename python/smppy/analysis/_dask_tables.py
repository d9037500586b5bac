"""``analysis.load(path, engine="dask")``: the job's tables as lazy Dask DataFrames.

Listing the job reads only the files' headers (``_smppy.job_streams``); each table is one partition per
process stream, which reads that stream's files (``_smppy.read_tables``) when the graph is computed, on
whichever worker runs it. Columns and dtypes are those of the pandas tables (``analysis.table_frame``).
"""

from __future__ import annotations

from typing import Any

from smppy import _smppy
from smppy.analysis.tables import Job, table_frame


def stream_table(stream: _smppy.ProcessStream, *, table: str, step_pattern: str) -> Any:
    """One partition: ``table``'s rows of one process stream, as a pandas DataFrame."""
    found, _ = _smppy.read_tables(stream.files, step_pattern=step_pattern, tables={table})
    return table_frame(table, found[table])


class LazyJob(Job):
    """A ``Job`` whose tables are Dask DataFrames with one partition per process stream (``streams``)."""

    def __init__(self, streams: list[_smppy.ProcessStream], step_pattern: str, tables: tuple[str, ...],
                 warnings: list[str]) -> None:  # fmt: skip
        super().__init__(dict.fromkeys(tables), warnings)
        self.streams = streams
        self._step_pattern = step_pattern

    def _make_table(self, name: str) -> Any:
        import dask
        import dask.dataframe as dd

        meta = table_frame(name, {column: [] for column, _ in _smppy.table_schema()[name]})
        # Without this Dask turns text columns into its own string[pyarrow] dtype; the frame keeps the
        # setting it was built with, so its dtypes stay those of the pandas tables.
        with dask.config.set({"dataframe.convert-string": False}):
            if not self.streams:
                return dd.from_pandas(meta, npartitions=1)
            return dd.from_map(
                stream_table,
                self.streams,
                table=name,
                step_pattern=self._step_pattern,
                meta=meta,
                label=f"smprof-{name}",
                enforce_metadata=False,
            )


def load_lazy(paths: list[str], *, step_pattern: str, tables: tuple[str, ...]) -> LazyJob:
    """The lazy job of ``analysis.load(..., engine="dask")``: reads headers only; a bad step pattern
    raises ValueError now rather than when computed."""
    _smppy.read_tables([], step_pattern=step_pattern, tables=set())  # validates the pattern, reads nothing
    streams, warnings = _smppy.job_streams(paths)
    return LazyJob(streams, step_pattern, tuple(tables), list(warnings))
