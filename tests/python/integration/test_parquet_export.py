"""`smprof export --format parquet`: one hive-partitioned Parquet dataset per table, which pandas, DuckDB,
Dask (and Spark, where installed) read back as exactly the rows of ``analysis.load()``; the C++ batch
reader behind it hands over bounded batches in load()'s order, and exporting a big job takes no more
memory than a small one."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import dask.dataframe as dd
import duckdb
import export_job
import pandas as pd
import pyarrow.parquet as pq
import pytest
import table_job
import worker_crash
from conftest import REPO, counted_worker_pools
from smppy import _smppy, analysis, cli
from smppy.analysis import TABLES, _local_workers
from smppy.export import parquet as parquet_export
from smppy.export.parquet import PARTITION_COLUMNS, _StreamWriters, export_parquet

pytestmark = [pytest.mark.slow, pytest.mark.torch, pytest.mark.dask]


def rows(frame: pd.DataFrame, columns: list[str]) -> list[tuple]:
    """The rows of ``frame`` as sorted tuples of ``columns``, partition keys as load() types them."""
    frame = frame[columns].astype({"host": str, "rank": "int64"})
    return sorted(frame.itertuples(index=False, name=None))


def read_pandas(out: Path, table: str) -> pd.DataFrame:
    return pd.read_parquet(out / table)


def read_duckdb(out: Path, table: str) -> pd.DataFrame:
    return duckdb.sql(
        f"SELECT * FROM read_parquet('{out}/{table}/**/*.parquet', hive_partitioning = true)"
    ).df()


def read_dask(out: Path, table: str) -> pd.DataFrame:
    return dd.read_parquet(out / table).compute()


READERS = {"pandas": read_pandas, "duckdb": read_duckdb, "dask": read_dask}


@pytest.fixture(scope="module")
def gpu_job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The synthetic GPU job (table_job.py) and its export, in batches of 5 rows (several row groups)."""
    root = tmp_path_factory.mktemp("gpu-job")
    traces = table_job.write_job(root / "traces")
    assert cli.main(["export", str(traces), "--format", "parquet", "-o", str(root / "parquet"),
                     "--batch-rows", "5"]) == 0  # fmt: skip
    return traces, root / "parquet"


@pytest.fixture(scope="module")
def torch_job(tmp_path_factory: pytest.TempPathFactory, example_job: Path) -> tuple[Path, Path]:
    """The real PyTorch run (2 ranks under torchrun) and its export."""
    out = tmp_path_factory.mktemp("torch-export") / "parquet"
    export_parquet(example_job, out)
    return example_job, out


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("job", ["gpu_job", "torch_job"])
def test_readers_get_the_rows_of_load(job: str, reader: str, request: pytest.FixtureRequest) -> None:
    traces, out = request.getfixturevalue(job)
    loaded = analysis.load(traces)
    for table in TABLES:
        expected = loaded.table(table)
        read = READERS[reader](out, table)
        assert sorted(read.columns) == sorted(expected.columns), table
        assert rows(read, list(expected.columns)) == rows(expected, list(expected.columns)), table
    assert len(loaded.kernels) > 0 if job == "gpu_job" else len(loaded.steps) > 0


