"""A real torch 2.13 CPU training loop, annotated with both API styles, read back."""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from conftest import ANNOTATED_STEP, read_annotations, run_python

pytestmark = [pytest.mark.torch]

torch = pytest.importorskip("torch")

STEPS = 30

TRAIN = """
import json, sys, threading, time
import torch
import smppy

config = smppy.Config()
config.profiler = {{"RecordFile": "{out}/train_%p.smprof", "FlushIntervalMs": "20"}}
profiler = smppy.SMProfiler.instance()
profiler.configure(config)

def now():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(256, 16), torch.randint(0, 4, (256,))
windows = []
profiler.start_profiling()
for step in range({steps}):
    before = now()
{train_step}
    windows.append((before, now()))
finite = bool(torch.isfinite(loss))
profiler.stop_profiling()
json.dump({{"windows": windows, "tid": threading.get_native_id(), "finite": finite}}, sys.stdout)
"""


def test_training_loop_annotations_read_back_exactly(tmp_path: Path) -> None:
    proc = run_python(TRAIN.format(train_step=ANNOTATED_STEP, out=tmp_path, steps=STEPS), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["finite"]
    events = read_annotations(tmp_path)

    counts = Counter(e["name"] for e in events)
    assert counts == {name: STEPS for name in ("step", "Forward", "Loss", "Backward", "Optimizer")}
    assert {e["tid"] for e in events} == {result["tid"]}
    assert {name: {e["depth"] for e in events if e["name"] == name} for name in counts} == {
        "step": {0},
        "Forward": {1},
        "Loss": {1},
        "Backward": {1},
        "Optimizer": {1},
    }

    steps = sorted((e for e in events if e["name"] == "step"), key=lambda e: e["ts_ns"])
    children = defaultdict(list)
    for e in events:
        if e["name"] != "step":
            children[e["name"]].append(e)
    for (before, after), step in zip(result["windows"], steps):
        # The script read the same clock just outside each `with`.
        assert before <= step["ts_ns"]
        assert step["ts_ns"] + step["dur_ns"] <= after
    # Each phase lies inside exactly one step, in program order.
    for i, step in enumerate(steps):
        start, end = step["ts_ns"], step["ts_ns"] + step["dur_ns"]
        phase = [
            sorted(children[n], key=lambda e: e["ts_ns"])[i]
            for n in ("Forward", "Loss", "Backward", "Optimizer")
        ]
        for a, b in zip(phase, phase[1:]):
            assert a["ts_ns"] + a["dur_ns"] <= b["ts_ns"]
        assert start <= phase[0]["ts_ns"] and phase[-1]["ts_ns"] + phase[-1]["dur_ns"] <= end


def test_annotations_from_several_threads_keep_their_own_nesting(trace_dir: Path) -> None:
    import threading

    import smppy
    from conftest import start_session

    start_session(trace_dir)
    tids: list[int] = []

    def work(n: int) -> None:
        tids.append(threading.get_native_id())
        for _ in range(n):
            with smppy.annotate("outer"):
                with smppy.annotate("inner"):
                    time.sleep(0)

    threads = [threading.Thread(target=work, args=(200,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    smppy.SMProfiler.instance().stop_profiling()
    events = read_annotations(trace_dir)
    assert len(events) == 4 * 200 * 2
    assert {e["tid"] for e in events} == set(tids)
    for tid in tids:
        mine = [e for e in events if e["tid"] == tid]
        assert Counter((e["name"], e["depth"]) for e in mine) == {("outer", 0): 200, ("inner", 1): 200}
