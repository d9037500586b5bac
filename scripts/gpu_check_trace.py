"""The trace side of scripts/gpu_check.sh.

    gpu_check_trace.py train TRACE_DIR [--budget S]   PyTorch on the GPU under smppy (SCENARIOS)
    gpu_check_trace.py check TRUTH_JSON [--torch TRACE_DIR]
    gpu_check_trace.py --self-test                    CPU only: every row passes a good trace set
                                                      and fails on its own mutation of it

``train`` runs each scenario in its own fresh Python process (this interpreter, a time limit
each, all within --budget): its traces, its ``truth.json`` (what the process knows it did) and
its log go to TRACE_DIR/NAME/, how each process ended to TRACE_DIR/runs.json. ``check``
compares examples/cuda's trace with the ground truth the program printed and, with --torch,
each scenario's traces with its truth: one PASS/FAIL row per check, exact where the workload is
known; a field, file or key a row needs and does not find is a FAIL, never a default. Exit 1
if any row failed.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# A kernel's duration in the trace and between its two cudaEvents differ by the
# events' own recording; per launch they must agree within this, and in total
# within TOTAL_TOLERANCE.
LAUNCH_TOLERANCE_NS = 10_000
LAUNCH_TOLERANCE_FRACTION = 0.10
TOTAL_TOLERANCE_FRACTION = 0.05
SMPROF_EXTERNAL_KIND = 5  # CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 (docs/GPU.md)
CUDA_ERROR_NOT_INITIALIZED = 3
# The collector's texts (src/collectors/cuda/cupti_collector.cc).
SUBSCRIBER_SLOT = "another profiler holds CUPTI's only subscriber slot"
# How the footer's synchronize_skipped begins when the application created no CUDA context
# (src/collectors/cuda/cupti_collector.h, kNoContextYet).
NO_CONTEXT = "the application created no CUDA context"
CALLBACK_TIMEBASE = "cupti timestamp callback: CLOCK_MONOTONIC"
CONVERTED_TIMEBASE = (
    "cupti default clock (CLOCK_REALTIME), converted to CLOCK_MONOTONIC by the nearest of pairs read every "
    "drain frame; "
)
# CUPTI API versions whose timestamp callback zeroes or shifts kernel stamps: no callback there.
BROKEN_CALLBACK_CUPTI = range(24, 130100)
GRAPH_LAUNCH = re.compile(r"cudaGraphLaunch|cuGraphLaunch")  # CUPTI adds a version: cudaGraphLaunch_v10000

Row = tuple[str, bool, str]
Judge = Callable[[], tuple[bool, str]]


class Missing(Exception):
    """A file, field or key a row needs is not there: the row fails."""


def need(mapping: dict[str, Any] | None, key: str, what: str) -> Any:
    if mapping is None or mapping.get(key) is None:
        raise Missing(f"{what} has no {key}")
    return mapping[key]


def judge(check: str, how: Judge) -> Row:
    """One row: ``how`` gives (ok, detail); anything it cannot find or read fails the row."""
    try:
        ok, detail = how()
    except Exception as error:  # noqa: BLE001 - a row that cannot be judged is a FAIL, with why
        ok, detail = False, f"{type(error).__name__}: {error}"
    return check, bool(ok), detail


class Trace:
    """One trace file's events, grouped the way the checks need them."""

    def __init__(self, path: Path) -> None:
        from smppy.analysis.trace import events, open_trace

        trace = open_trace(str(path))
        self.path = path
        self.session = path.name.rsplit("_", 1)[0]
        self.header = trace.header
        self.by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for event in events(trace):
            self.by_type[event["type"]].append(event)
        self.footer = trace.footer  # read once the frames are; None without one
        self.api = {e["correlation_id"]: e for e in self.by_type["api"]}
        # correlation id -> the innermost annotation its launch was made under
        self.annotation_of = {
            e["correlation_id"]: e["name"]
            for e in self.by_type["external_correlation"]
            if e["external_kind"] == SMPROF_EXTERNAL_KIND
        }

    @property
    def report(self) -> dict[str, Any]:
        """The footer's gpu_collection (docs/GPU.md "names a device check can assert on")."""
        return need(
            need({"footer": self.footer}, "footer", self.session), "gpu_collection", f"{self.session} footer"
        )

    def reported(self, key: str) -> Any:
        return need(self.report, key, f"{self.session} gpu_collection")

    def cuda(self) -> dict[str, Any]:
        cuda = [c for c in need(self.header, "collectors", self.session) if c["name"] == "cuda"]
        if not cuda:
            raise Missing(f"{self.session} header has no cuda collector")
        return cuda[0]

    def kernels(self, prefix: str = "") -> list[dict[str, Any]]:
        return sorted(
            (e for e in self.by_type["kernel"] if function_name(e["name"]).startswith(prefix)),
            key=lambda e: e["ts_ns"],
        )

    def activities(self) -> list[dict[str, Any]]:
        return self.by_type["kernel"] + self.by_type["memcpy"] + self.by_type["memset"]

    def under(self, annotation: str, kind: str = "kernel") -> list[dict[str, Any]]:
        return [e for e in self.by_type[kind] if self.annotation_of.get(e["correlation_id"]) == annotation]

    def launched_by(self, tid: int) -> list[dict[str, Any]]:
        return [k for k in self.by_type["kernel"] if self.api.get(k["correlation_id"], {}).get("tid") == tid]

    @functools.cached_property
    def summary(self) -> dict[str, Any]:
        from smppy import analysis

        return analysis.summarize(str(self.path))

    def summary_activities(self, annotation: str) -> tuple[int, int]:
        """The summary's (activities, inferred_activities) of ``annotation``; it lists only
        annotations with GPU work, so one it does not list has none."""
        gpu = need(self.summary, "gpu", f"{self.session} summary")
        rows = need(gpu, "per_annotation", f"{self.session} summary gpu")
        entry = next(
            (a for a in rows if a["name"] == annotation), {"activities": 0, "inferred_activities": 0}
        )
        return entry["activities"], entry["inferred_activities"]


