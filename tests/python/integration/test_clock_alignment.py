"""One clock across hosts: alignment rounds between ranks, stored in the trace,
and each process placed on rank 0's clock by the analysis and the exports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import smppy
from conftest import REPO, start_session
from smppy import _clock_alignment, analysis
from smppy.analysis.trace import RankTrace, find_trace_files, open_trace

pytestmark = [pytest.mark.slow, pytest.mark.torch]


class ThreadExchange:
    """An in-process Exchange, for two threads playing two ranks."""

    def __init__(self) -> None:
        self._values: dict[str, bytes] = {}
        self._changed = threading.Condition()

    def set(self, key: str, value: bytes) -> None:
        with self._changed:
            self._values[key] = value
            self._changed.notify_all()

    def get(self, key: str, timeout_s: float) -> bytes:
        with self._changed:
            if not self._changed.wait_for(lambda: key in self._values, timeout=max(timeout_s, 0)):
                raise TimeoutError(key)
            return self._values.pop(key)


def read_through(file: Path) -> RankTrace:
    """The trace with every frame read: its footer is then known."""
    trace = open_trace(file)
    for _ in trace.frames():
        pass
    return trace


def footer_rounds(trace_dir: Path) -> list[dict]:
    (file,) = find_trace_files(trace_dir)
    return read_through(file).footer["clock_alignments"]


def test_two_ranks_measure_round_trips_into_the_footer(trace_dir: Path) -> None:
    start_session(trace_dir)
    exchange = ThreadExchange()
    results: dict[int, str | None] = {}

    def play(rank: int) -> None:
        results[rank] = smppy.align_clocks(exchange, rank=rank, world_size=2, phase="test", samples=5)

    threads = [threading.Thread(target=play, args=(r,)) for r in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    smppy.SMProfiler.instance().stop_profiling()
    assert results == {0: None, 1: None}

    rounds = footer_rounds(trace_dir)
    assert len(rounds) == 2
    reference = next(r for r in rounds if not r["samples"])
    measured = next(r for r in rounds if r["samples"])
    assert reference["phase"] == measured["phase"] == "test"
    assert reference["problem"] == measured["problem"] == ""
    assert measured["reference_clock_offset_ns"] == reference["reference_clock_offset_ns"]
    assert len(measured["samples"]) == 5
    for s in measured["samples"]:  # one process, one monotonic clock: causal order holds exactly
        assert (
            s["local_send_ns"] <= s["reference_receive_ns"] <= s["reference_send_ns"] <= s["local_receive_ns"]
        )


def test_a_silent_reference_is_one_warning_and_a_problem_in_the_trace(trace_dir: Path) -> None:
    start_session(trace_dir)
    with pytest.warns(RuntimeWarning, match="clock alignment") as caught:
        problem = smppy.align_clocks(ThreadExchange(), rank=1, world_size=2, phase="start", timeout_s=0.2)
    smppy.SMProfiler.instance().stop_profiling()
    assert len(caught) == 1
    assert problem == "rank 0 did not answer within the timeout (TimeoutError)"
    (round_,) = footer_rounds(trace_dir)
    assert round_["problem"] == problem
    assert round_["samples"] == []


def test_no_session_or_one_rank_records_nothing(trace_dir: Path) -> None:
    assert smppy.align_clocks(ThreadExchange(), rank=1, world_size=2) is None  # not profiling
    start_session(trace_dir)
    assert smppy.align_clocks(ThreadExchange(), rank=0, world_size=1) is None
    with pytest.raises(ValueError, match="samples"):
        smppy.align_clocks(ThreadExchange(), rank=1, world_size=2, samples=0)
    smppy.SMProfiler.instance().stop_profiling()
    assert footer_rounds(trace_dir) == []


# Rank 1's realtime clock reads SHIFT_NS off rank 0's (bench/shifted_clock_job.py).
SHIFT_NS = -(3600 * 10**9 + 123_456_789)


@pytest.fixture(scope="module")
def shifted_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    traces = tmp_path_factory.mktemp("shifted")
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         str(REPO / "bench" / "shifted_clock_job.py"), str(traces), str(SHIFT_NS)],
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "clock alignment" not in proc.stderr, proc.stderr
    return traces


def processes_by_rank(summary: dict) -> dict[int, dict]:
    return {p["rank"]: p for p in summary["job"]["processes"]}


def test_the_injected_offset_is_recovered_within_the_measured_uncertainty(shifted_job: Path) -> None:
    headers = {open_trace(f).header["rank"]: open_trace(f).header for f in find_trace_files(shifted_job)}
    raw_gap = headers[1]["start"]["realtime_ns"] - headers[0]["start"]["realtime_ns"]
    assert abs(raw_gap - SHIFT_NS) < abs(SHIFT_NS) / 2, "the ranks' own clocks are SHIFT_NS apart"

    traces = [read_through(f) for f in find_trace_files(shifted_job)]
    rounds = {t.header["rank"]: t.footer["clock_alignments"] for t in traces}
    assert [r["phase"] for r in rounds[0]] == [r["phase"] for r in rounds[1]] == ["start", "stop"]
    assert all(r["samples"] == [] and r["problem"] == "" for r in rounds[0]), "rank 0 is the reference"
    assert all(len(r["samples"]) == 8 and r["problem"] == "" for r in rounds[1])

    p = processes_by_rank(analysis.summarize(shifted_job))
    assert p[0]["clock_correction_ns"] == 0
    assert p[0]["clock_alignment_problem"] == ""
    assert p[1]["clock_alignment_problem"] == ""
    residual = p[1]["clock_correction_ns"] + SHIFT_NS
    assert p[1]["clock_correction_uncertainty_ns"] > 0
    assert abs(residual) <= p[1]["clock_correction_uncertainty_ns"], (residual, p[1])
    # Placed on rank 0's clock: the two ranks' spans overlap again.
    assert p[1]["start_wall_ns"] < p[0]["end_wall_ns"] and p[0]["start_wall_ns"] < p[1]["end_wall_ns"]
    own_offset = headers[1]["start"]["realtime_ns"] - headers[1]["start"]["monotonic_ns"]
    assert p[1]["clock_offset_ns"] == own_offset + p[1]["clock_correction_ns"]


def test_exports_place_each_rank_by_its_corrected_clock(shifted_job: Path, tmp_path: Path) -> None:
    out = tmp_path / "trace.json"
    proc = subprocess.run(
        [sys.executable, "-m", "smppy.cli", "export", str(shifted_job), "--format", "chrome", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    events = json.loads(out.read_text())["traceEvents"]
    steps: dict[int, list[float]] = {}
    pids = {
        e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    for e in events:
        if e.get("ph") == "X" and e.get("name") == "step":
            steps.setdefault(e["pid"], []).append(e["ts"])
    assert len(steps) == 2, pids
    first, second = (min(ts) for ts in steps.values())
    # DDP's collectives keep the ranks' steps together; uncorrected, they
    # would be SHIFT_NS apart (timestamps in microseconds).
    assert abs(first - second) < abs(SHIFT_NS) / 2 / 1000


@pytest.mark.parametrize(
    ("settings", "expected"), [({}, [("start", 10), ("stop", 10)]), ({"ClockAlignTimeoutS": "0"}, [])]
)
def test_sessions_take_automatic_rounds_bounded_by_the_config(
    trace_dir: Path, monkeypatch: pytest.MonkeyPatch, settings: dict[str, str], expected: list
) -> None:
    calls: list[tuple[str, float]] = []
    monkeypatch.setattr(
        _clock_alignment, "align_automatically", lambda phase, timeout_s: calls.append((phase, timeout_s))
    )
    start_session(trace_dir, **settings)
    smppy.SMProfiler.instance().stop_profiling()
    assert calls == expected