def test_layout_is_one_dataset_per_table_partitioned_by_host_and_rank(gpu_job: tuple[Path, Path]) -> None:
    traces, out = gpu_job
    streams, _ = _smppy.job_streams([str(traces)])
    assert sorted(p.name for p in out.iterdir()) == sorted(TABLES)
    for table in TABLES:
        files = sorted(p.relative_to(out / table).as_posix() for p in (out / table).rglob("*.parquet"))
        # every stream writes a part file for every table, so each dataset exists with its schema
        assert files == sorted(
            f"host={s.host}/rank={s.rank}/part-{s.pid}-{s.session_index}.parquet" for s in streams
        )
        schema = pq.read_schema(out / table / files[0])
        load_columns = [name for name, _ in _smppy.table_schema()[table]]
        assert schema.names == [c for c in load_columns if c not in PARTITION_COLUMNS]
    kernels = pq.ParquetFile(out / "kernels" / "host=host-a" / "rank=0" / "part-100-0.parquet")
    assert kernels.metadata.num_row_groups == -(-kernels.metadata.num_rows // 5)  # batches of 5 rows


def test_timeline_job_with_empty_tables_and_host_names_to_escape(tmp_path: Path) -> None:
    traces = export_job.write_job(tmp_path / "traces")
    out = tmp_path / "parquet"
    result = export_parquet(traces, out)
    loaded = analysis.load(traces)
    assert result["rows"] == {table: len(loaded.table(table)) for table in TABLES}
    assert result["rows"]["copies"] == 0
    assert list(pd.read_parquet(out / "copies").columns) == [
        c for c in loaded.copies.columns if c not in PARTITION_COLUMNS
    ] + list(PARTITION_COLUMNS)
    odd = tmp_path / "odd"
    header = export_job.st.header(host="node/7 a=b", rank=3, realtime_ns=1)
    export_job.st.write_trace(odd / "r.smprof", header, [export_job._frame(0, 0, range(1))])
    export_parquet(odd, tmp_path / "odd-parquet")
    assert (tmp_path / "odd-parquet" / "steps" / "host=node%2F7%20a%3Db" / "rank=3").is_dir()
    assert set(pd.read_parquet(tmp_path / "odd-parquet" / "steps")["host"]) == {"node/7 a=b"}


def test_batches_are_bounded_and_in_load_order(gpu_job: tuple[Path, Path]) -> None:
    traces, _ = gpu_job
    batches: list[tuple[str, dict, dict]] = []
    ended: list[tuple] = []
    warnings = _smppy.read_table_batches(
        [str(traces)],
        batch_rows=7,
        on_batch=lambda table, stream, columns: batches.append((table, stream, columns)),
        on_stream_end=lambda stream: ended.append((stream["host"], stream["pid"], stream["session_index"])),
    )
    assert warnings == []
    streams, _ = _smppy.job_streams([str(traces)])
    assert ended == [(s.host, s.pid, s.session_index) for s in streams]
    whole, _ = _smppy.read_tables([str(traces)])
    for table in TABLES:
        mine = [(stream, columns) for name, stream, columns in batches if name == table]
        assert all(1 <= len(columns["pid"]) <= 7 for _, columns in mine)
        assert all(set(columns["pid"]) == {stream["pid"]} for stream, columns in mine)  # one stream each
        for column, values in whole[table].items():
            assert [v for _, columns in mine for v in list(columns[column])] == values, (table, column)
    with pytest.raises(ValueError, match="batch_rows"):
        _smppy.read_table_batches([str(traces)], batch_rows=0, on_batch=print, on_stream_end=print)


def test_a_failing_writer_stops_the_export_with_its_error(gpu_job, tmp_path: Path, monkeypatch) -> None:
    traces, _ = gpu_job

    def disk_full(self, table, stream, columns):
        raise OSError("No space left on device")

    monkeypatch.setattr(_StreamWriters, "batch", disk_full)
    with pytest.raises(OSError, match="No space left"):
        export_parquet(traces, tmp_path / "p")


def test_cli_refuses_an_existing_dataset_and_timeline_options(gpu_job, tmp_path: Path, capsys) -> None:
    traces, out = gpu_job
    assert cli.main(["export", str(traces), "--format", "parquet", "-o", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert cli.main(["export", str(traces), "--format", "parquet", "-o", str(tmp_path / "p"),
                     "--ranks", "0"]) == 2  # fmt: skip
    assert "--ranks: only for the timeline formats" in capsys.readouterr().err
    assert cli.main(["export", str(traces), "--format", "parquet", "-o", str(tmp_path / "q")]) == 0
    assert re.search(r"kernels 156.* from 5 process stream\(s\), 35 file\(s\)", capsys.readouterr().out)


def part_files(out: Path) -> dict[str, tuple[object, int]]:
    """Every part file under ``out`` by its path: its rows (an Arrow table) and row groups."""
    return {
        path.relative_to(out).as_posix(): (pq.read_table(path), pq.ParquetFile(path).metadata.num_row_groups)
        for path in sorted(out.rglob("*.parquet"))
    }


@pytest.mark.parametrize("start", ["fork", "forkserver"])
@pytest.mark.parametrize("job", ["gpu_job", "torch_job"])
def test_workers_write_the_files_and_rows_of_one_process(
    job: str, start: str, request, tmp_path: Path, monkeypatch
) -> None:
    """--jobs 2: each worker writes its streams' part files; the same files, row groups and rows as
    the export in one process, and the same datasets read back."""
    monkeypatch.setattr(_local_workers, "_single_threaded", lambda: start == "fork")
    traces, _ = request.getfixturevalue(job)
    one = export_parquet(traces, tmp_path / "one", batch_rows=5, jobs=1)
    two = export_parquet(traces, tmp_path / "two", batch_rows=5, jobs=2)
    assert {key: two[key] for key in ("rows", "files", "streams")} == {
        key: one[key] for key in ("rows", "files", "streams")
    }
    assert sorted(two["warnings"]) == sorted(one["warnings"])
    assert one["streams"] >= 2 and sum(one["rows"].values()) > 0
    serial, parallel = part_files(tmp_path / "one"), part_files(tmp_path / "two")
    assert sorted(parallel) == sorted(serial)
    for path, (table, row_groups) in serial.items():
        assert parallel[path][0].equals(table), path
        assert parallel[path][1] == row_groups, path
    for table in TABLES:
        columns = list(read_pandas(tmp_path / "one", table).columns)
        assert rows(read_pandas(tmp_path / "two", table), columns) == rows(
            read_pandas(tmp_path / "one", table), columns
        ), table


def test_export_defaults_to_the_usable_cores_from_4_mib(gpu_job, tmp_path: Path, monkeypatch) -> None:
    traces, _ = gpu_job
    pools = counted_worker_pools(monkeypatch, parquet_export)
    monkeypatch.setattr(_local_workers, "usable_cores", lambda: 2)
    export_parquet(traces, tmp_path / "small")  # a small job: in this process
    assert pools == []
    monkeypatch.setattr(_local_workers, "IN_PROCESS_BELOW_BYTES", 0)
    export_parquet(traces, tmp_path / "cores")
    export_parquet(traces, tmp_path / "three", jobs=3)
    export_parquet(traces, tmp_path / "one", jobs=1)
    assert pools == [2, 3]
    assert sorted(part_files(tmp_path / "cores")) == sorted(part_files(tmp_path / "one"))
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        export_parquet(traces, tmp_path / "zero", jobs=0)


def test_a_worker_that_dies_or_fails_stops_the_export_with_a_clear_error(
    gpu_job, tmp_path: Path, monkeypatch
) -> None:
    traces, _ = gpu_job
    monkeypatch.setattr(parquet_export, "export_stream", worker_crash.kill_this_process)
    with pytest.raises(RuntimeError, match="worker process ended abruptly during the export.*--jobs 1"):
        export_parquet(traces, tmp_path / "killed", jobs=2)
    monkeypatch.setattr(parquet_export, "export_stream", worker_crash.disk_full)
    with pytest.raises(OSError, match="No space left on device"):
        export_parquet(traces, tmp_path / "full", jobs=2)


def test_cli_jobs(gpu_job, tmp_path: Path, capsys) -> None:
    traces, _ = gpu_job
    printed = []
    for jobs in ("1", "2"):
        out = tmp_path / jobs
        assert cli.main(["export", str(traces), "--format", "parquet", "-o", str(out), "--jobs", jobs]) == 0
        printed.append(capsys.readouterr().out.replace(str(out), "OUT"))
    assert printed[0] == printed[1]
    assert "from 5 process stream(s), 35 file(s)" in printed[1]


def test_docs_queries(gpu_job: tuple[Path, Path]) -> None:
    """The DuckDB and Dask examples of docs/EXPORT.md, run as written, against load()'s tables."""
    traces, out = gpu_job
    text = (REPO / "docs" / "EXPORT.md").read_text()
    section = text[text.index("## Parquet tables") :]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 3
    scope: dict = {}
    code = "\n".join(blocks).replace('"parquet/', f'"{out}/').replace('"traces/"', f'"{traces}/"')
    code = code.replace("'parquet/", f"'{out}/")
    exec(compile(code, "docs/EXPORT.md", "exec"), scope)
    kernels = analysis.load(traces).kernels
    time = kernels.groupby(["rank", "name"])["dur_ns"].agg(["size", "sum"]).reset_index()
    time = time.sort_values(["rank", "sum", "name"], ascending=[True, False, True])
    expected = time.groupby("rank").head(3)
    got = scope["top"]
    assert [tuple(r) for r in got[["rank", "name", "launches", "time_ns"]].itertuples(index=False)] == [
        tuple(r) for r in expected[["rank", "name", "size", "sum"]].itertuples(index=False)
    ]
    assert scope["per_rank"].sort_index().to_dict() == kernels.groupby("rank")["dur_ns"].sum().to_dict()
    steps = analysis.load(traces).steps
    assert scope["step_means"].sort_index().to_dict() == steps.groupby("rank")["dur_ns"].mean().to_dict()


def test_spark_reads_the_layout(gpu_job: tuple[Path, Path]) -> None:
    pyspark = pytest.importorskip("pyspark.sql")
    traces, out = gpu_job
    spark = pyspark.SparkSession.builder.master("local[1]").appName("smprof-test").getOrCreate()
    try:
        read = {table: spark.read.parquet(str(out / table)).toPandas() for table in TABLES}
    finally:
        spark.stop()
    loaded = analysis.load(traces)
    for table in TABLES:
        columns = list(loaded.table(table).columns)
        assert rows(read[table], columns) == rows(loaded.table(table), columns), table


def test_export_memory_does_not_grow_with_the_job() -> None:
    """bench/parquet_export_benchmark.py: peak RSS of exporting 1.5 M annotations vs 50 k, each in a fresh
    interpreter, in batches of 16 Ki rows (so both jobs fill whole batches). Held whole (load()), 1.5 M
    rows take well over 100 MiB more; streamed, the export's peak grows by less than 40 MiB."""
    bench = REPO / "bench" / "parquet_export_benchmark.py"
    proc = subprocess.run([sys.executable, str(bench), "--json", "--batch-rows", "16384"],
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    print(result)
    big_rows = result["big"]["export"]["rows"]
    assert big_rows == result["big"]["load"]["rows"] > 20 * result["small"]["export"]["rows"]
    assert result["growth_mib"]["load"] > 100
    assert result["growth_mib"]["export"] < 40