def function_name(kernel_name: str) -> str:
    """A demangled kernel name without the anonymous namespace examples/cuda's
    kernels live in: CUPTI names them "(anonymous namespace)::smprof_scale(float*,
    int, int)" (seen on an H200, docs/GPU.md "First run on a GPU")."""
    return kernel_name.removeprefix("(anonymous namespace)::")


# ---------------------------------------------------------------- rows every session's traces get


def each(traces: list[Trace], verdict: Callable[[Trace], tuple[bool, str]]) -> tuple[bool, str]:
    """A row over sessions: ok when every session's verdict is, detail per session."""
    if not traces:
        raise Missing("no trace file")
    verdicts = [(t.session, *verdict(t)) for t in traces]
    return all(ok for _, ok, _ in verdicts), "; ".join(f"{s}: {d}" for s, _, d in verdicts)


def collector_active(t: Trace) -> tuple[bool, str]:
    cuda = t.cuda()
    return cuda["active"], "active" if cuda["active"] else cuda["reason"]


def versions(t: Trace) -> tuple[bool, str]:
    cupti, driver = t.header.get("cupti_version") or 0, t.header.get("cuda_driver_version") or 0
    return cupti > 0 and driver > 0, f"cupti {cupti or 'missing'}, driver {driver or 'missing'}"


def timebase(t: Trace) -> tuple[bool, str]:
    """The method the collector documents for this CUPTI (docs/GPU.md "the timebase")."""
    version = t.header.get("cupti_version") or 0
    if not version:
        raise Missing(f"{t.session} header has no cupti_version")
    said = need(t.header, "gpu_timebase", t.session)
    if version in BROKEN_CALLBACK_CUPTI:
        expected: tuple[str, ...] = (f"{CONVERTED_TIMEBASE}no timestamp callback on CUPTI {version}: ",)
    else:
        expected = (CALLBACK_TIMEBASE, f"{CONVERTED_TIMEBASE}the timestamp callback was refused: ")
    return said.startswith(expected), f"CUPTI {version}: {said!r}"


def devices(t: Trace) -> tuple[bool, str]:
    named = {d["id"]: d["name"] for d in t.by_type["device"]}
    used = {a["device"] for a in t.activities()}
    return bool(used) and all(named.get(d) for d in used), f"work on {sorted(used)}, records {named}"


def no_loss(t: Trace) -> tuple[bool, str]:
    footer = need({"footer": t.footer}, "footer", t.session)
    lost = need(footer, "gpu_records_dropped", "footer"), need(footer, "cupti_records_dropped", "footer")
    return lost == (0, 0), f"smprof {lost[0]}, CUPTI {lost[1]}"


def finished(t: Trace) -> tuple[bool, str]:
    keys = ("incomplete_records", "zero_timestamp_records", "invalid_records")
    counts = tuple(t.reported(key) for key in keys)
    return counts == (0, 0, 0), (
        f"{counts[0]} unfinished at stop, {counts[1]} finished but stamped 0 by CUPTI, {counts[2]} invalid"
    )


def one_clock(t: Trace) -> tuple[bool, str]:
    foreign = t.reported("foreign_timebase_records")
    return foreign == 0, f"{foreign} foreign-timebase records"


def inside_session(t: Trace) -> tuple[bool, str]:
    start = need(need(t.header, "start", t.session), "monotonic_ns", "header start")
    stop = need(
        need(need({"footer": t.footer}, "footer", t.session), "stop", "footer"), "monotonic_ns", "stop"
    )
    outside = [k for k in t.by_type["kernel"] if k["ts_ns"] < start or k["ts_ns"] + k["dur_ns"] > stop]
    return not outside, f"{len(outside)} of {len(t.by_type['kernel'])} outside"


def linked(t: Trace) -> tuple[bool, str]:
    activities = t.activities()
    joined = sum(a["correlation_id"] in t.api for a in activities)
    return bool(activities) and joined == len(activities), f"{joined}/{len(activities)} linked"


def launch_order(t: Trace) -> tuple[bool, str]:
    gaps = [
        k["ts_ns"] - t.api[k["correlation_id"]]["ts_ns"] for k in t.kernels() if k["correlation_id"] in t.api
    ]
    early = sum(g < 0 for g in gaps)
    smallest = f"{min(gaps) / 1e3:.1f} us" if gaps else "none"
    return bool(gaps) and early == 0, f"{early} of {len(gaps)} before their launch; smallest gap {smallest}"


def alone(t: Trace) -> tuple[bool, str]:
    foreign, kept = t.reported("foreign_client"), t.reported("buffers_not_returned")
    return foreign == "" and kept == 0, f"foreign_client {foreign!r}, {kept} buffers not returned"


GENERIC: dict[str, Callable[[Trace], tuple[bool, str]]] = {
    "cuda collector active": collector_active,
    "CUPTI and driver versions in the header": versions,
    "timebase as documented for this CUPTI": timebase,
    "device metadata for every device with work": devices,
    "no GPU record lost": no_loss,
    "no record unfinished, zero-stamped or invalid": finished,
    "no record on another clock": one_clock,
    "kernels inside the session's time span": inside_session,
    "every kernel/copy/set joins its launch API row": linked,
    "no kernel starts before its launch API call": launch_order,
    "no other CUPTI client (foreign_client empty, every buffer back)": alone,
}
EVERY = tuple(GENERIC)
NO_GPU_WORK = EVERY[:3]
# A stop that timed out leaves the spinning kernel unfinished, past the stop, perhaps not delivered.
TIMED_OUT_STOP = (*EVERY[:3], "no GPU record lost", "no record on another clock")


# ---------------------------------------------------------------- examples/cuda


