"""EnableForkFollow=1 and a child forked from a thread other than the main one (threading +
os.fork): whichever way the child leaves (its thread returns, sys.exit in that thread, os._exit),
it ends, and its file has every annotation and the footer."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_python
from smppy.analysis.trace import annotation_events, find_trace_files, open_trace

CODE = """
import os, sys, threading
import smppy

config = smppy.Config()
config.profiler = {{"RecordFile": "{out}/f_%p.smprof", "EnableForkFollow": "1", "FlushIntervalMs": "60000"}}
profiler = smppy.SMProfiler.instance()
profiler.configure(config)
profiler.start_profiling()

def work():
    pid = os.fork()
    if pid == 0:
        for _ in range(100):
            with smppy.annotate("child-work"):
                pass
        {child_exit}
        return
    os.waitpid(pid, 0)

thread = threading.Thread(target=work)
thread.start()
thread.join()
profiler.stop_profiling()
"""


@pytest.mark.parametrize("child_exit", ["pass", "sys.exit(0)", "os._exit(0)"])
def test_a_child_forked_from_a_thread_exits_with_its_whole_trace(tmp_path: Path, child_exit: str):
    proc = run_python(CODE.format(out=tmp_path, child_exit=child_exit), cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    files = [open_trace(f) for f in find_trace_files(tmp_path)]
    (child,) = [t for t in files if t.header["forked_child"]]
    assert [e["name"] for e in annotation_events(child)] == ["child-work"] * 100
    assert child.footer is not None, "the child's session was stopped"
