"""``smprof export DIR --format parquet -o OUT/``: the tables of ``smppy.analysis.load`` as one Parquet
dataset per table, hive-partitioned by host and rank (docs/EXPORT.md).

The C++ batch reader (``_smppy.read_table_batches``) hands over the rows in batches of at most
``batch_rows`` rows of one table and one process stream; each batch is written at once as a row group of
that stream's part file (``OUT/<table>/host=H/rank=R/part-<pid>-<session>.parquet``), so memory stays
bounded by the batch size whatever the job's size. Every stream writes a part file for every table, empty
ones too, so each dataset exists and carries its schema even when no process recorded that table.

With ``jobs`` (``--jobs``) the process streams are spread over worker processes (``_local_workers.py``, the
summary's rule: by default the usable cores, in this process below 4 MiB of traces): each worker writes the
part files of the streams it is given, with the same batches and bounded memory, so the datasets hold the
same files and rows as an export in one process.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

from smppy import _smppy
from smppy.analysis import TABLES
from smppy.analysis._inputs import resolve_traces
from smppy.analysis._local_workers import on_local_workers, stays_in_process, worker_count

# The hive partition keys, in path order: they are in the folder names, not in the files.
PARTITION_COLUMNS = ("host", "rank")
DEFAULT_BATCH_ROWS = 65_536
COMPRESSION = "zstd"


def arrow_schema(table: str) -> Any:
    """The Arrow schema of ``table``'s part files: ``analysis.load()``'s columns less the partition keys."""
    import pyarrow as pa

    types = {"int64": pa.int64(), "float64": pa.float64(), "string": pa.string()}
    return pa.schema(
        [(name, types[kind]) for name, kind in _smppy.table_schema()[table] if name not in PARTITION_COLUMNS]
    )


def partition_dir(out: Path, table: str, host: str, rank: int) -> Path:
    """``OUT/<table>/host=<host>/rank=<rank>``; the host is percent-encoded (hive's URI encoding)."""
    return out / table / f"host={quote(host, safe='')}" / f"rank={rank}"


class _StreamWriters:
    """One ParquetWriter per table for the process stream being read; closed at the stream's end."""

    def __init__(self, out: Path, tables: tuple[str, ...]) -> None:
        self._out = out
        self._schemas = {table: arrow_schema(table) for table in tables}
        self._open: dict[str, Any] = {}
        self.rows = dict.fromkeys(tables, 0)
        self.files = 0
        self.streams = 0

    def _writer(self, table: str, stream: dict[str, Any]) -> Any:
        import pyarrow.parquet as pq

        writer = self._open.get(table)
        if writer is None:
            folder = partition_dir(self._out, table, stream["host"], stream["rank"])
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"part-{stream['pid']}-{stream['session_index']}.parquet"
            writer = pq.ParquetWriter(path, self._schemas[table], compression=COMPRESSION)
            self._open[table] = writer
            self.files += 1
        return writer

    def batch(self, table: str, stream: dict[str, Any], columns: dict[str, Any]) -> None:
        import pyarrow as pa

        schema = self._schemas[table]
        arrays = [pa.array(columns[field.name], type=field.type) for field in schema]
        record_batch = pa.RecordBatch.from_arrays(arrays, schema=schema)
        self._writer(table, stream).write_batch(record_batch)
        self.rows[table] += record_batch.num_rows

    def stream_end(self, stream: dict[str, Any]) -> None:
        for table in self._schemas:
            self._writer(table, stream)  # a table without rows still gets its (empty) part file
        self.close()
        self.streams += 1

    def close(self) -> None:
        for writer in self._open.values():
            writer.close()
        self._open.clear()


def _write_tables(
    read_table_batches: Callable[..., list[str]],
    out: Path,
    tables: tuple[str, ...],
    step_pattern: str,
    batch_rows: int,
) -> dict[str, Any]:
    """Writes the part files of the streams that ``read_table_batches`` (``_smppy.read_table_batches`` or
    ``read_stream_table_batches``, its first argument bound) reads; export_parquet's result."""
    writers = _StreamWriters(out, tables)
    try:
        warnings = read_table_batches(
            step_pattern=step_pattern,
            tables=set(tables),
            batch_rows=batch_rows,
            on_batch=writers.batch,
            on_stream_end=writers.stream_end,
        )
    finally:
        writers.close()
    return {
        "rows": writers.rows,
        "files": writers.files,
        "streams": writers.streams,
        "warnings": list(warnings),
    }


def export_stream(
    stream: Any, out: Path, tables: tuple[str, ...], step_pattern: str, batch_rows: int
) -> dict[str, Any]:
    """The part files of one process stream (``_smppy.ProcessStream``): what a worker runs."""
    return _write_tables(
        partial(_smppy.read_stream_table_batches, [stream]), out, tables, step_pattern, batch_rows
    )


def _on_workers(
    streams: list[Any], job_warnings: list[str], jobs: int, out: Path, options: dict[str, Any]
) -> dict[str, Any]:
    done = dict(on_local_workers(export_stream, streams, jobs, work="export", out=out, **options))
    results = [done[stream] for stream in streams]  # warnings in the order of an export in one process
    return {
        "rows": {table: sum(r["rows"][table] for r in results) for table in options["tables"]},
        "files": sum(r["files"] for r in results),
        "streams": sum(r["streams"] for r in results),
        "warnings": job_warnings + [warning for r in results for warning in r["warnings"]],
    }


def export_parquet(
    location: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    tables: tuple[str, ...] = TABLES,
    step_pattern: str | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    jobs: int | None = None,
) -> dict[str, Any]:
    """Writes the ``tables`` of the traces at ``location`` under the folder ``output`` (created; it must not
    hold any of the tables yet) and returns ``{"rows": {table: n}, "files", "streams", "warnings"}``.

    ``jobs``: worker processes, one process stream at a time each (default: the usable cores, from 4 MiB of
    traces); 1 exports in this process. The files and rows are the same whichever way."""
    unknown = set(tables) - set(TABLES)
    if unknown:
        raise ValueError(f"tables: unknown {sorted(unknown)}; valid: {', '.join(TABLES)}")
    if batch_rows < 1:
        raise ValueError(f"batch_rows: must be >= 1, got {batch_rows}")
    workers = worker_count(jobs)
    path = resolve_traces(os.fspath(location))
    out = Path(output)
    for table in tables:
        if (out / table).exists():
            raise ValueError(f"{out / table} already exists: export into a new folder")
    out.mkdir(parents=True, exist_ok=True)
    options = {"tables": tuple(tables), "step_pattern": step_pattern or "", "batch_rows": batch_rows}
    if workers > 1:
        streams, job_warnings = _smppy.job_streams([os.fspath(path)])
        if not stays_in_process(streams, jobs):
            return _on_workers(streams, list(job_warnings), workers, out, options)
    return _write_tables(partial(_smppy.read_table_batches, [os.fspath(path)]), out, **options)