class Run:
    """One scenario's directory: its truth.json and its sessions' traces."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory, self.name = directory, name

    @functools.cached_property
    def truth(self) -> dict[str, Any]:
        path = self.directory / "truth.json"
        if not path.is_file():
            raise Missing(f"{path} (the scenario wrote no truth)")
        return json.loads(path.read_text())

    def fact(self, key: str) -> Any:
        return need(self.truth, key, f"{self.name} truth")

    def trace(self, session: str) -> Trace:
        return self._trace(session)

    @functools.cache  # noqa: B019 - a Run lives for one check
    def _trace(self, session: str) -> Trace:
        files = sorted(self.directory.glob(f"{session}_*.smprof"))
        if not files:
            raise Missing(f"no {session}_*.smprof in {self.directory}")
        return Trace(files[0])

    def traces(self) -> list[Trace]:
        return [self.trace(p.name.rsplit("_", 1)[0]) for p in sorted(self.directory.glob("*_*.smprof"))]


class AppRun(Run):
    """examples/cuda: the truth it printed, naming its trace."""

    def __init__(self, truth: str) -> None:
        super().__init__(Path(truth).parent, "cuda_app")
        self.truth_path = Path(truth)

    @functools.cached_property
    def truth(self) -> dict[str, Any]:
        if not self.truth_path.is_file():  # gpu_check.sh passes why examples/cuda did not run
            raise Missing(f"no ground truth: {self.truth_path}")
        return json.loads(self.truth_path.read_text())

    def traces(self) -> list[Trace]:
        return [self.trace_of_app]

    @functools.cached_property
    def trace_of_app(self) -> Trace:
        return Trace(Path(self.fact("trace")))


def app_rows(app: AppRun) -> list[Row]:
    rows = [
        judge("cuda_app: ran and printed its ground truth", lambda: (bool(app.truth), str(app.truth_path)))
    ]
    if not rows[0][1]:
        return rows
    rows += [judge(f"cuda_app: {title}", lambda g=g: each(app.traces(), g)) for title, g in GENERIC.items()]
    for name, expected in app.fact("kernels").items():
        rows += [
            judge(f"cuda_app: {name} {title}", functools.partial(how, app.trace_of_app, name, expected))
            for title, how in APP_KERNEL_ROWS.items()
        ]
    trace, truth = app.trace_of_app, app.truth
    rows.append(judge("cuda_app: copies under 'copies'", lambda: copies(trace, truth)))
    rows.append(
        judge("cuda_app: memset under 'copies'", lambda: count(len(trace.under("copies", "memset")), 1))
    )
    rows.append(judge("cuda_app: memsets outside cuBLAS", lambda: own_memsets(trace, truth)))
    rows.append(
        judge("cuda_app: both stream syncs under 'sync'", lambda: count(len(trace.under("sync", "sync")), 2))
    )
    gemm = need(truth, "gemm", "truth")
    rows.append(
        judge("cuda_app: cuBLAS GEMMs ran", lambda: ("missing" not in gemm, gemm.get("missing", "ran")))
    )
    for annotation, expected in gemm.items() if "missing" not in gemm else ():
        rows.append(
            judge(
                f"cuda_app: {annotation} kernels attributed",
                lambda a=annotation, e=expected: gemms(trace, a, e),
            )
        )
        rows.append(
            judge(
                f"cuda_app: {annotation} precision {expected['precision']}",
                lambda a=annotation, e=expected: precisions(trace, a, e),
            )
        )
    return rows


def count(counted: int, expected: int) -> tuple[bool, str]:
    return counted == expected, f"{counted} of {expected}"


def launch_count(trace: Trace, name: str, expected: dict[str, Any]) -> tuple[bool, str]:
    return count(len(trace.kernels(name)), expected["count"])


def demangled(trace: Trace, name: str, expected: dict[str, Any]) -> tuple[bool, str]:
    names = Counter(k["name"] for k in trace.kernels(name))
    return bool(names) and all(function_name(n).startswith(name + "(") for n in names), str(dict(names))


def attributed(trace: Trace, name: str, expected: dict[str, Any]) -> tuple[bool, str]:
    kernels = trace.kernels(name)
    right = [k for k in kernels if trace.annotation_of.get(k["correlation_id"]) == expected["annotation"]]
    return bool(kernels) and len(right) == len(
        kernels
    ), f"{len(right)}/{len(kernels)} under '{expected['annotation']}'"


def paired_durations(trace: Trace, name: str, expected: dict[str, Any]) -> list[tuple[int, int]]:
    kernels, events_ns = trace.kernels(name), expected["event_ns"]
    if len(kernels) != len(events_ns):
        raise Missing(f"{len(kernels)} kernels for {len(events_ns)} cudaEvent timings: nothing to pair")
    return [(k["dur_ns"], e) for k, e in zip(kernels, events_ns)]


def per_launch(trace: Trace, name: str, expected: dict[str, Any]) -> tuple[bool, str]:
    pairs = paired_durations(trace, name, expected)
    worst = max(
        pairs, key=lambda p: abs(p[0] - p[1]) - max(LAUNCH_TOLERANCE_NS, LAUNCH_TOLERANCE_FRACTION * p[1])
    )
    within = abs(worst[0] - worst[1]) <= max(LAUNCH_TOLERANCE_NS, LAUNCH_TOLERANCE_FRACTION * worst[1])
    return within, f"worst: trace {worst[0]} ns, events {worst[1]} ns"


def total(trace: Trace, name: str, expected: dict[str, Any]) -> tuple[bool, str]:
    pairs = paired_durations(trace, name, expected)
    traced, timed = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    return abs(
        traced - timed
    ) <= TOTAL_TOLERANCE_FRACTION * timed, f"trace {traced / 1e6:.3f} ms, events {timed / 1e6:.3f} ms"


APP_KERNEL_ROWS = {
    "launches": launch_count,
    "demangled": demangled,
    "attributed to its annotation": attributed,
    "durations per launch vs cudaEvent (10 us or 10%)": per_launch,
    "total duration vs cudaEvent (5%)": total,
}


def copies(trace: Trace, truth: dict[str, Any]) -> tuple[bool, str]:
    kinds = Counter(e["copy_kind"] for e in trace.under("copies", "memcpy"))
    return kinds == Counter(need(truth, "memcpy", "truth")), str(dict(kinds))


def own_memsets(trace: Trace, truth: dict[str, Any]) -> tuple[bool, str]:
    """cuBLAS may set its workspace: the example's own memsets are the ones outside its GEMM annotations."""
    gemm = set(need(truth, "gemm", "truth"))
    own = [m for m in trace.by_type["memset"] if trace.annotation_of.get(m["correlation_id"]) not in gemm]
    return count(len(own), need(truth, "memset", "truth"))


