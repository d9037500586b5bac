"""The trace side of scripts/gpu_check.sh.

    gpu_check_trace.py train TRACE_DIR                PyTorch on the GPU under smppy (below)
    gpu_check_trace.py check TRUTH_JSON [--torch TRACE_DIR]

``check`` compares examples/cuda's trace with the ground truth the program printed (exact kernel
counts and names, launch links, annotation attribution, copies and memsets, kernel durations
against cudaEvent timings) and, with --torch, the traces of ``train``: a training loop started
after ``.cuda()`` (device metadata after a late start, forward kernels under their annotation,
backward kernels of autograd's threads attributed to 'Backward'), a stop without synchronizing
(every queued kernel kept), and torch.profiler in the same process, before a session and during
one (every kernel of known count). It prints one PASS/FAIL row per check and exits 1 if any
failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

# A kernel's duration in the trace and between its two cudaEvents differ by the
# events' own recording; per launch they must agree within this, and in total
# within TOTAL_TOLERANCE.
LAUNCH_TOLERANCE_NS = 10_000
LAUNCH_TOLERANCE_FRACTION = 0.10
TOTAL_TOLERANCE_FRACTION = 0.05
SMPROF_EXTERNAL_KIND = 5  # CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 (docs/GPU.md)
TRAIN_STEPS = 20

ROWS: list[tuple[str, bool, str]] = []


def row(check: str, ok: bool, detail: str = "") -> None:
    ROWS.append((check, ok, detail))


class Trace:
    """One trace file's events, grouped the way the checks need them."""

    def __init__(self, path: str) -> None:
        from smppy.analysis.trace import events, open_trace

        trace = open_trace(path)
        self.path = path
        self.header = trace.header
        self.by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for event in events(trace):
            self.by_type[event["type"]].append(event)
        self.footer = trace.footer or {}  # read once the frames are
        self.gpu_collection = self.footer.get("gpu_collection") or {}
        self.api = {e["correlation_id"]: e for e in self.by_type["api"]}
        # correlation id -> the innermost annotation it was launched under
        self.annotation_of = {
            e["correlation_id"]: e.get("name", "")
            for e in self.by_type["external_correlation"]
            if e["external_kind"] == SMPROF_EXTERNAL_KIND
        }

    def kernels(self, prefix: str = "") -> list[dict[str, Any]]:
        return sorted(
            (e for e in self.by_type["kernel"] if function_name(e["name"]).startswith(prefix)),
            key=lambda e: e["ts_ns"],
        )

    def under(self, annotation: str, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.by_type[kind] if self.annotation_of.get(e["correlation_id"]) == annotation]


def function_name(kernel_name: str) -> str:
    """A demangled kernel name without the anonymous namespace examples/cuda's
    kernels live in: CUPTI names them "(anonymous namespace)::smprof_scale(float*,
    int, int)" (seen on an H200, docs/GPU.md "First run on a GPU")."""
    return kernel_name.removeprefix("(anonymous namespace)::")


def check_collection(trace: Trace, what: str) -> None:
    cuda = next(c for c in trace.header["collectors"] if c["name"] == "cuda")
    row(f"{what}: cuda collector active", cuda["active"], cuda["reason"])
    h = trace.header
    row(
        f"{what}: versions and timebase in the header",
        h["cupti_version"] > 0 and h["cuda_driver_version"] > 0 and "CLOCK_MONOTONIC" in h["gpu_timebase"],
        f"cupti {h['cupti_version']}, driver {h['cuda_driver_version']}, {h['gpu_timebase']}",
    )
    devices = trace.by_type["device"]
    row(
        f"{what}: device metadata",
        bool(devices) and all(d["name"] for d in devices),
        str([d["name"] for d in devices]),
    )
    lost = (trace.footer.get("gpu_records_dropped", -1), trace.footer.get("cupti_records_dropped", -1))
    row(f"{what}: no GPU record lost", lost == (0, 0), f"smprof {lost[0]}, CUPTI {lost[1]}")
    # The collector's own account (docs/GPU.md "Collection: names a device
    # check can assert on"); absent from traces of builds before it.
    report = trace.gpu_collection
    unfinished = report.get("incomplete_records", 0) + report.get("invalid_records", 0)
    row(f"{what}: no record unfinished or invalid at stop", unfinished == 0, str(report or "no report"))
    foreign = report.get("foreign_timebase_records", 0)
    row(f"{what}: no record on another clock", foreign == 0, f"{foreign} foreign-timebase records")
    start = h["start"]["monotonic_ns"]
    stop = trace.footer["stop"]["monotonic_ns"] if trace.footer else None
    outside = [
        e for e in trace.by_type["kernel"] if e["ts_ns"] < start or (stop and e["ts_ns"] + e["dur_ns"] > stop)
    ]
    row(f"{what}: kernels inside the session's time span", not outside, f"{len(outside)} outside")


