"""CPU collection: per-core utilization, process metrics, perf counters,
the duration limit, and fork following with a real DataLoader."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import smppy
from conftest import read_annotations, run_python
from machine import online_cpus, perf_events_permitted
from smppy.analysis.trace import counter_events, find_trace_files, open_trace

pytestmark = [pytest.mark.torch]


def counters_by_name(path: Path) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for file in find_trace_files(path):
        for e in counter_events(open_trace(file)):
            out[e["name"]].append(e)
    return out


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_each_core_reads_as_proc_stat_says_over_the_same_window(tmp_path: Path) -> None:
    """A spinner holds one core busy while the profiled process sleeps on another: the
    per-core samples in the window follow /proc/stat read around that window, whatever
    else the machine runs, and the spinning core reads busy."""
    busy, idle = sorted(os.sched_getaffinity(0))[:2]
    code = f"""
        import json, os, subprocess, sys, time, smppy
        def busy_and_total():
            out = {{}}
            for line in open("/proc/stat"):
                name, *ticks = line.split()
                if name in ("cpu{busy}", "cpu{idle}"):
                    ticks = [int(t) for t in ticks]
                    out[name] = (sum(ticks[:8]) - ticks[3] - ticks[4], sum(ticks[:8]))
            return out
        os.sched_setaffinity(0, {{{idle}}})
        c = smppy.Config()
        c.profiler = {{"RecordFile": "{tmp_path}/c.smprof", "CpuSampleIntervalMs": "100", "EnablePerf": "0"}}
        p = smppy.SMProfiler.instance(); p.configure(c); p.start_profiling()
        # The spinner says when it spins on its core (not a sleep long enough on this machine's
        # speed and load) and spins until this process is done with the window.
        spin = ("import os, sys\\nos.sched_setaffinity(0, {{{busy}}})\\n"
                "print('spinning', flush=True)\\nwhile True: pass")
        child = subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline() == "spinning\\n"
        t0, before = time.clock_gettime_ns(time.CLOCK_MONOTONIC), busy_and_total()
        time.sleep(1.5)
        t1, after = time.clock_gettime_ns(time.CLOCK_MONOTONIC), busy_and_total()
        child.kill()
        child.wait()
        p.stop_profiling()
        percent = {{n: 100 * (after[n][0] - before[n][0]) / max(1, after[n][1] - before[n][1])
                   for n in after}}
        print(json.dumps([t0, t1, percent]))
    """
    proc = run_python(code, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    t0, t1, proc_stat = json.loads(proc.stdout)
    counters = counters_by_name(tmp_path)

    def window(core: int) -> list[float]:
        return [e["value"] for e in counters[f"cpu{core}.utilization"] if t0 <= e["ts_ns"] <= t1]

    busy_values, idle_values = window(busy), window(idle)
    assert len(busy_values) >= 3 and len(idle_values) >= 3
    assert statistics.median(busy_values) > 80
    for core, values in ((busy, busy_values), (idle, idle_values)):
        # The samples cover the window and up to one interval before it.
        assert abs(statistics.mean(values) - proc_stat[f"cpu{core}"]) < 20, (core, values, proc_stat)
    assert {e["unit"] for e in counters[f"cpu{busy}.utilization"]} == {"percent"}
    for name in (
        "cpu.utilization",
        "cpu.user",
        "cpu.system",
        "cpu.iowait",
        "cpu.idle",
        "process.cpu_percent",
        "process.rss_bytes",
        "process.threads",
        "machine.memory_used_bytes",
    ):
        assert counters[name], name
    assert all(0 <= e["value"] <= 100 for e in counters["cpu.idle"])
    assert {e["unit"] for e in counters["process.rss_bytes"]} == {"bytes"}


def test_perf_software_counters_are_monotonic_and_missing_events_say_why(trace_dir: Path) -> None:
    from conftest import start_session

    start_session(trace_dir, CpuSampleIntervalMs="20", PerfEvents="task-clock,context-switches,cycles")
    busy_until = time.process_time() + 0.2  # CPU time, not a count of iterations: any CPU's speed
    while time.process_time() < busy_until:
        pass
    smppy.SMProfiler.instance().stop_profiling()
    (file,) = find_trace_files(trace_dir)
    header = open_trace(file).header
    events = {e["name"]: e for e in header["perf_events"]}
    perf = next(c for c in header["collectors"] if c["name"] == "perf")
    if refused := perf_events_permitted():  # a container's seccomp profile, perf_event_paranoid 3
        assert not events["task-clock"]["active"] and events["task-clock"]["reason"], events
        assert not perf["active"] and perf["reason"].startswith("no perf event could be opened"), perf
        pytest.skip(f"{refused}: no counter to read; the trace says why ({events['task-clock']['reason']})")
    assert events["task-clock"]["active"] and events["task-clock"]["track"] == "perf.task-clock"
    if not events["cycles"]["active"]:  # a VM without a PMU, like CI's
        assert events["cycles"]["reason"]
    counters = counters_by_name(trace_dir)
    task_clock = [e["value"] for e in sorted(counters["perf.task-clock"], key=lambda e: e["ts_ns"])]
    assert len(task_clock) >= 2
    assert task_clock == sorted(task_clock) and task_clock[-1] > task_clock[0]
    assert {e["unit"] for e in counters["perf.task-clock"]} == {"ns"}
    assert perf["active"]
    per_cpu = [name for name in counters if re.match(r"perf\.cpu\d+\.", name)]
    if header["perf_per_cpu_reason"]:  # not permitted here
        assert per_cpu == [] and "perf_event_paranoid" in header["perf_per_cpu_reason"]
    else:  # root, CAP_PERFMON or paranoid <= 0: context switches per online CPU
        cpus = online_cpus()  # not os.cpu_count(), nor numbered 0..n-1: some may be offline
        per_cpu_events = [e["name"] for e in header["perf_events"] if e["cpus"]]
        assert "context-switches" in per_cpu_events
        assert sorted(per_cpu) == sorted(f"perf.cpu{n}.{e}" for n in cpus for e in per_cpu_events)
        assert events["context-switches"]["cpus"] == len(cpus)
        assert events["task-clock"]["cpus"] == 0 and events["task-clock"]["per_cpu_reason"]


def test_unknown_perf_event_is_rejected_with_suggestions() -> None:
    with pytest.raises(ValueError, match="unknown perf event 'cycels'.*did you mean: .*cycles"):
        smppy.SMProfiler.instance().configure({"PerfEvents": "instructions,cycels"})


def test_cpu_sampling_stops_after_its_duration_and_annotations_go_on(tmp_path: Path) -> None:
    code = f"""
        import json, time, smppy
        c = smppy.Config(); c.profiler = {{"RecordFile": "{tmp_path}/d.smprof", "CpuSampleIntervalMs": "50",
                                          "CpuProfilingDurationS": "1", "FlushIntervalMs": "100"}}
        p = smppy.SMProfiler.instance(); p.configure(c); p.start_profiling()
        start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        while time.clock_gettime_ns(time.CLOCK_MONOTONIC) - start < 2.5e9:
            with smppy.annotate("work"):
                time.sleep(0.05)
        p.stop_profiling()
        print(json.dumps(start))
    """
    proc = run_python(code, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    header_start = open_trace(tmp_path / "d.smprof").header["start"]["monotonic_ns"]
    limit = header_start + 1_000_000_000
    counters = counters_by_name(tmp_path)
    assert counters["process.rss_bytes"]
    for name, samples in counters.items():
        assert sum(1 for e in samples if e["ts_ns"] > limit) <= 1, f"{name} sampled past the limit"
    late_work = [e for e in read_annotations(tmp_path) if e["ts_ns"] > limit + 500_000_000]
    assert late_work, "annotations continue after CPU sampling ends"


def test_dump_prints_counter_events(trace_dir: Path) -> None:
    from conftest import start_session

    start_session(trace_dir, CpuSampleIntervalMs="10")
    with smppy.annotate("x"):
        sum(range(300_000))
    smppy.SMProfiler.instance().stop_profiling()
    proc = subprocess.run(
        [sys.executable, "-m", "smppy.cli", "dump", str(trace_dir), "--json"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    counters = [e for e in lines if e["type"] == "counter"]
    assert counters
    for e in counters:
        assert {"name", "ts_ns", "value", "unit", "rank", "host", "pid"} <= set(e)
    assert Counter(e["type"] for e in lines)["annotation"] == 1


DATALOADER = """
import json, sys, torch, smppy
from torch.utils.data import DataLoader, Dataset