def gemms(trace: Trace, annotation: str, expected: dict[str, Any]) -> tuple[bool, str]:
    """cuBLAS picks its kernels, one or more per call: at least one each."""
    kernels = trace.under(annotation)
    names = sorted({k["name"][:60] for k in kernels})
    return len(kernels) >= expected["calls"], f"{len(kernels)} for {expected['calls']} calls: {names}"


def precisions(trace: Trace, annotation: str, expected: dict[str, Any]) -> tuple[bool, str]:
    kinds = Counter(k["precision"] for k in trace.under(annotation))
    return kinds.get(expected["precision"], 0) >= expected["calls"], str(dict(kinds))


# ---------------------------------------------------------------- PyTorch: the scenarios


@dataclass
class Scenario:
    """A workload run in its own process (``train``) and the rows that judge its traces (``check``)."""

    limit_s: int
    generic: tuple[str, ...]
    workload: Callable[[Path], dict[str, Any]] | None = None
    rows: dict[str, Callable[[Run], tuple[bool, str]]] = field(default_factory=dict)


# In the order they run; the ones that may hang a stop go last.
SCENARIOS = {
    "idle": Scenario(60, EVERY),
    "graphs": Scenario(40, EVERY),
    "queued": Scenario(40, EVERY),
    "backward": Scenario(45, EVERY),
    "cuinit": Scenario(40, NO_GPU_WORK),
    "kineto_before": Scenario(45, ()),
    "kineto_during": Scenario(45, ()),
    "kineto_inside": Scenario(45, ()),
    "nccl": Scenario(60, EVERY),
    "capture": Scenario(40, EVERY),
    "spin": Scenario(45, TIMED_OUT_STOP),
}
LAUNCHES = 50  # known launches per phase
IDLE_S = 5.0
GRAPH_KERNELS, GRAPH_REPLAYS = 20, 10
QUEUED = 300
TRAIN_STEPS = 20
STEP_ANNOTATIONS = ("step", "Forward", "Backward", "Optimizer")
SYNC_TIMEOUT_MS = 1000
SPIN_MS = 6000
ALL_REDUCES = 20


def workload(name: str) -> Callable[[Callable[[Path], dict[str, Any]]], Callable[[Path], dict[str, Any]]]:
    def register(function: Callable[[Path], dict[str, Any]]) -> Callable[[Path], dict[str, Any]]:
        SCENARIOS[name].workload = function
        return function

    return register


def check_row(
    name: str, title: str
) -> Callable[[Callable[[Run], tuple[bool, str]]], Callable[[Run], tuple[bool, str]]]:
    def register(function: Callable[[Run], tuple[bool, str]]) -> Callable[[Run], tuple[bool, str]]:
        SCENARIOS[name].rows[title] = function
        return function

    return register


def start(directory: Path, session: str, **keys: str) -> None:
    import smppy

    config = smppy.Config()
    pattern = str(directory / f"{session}_%p.smprof")
    config.profiler = {"EnableCuda": "1", "RecordFile": pattern, "FlushIntervalMs": "200", **keys}
    profiler = smppy.SMProfiler.instance()
    profiler.configure(config)
    profiler.start_profiling()


def stop() -> float:
    """stop_profiling(); how long it took, in seconds."""
    import smppy

    begun = time.monotonic()
    smppy.SMProfiler.instance().stop_profiling()
    return time.monotonic() - begun


def launches(x: Any, count: int) -> None:
    """``count`` kernels: one elementwise kernel per in-place multiply."""
    for _ in range(count):
        x.mul_(1.0001)


def warm_tensor(elements: int = 1 << 20) -> Any:
    import torch

    x = torch.ones(elements, device="cuda")
    launches(x, 3)
    torch.cuda.synchronize()
    return x


@workload("idle")
def idle_workload(directory: Path) -> dict[str, Any]:
    import smppy
    import torch

    x = warm_tensor()
    brackets = {}
    for session in ("idle1", "idle2", "idle3"):
        start(directory, session)
        time.sleep(IDLE_S)  # the GPU idles inside the session
        t0 = time.monotonic_ns()  # CLOCK_MONOTONIC, the trace's timebase
        with smppy.annotate("launch50"):
            launches(x, LAUNCHES)
        torch.cuda.synchronize()
        brackets[session] = [t0, time.monotonic_ns()]
        stop()
    return {"launches": LAUNCHES, "brackets": brackets}


@check_row("idle", "50 kernels in each of 3 sessions after 5 s of GPU idle, none unfinished or invalid")
def idle_counts(run: Run) -> tuple[bool, str]:
    def verdict(t: Trace) -> tuple[bool, str]:
        counts = (len(t.under("launch50")), len(t.by_type["kernel"]), t.reported("incomplete_records"))
        counts += (t.reported("invalid_records"),)
        ok = counts == (run.fact("launches"), run.fact("launches"), 0, 0)
        return ok, "{} under launch50, {} in all, {} incomplete, {} invalid".format(*counts) + cupti_of(t)

    return each(sessions_of(run, "brackets", 3), verdict)


def cupti_of(t: Trace) -> str:
    return f" (CUPTI {t.header.get('cupti_version') or 'version missing'})"


def sessions_of(run: Run, key: str, expected: int) -> list[Trace]:
    sessions = run.fact(key)
    if len(sessions) != expected:
        raise Missing(f"{run.name} truth {key} names {len(sessions)} sessions, not {expected}")
    return [run.trace(s) for s in sessions]