def check_links(trace: Trace, what: str) -> None:
    activities = trace.by_type["kernel"] + trace.by_type["memcpy"] + trace.by_type["memset"]
    unlinked = [e for e in activities if e["correlation_id"] not in trace.api and not e.get("graph_id")]
    row(
        f"{what}: every kernel/copy/set has its launch API record",
        not unlinked,
        f"{len(activities) - len(unlinked)}/{len(activities)} linked",
    )
    late = [
        e
        for e in activities
        if e["correlation_id"] in trace.api and trace.api[e["correlation_id"]]["ts_ns"] > e["ts_ns"]
    ]
    row(f"{what}: every launch starts before its activity", not late, f"{len(late)} launched after they ran")


def check_app(truth: dict[str, Any]) -> None:
    trace = Trace(truth["trace"])
    check_collection(trace, "cuda_app")
    check_links(trace, "cuda_app")
    for name, expected in truth["kernels"].items():
        kernels = trace.kernels(name)
        names = Counter(k["name"] for k in kernels)
        row(
            f"cuda_app: {name} launches",
            len(kernels) == expected["count"],
            f"{len(kernels)} of {expected['count']}; names {dict(names)}",
        )
        row(
            f"cuda_app: {name} demangled",
            all(function_name(n).startswith(name + "(") for n in names),
            str(list(names)),
        )
        wrong = [k for k in kernels if trace.annotation_of.get(k["correlation_id"]) != expected["annotation"]]
        row(
            f"cuda_app: {name} attributed to '{expected['annotation']}'",
            not wrong and kernels,
            f"{len(kernels) - len(wrong)}/{len(kernels)}",
        )
        events_ns = expected["event_ns"]
        if len(kernels) == len(events_ns):
            worst = max(
                (
                    abs(k["dur_ns"] - e) - max(LAUNCH_TOLERANCE_NS, LAUNCH_TOLERANCE_FRACTION * e),
                    k["dur_ns"],
                    e,
                )
                for k, e in zip(kernels, events_ns)
            )
            row(
                f"cuda_app: {name} durations per launch vs cudaEvent (10 us or 10%)",
                worst[0] <= 0,
                f"worst: trace {worst[1]} ns, events {worst[2]} ns",
            )
            total_trace, total_events = sum(k["dur_ns"] for k in kernels), sum(events_ns)
            row(
                f"cuda_app: {name} total duration vs cudaEvent (5%)",
                abs(total_trace - total_events) <= TOTAL_TOLERANCE_FRACTION * total_events,
                f"trace {total_trace / 1e6:.3f} ms, events {total_events / 1e6:.3f} ms",
            )
    copies = Counter(e["copy_kind"] for e in trace.under("copies", "memcpy"))
    row("cuda_app: copies under 'copies'", copies == Counter(truth["memcpy"]), str(dict(copies)))
    row(
        "cuda_app: memset under 'copies'",
        len(trace.under("copies", "memset")) == 1,
        f"{len(trace.under('copies', 'memset'))} of 1",
    )
    row(
        "cuda_app: memsets in total",
        len(trace.by_type["memset"]) >= truth["memset"],
        f"{len(trace.by_type['memset'])}, at least {truth['memset']}",
    )
    syncs = trace.by_type["sync"]
    row("cuda_app: stream synchronizations recorded", len(syncs) >= 2, f"{len(syncs)}")
    gemm = truth["gemm"]
    if "missing" in gemm:
        row("cuda_app: cuBLAS GEMMs", False, gemm["missing"])
        return
    for annotation, expected in gemm.items():
        kernels = trace.under(annotation, "kernel")
        precisions = Counter(k["precision"] for k in kernels)
        row(
            f"cuda_app: {annotation} kernels attributed",
            len(kernels) >= expected["calls"],
            f"{len(kernels)} for {expected['calls']} calls: {sorted({k['name'][:60] for k in kernels})}",
        )
        row(
            f"cuda_app: {annotation} precision {expected['precision']}",
            precisions.get(expected["precision"], 0) >= expected["calls"],
            str(dict(precisions)),
        )


# The PyTorch run (``train``): sessions in one process, each its own trace
# file in the trace directory, and what the process knows it did, as JSON.
UNSYNCED_LAUNCHES = 200  # queued when the session stops without synchronizing
PHASE_LAUNCHES = 50  # known launches per phase around torch.profiler
TORCH_TRUTH = "torch_truth.json"


