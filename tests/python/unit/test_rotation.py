"""File rotation in a real session: every event exactly once across the files, in order; every
closed file complete and readable alone; readers (smppy.analysis.trace, smprof info) see one session."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from conftest import run_python
from smppy import cli
from smppy.analysis import job_streams
from smppy.analysis.trace import annotation_events, find_trace_files, open_trace

SCRIPT = """
import json, sys, threading, time
import smppy

config = smppy.Config()
config.profiler = {{"RecordFile": "{out}/rank%r.smprof", "RotateIntervalS": "1", "FlushIntervalMs": "30"}}
profiler = smppy.SMProfiler.instance()
profiler.configure(config)
counts = {{}}

def work(name):
    n = 0
    until = time.monotonic() + 3.4
    while time.monotonic() < until:
        with smppy.annotate(name):
            h = smppy.annotation_begin(name + ".inner")
            time.sleep(0.0005)
            smppy.annotation_end(h)
        n += 1
    counts[name] = n

profiler.start_profiling()
threads = [threading.Thread(target=work, args=(f"t{{i}}",)) for i in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
profiler.stop_profiling()
json.dump({{"counts": counts, "stats": profiler.last_session()}}, sys.stdout)
"""


def test_rotated_session_has_every_event_once_in_order(tmp_path: Path, capsys) -> None:
    proc = run_python(SCRIPT.format(out=tmp_path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["stats"]["annotations_dropped"] == 0

    files = find_trace_files(tmp_path)
    assert len(files) >= 3, files  # 3.4 s at one rotation per second
    assert files[0].name == "rank0.smprof"
    assert [f.name for f in files[1:]] == [f"rank0.{i:04d}.smprof" for i in range(1, len(files))]
    assert [s.files for s in job_streams(tmp_path).streams] == [[str(f) for f in files]]

    seen: Counter[str] = Counter()
    last_start: dict[int, int] = {}
    for i, path in enumerate(files):
        trace = open_trace(path)
        assert trace.header["file_index"] == i
        assert trace.header["previous_file"] == ("" if i == 0 else str(files[i - 1]))
        events = list(annotation_events(trace))
        assert trace.problem is None, trace.problem
        assert trace.footer is not None, f"{path} is closed, so complete"
        assert trace.footer["next_file"] == (str(files[i + 1]) if i + 1 < len(files) else "")
        assert trace.footer["annotations_written"] == len(events)
        # Ranges are written as they close: per thread, outer ranges follow each other.
        for e in sorted((e for e in events if e["depth"] == 0), key=lambda e: e["ts_ns"]):
            assert e["ts_ns"] > last_start.get(e["tid"], 0), "each range once, in order across files"
            last_start[e["tid"]] = e["ts_ns"]
        seen.update(e["name"] for e in events)

    expected = {name: n for name, n in result["counts"].items()}
    expected.update({f"{name}.inner": n for name, n in result["counts"].items()})
    assert seen == expected

    assert cli.main(["info", str(tmp_path), "--json"]) == 0
    infos = json.loads(capsys.readouterr().out)
    assert [i["status"] for i in infos] == ["complete"] * len(files)
    assert [i["file_index"] for i in infos] == list(range(len(files)))
    assert sum(i["annotations"] for i in infos) == sum(expected.values())