@check_row(
    "idle", "every kernel, the first after the idle too, inside its session's [t0, t1] (CLOCK_MONOTONIC)"
)
def idle_bracket(run: Run) -> tuple[bool, str]:
    def verdict(t: Trace) -> tuple[bool, str]:
        t0, t1 = run.fact("brackets")[t.session]
        kernels = t.kernels()
        outside = [k for k in kernels if k["ts_ns"] < t0 or k["ts_ns"] + k["dur_ns"] > t1]
        first = f"{(kernels[0]['ts_ns'] - t0) / 1e3:.1f} us after t0" if kernels else "no kernel"
        return bool(kernels) and not outside, f"{len(outside)} of {len(kernels)} outside; first {first}"

    return each(sessions_of(run, "brackets", 3), verdict)


@workload("graphs")
def graphs_workload(directory: Path) -> dict[str, Any]:
    import smppy
    import torch

    x = torch.ones(1 << 20, device="cuda")
    side = torch.cuda.Stream()  # warm up off the default stream, as torch.cuda.graph asks
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        launches(x, 3)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launches(x, GRAPH_KERNELS)
    torch.cuda.synchronize()
    sessions = ["graph1", "graph2"]
    for session in sessions:
        start(directory, session)
        with smppy.annotate("replay"):
            for _ in range(GRAPH_REPLAYS):
                graph.replay()
        torch.cuda.synchronize()
        stop()
    expected = torch.full_like(x, 1.0001 ** (3 + 2 * GRAPH_KERNELS * GRAPH_REPLAYS))
    correct = bool(torch.allclose(x, expected, rtol=1e-3))
    return {
        "sessions": sessions,
        "kernels_per_session": GRAPH_KERNELS * GRAPH_REPLAYS,
        "replay_correct": correct,
    }


@check_row("graphs", "200 kernels per session, each of the graph")
def graph_counts(run: Run) -> tuple[bool, str]:
    def verdict(t: Trace) -> tuple[bool, str]:
        kernels = t.by_type["kernel"]
        of_graph = sum(bool(k["graph_id"]) for k in kernels)
        return len(kernels) == of_graph == run.fact(
            "kernels_per_session"
        ), f"{of_graph} of the graph, {len(kernels)} in all"

    return each(sessions_of(run, "sessions", 2), verdict)


@check_row("graphs", "every graph kernel joins a cudaGraphLaunch/cuGraphLaunch API row")
def graph_links(run: Run) -> tuple[bool, str]:
    def verdict(t: Trace) -> tuple[bool, str]:
        names = Counter(
            t.api[k["correlation_id"]]["name"] if k["correlation_id"] in t.api else "no API row"
            for k in t.kernels()
        )
        ok = bool(names) and all(GRAPH_LAUNCH.match(n) for n in names)
        return ok, str(dict(names))

    return each(sessions_of(run, "sessions", 2), verdict)


@check_row("graphs", "the summary gives 'replay' every kernel of each session")
def graph_attribution(run: Run) -> tuple[bool, str]:
    def verdict(t: Trace) -> tuple[bool, str]:
        activities, inferred = t.summary_activities("replay")
        return activities == run.fact("kernels_per_session"), f"{activities} ({inferred} inferred)"

    return each(sessions_of(run, "sessions", 2), verdict)


@check_row("graphs", "the replays compute the right result")
def graph_result(run: Run) -> tuple[bool, str]:
    return run.fact("replay_correct") is True, f"correct: {run.fact('replay_correct')}"


@workload("queued")
def queued_workload(directory: Path) -> dict[str, Any]:
    import smppy
    import torch

    # 1 GiB: each multiply reads and writes it (~0.5 ms on an H200), so most are still queued at stop.
    x = warm_tensor(1 << 28)
    start(directory, "queued")
    with smppy.annotate("queued"):
        launches(x, QUEUED)
    queued = not torch.cuda.current_stream().query()
    stop_s = stop()  # no synchronize first
    torch.cuda.synchronize()
    return {"launches": QUEUED, "queued_at_stop": queued, "stop_s": round(stop_s, 3)}


@check_row("queued", "every one of 300 kernels queued at a stop without sync arrives")
def queued_counts(run: Run) -> tuple[bool, str]:
    t, queued = run.trace("queued"), run.fact("queued_at_stop")
    counts = len(t.under("queued")), len(t.by_type["kernel"])
    ok = queued is True and counts == (run.fact("launches"),) * 2
    return (
        ok,
        f"{counts[0]} of {run.fact('launches')} under 'queued', {counts[1]} in all; queued at stop: {queued}",
    )


@check_row("queued", "stop waited for the GPU (contexts_synchronized >= 1)")
def queued_wait(run: Run) -> tuple[bool, str]:
    synced = run.trace("queued").reported("contexts_synchronized")
    return synced >= 1, f"{synced} contexts; stop took {run.fact('stop_s')} s"


@workload("backward")
def backward_workload(directory: Path) -> dict[str, Any]:
    import smppy
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data, target = torch.randn(256, 512, device="cuda"), torch.randint(0, 10, (256,), device="cuda")
    torch.cuda.synchronize()
    start(directory, "train")  # after .cuda(): CUDA's context already exists
    # Each step, a second thread opens 'other_thread' after 'Backward' began and ends it after
    # backward(): the latest-started range open at the autograd launches is on the wrong thread.
    opening, opened, closing, closed = (threading.Event() for _ in range(4))
    holder: dict[str, int] = {}

    def hold() -> None:
        holder["tid"] = threading.get_native_id()
        for _ in range(TRAIN_STEPS):
            if not opening.wait(120):
                return
            opening.clear()
            with smppy.annotate("other_thread"):
                opened.set()
                closing.wait(120)
                closing.clear()
            closed.set()

    thread = threading.Thread(target=hold)
    thread.start()
    for _ in range(TRAIN_STEPS):
        with smppy.annotate("step"):
            optimizer.zero_grad()
            with smppy.annotate("Forward"):
                loss = torch.nn.functional.cross_entropy(model(data), target)
            with smppy.annotate("Backward"):
                opening.set()
                opened.wait(30)
                opened.clear()
                loss.backward()
                torch.cuda.synchronize()  # every autograd launch inside the other thread's range
                closing.set()
                closed.wait(30)
                closed.clear()
            with smppy.annotate("Optimizer"):
                optimizer.step()
    torch.cuda.synchronize()
    thread.join(30)
    stop()
    return {"steps": TRAIN_STEPS, "main_tid": threading.get_native_id(), "holder_tid": holder["tid"]}


