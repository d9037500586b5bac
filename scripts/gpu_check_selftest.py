"""gpu_check_trace.py --self-test: the checker checked on a CPU machine.

A synthetic good trace set (every file and field the rows of scripts/gpu_check_trace.py read,
written with the test-only writer of a checkout's build tree) must pass every row; each
mutation in MUTATIONS (one per assertion) must fail exactly the rows it names and no other;
every row must fail on some mutation. tests/python/integration/test_gpu_check_trace.py runs it.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_check_trace import (
    ALL_REDUCES,
    CALLBACK_TIMEBASE,
    CONVERTED_TIMEBASE,
    EVERY,
    GRAPH_KERNELS,
    GRAPH_REPLAYS,
    LAUNCHES,
    NO_CONTEXT,
    QUEUED,
    SCENARIOS,
    SMPROF_EXTERNAL_KIND,
    SUBSCRIBER_SLOT,
    TRAIN_STEPS,
    AppRun,
    Row,
    app_rows,
    torch_rows,
)

MAIN_TID, AUTOGRAD_TID, HOLDER_TID = 4242, 5151, 6161
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, MulFunctor>(int, float, float)"
NCCL_KERNEL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


class Synthetic:
    """One session's trace, as a GPU would leave it, to write with the test-only writer."""

    def __init__(self, cupti: int = 130001) -> None:
        self.gpu: list[dict[str, Any]] = []
        self.api: list[list[Any]] = []
        self.external: list[tuple[int, int, int, str]] = []
        self.annotations: list[tuple[int, int, str, int, int]] = []
        self.collectives: list[tuple[Any, ...]] = []  # synthetic_trace.add_collectives rows
        self.cuda = {"active": True, "reason": ""}
        self.header = {
            "cupti_version": cupti,
            "cuda_driver_version": 13000,
            "gpu_timebase": f"{CONVERTED_TIMEBASE}no timestamp callback on CUPTI {cupti}: ...",
        }
        self.footer = {"gpu_records_dropped": 0, "cupti_records_dropped": 0}
        self.report: dict[str, Any] | None = {"contexts_synchronized": 1}
        self.device = True
        self.stop_ns = 0  # 0: 1 ms after the last activity
        self.clock = 1_000_000

    def launch(
        self, annotation: str, name: str = ELEMENTWISE, tid: int = MAIN_TID, kernels: int = 1, **fields: Any
    ) -> int:
        """A launch API call 5 us before its activities (``kernels`` of them: a graph launch)."""
        self.clock += 30_000
        correlation_id = len(self.api) + 1
        self.api.append(
            [self.clock - 5_000, 3_000, fields.pop("api", "cudaLaunchKernel_v7000"), tid, correlation_id]
        )
        dur = fields.pop("dur", 1_000)
        self.gpu += [
            {
                "start": self.clock + i * 1_000,
                "dur": dur,
                "name": name,
                "correlation_id": correlation_id,
                **fields,
            }
            for i in range(kernels)
        ]
        if annotation:
            self.external.append((correlation_id, 1, SMPROF_EXTERNAL_KIND, annotation))
        return correlation_id

    def write(self, path: Path) -> None:
        import synthetic_trace as st

        frame = st.pb().Frame(sequence=0)
        if self.device:
            st.add_device(frame, id=0, name="NVIDIA H100 80GB HBM3", uuid="GPU-0", sm_count=132)
        st.add_gpu_activities(frame, self.gpu)
        st.add_api_calls(frame, [tuple(a) for a in self.api])
        st.add_external_correlations(frame, self.external)
        st.add_annotations(frame, self.annotations)
        if self.collectives:
            st.add_collectives(frame, self.collectives)
        header = st.header(collectors=[st.pb().CollectorStatus(name="cuda", **self.cuda)], **self.header)
        footer = st.pb().Footer(**self.footer)
        ends = [g["start"] + g["dur"] for g in self.gpu] or [self.clock]
        footer.stop.monotonic_ns = self.stop_ns or max(ends) + 1_000_000
        if self.report is not None:
            footer.gpu_collection.SetInParent()
            known = footer.gpu_collection.DESCRIPTOR.fields_by_name
            for key, value in self.report.items():
                if key in known:
                    setattr(footer.gpu_collection, key, value)
        st.write_trace(path, header, [frame], footer)


