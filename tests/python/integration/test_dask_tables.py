"""``analysis.load(path, engine="dask")``: lazy Dask DataFrames, one partition per process stream, nothing
read until computed, and computed they are the pandas tables: same rows, order, columns and dtypes."""

from __future__ import annotations

from pathlib import Path

import dask.dataframe as dd
import export_job
import pandas as pd
import pytest
import table_job
from smppy import _smppy, analysis
from smppy.analysis import TABLES, _dask_tables

pytestmark = [pytest.mark.slow, pytest.mark.torch, pytest.mark.dask]


@pytest.fixture(params=["gpu_job", "timeline_job", "torch_job"])
def traces(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    if request.param == "gpu_job":
        return table_job.write_job(tmp_path)
    if request.param == "timeline_job":  # three ranks, no copies: an empty table
        return export_job.write_job(tmp_path)
    return request.getfixturevalue("example_job")  # the real PyTorch run, 2 ranks under torchrun


def test_lazy_tables_compute_to_the_pandas_tables(traces: Path, monkeypatch) -> None:
    partitions_read: list[str] = []
    read_stream = _dask_tables.stream_table

    def counting(stream, **kwargs):
        partitions_read.append(kwargs["table"])
        return read_stream(stream, **kwargs)

    monkeypatch.setattr(_dask_tables, "stream_table", counting)
    lazy = analysis.load(traces, engine="dask")
    eager = analysis.load(traces)
    streams, _ = _smppy.job_streams([str(traces)])
    frames = {table: lazy.table(table) for table in TABLES}
    assert partitions_read == []  # building the graphs reads nothing
    for table, frame in frames.items():
        assert isinstance(frame, dd.DataFrame)
        assert frame.npartitions == len(streams)
        expected = eager.table(table)
        assert dict(frame.dtypes) == dict(expected.dtypes), table
        pd.testing.assert_frame_equal(frame.compute().reset_index(drop=True), expected)
    assert sorted(partitions_read) == sorted(TABLES * len(streams))


def test_only_the_tables_asked_for_and_errors_at_load_time(tmp_path: Path) -> None:
    traces = table_job.write_job(tmp_path)
    lazy = analysis.load(traces, engine="dask", tables=("steps",))
    assert lazy.steps.groupby("rank")["step"].count().compute().to_dict() == {0: 6, 1: 8, 2: 6, 3: 6}
    with pytest.raises(ValueError, match="not loaded"):
        lazy.table("kernels")
    with pytest.raises(ValueError, match="step_pattern"):
        analysis.load(traces, engine="dask", step_pattern="(")
    with pytest.raises(ValueError, match="engine"):
        analysis.load(traces, engine="spark")


def test_a_job_without_streams_is_one_empty_partition(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("no traces here")
    lazy = analysis.load(tmp_path, engine="dask")
    empty = analysis.load(tmp_path)
    for table in TABLES:
        pd.testing.assert_frame_equal(lazy.table(table).compute(), empty.table(table))
        assert len(empty.table(table)) == 0 and all(dtype != "object" for dtype in empty.table(table).dtypes)
