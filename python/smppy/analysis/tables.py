"""A job's events as tables (kernels, copies, annotations, steps, counters, API calls and collectives) for
notebooks: pandas DataFrames when pandas is installed, else dicts of column lists. The lazy Dask
variant (``load(..., engine="dask")``) is ``_dask_tables.py``, built on ``Job`` and ``table_frame``."""

from __future__ import annotations

from typing import Any

from smppy import _smppy

TABLES = ("annotations", "steps", "kernels", "copies", "api_calls", "counters", "collectives")
ENGINES = ("pandas", "dask")


def table_frame(table: str, columns: dict[str, list[Any]]) -> Any:
    """A pandas DataFrame of ``table``'s ``columns`` when pandas is importable, else the columns. The
    dtypes come from the table's schema (``_smppy.table_schema``), so an empty table has them too."""
    try:
        import pandas
    except ImportError:
        return columns
    dtypes = {"int64": "int64", "float64": "float64", "string": str}
    return pandas.DataFrame(
        {
            name: pandas.Series(columns[name], dtype=dtypes[kind])
            for name, kind in _smppy.table_schema()[table]
        }
    )


class Job:
    """Every event of a job as tables (see ``load``). ``warnings`` lists the
    files read only in part and why."""

    def __init__(self, tables: dict[str, Any], warnings: list[str]) -> None:
        self.warnings = warnings
        self._tables = tables

    def table(self, name: str) -> Any:
        """The table ``name`` (one of TABLES)."""
        if name not in self._tables:
            loaded = ", ".join(self._tables)
            raise ValueError(f"table: {name!r} not loaded; valid: {', '.join(TABLES)}; loaded: {loaded}")
        return self._make_table(name)

    def _make_table(self, name: str) -> Any:
        return table_frame(name, self._tables[name])

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

    @property
    def collectives(self) -> Any:
        return self.table("collectives")


def read_job(paths: list[str], *, step_pattern: str, tables: tuple[str, ...]) -> Job:
    """Every event of the files under ``paths`` as the tables ``tables``, in memory."""
    found, warnings = _smppy.read_tables(paths, step_pattern=step_pattern, tables=set(tables))
    return Job(found, list(warnings))
