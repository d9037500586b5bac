"""The smprof command: info and dump on real traces."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import smppy
from conftest import start_session
from smprof_command import smprof


def make_trace(trace_dir: Path) -> Path:
    start_session(trace_dir)
    for _ in range(5):
        with smppy.annotate("step"):
            with smppy.annotate("<script>alert(1)</script>"):
                pass
    smppy.SMProfiler.instance().stop_profiling()
    return Path(smppy.SMProfiler.instance().last_session()["path"])


def test_dump_json_prints_one_documented_object_per_event(trace_dir: Path) -> None:
    path = make_trace(trace_dir)
    proc = smprof("dump", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["type"] == "file" and lines[0]["path"] == str(path)
    annotations = [e for e in lines if e["type"] == "annotation"]
    assert len(annotations) == 10
    for e in annotations:
        assert {"type", "name", "ts_ns", "dur_ns", "tid", "rank", "depth"} <= set(e)
    assert {(e["name"], e["depth"]) for e in annotations} == {("step", 0), ("<script>alert(1)</script>", 1)}


def test_info_on_a_directory_reports_each_file_and_totals(trace_dir: Path) -> None:
    make_trace(trace_dir / "a")
    make_trace(trace_dir / "b" / "nested")
    proc = smprof("info", str(trace_dir))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("status: complete") == 2
    assert "2 file(s), ranks [0], 20 annotations, 0 dropped" in proc.stdout

    proc = smprof("info", str(trace_dir), "--json")
    infos = json.loads(proc.stdout)
    assert [i["annotations"] for i in infos] == [10, 10]
    assert infos[0]["names"]["step"]["count"] == 5
    assert infos[0]["span_ns"] > 0


@pytest.mark.parametrize("command", [["summary"], ["info"], ["dump", "--json"], ["diagnose"]])
def test_a_closed_stdout_ends_the_command_quietly(trace_dir: Path, command: list[str]) -> None:
    """`smprof summary DIR | head -1` once head has gone: no traceback, the status of a Unix tool
    that SIGPIPE ended (141)."""
    make_trace(trace_dir)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write: every write fails
    try:
        proc = subprocess.run(
            [shutil.which("smprof") or "smprof", *command, str(trace_dir)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    said = [line for line in proc.stderr.splitlines() if not line.startswith("smprof: warning: ")]
    assert said == [], proc.stderr  # the trace's own warnings only: no traceback
    assert proc.returncode == 141


def test_info_reports_a_truncated_file_and_reads_up_to_it(trace_dir: Path) -> None:
    path = make_trace(trace_dir)
    data = path.read_bytes()
    path.write_bytes(data[:-7])  # cut inside the footer
    proc = smprof("info", str(path), "--json")
    assert proc.returncode == 0
    (info,) = json.loads(proc.stdout)
    assert info["annotations"] == 10
    assert "truncated" in info["problem"] and "at byte" in info["problem"]
    assert "truncated" in proc.stderr


def test_errors_are_clear(tmp_path: Path) -> None:
    proc = smprof("info", str(tmp_path / "missing"))
    assert proc.returncode == 2 and "no such file or directory" in proc.stderr
    (tmp_path / "x.smprof").write_bytes(b"not a trace at all")
    proc = smprof("info", str(tmp_path))
    assert proc.returncode == 1 and "not an smprof trace" in proc.stderr
    proc = smprof("--version")
    assert proc.stdout.strip() == f"smprof {smppy.__version__}"
