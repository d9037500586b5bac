"""How a run ended (issue 32, item 7): every way a profiled Python process ends is in the footer
(trace.proto ``SessionEnd``) and said by ``smprof info``, ``summary`` (the "ended" column and one
warning per abnormal end) and the report, with the steps each rank had finished."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from report_page import embedded_payload
from smppy.analysis.trace import annotation_events, find_trace_files, open_trace
from smppy.cli import main

# A profiled script of four steps named the way SMP users name them; then END, how it ends.
SCRIPT = """
import os, signal, sys, time
import smppy
c = smppy.Config(); c.profiler = {{"RecordFile": "{out}/trace.smprof"}}
profiler = smppy.SMProfiler.instance(); profiler.configure(c); profiler.start_profiling()
for step in range(4):
    with smppy.annotate(f"step_{{step}}"):
        with smppy.annotate("Forward"):
            time.sleep(0.001)
{end}
"""

ENDS = {
    "stop": ("profiler.stop_profiling()", 0, {"how": "stop", "exit_code": None}),
    "exit": ("pass", 0, {"how": "exit"}),
    "exception": (
        'raise ValueError("bad batch 7: shape (3, 224) is not (3, 224, 224)")',
        1,
        {
            "how": "exception",
            "exit_code": 1,
            "exception_type": "ValueError",
            "exception_message": "bad batch 7: shape (3, 224) is not (3, 224, 224)",
        },
    ),
    "custom exception": (
        "class DataCorrupt(Exception): pass\nraise DataCorrupt('shard 12')",
        1,
        {"how": "exception", "exception_type": "__main__.DataCorrupt", "exception_message": "shard 12"},
    ),
    "os._exit": ("os._exit(5)", 5, {"how": "os_exit", "exit_code": 5}),
    "SIGTERM": (
        "os.kill(os.getpid(), signal.SIGTERM); time.sleep(30)",
        -signal.SIGTERM,
        {"how": "signal", "signal": signal.SIGTERM},
    ),  # fmt: skip
    "KeyboardInterrupt": (
        "raise KeyboardInterrupt",
        None,
        {"how": "exception", "exception_type": "KeyboardInterrupt"},
    ),
}


def run_script(tmp_path: Path, end: str) -> subprocess.CompletedProcess[str]:
    code = textwrap.dedent(SCRIPT).format(out=tmp_path, end=end)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", list(ENDS))
def test_the_footer_says_how_the_process_ended(tmp_path: Path, name: str) -> None:
    end, returncode, expected = ENDS[name]
    proc = run_script(tmp_path, end)
    if returncode is not None:
        assert proc.returncode == returncode, proc.stderr
    if expected["how"] == "exception":
        assert "Traceback" in proc.stderr, "the user's traceback is still printed"
    (file,) = find_trace_files(tmp_path)
    trace = open_trace(file)
    assert len(list(annotation_events(trace))) == 8, "every step recorded"
    footer = trace.footer
    assert footer is not None and footer["end"] is not None
    assert {k: footer["end"][k] for k in expected} == expected, footer["end"]


def test_info_summary_and_report_say_how_each_rank_ended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rank 0 stops, rank 1 dies of an uncaught exception, rank 2 is killed by SIGKILL (no footer)."""
    job = tmp_path / "job"
    job.mkdir()
    ends = {
        0: "profiler.stop_profiling()",
        1: 'raise ValueError("bad batch 7")',
        2: "time.sleep(0.5); os.kill(os.getpid(), signal.SIGKILL)",  # after a flush (FlushIntervalMs=100)
    }
    for rank, end in ends.items():
        code = textwrap.dedent(SCRIPT).format(out=job, end=end).replace("trace.smprof", f"rank{rank}.smprof")
        env = {"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "3", "SMP_FLUSH_INTERVAL_MS": "100"}
        subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, timeout=120)

    assert main(["info", str(job)]) == 0
    out = capsys.readouterr().out
    assert "ended: profiling stopped" in out
    assert "ended: ended by an uncaught ValueError: bad batch 7" in out
    assert "ended: no footer: still running, or killed (SIGKILL, the OOM killer) or crashed" in out

    assert main(["summary", str(job)]) == 0
    out, err = capsys.readouterr()
    rows = {
        line.split()[2]: line.split()[-1] for line in out.splitlines() if " rank " in line and " pid " in line
    }
    assert rows == {"0": "stop", "1": "ValueError", "2": "footer"}, out  # "no footer", last word
    warned = [line for line in err.splitlines() if "ended" in line or "no footer" in line]
    assert len(warned) == 2, err
    assert any(
        "rank 1 pid" in w and "ended by an uncaught ValueError: bad batch 7 (after 4 steps)" in w
        for w in warned
    )
    assert any("rank2.smprof: truncated: no footer" in w for w in warned), "the reader's own warning"

    assert main(["summary", str(job), "--json"]) == 0
    ranks = {r["rank"]: r["end"] for r in json.loads(capsys.readouterr().out)["ranks"]}
    assert ranks[0]["how"] == "stop" and ranks[1]["how"] == "exception" and ranks[2]["how"] == "no_footer"
    assert ranks[1]["exit_code"] == 1 and ranks[1]["exception_message"] == "bad batch 7"

    from smppy.report import build_report

    warnings: list[str] = []
    page = build_report(str(job), warn=warnings.append)
    assert embedded_payload(page)["report"]["ends"] == ["stop", "ValueError", "no footer"]
    assert sum("ended by an uncaught ValueError" in w for w in warnings) == 1, warnings