@workload("nccl")
def nccl_workload(directory: Path) -> dict[str, Any]:
    """A one-rank NCCL group (the machine has one GPU; NCCL refuses two ranks on one) and
    ALL_REDUCES all-reduces under TorchAutoSteps, for the collectives' link to their NCCL kernels."""
    import torch
    import torch.distributed as dist

    store = dist.FileStore(str(directory / "store"), 1)
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", store=store, rank=0, world_size=1)
    x = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(x)  # NCCL's communicator is made here, before the session
    torch.cuda.synchronize()
    start(directory, "nccl", TorchAutoSteps="1")
    for _ in range(ALL_REDUCES):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    stop()
    dist.destroy_process_group()
    return {"all_reduces": ALL_REDUCES, "tid": threading.get_native_id()}


@check_row("nccl", "20 all-reduces recorded, and every NCCL kernel linked to its call by thread id")
def nccl_linked(run: Run) -> tuple[bool, str]:
    t = run.trace("nccl")
    calls = [c for c in t.by_type["collective"] if c["op"] == "allreduce_"]
    nccl = [k for k in t.by_type["kernel"] if function_name(k["name"]).startswith("nccl")]
    collectives = need(t.summary, "collectives", f"{t.session} summary")
    linked, unlinked = collectives["kernels_linked"], collectives["kernels_not_linked"]
    launchers = {t.api[k["correlation_id"]]["tid"] for k in nccl if k["correlation_id"] in t.api}
    ok = len(calls) == run.fact("all_reduces") and linked == len(nccl) and unlinked == 0
    ok = ok and launchers <= {run.fact("tid")}
    return ok, (
        f"{len(calls)} calls, {len(nccl)} NCCL kernels ({linked} linked, {unlinked} not), launched by "
        f"{sorted(launchers)} (the caller: {run.fact('tid')})"
        + ("; a one-rank group launched no NCCL kernel" if not nccl else "")
    )


@check_row("backward", "20 steps recorded")
def backward_steps(run: Run) -> tuple[bool, str]:
    steps = [a for a in run.trace("train").by_type["annotation"] if a["name"] == "step"]
    return count(len(steps), run.fact("steps"))


@check_row("backward", "every kernel the stepping thread launched joins a step annotation")
def backward_own(run: Run) -> tuple[bool, str]:
    t = run.trace("train")
    own = t.launched_by(run.fact("main_tid"))
    joined = [k for k in own if t.annotation_of.get(k["correlation_id"]) in STEP_ANNOTATIONS]
    return bool(own) and len(joined) == len(own), f"{len(joined)}/{len(own)}"


@check_row("backward", "the summary gives 'Backward' exactly the autograd threads' kernels (inferred)")
def backward_inferred(run: Run) -> tuple[bool, str]:
    t = run.trace("train")
    launchers = {run.fact("main_tid"), run.fact("holder_tid")}
    autograd = [
        k
        for k in t.by_type["kernel"]
        if k["correlation_id"] in t.api and t.api[k["correlation_id"]]["tid"] not in launchers
    ]
    activities, inferred = t.summary_activities("Backward")
    direct = len(t.under("Backward"))
    ok = len(autograd) > 0 and inferred == len(autograd) and activities == inferred + direct
    return (
        ok,
        f"{inferred} inferred for {len(autograd)} autograd kernels; {activities} in all, {direct} direct",
    )


@check_row(
    "backward", "the summary gives 'other_thread', opened on a second thread in each backward, nothing"
)
def backward_other(run: Run) -> tuple[bool, str]:
    t = run.trace("train")
    activities, _ = t.summary_activities("other_thread")
    launched = len(t.launched_by(run.fact("holder_tid")))
    return activities == 0 and launched == 0, f"{activities} activities; the thread launched {launched}"


@workload("cuinit")
def cuinit_workload(directory: Path) -> dict[str, Any]:
    import smppy

    libcuda = ctypes.CDLL("libcuda.so.1")

    def device_count_status() -> int:
        return libcuda.cuDeviceGetCount(ctypes.byref(ctypes.c_int(-1)))

    before = device_count_status()
    start(directory, "cuinit")
    with smppy.annotate("one"):
        during = device_count_status()
    stop()
    after = device_count_status()
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # read when CUDA initialises: still to come
    import torch

    return {
        "before": before,
        "during": during,
        "after": after,
        "torch_devices_with_none_visible": torch.cuda.device_count(),
    }


@check_row("cuinit", "smprof initialised no CUDA: cuDeviceGetCount 3 before, during and after a session")
def cuinit_status(run: Run) -> tuple[bool, str]:
    statuses = [run.fact(k) for k in ("before", "during", "after")]
    return statuses == [CUDA_ERROR_NOT_INITIALIZED] * 3, f"before, during, after: {statuses}"


@check_row("cuinit", "the footer says the application created no CUDA context, so nothing was enabled")
def cuinit_footer(run: Run) -> tuple[bool, str]:
    t = run.trace("cuinit")
    skipped = t.reported("synchronize_skipped")
    return skipped.startswith(NO_CONTEXT), f"synchronize_skipped: {skipped!r}"


@check_row("cuinit", "CUDA_VISIBLE_DEVICES set after the session still applies (torch sees 0 devices)")
def cuinit_visible(run: Run) -> tuple[bool, str]:
    return count(run.fact("torch_devices_with_none_visible"), 0)