@dataclass
class TraceSet:
    app: Synthetic
    app_truth: dict[str, Any]
    sessions: dict[str, dict[str, Synthetic]]
    truths: dict[str, dict[str, Any]]
    runs: dict[str, dict[str, Any]]


def phases(names: tuple[str, ...], **report: Any) -> Synthetic:
    """A session with LAUNCHES kernels under each of ``names``."""
    s = Synthetic()
    s.report.update(report)
    for name in names:
        for _ in range(LAUNCHES):
            s.launch(name)
    return s


APP_DURATIONS = (("smprof_scale", [101_000, 99_000, 104_000]), ("smprof_add", [51_000, 52_000]))


def good_app() -> tuple[Synthetic, dict[str, Any]]:
    """examples/cuda's shape: 3 scale and 2 add launches, copies, memsets, syncs and GEMMs."""
    app = Synthetic()
    for dur in (100_000, 100_000, 100_000):
        app.launch(
            "scale_phase", "(anonymous namespace)::smprof_scale(float*, int, int)", dur=dur, precision=2
        )
    for dur in (50_000, 50_000):
        app.launch("add_phase", "(anonymous namespace)::smprof_add(float const*, float*, int, int)", dur=dur)
    for _ in range(2):
        app.launch("sync", "Stream synchronize", kind=4, api="cudaStreamSynchronize_v3020")
    for copy_kind in (1, 8, 2):  # HtoD, DtoD, DtoH
        app.launch("copies", "Memcpy", kind=2, copy_kind=copy_kind, api="cudaMemcpyAsync_v3020")
    app.launch("copies", "Memset", kind=3, api="cudaMemsetAsync_v3020")
    app.launch("", "Memset", kind=3, api="cudaMemsetAsync_v3020")
    for _ in range(3):
        app.launch("gemm_fp32", "sm90_xmma_gemm_f32f32_tf32f32", precision=2)
        app.launch("gemm_fp16", "nvjet_hsh_128x256", precision=4)
    truth = {
        "kernels": {
            "smprof_scale": {"count": 3, "annotation": "scale_phase", "event_ns": APP_DURATIONS[0][1]},
            "smprof_add": {"count": 2, "annotation": "add_phase", "event_ns": APP_DURATIONS[1][1]},
        },
        "memcpy": {"HtoD": 1, "DtoD": 1, "DtoH": 1},
        "memset": 2,
        "gemm": {
            "gemm_fp32": {"calls": 3, "precision": "fp32"},
            "gemm_fp16": {"calls": 3, "precision": "fp16"},
        },
    }
    return app, truth


def good_backward() -> Synthetic:
    """Per step: two forward launches, 'Backward' with one launch of the stepping thread and one of
    autograd's (joined to no annotation), one optimizer launch; 'other_thread' opened on a second
    thread after 'Backward' began, ended before it ends."""
    s = Synthetic()
    for _ in range(TRAIN_STEPS):
        step = s.clock + 1
        s.launch("Forward")
        s.launch("Forward")
        backward = s.clock + 10_000
        s.launch("Backward")
        s.launch("", tid=AUTOGRAD_TID)
        s.annotations.append((backward, s.clock - backward + 1_000, "Backward", MAIN_TID, 1))
        s.annotations.append((backward + 200, s.clock - backward + 500, "other_thread", HOLDER_TID, 0))
        s.launch("Optimizer")
        s.annotations.append((step, s.clock - step + 2_000, "step", MAIN_TID, 0))
    return s


def good_nccl() -> Synthetic:
    """ALL_REDUCES all-reduces of a one-rank group, each launching its NCCL kernel inside the call."""
    s = Synthetic()
    for k in range(ALL_REDUCES):
        call = s.clock + 30_000 - 10_000  # launch() moves the clock 30 us on, its API call 5 us before it
        s.collectives.append((call, 8_000, "allreduce_", "0", 1, 0, k + 1, 4 << 20, MAIN_TID))
        s.launch("", NCCL_KERNEL, api="cuLaunchKernelEx", kernel_class=2)
    return s