class Squares(Dataset):
    def __len__(self):
        return 32
    def __getitem__(self, i):
        with smppy.annotate("getitem"):
            return torch.tensor([i * i])

c = smppy.Config()
c.profiler = {{"RecordFile": "{out}/t_%p.smprof", "EnableForkFollow": "{follow}", "FlushIntervalMs": "50"}}
p = smppy.SMProfiler.instance(); p.configure(c); p.start_profiling()
total = 0
for batch in DataLoader(Squares(), batch_size=4, num_workers=2):
    with smppy.annotate("batch"):
        total += int(batch.sum())
p.stop_profiling()
print(json.dumps({{"total": total, "path": p.last_session()["path"]}}))
"""


@pytest.mark.parametrize("follow", ["1", "0"])
def test_dataloader_workers_with_and_without_fork_following(tmp_path: Path, follow: str) -> None:
    pytest.importorskip("torch")
    proc = run_python(DATALOADER.format(out=tmp_path, follow=follow), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["total"] == sum(i * i for i in range(32))
    files = find_trace_files(tmp_path)
    parent = Path(result["path"])
    assert parent in files
    parent_names = Counter(e["name"] for e in read_annotations(parent))
    assert parent_names == {"batch": 8}, "the parent's file holds only the parent's events"
    workers = [f for f in files if f != parent]
    if follow == "0":
        assert workers == []
        return
    assert len(workers) == 2
    getitems = 0
    for worker in workers:
        header = open_trace(worker).header
        assert header["forked_child"] and header["parent_trace"] == str(parent)
        assert header["rank"] == open_trace(parent).header["rank"]
        assert header["pid"] != open_trace(parent).header["pid"]
        names = Counter(e["name"] for e in read_annotations(worker))  # also checks the footer
        assert set(names) == {"getitem"}
        getitems += names["getitem"]
        assert counters_by_name(worker)["process.rss_bytes"], "workers sample their CPU use too"
    assert getitems == 32


def test_followed_child_that_only_execs_leaves_no_file(tmp_path: Path) -> None:
    code = f"""
        import os, smppy
        c = smppy.Config(); c.profiler = {{"RecordFile": "{tmp_path}/f_%p.smprof", "EnableForkFollow": "1"}}
        p = smppy.SMProfiler.instance(); p.configure(c); p.start_profiling()
        pid = os.fork()
        if pid == 0:
            os.execv("/bin/true", ["true"])
        os.waitpid(pid, 0)
        pid = os.fork()
        if pid == 0:  # a plain child that annotates and exits normally
            with smppy.annotate("child-work"):
                pass
            raise SystemExit(0)
        os.waitpid(pid, 0)
        p.stop_profiling()
    """
    proc = run_python(code, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    files = find_trace_files(tmp_path)
    assert len(files) == 2, "the parent's and the annotating child's; none for the exec'd one"
    children = [f for f in files if open_trace(f).header["forked_child"]]
    assert len(children) == 1
    assert [e["name"] for e in read_annotations(children[0])] == ["child-work"]