def kineto_kernels(profile: Any) -> int:
    import torch

    return sum(1 for e in profile.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def kineto_outcome(
    t: Trace, phases: tuple[str, ...], lossy: tuple[str, ...], may_be_inactive: bool
) -> tuple[bool, str]:
    """smprof's outcome beside torch.profiler: every kernel collected; inactive for the subscriber slot
    (where Kineto holds it first); or fewer kernels in the ``lossy`` phases with the footer naming the
    other client. Anything else, a silent loss included, fails."""
    cuda = t.cuda()
    if not cuda["active"]:
        ok = may_be_inactive and SUBSCRIBER_SLOT in cuda["reason"] and not t.by_type["kernel"]
        return ok, f"outcome: inactive: {cuda['reason']}"
    counts = {p: len(t.under(p)) for p in phases}
    said = f"{counts} of {LAUNCHES} each, {len(t.by_type['kernel'])} in all"
    if all(c == LAUNCHES for c in counts.values()) and len(t.by_type["kernel"]) == LAUNCHES * len(phases):
        return True, f"outcome: collected: {said}"
    foreign = t.reported("foreign_client")
    kept = all(counts[p] == LAUNCHES for p in phases if p not in lossy)
    ok = kept and foreign != "" and all(counts[p] <= LAUNCHES for p in lossy)
    return ok, f"outcome: {'lost, reported' if ok else 'lost'}: {said}; foreign_client {foreign!r}"


@workload("kineto_before")
def kineto_before_workload(directory: Path) -> dict[str, Any]:
    import smppy
    import torch
    from torch.profiler import ProfilerActivity, profile

    x = warm_tensor()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as kineto:
        launches(x, LAUNCHES)
        torch.cuda.synchronize()
    start(directory, "session")
    with smppy.annotate("after_profiler"):
        launches(x, LAUNCHES)
    torch.cuda.synchronize()
    stop()
    return {"torch_profiler_kernels": kineto_kernels(kineto)}


@check_row(
    "kineto_before", "a session after torch.profiler: every kernel, or inactive for the subscriber slot"
)
def kineto_before_outcome(run: Run) -> tuple[bool, str]:
    return kineto_outcome(run.trace("session"), ("after_profiler",), (), may_be_inactive=True)


@check_row("kineto_before", "torch.profiler alone records its 50 kernels")
def kineto_before_own(run: Run) -> tuple[bool, str]:
    return count(run.fact("torch_profiler_kernels"), LAUNCHES)


@workload("kineto_during")
def kineto_during_workload(directory: Path) -> dict[str, Any]:
    import smppy
    import torch
    from torch.profiler import ProfilerActivity, profile

    x = warm_tensor()
    start(directory, "session")
    with smppy.annotate("before_profiler"):
        launches(x, LAUNCHES)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as kineto:
        with smppy.annotate("inside_profiler"):
            launches(x, LAUNCHES)
        torch.cuda.synchronize()
    with smppy.annotate("after_profiler"):
        launches(x, LAUNCHES)
    torch.cuda.synchronize()
    stop()
    return {"torch_profiler_kernels": kineto_kernels(kineto)}


@check_row(
    "kineto_during", "torch.profiler inside a session: every kernel, or a loss from its start on, reported"
)
def kineto_during_outcome(run: Run) -> tuple[bool, str]:
    phases = ("before_profiler", "inside_profiler", "after_profiler")
    ok, detail = kineto_outcome(run.trace("session"), phases, phases[1:], may_be_inactive=False)
    return ok, f"{detail}; torch.profiler saw {run.fact('torch_profiler_kernels')} kernels"


@workload("kineto_inside")
def kineto_inside_workload(directory: Path) -> dict[str, Any]:
    import smppy
    import torch
    from torch.profiler import ProfilerActivity, profile

    x = warm_tensor()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as kineto:
        launches(x, LAUNCHES)
        torch.cuda.synchronize()
        start(directory, "session")  # warns: torch.profiler is recording
        with smppy.annotate("inside_profiler"):
            launches(x, LAUNCHES)
        torch.cuda.synchronize()
    with smppy.annotate("after_profiler"):
        launches(x, LAUNCHES)
    torch.cuda.synchronize()
    stop()
    return {"torch_profiler_kernels": kineto_kernels(kineto)}


@check_row(
    "kineto_inside",
    "a session started while torch.profiler records: every kernel, inactive, or a loss reported",
)
def kineto_inside_outcome(run: Run) -> tuple[bool, str]:
    phases = ("inside_profiler", "after_profiler")
    ok, detail = kineto_outcome(run.trace("session"), phases, phases, may_be_inactive=True)
    return ok, f"{detail}; torch.profiler saw {run.fact('torch_profiler_kernels')} kernels"


@workload("capture")
def capture_workload(directory: Path) -> dict[str, Any]:
    import smppy
    import torch

    x, static_in = warm_tensor(), torch.zeros(1 << 20, device="cuda")
    start(directory, "capture")
    with smppy.annotate("before"):
        launches(x, LAUNCHES)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    capturing, stopped, held = threading.Event(), threading.Event(), {}

    def capture() -> None:
        try:
            with torch.cuda.graph(graph):  # capture_error_mode "global", as torch.compile's cudagraphs
                y = static_in * 2
                capturing.set()
                held["capturing_at_stop"] = stopped.wait(30)
                for _ in range(10):
                    y = y + 1
                held["y"] = y
            held["capture"] = "ok"
        except Exception as error:  # noqa: BLE001 - the finding is which error
            held["capture"] = f"{type(error).__name__}: {error}"[:300]
        capturing.set()

    thread = threading.Thread(target=capture)
    thread.start()
    capturing.wait(30)
    time.sleep(0.1)
    stop()
    stopped.set()
    thread.join(30)
    correct = False
    if held.get("capture") == "ok":
        static_in.fill_(3.0)
        graph.replay()
        torch.cuda.synchronize()
        correct = bool(torch.all(held["y"] == 16.0))
    return {
        "capture": held.get("capture", "still running"),
        "capturing_at_stop": held.get("capturing_at_stop"),
        "replay_correct": correct,
    }


@check_row("capture", "another thread's capture during stop succeeds and its replay is right")
def capture_result(run: Run) -> tuple[bool, str]:
    return run.fact("capture") == "ok" and run.fact(
        "replay_correct"
    ) is True, f"capture {run.fact('capture')}, replay correct: {run.fact('replay_correct')}"


@check_row("capture", "the footer says why stop did not wait (synchronize_skipped)")
def capture_skipped(run: Run) -> tuple[bool, str]:
    skipped, active = run.trace("capture").reported("synchronize_skipped"), run.fact("capturing_at_stop")
    return active is True and skipped != "", f"capturing at stop: {active}; skipped: {skipped!r}"


@workload("spin")
def spin_workload(directory: Path) -> dict[str, Any]:
    import smppy
    import torch

    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)
    begin.record()
    torch.cuda._sleep(100_000_000)
    end.record()
    torch.cuda.synchronize()
    cycles_per_ms = 100_000_000 / begin.elapsed_time(end)
    start(directory, "spin", CudaSyncTimeoutMs=str(SYNC_TIMEOUT_MS))
    with smppy.annotate("spin"):
        torch.cuda._sleep(int(cycles_per_ms * SPIN_MS))
    time.sleep(0.5)
    running = not torch.cuda.current_stream().query()
    stop_s = stop()
    torch.cuda.synchronize()
    return {"deadline_s": SYNC_TIMEOUT_MS / 1000, "stop_s": round(stop_s, 3), "running_at_stop": running}