def launches(x: Any, count: int) -> None:
    """``count`` kernels: one elementwise kernel per in-place multiply."""
    for _ in range(count):
        x.mul_(1.0001)


def check_torch(directory: str) -> None:
    truth = json.loads((Path(directory) / TORCH_TRUTH).read_text())

    def trace_of(name: str) -> Trace:
        return Trace(str(next(Path(directory).glob(f"torch_{name}_*.smprof"))))

    trace = trace_of("train")
    check_collection(trace, "torch (started after .cuda())")
    check_links(trace, "torch")
    steps = [a for a in trace.by_type["annotation"] if a["name"] == "step"]
    row("torch: steps recorded", len(steps) == truth["steps"], f"{len(steps)} of {truth['steps']}")
    # Kernels launched by the stepping thread inside a step carry its
    # annotation through CUPTI's per-thread stack.
    main_tid = steps[0]["tid"] if steps else -1
    in_step = [
        k
        for k in trace.by_type["kernel"]
        if (launch := trace.api.get(k["correlation_id"])) is not None
        and launch["tid"] == main_tid
        and any(s["ts_ns"] <= launch["ts_ns"] <= s["ts_ns"] + s["dur_ns"] for s in steps)
    ]
    wrong = [k for k in in_step if trace.annotation_of.get(k["correlation_id"]) not in STEP_ANNOTATIONS]
    row(
        "torch: kernels the stepping thread launched carry a step annotation",
        bool(in_step) and not wrong,
        f"{len(in_step) - len(wrong)}/{len(in_step)}",
    )
    # Backward kernels come from autograd's threads, which push nothing: they
    # belong to the innermost annotation open in the process at their launch
    # (docs/GPU.md "Other threads"), here 'Backward'.
    backward = [
        k
        for k in trace.by_type["kernel"]
        if (launch := trace.api.get(k["correlation_id"])) is not None and launch["tid"] != main_tid
    ]
    attributed = [k for k in backward if attribution(trace, k) == "Backward"]
    row(
        "torch: backward kernels (autograd threads) launched inside 'Backward'",
        bool(backward) and len(attributed) == len(backward),
        f"{len(attributed)}/{len(backward)}",
    )
    check_summary_attribution(trace, len(backward))

    trace = trace_of("unsynced")
    check_collection(trace, "torch stop without sync")
    count_kernels(trace, "unsynced", truth, "torch: stop without sync keeps every queued kernel")

    trace = trace_of("after_profiler")
    check_collection(trace, "torch session after torch.profiler")
    count_kernels(trace, "after_profiler", truth, "torch: a session after torch.profiler counts every kernel")

    # Kineto takes CUPTI's callbacks and disables shared kinds at its stop:
    # smprof may lose what runs from then on, but must say so.
    trace = trace_of("profiler_inside")
    count_kernels(trace, "before_profiler", truth, "torch.profiler during a session: kernels before it")
    reported = trace.gpu_collection.get("foreign_client", "")
    for phase in ("profiler_inside", "after_profiler_inside"):
        counted = len(trace.under(phase, "kernel"))
        row(
            f"torch.profiler during a session: '{phase}' kernels kept, or the loss reported",
            counted == truth[phase] or (counted < truth[phase] and bool(reported)),
            f"{counted} of {truth[phase]}; foreign client: {reported or 'none reported'}",
        )
    row(
        "torch.profiler during a session: it still records kernels itself",
        truth["torch_profiler_kernels"] >= truth["profiler_inside"],
        f"{truth['torch_profiler_kernels']} kernels, at least {truth['profiler_inside']}",
    )


STEP_ANNOTATIONS = ("step", "Forward", "Backward", "Optimizer")


def count_kernels(trace: Trace, annotation: str, truth: dict[str, int], check: str) -> None:
    """A row: the kernels under ``annotation`` are exactly as many as the run launched."""
    counted = len(trace.under(annotation, "kernel"))
    row(check, counted == truth[annotation], f"{counted} of {truth[annotation]}")


def attribution(trace: Trace, kernel: dict[str, Any]) -> str:
    """The annotation a kernel belongs to: the one its launch pushed, else the
    innermost annotation open anywhere in the process when it was launched."""
    pushed = trace.annotation_of.get(kernel["correlation_id"])
    if pushed:
        return pushed
    launch = trace.api.get(kernel["correlation_id"])
    if launch is None:
        return ""
    open_then = [
        a for a in trace.by_type["annotation"] if a["ts_ns"] <= launch["ts_ns"] <= a["ts_ns"] + a["dur_ns"]
    ]
    innermost = max(open_then, key=lambda a: (a["ts_ns"], a.get("depth", 0)), default=None)
    return innermost["name"] if innermost else ""