def good_set() -> TraceSet:
    app, app_truth = good_app()
    idle = {f"idle{i}": phases(("launch50",)) for i in (1, 2, 3)}
    graphs = {f"graph{i}": Synthetic() for i in (1, 2)}
    for graph in graphs.values():
        for _ in range(GRAPH_REPLAYS):
            graph.launch("replay", kernels=GRAPH_KERNELS, api="cudaGraphLaunch_v10000", graph_id=1)
    spin = phases((), synchronize_timed_out=True)
    spin.launch("spin", dur=6_000_000_000)
    inactive = Synthetic()
    inactive.cuda = {"active": False, "reason": f"{SUBSCRIBER_SLOT} (...): CUPTI_ERROR_MULTIPLE_SUBSCRIBERS"}
    inactive.report = None
    sessions = {
        "idle": idle,
        "graphs": graphs,
        "queued": {"queued": phases(("queued",) * (QUEUED // LAUNCHES))},
        "backward": {"train": good_backward()},
        "cuinit": {"cuinit": phases((), contexts_synchronized=0, synchronize_skipped=f"{NO_CONTEXT} (...)")},
        "kineto_before": {"session": phases(("after_profiler",))},
        "kineto_during": {"session": phases(("before_profiler", "inside_profiler", "after_profiler"))},
        "kineto_inside": {"session": inactive},
        "nccl": {"nccl": good_nccl()},
        "capture": {
            "capture": phases(("before",), synchronize_skipped="another thread's stream is capturing")
        },
        "spin": {"spin": spin},
    }
    brackets = {n: [s.gpu[0]["start"] - 20_000, s.clock + 20_000] for n, s in idle.items()}
    truths = {
        "idle": {"launches": LAUNCHES, "brackets": brackets},
        "graphs": {"sessions": list(graphs), "kernels_per_session": 200, "replay_correct": True},
        "queued": {"launches": QUEUED, "queued_at_stop": True, "stop_s": 0.2},
        "backward": {"steps": TRAIN_STEPS, "main_tid": MAIN_TID, "holder_tid": HOLDER_TID},
        "cuinit": {"before": 3, "during": 3, "after": 3, "torch_devices_with_none_visible": 0},
        "kineto_before": {"torch_profiler_kernels": LAUNCHES},
        "kineto_during": {"torch_profiler_kernels": 0},
        "kineto_inside": {"torch_profiler_kernels": LAUNCHES},
        "nccl": {"all_reduces": ALL_REDUCES, "tid": MAIN_TID},
        "capture": {"capture": "ok", "capturing_at_stop": True, "replay_correct": True},
        "spin": {"deadline_s": 1.0, "stop_s": 1.3, "running_at_stop": True},
    }
    runs = {name: {"exit": 0, "elapsed_s": 9.0} for name in SCENARIOS}
    return TraceSet(app, app_truth, sessions, truths, runs)


def write_set(traces: TraceSet, root: Path) -> tuple[Path, Path]:
    """Writes the set under ``root``; returns the app's truth JSON and the torch directory."""
    root.mkdir(parents=True)
    traces.app.write(root / "cuda_app_1.smprof")
    if traces.app_truth is not None:  # None: the app printed none
        truth = {"trace": str(root / "cuda_app_1.smprof"), **traces.app_truth}
        (root / "truth.json").write_text(json.dumps(truth))
    torch_dir = root / "torch"
    for name, sessions in traces.sessions.items():
        (torch_dir / name).mkdir(parents=True)
        for session, synthetic in sessions.items():
            synthetic.write(torch_dir / name / f"{session}_1.smprof")
        if name in traces.truths:  # absent: the scenario wrote none
            (torch_dir / name / "truth.json").write_text(json.dumps(traces.truths[name]))
    (torch_dir / "runs.json").write_text(json.dumps(traces.runs))
    return root / "truth.json", torch_dir


def with_generic(traces: TraceSet, title: str) -> list[Synthetic]:
    """The app's trace and one session of each scenario that gets the generic row ``title``."""
    firsts = [next(iter(traces.sessions[n].values())) for n, s in SCENARIOS.items() if title in s.generic]
    return [traces.app, *firsts]


def generic_mutation(title: str, change: Callable[[Synthetic], None]) -> Callable[[TraceSet], None]:
    def mutate(traces: TraceSet) -> None:
        for synthetic in with_generic(traces, title):
            change(synthetic)

    return mutate


def setting(target: Callable[[TraceSet], dict[str, Any]], key: str, value: Any) -> Callable[[TraceSet], None]:
    return lambda traces: target(traces).__setitem__(key, value)


def truth_of(name: str) -> Callable[[TraceSet], dict[str, Any]]:
    return lambda traces: traces.truths[name]


def session(name: str, which: str = "") -> Callable[[TraceSet], Synthetic]:
    return lambda traces: (
        traces.sessions[name][which] if which else next(iter(traces.sessions[name].values()))
    )


def report_of(name: str) -> Callable[[TraceSet], dict[str, Any]]:
    return lambda traces: session(name)(traces).report


def kernel_before_launch(s: Synthetic) -> None:
    s.gpu[-1]["start"] = s.api[-1][0] - 1_000


def extra_launch(name: str, annotation: str, **fields: Any) -> Callable[[TraceSet], None]:
    return lambda traces: session(name)(traces).launch(annotation, **fields)


def relabel(name: str, old: str, new: str) -> Callable[[TraceSet], None]:
    """The first launch under ``old`` joins ``new`` instead."""

    def mutate(traces: TraceSet) -> None:
        rows = session(name)(traces).external
        i = next(i for i, r in enumerate(rows) if r[3] == old)
        rows[i] = (*rows[i][:3], new)

    return mutate


def relabel_app(*indices: int, new: str = "x") -> Callable[[TraceSet], None]:
    """The app's activities at ``indices`` join ``new`` instead of their annotation."""

    def mutate(traces: TraceSet) -> None:
        moved = {traces.app.gpu[i]["correlation_id"] for i in indices}
        traces.app.external = [(*r[:3], new) if r[0] in moved else r for r in traces.app.external]

    return mutate


def extra_idle_kernel(traces: TraceSet) -> None:
    idle = session("idle")(traces)
    idle.launch("launch50")
    traces.truths["idle"]["brackets"]["idle1"][1] = idle.clock + 20_000


def autograd_after_backward(traces: TraceSet) -> None:
    """The first step's autograd launch moves past 'Backward' (just before the optimizer's)."""
    s = session("backward")(traces)
    s.api[3][0] = s.api[4][0] - 1_000
    s.gpu[3]["start"] = s.api[3][0] + 5_000


def drop_kernel(name: str, which: str = "") -> Callable[[TraceSet], None]:
    return lambda traces: session(name, which)(traces).gpu.pop()


def inactive(reason: str) -> Callable[[Synthetic], None]:
    def change(s: Synthetic) -> None:
        s.cuda, s.report, s.gpu, s.external = {"active": False, "reason": reason}, None, [], []

    return change


def on(
    target: Callable[[TraceSet], Synthetic], change: Callable[[Synthetic], None]
) -> Callable[[TraceSet], None]:
    return lambda traces: change(target(traces))


def lose_after(phase: str, foreign: str) -> Callable[[Synthetic], None]:
    def change(s: Synthetic) -> None:
        kept = {r[0] for r in s.external if r[3] != phase}
        s.gpu = [g for g in s.gpu if g["correlation_id"] in kept]
        s.report["foreign_client"] = foreign

    return change


def app_kernel_truth(name: str, key: str, value: Any) -> Callable[[TraceSet], None]:
    return lambda traces: traces.app_truth["kernels"][name].__setitem__(key, value)


SLOT_REASON = f"{SUBSCRIBER_SLOT} (...): CUPTI_ERROR_MULTIPLE_SUBSCRIBERS"
BUFFERS_TAKEN = "3 CUPTI buffers never came back: another client registered its own buffer callbacks"

# (what is changed, the change, the rows that must fail: a regex; None: every row still passes)
MUTATIONS: list[tuple[str, Callable[[TraceSet], None], str | None]] = [
    (
        "collector inactive",
        generic_mutation(EVERY[0], lambda s: s.cuda.update(active=False)),
        ": cuda collector active$",
    ),
    (
        "header without a driver version",
        generic_mutation(EVERY[1], lambda s: s.header.pop("cuda_driver_version")),
        ": CUPTI and driver",
    ),
    (
        "header without a CUPTI version",
        generic_mutation(EVERY[1], lambda s: s.header.pop("cupti_version")),
        ": (CUPTI and driver|timebase)",
    ),
    (
        "the timestamp callback on a broken CUPTI",
        generic_mutation(EVERY[2], lambda s: s.header.update(gpu_timebase=CALLBACK_TIMEBASE)),
        ": timebase",
    ),
    (
        "no device record",
        generic_mutation(EVERY[3], lambda s: setattr(s, "device", False)),
        ": device metadata",
    ),
    (
        "a record smprof dropped",
        generic_mutation(EVERY[4], lambda s: s.footer.update(gpu_records_dropped=1)),
        ": no GPU record lost",
    ),
    (
        "a record CUPTI dropped",
        generic_mutation(EVERY[4], lambda s: s.footer.update(cupti_records_dropped=1)),
        ": no GPU record lost",
    ),
    (
        "footer without gpu_collection",
        generic_mutation(EVERY[6], lambda s: setattr(s, "report", None)),
        ": no (record|other CUPTI)|idle: 50 kernels|queued: stop waited|capture: the footer|spin: the footer",
    ),
    (
        "a zero-stamp (incomplete) record",
        generic_mutation(EVERY[5], lambda s: s.report.update(incomplete_records=1)),
        ": no record unfinished|idle: 50 kernels",
    ),
    (
        "a finished record CUPTI stamped 0",
        generic_mutation(EVERY[5], lambda s: s.report.update(zero_timestamp_records=1)),
        ": no record unfinished",
    ),
    (
        "an invalid record",
        generic_mutation(EVERY[5], lambda s: s.report.update(invalid_records=1)),
        ": no record unfinished|idle: 50 kernels",
    ),
    (
        "a record on another clock",
        generic_mutation(EVERY[6], lambda s: s.report.update(foreign_timebase_records=1)),
        ": no record on another clock",
    ),
    (
        "a kernel past the stop",
        generic_mutation(EVERY[7], lambda s: setattr(s, "stop_ns", s.gpu[-1]["start"])),
        ": kernels inside",
    ),
    (
        "an activity without its launch row",
        generic_mutation(EVERY[8], lambda s: s.api.pop()),
        # the summary attributes graph kernels only through a graph launch it has seen, and links an
        # NCCL kernel to its collective call only through its launch
        ": every kernel/copy/set|graphs: every graph kernel|graphs: the summary gives 'replay'|nccl: 20 all",
    ),
    (
        "a kernel before its launch",
        generic_mutation(EVERY[9], kernel_before_launch),
        ": no kernel starts before",
    ),
    (
        "a foreign client",
        generic_mutation(EVERY[10], lambda s: s.report.update(foreign_client="x")),
        ": no other CUPTI client",
    ),
    (
        "a buffer not returned",
        generic_mutation(EVERY[10], lambda s: s.report.update(buffers_not_returned=1)),
        ": no other CUPTI client",
    ),
    ("the app's truth missing", lambda t: setattr(t, "app_truth", None), "^cuda_app: ran"),
    (
        "a scenario killed past its limit",
        lambda t: t.runs.update({n: {"exit": None, "elapsed_s": 40} for n in t.runs}),
        ": ran to its end",
    ),
    ("a scenario without truth", lambda t: t.truths.pop("queued"), "^queued: (ran|every one|stop waited)"),
    (
        "one launch more expected of each kernel",
        lambda t: [k.update(count=k["count"] + 1) for k in t.app_truth["kernels"].values()],
        "(smprof_scale|smprof_add) launches",
    ),
    (
        "kernels named with a suffix",
        lambda t: [
            t.app.gpu[i].update(name=t.app.gpu[i]["name"].replace("(float", "_v2(float")) for i in (0, 3)
        ],
        "(smprof_scale|smprof_add) demangled",
    ),
    (
        "a scale and an add launch under another annotation",
        relabel_app(0, 3),
        "(smprof_scale|smprof_add) attributed",
    ),
    (
        "a launch far from its cudaEvents",
        lambda t: [
            app_kernel_truth(n, "event_ns", [*e[:-2], e[-2] + 20_000, e[-1] - 20_000])(t)
            for n, e in APP_DURATIONS
        ],
        "(smprof_scale|smprof_add) durations per launch",
    ),
    (
        "every launch 6% off its cudaEvents",
        lambda t: [app_kernel_truth(n, "event_ns", [x * 106 // 100 for x in e])(t) for n, e in APP_DURATIONS],
        "(smprof_scale|smprof_add) total",
    ),
    ("a copy of another kind", lambda t: t.app.gpu[8].update(copy_kind=1), "copies under 'copies'"),
    (
        "the memset outside 'copies'",
        relabel_app(10),
        "memset under 'copies'",
    ),
    ("an extra memset of the app", lambda t: t.app.launch("", "Memset", kind=3), "memsets outside cuBLAS"),
    ("a stream sync lost", lambda t: t.app.gpu.pop(5), "both stream syncs"),
    ("cuBLAS missing", lambda t: t.app_truth.update(gemm={"missing": "no cuBLAS"}), "cuBLAS GEMMs ran"),
    (
        "GEMMs under another annotation",
        relabel_app(*range(12, 18)),
        "gemm_fp(32|16) (kernels|precision)",
    ),
    (
        "fp16 GEMMs of another precision",
        lambda t: [g.update(precision=2) for g in t.app.gpu if g["name"].startswith("nvjet")],
        "gemm_fp16 precision",
    ),
    ("an extra kernel after the idle", extra_idle_kernel, "idle: 50 kernels"),
    (
        "t0 after the first kernel",
        lambda t: t.truths["idle"]["brackets"]["idle1"].__setitem__(
            0, session("idle")(t).gpu[0]["start"] + 1
        ),
        "idle: every kernel, the first",
    ),
    ("a dropped graph kernel", drop_kernel("graphs", "graph2"), "graphs: (200 kernels|the summary)"),
    (
        "a graph kernel joining a non-graph launch",
        lambda t: session("graphs")(t).api[0].__setitem__(2, "cudaLaunchKernel_v7000"),
        "graphs: every graph kernel|graphs: the summary gives 'replay'",
    ),
    ("a graph replay under another annotation", relabel("graphs", "replay", "x"), "graphs: the summary"),
    ("a wrong replay result", setting(truth_of("graphs"), "replay_correct", False), "graphs: the replays"),
    ("a queued kernel lost", drop_kernel("queued"), "queued: every one"),
    ("nothing queued at stop", setting(truth_of("queued"), "queued_at_stop", False), "queued: every one"),
    (
        "stop waited for no context",
        setting(report_of("queued"), "contexts_synchronized", 0),
        "queued: stop waited",
    ),
    ("a step not recorded", lambda t: session("backward")(t).annotations.pop(-1), "backward: 20 steps"),
    (
        "a stepping-thread kernel under no step annotation",
        relabel("backward", "Optimizer", "x"),
        "backward: every kernel the stepping",
    ),
    (
        "an autograd kernel launched after 'Backward'",
        autograd_after_backward,
        "backward: the summary gives 'Backward'",
    ),
    (
        "the second thread launches a kernel",
        extra_launch("backward", "other_thread", tid=HOLDER_TID),
        "backward: the summary gives 'other_thread'",
    ),
    ("smprof initialised CUDA", setting(truth_of("cuinit"), "during", 0), "cuinit: smprof initialised"),
    (
        "kinds enabled before any context",
        setting(report_of("cuinit"), "synchronize_skipped", ""),
        "cuinit: the footer says the application",
    ),
    (
        "CUDA_VISIBLE_DEVICES ignored",
        setting(truth_of("cuinit"), "torch_devices_with_none_visible", 1),
        "cuinit: CUDA_VISIBLE",
    ),
    (
        "inactive after torch.profiler, for the slot",
        on(session("kineto_before"), inactive(SLOT_REASON)),
        None,
    ),
    (
        "inactive after torch.profiler, another reason",
        on(session("kineto_before"), inactive("CUDA could not be initialised")),
        "kineto_before: a session",
    ),
    ("a silent loss after torch.profiler", drop_kernel("kineto_before"), "kineto_before: a session"),
    (
        "torch.profiler alone misses a kernel",
        setting(truth_of("kineto_before"), "torch_profiler_kernels", 49),
        "kineto_before: torch.profiler",
    ),
    (
        "kernels lost after torch.profiler started, reported",
        on(session("kineto_during"), lose_after("after_profiler", BUFFERS_TAKEN)),
        None,
    ),
    (
        "kernels lost after torch.profiler started, silently",
        on(session("kineto_during"), lose_after("after_profiler", "")),
        "kineto_during: torch.profiler",
    ),
    (
        "kernels lost before torch.profiler started",
        on(session("kineto_during"), lose_after("before_profiler", BUFFERS_TAKEN)),
        "kineto_during: torch.profiler",
    ),
    (
        "inactive for the slot in a session started first",
        on(session("kineto_during"), inactive(SLOT_REASON)),
        "kineto_during: torch.profiler",
    ),
    (
        "started while torch.profiler records: collected",
        lambda t: t.sessions["kineto_inside"].update(session=phases(("inside_profiler", "after_profiler"))),
        None,
    ),
    (
        "started while torch.profiler records: inactive, another reason",
        on(session("kineto_inside"), inactive("not allowed to profile the GPU")),
        "kineto_inside: a session",
    ),
    (
        "another thread's capture broken",
        setting(
            truth_of("capture"),
            "capture",
            "RuntimeError: operation failed due to a previous error during capture",
        ),
        "capture: another thread",
    ),
    (
        "stop skipped its wait without saying why",
        setting(report_of("capture"), "synchronize_skipped", ""),
        "capture: the footer",
    ),
    (
        "the capture over before stop",
        setting(truth_of("capture"), "capturing_at_stop", False),
        "capture: the footer",
    ),
    (
        "an NCCL kernel launched by another thread than its call's",
        lambda traces: session("nccl")(traces).api[-1].__setitem__(3, AUTOGRAD_TID),
        "nccl: 20 all-reduces",
    ),
    (
        "an all-reduce not recorded",
        lambda traces: session("nccl")(traces).collectives.pop(),
        "nccl: 20 all-reduces",
    ),
    ("a stop past 3x its deadline", setting(truth_of("spin"), "stop_s", 3.5), "spin: stop returns"),
    (
        "the spinning kernel over before stop",
        setting(truth_of("spin"), "running_at_stop", False),
        "spin: stop returns",
    ),
    (
        "a timed-out stop not flagged",
        setting(report_of("spin"), "synchronize_timed_out", False),
        "spin: the footer",
    ),
]


def self_test() -> int:
    """Checks the checker on CPU: a good trace set passes every row; each mutation fails its rows
    and no other; every row fails on some mutation."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    try:
        import synthetic_trace  # noqa: F401 - the test-only writer, from a checkout's build tree
    except (ImportError, RuntimeError) as error:
        print(f"self-test: needs a checkout with bench/synthetic_trace.py and its writer: {error}")
        return 2
    with tempfile.TemporaryDirectory(prefix="gpu-check-self-test-") as tmp:

        def rows_of(traces: TraceSet, name: str) -> dict[str, Row]:
            truth, torch_dir = write_set(traces, Path(tmp) / name)
            return {r[0]: r for r in app_rows(AppRun(str(truth))) + torch_rows(torch_dir)}

        good = rows_of(good_set(), "good")
        wrong = [f"good set: {n}: {d}" for n, ok, d in good.values() if not ok]
        print(f"self-test: good set: {len(good)} rows, {len(wrong)} failing")
        failed_somewhere = set()
        for i, (what, mutate, pattern) in enumerate(MUTATIONS):
            traces = good_set()
            mutate(traces)
            rows = rows_of(traces, f"mutation{i}")
            failed = {n for n, ok, _ in rows.values() if not ok}
            expected = {n for n in rows if pattern and re.search(pattern, n)}
            failed_somewhere |= failed
            behaves = failed == expected and (pattern is None or bool(expected))
            print(f"self-test: {'ok   ' if behaves else 'WRONG'} {what}: {len(failed)} FAIL {sorted(failed)}")
            if not behaves:
                wrong.append(f"{what}: failed {sorted(failed ^ expected)} against expectation")
        never = sorted(set(good) - failed_somewhere)
        wrong += [f"no mutation fails '{n}'" for n in never]
    for line in wrong:
        print(f"self-test: WRONG {line}")
    print(f"self-test: {len(MUTATIONS)} mutations, {len(wrong)} problems")
    return 1 if wrong else 0