@check_row("spin", "stop returns within 3x CudaSyncTimeoutMs (1 s) while a kernel spins")
def spin_bounded(run: Run) -> tuple[bool, str]:
    stop_s, running = run.fact("stop_s"), run.fact("running_at_stop")
    return running is True and stop_s <= 3 * run.fact(
        "deadline_s"
    ), f"stop took {stop_s} s; kernel running at stop: {running}"


@check_row("spin", "the footer says the wait timed out (synchronize_timed_out)")
def spin_timed_out(run: Run) -> tuple[bool, str]:
    timed_out = run.trace("spin").reported("synchronize_timed_out")
    return timed_out is True, f"synchronize_timed_out {timed_out}"


def torch_rows(directory: Path) -> list[Row]:
    runs_path = directory / "runs.json"
    runs = json.loads(runs_path.read_text()) if runs_path.is_file() else None
    rows = []
    for name, scenario in SCENARIOS.items():
        run = Run(directory / name, name)
        rows.append(judge(f"{name}: ran to its end", functools.partial(ran, runs, run)))
        rows += [
            judge(f"{name}: {title}", lambda r=run, g=GENERIC[title]: each(r.traces(), g))
            for title in scenario.generic
        ]
        rows += [
            judge(f"{name}: {title}", functools.partial(how, run)) for title, how in scenario.rows.items()
        ]
    return rows


def ran(runs: dict[str, Any] | None, run: Run) -> tuple[bool, str]:
    ended = need(need({"runs.json": runs}, "runs.json", "train"), run.name, "runs.json")
    return ended["exit"] == 0 and bool(
        run.truth
    ), f"exit {ended['exit']} after {ended['elapsed_s']} s {ended.get('why', '')}"


# ---------------------------------------------------------------- train: one process per scenario


def run_scenario(name: str, directory: Path, limit_s: float) -> dict[str, Any]:
    """Runs one scenario in a fresh process (on torch 2.11 Kineto keeps CUPTI's subscriber slot for a
    process's life); kills its process group past ``limit_s``."""
    directory.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    with open(directory / "log.txt", "w") as log:
        process = subprocess.Popen(
            [sys.executable, "-u", os.path.abspath(__file__), "scenario", name, str(directory)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status, why = process.wait(timeout=limit_s), ""
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            status, why = None, f"killed past its {limit_s:.0f} s limit"
    elapsed = round(time.monotonic() - began, 1)
    print(f"---- {name}: exit {status} after {elapsed} s {why}")
    print((directory / "log.txt").read_text(errors="replace").rstrip()[-4000:], flush=True)
    return {"exit": status, "elapsed_s": elapsed, "why": why}


def train(directory: Path, budget_s: float) -> int:
    deadline = time.monotonic() + budget_s
    runs = {}
    for name, scenario in SCENARIOS.items():
        limit = min(scenario.limit_s, deadline - time.monotonic())
        if limit < 10:
            runs[name] = {"exit": None, "elapsed_s": 0, "why": f"not run: {budget_s:.0f} s budget spent"}
            continue
        runs[name] = run_scenario(name, directory / name, limit)
    (directory / "runs.json").write_text(json.dumps(runs, indent=1))
    return 0


def scenario_main(name: str, directory: Path) -> int:
    workload = SCENARIOS[name].workload
    assert workload is not None, name
    truth = workload(directory)
    (directory / "truth.json").write_text(json.dumps(truth))
    print(f"{name}: {json.dumps(truth)}")
    return 0


def print_table(rows: list[Row]) -> int:
    width = max(len(name) for name, _, _ in rows)
    for name, ok, detail in rows:
        print(f"{'PASS' if ok else 'FAIL'}  {name:<{width}}  {detail}")
    failed = sum(not ok for _, ok, _ in rows)
    print(f"gpu_check: {len(rows) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--self-test", action="store_true", help="check the checker on CPU (needs a checkout)"
    )
    sub = parser.add_subparsers(dest="command")
    train_parser = sub.add_parser("train")
    train_parser.add_argument("directory", type=Path)
    train_parser.add_argument("--budget", type=float, default=190.0, help="seconds for all scenarios")
    scenario = sub.add_parser("scenario", help="one scenario, in this process (train runs these)")
    scenario.add_argument("name", choices=list(SCENARIOS))
    scenario.add_argument("directory", type=Path)
    check = sub.add_parser("check")
    check.add_argument("truth", help="examples/cuda's ground truth JSON, or why there is none (a FAIL row)")
    check.add_argument("--torch", type=Path)
    args = parser.parse_args()
    if args.self_test:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from gpu_check_selftest import self_test

        return self_test()
    if args.command == "train":
        return train(args.directory, args.budget)
    if args.command == "scenario":
        return scenario_main(args.name, args.directory)
    if args.command == "check":
        return print_table(app_rows(AppRun(args.truth)) + (torch_rows(args.torch) if args.torch else []))
    parser.error("a command (train, check) or --self-test")
    return 2


if __name__ == "__main__":
    sys.exit(main())