def check_summary_attribution(trace: Trace, backward_kernels: int) -> None:
    """The job summary's own account: 'Backward' gets the backward kernels, as
    inferred activities; rows only where the summary has attribution."""
    from smppy import analysis

    gpu = analysis.summarize(trace.path).get("gpu", {})
    if "attribution" not in gpu:
        return
    entry = next((a for a in gpu.get("per_annotation", []) if a["name"] == "Backward"), {})
    inferred = entry.get("inferred_activities", 0)
    row(
        "torch: the summary gives 'Backward' the backward kernels (inferred)",
        backward_kernels > 0 and inferred >= backward_kernels,
        f"{inferred} inferred for {backward_kernels}; unattributed share "
        f"{gpu['attribution'].get('unattributed_share', '?')}",
    )


def train(directory: str) -> None:
    import smppy
    import torch
    from torch.profiler import ProfilerActivity, profile

    profiler = smppy.SMProfiler.instance()

    def start(name: str) -> None:
        config = smppy.Config()
        pattern = str(Path(directory) / f"torch_{name}_%p.smprof")
        config.profiler = {"EnableCuda": "1", "RecordFile": pattern, "FlushIntervalMs": "200"}
        profiler.configure(config)
        profiler.start_profiling()

    phases = ("after_profiler", "before_profiler", "profiler_inside", "after_profiler_inside")
    truth = {"steps": TRAIN_STEPS, "unsynced": UNSYNCED_LAUNCHES, **dict.fromkeys(phases, PHASE_LAUNCHES)}
    model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data, target = torch.randn(256, 512, device="cuda"), torch.randint(0, 10, (256,), device="cuda")
    torch.cuda.synchronize()
    start("train")  # after .cuda(): CUDA's context already exists
    for _ in range(TRAIN_STEPS):
        with smppy.annotate("step"):
            optimizer.zero_grad()
            with smppy.annotate("Forward"):
                loss = torch.nn.functional.cross_entropy(model(data), target)
            with smppy.annotate("Backward"):
                loss.backward()
            with smppy.annotate("Optimizer"):
                optimizer.step()
    torch.cuda.synchronize()
    profiler.stop_profiling()
    print(f"trained {TRAIN_STEPS} steps, loss {loss.item():.4f}")

    # Enough work that most of it is still queued on the GPU at stop.
    x = torch.ones(1 << 24, device="cuda")
    torch.cuda.synchronize()
    start("unsynced")
    with smppy.annotate("unsynced"):
        launches(x, UNSYNCED_LAUNCHES)
    profiler.stop_profiling()
    torch.cuda.synchronize()

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        launches(x, PHASE_LAUNCHES)
        torch.cuda.synchronize()
    start("after_profiler")
    with smppy.annotate("after_profiler"):
        launches(x, PHASE_LAUNCHES)
    torch.cuda.synchronize()
    profiler.stop_profiling()

    start("profiler_inside")
    with smppy.annotate("before_profiler"):
        launches(x, PHASE_LAUNCHES)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as torch_profile:
        with smppy.annotate("profiler_inside"):
            launches(x, PHASE_LAUNCHES)
        torch.cuda.synchronize()
    with smppy.annotate("after_profiler_inside"):
        launches(x, PHASE_LAUNCHES)
    torch.cuda.synchronize()
    profiler.stop_profiling()
    truth["torch_profiler_kernels"] = sum(
        1 for e in torch_profile.events() if e.device_type == torch.autograd.DeviceType.CUDA
    )
    (Path(directory) / TORCH_TRUTH).write_text(json.dumps(truth))
    print(f"torch.profiler saw {truth['torch_profiler_kernels']} GPU events while a session ran")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("train").add_argument("directory")
    check = sub.add_parser("check")
    check.add_argument("truth", help="examples/cuda's ground truth JSON, or why there is none (a FAIL row)")
    check.add_argument("--torch")
    args = parser.parse_args()
    if args.command == "train":
        train(args.directory)
        return 0
    if Path(args.truth).is_file():
        check_app(json.loads(Path(args.truth).read_text()))
    else:  # gpu_check.sh passes why examples/cuda did not run
        row("cuda_app: ran and printed its ground truth", False, args.truth)
    if args.torch:
        check_torch(args.torch)
    width = max(len(name) for name, _, _ in ROWS)
    for name, ok, detail in ROWS:
        print(f"{'PASS' if ok else 'FAIL'}  {name:<{width}}  {detail}")
    failed = sum(not ok for _, ok, _ in ROWS)
    print(f"gpu_check: {len(ROWS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
