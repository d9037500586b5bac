#!/usr/bin/env python3
"""Trace bytes per event of a real PyTorch CPU training loop under smppy, next to torch.profiler.

    python3 bench/trace_size.py            # 200 steps, 7 passes, about 25 s
    python3 bench/trace_size.py --quick    # 50 steps, 1 pass: a smoke run of a few seconds

Trains a small MLP on synthetic data (made here, no download), one thread,
six annotations per step: ``step`` (``with smppy.annotate``) around ``data``
(begin/end), ``forward`` (with), ``loss`` (begin/end), ``backward`` (with)
and ``optimizer`` (begin/end). Each pass runs the loop three ways, in turn:
without a profiler, under smppy, and under torch.profiler (CPU activity, the
same six names as ``record_function``, Chrome trace exported to a temporary
directory). All files are written under a temporary directory, removed at exit.

Reported: the smppy trace's bytes on disk, the annotation events read back
with ``smppy.analysis.trace`` (checked against the footer), bytes per event overall
and net of an empty session's file (header and footer), and the same for the
torch.profiler Chrome trace (raw and gzipped). Step times are medians over
every step of every pass; each pass runs the three variants in a rotated
order, and the ratio is each pass's median step time over that of the
unprofiled loop in the same pass (median over passes, with min and max).
Last, plain and annotated steps alternate inside one smppy session, which
isolates the annotations' own cost from drifts of the machine; two series of
plain steps in the same rotation show the noise floor of that comparison, and
the six annotations timed with nothing inside them show their cost alone. Nothing is
asserted.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field

import smppy
import torch
import torch.nn as nn
from bench_common import PHASES, ChromeTrace, Trainer, machine_line, measure_chrome_trace
from smppy.analysis.trace import find_trace_files, open_trace
from torch.profiler import ProfilerActivity

NAMES = PHASES
FEATURES, HIDDEN, CLASSES, BATCH = 32, 256, 8, 64


class MlpTrainer(Trainer):
    """The MLP, its optimizer and a fixed pool of synthetic batches."""

    def __init__(self, batches: int = 64, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        teacher = torch.randn(FEATURES, CLASSES, generator=g)
        xs = torch.randn(batches, BATCH, FEATURES, generator=g)
        torch.manual_seed(seed)
        model = nn.Sequential(
            nn.Linear(FEATURES, HIDDEN),
            nn.ReLU(),
            nn.Linear(HIDDEN, HIDDEN),
            nn.ReLU(),
            nn.Linear(HIDDEN, CLASSES),
        )
        super().__init__(
            model,
            [(x, (x @ teacher).argmax(dim=1)) for x in xs],
            nn.CrossEntropyLoss(),
            torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9),
        )

    def run_alternating(self, steps: int) -> tuple[list[int], list[int], list[int]]:
        """Two plain steps and one annotated step, in an order that rotates, over and
        over, so that all three see the same machine state. The two plain series
        give the method's own noise (an A/A comparison)."""
        series: tuple[list[int], list[int], list[int]] = ([], [], [])
        runs = (self.run_plain, self.run_plain, self.run_smppy)
        for i in range(steps):
            for j in range(3):
                k = (i + j) % 3
                series[k].extend(runs[k](1))
        return series

    @staticmethod
    def run_annotations_only(steps: int) -> list[int]:
        """The six annotations of a step with nothing inside them."""
        times = []
        for _ in range(steps):
            t0 = time.perf_counter_ns()
            with smppy.annotate("step"):
                h = smppy.annotation_begin("data")
                smppy.annotation_end(h)
                with smppy.annotate("forward"):
                    pass
                h = smppy.annotation_begin("loss")
                smppy.annotation_end(h)
                with smppy.annotate("backward"):
                    pass
                h = smppy.annotation_begin("optimizer")
                smppy.annotation_end(h)
            times.append(time.perf_counter_ns() - t0)
        return times


@dataclass
class SmppyTrace:
    bytes: int = 0
    files: int = 0
    events: int = 0
    frames: int = 0
    footer_written: int = 0
    dropped: int = 0
    names: set[str] = field(default_factory=set)


def smppy_session(directory: str, body) -> list[int]:
    profiler = smppy.SMProfiler.instance()
    profiler.configure(
        {
            "RecordFile": os.path.join(directory, "rank%r_pid%p_%s.smprof"),
            "EnableCuda": "0",
            "EnablePerf": "0",
        }
    )
    profiler.start_profiling()
    if not profiler.is_profiling:
        sys.exit("trace_size: profiling did not start (is SMP_DISABLE set?)")
    try:
        return body()
    finally:
        profiler.stop_profiling()


def read_smppy_trace(directory: str) -> SmppyTrace:
    out = SmppyTrace()
    for path in find_trace_files(directory):
        out.files += 1
        out.bytes += os.path.getsize(path)
        trace = open_trace(path)
        for frame in trace.frames():
            out.frames += 1
            columns = frame["annotations"]
            out.events += len(columns["dur_ns"])
            out.names.update(columns["name"])
        if trace.problem:
            print(f"warning: {path}: {trace.problem}")
        if trace.footer is not None:
            out.footer_written += trace.footer["annotations_written"]
            out.dropped += trace.footer["annotations_dropped"]
    return out


def torch_session(directory: str, body) -> tuple[list[int], ChromeTrace]:
    with torch.profiler.profile(activities=[ProfilerActivity.CPU]) as prof:
        times = body()
    path = os.path.join(directory, "torch_trace.json")
    prof.export_chrome_trace(path)
    return times, measure_chrome_trace(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 steps, 1 pass")
    parser.add_argument("--steps", type=int, help="steps per pass (default 200, quick 50)")
    parser.add_argument("--passes", type=int, help="passes of the three variants (default 7, quick 1)")
    args = parser.parse_args()
    steps = args.steps or (50 if args.quick else 200)
    passes = args.passes or (1 if args.quick else 7)

    torch.set_num_threads(1)
    print(
        f"trace_size: smppy {smppy.__version__}, torch {torch.__version__}, "
        f"Python {platform.python_version()}, {steps} steps x {passes} passes, "
        f"MLP {FEATURES}-{HIDDEN}-{HIDDEN}-{CLASSES}, batch {BATCH}, 1 thread"
    )
    print(machine_line())

    trainer = MlpTrainer()
    trainer.run_plain(20)  # warm-up: allocator, autograd, optimizer state
    # Step times per variant, one list per pass.
    step_ns: dict[str, list[list[int]]] = {"none": [], "smppy": [], "torch": []}
    with tempfile.TemporaryDirectory(prefix="smprof-tracesize-") as tmp:
        empty_dir = os.path.join(tmp, "empty")
        smppy_session(empty_dir, lambda: [])
        empty_bytes = sum(os.path.getsize(p) for p in find_trace_files(empty_dir))

        smppy_traces: list[SmppyTrace] = []
        torch_traces: list[ChromeTrace] = []

        def run_none(p: int) -> None:
            step_ns["none"].append(trainer.run_plain(steps))

        def run_smppy(p: int) -> None:
            d = os.path.join(tmp, f"smppy{p}")
            step_ns["smppy"].append(smppy_session(d, lambda: trainer.run_smppy(steps)))
            smppy_traces.append(read_smppy_trace(d))

        def run_torch(p: int) -> None:
            d = os.path.join(tmp, f"torch{p}")
            os.makedirs(d)
            times, trace = torch_session(d, lambda: trainer.run_torch(steps))
            step_ns["torch"].append(times)
            torch_traces.append(trace)

        variants = [run_none, run_smppy, run_torch]
        for p in range(passes):
            for i in range(len(variants)):  # rotate the order from pass to pass
                variants[(p + i) % len(variants)](p)
        # Annotation overhead alone: plain and annotated steps alternate in
        # one session, so that drifts of the machine hit both alike.
        plain_a, plain_b, annotated = smppy_session(
            os.path.join(tmp, "alternating"), lambda: trainer.run_alternating(steps * passes)
        )
        only = smppy_session(os.path.join(tmp, "only"), lambda: trainer.run_annotations_only(steps * passes))

    s, t = smppy_traces[-1], torch_traces[-1]
    expected = steps * len(NAMES)
    print()
    print(f"smppy trace (last pass; {s.files} file, {s.frames} frame(s)):")
    print(f"  bytes on disk                         {s.bytes:>10,d}")
    print(f"  annotation events read back           {s.events:>10,d}   (expected {expected:,d})")
    print(f"  footer: written / dropped             {s.footer_written:>10,d} / {s.dropped}")
    print(f"  bytes per event                       {s.bytes / max(1, s.events):>10.2f}")
    print(f"  empty session file (header+footer)    {empty_bytes:>10,d}")
    print(f"  bytes per event, net of empty file    {(s.bytes - empty_bytes) / max(1, s.events):>10.2f}")
    if sorted(s.names) != sorted(NAMES):
        print(f"  warning: names read back {sorted(s.names)} != {sorted(NAMES)}")
    sizes = sorted(x.bytes for x in smppy_traces)
    print(f"  bytes on disk over all passes         min {sizes[0]:,d}, max {sizes[-1]:,d}")
    print()
    print("torch.profiler Chrome trace (last pass; CPU ops + record_function):")
    print(f"  bytes (JSON)                          {t.bytes:>10,d}")
    print(f"  bytes (JSON, gzip -6)                 {t.gz_bytes:>10,d}")
    print(f"  complete events (ops + annotations)   {t.complete:>10,d}")
    print(f"    of which user_annotation            {t.annotations:>10,d}   (ours + torch's Optimizer.*)")
    print(f"  bytes per event (JSON)                {t.bytes / max(1, t.complete):>10.2f}")
    print(f"  bytes per event (gzip)                {t.gz_bytes / max(1, t.complete):>10.2f}")
    print()
    ours = s.bytes / max(1, s.events)
    print(f"bytes per event, torch JSON / smppy:    {(t.bytes / t.complete) / ours:10.1f}x")
    print(f"bytes per event, torch gzip / smppy:    {(t.gz_bytes / t.complete) / ours:10.1f}x")
    print(f"trace bytes, torch JSON / smppy:        {t.bytes / s.bytes:10.1f}x   (torch also records ops)")
    print()
    # Each pass's median step time against the unprofiled loop of the same pass.
    none_medians = [statistics.median(v) for v in step_ns["none"]]
    print(
        f"{'step time':<34} {'median us':>10} {'p10 us':>8} {'p90 us':>8} "
        f"{'vs none, per pass: median [min, max]':>38}"
    )
    for name, label in (
        ("none", "no profiler"),
        ("smppy", "smppy, 6 annotations/step"),
        ("torch", "torch.profiler, 6 record_function"),
    ):
        v = sorted(x for run in step_ns[name] for x in run)
        med = statistics.median(v)
        p10, p90 = v[len(v) // 10], v[(len(v) * 9) // 10]
        ratios = [statistics.median(run) / base for run, base in zip(step_ns[name], none_medians)]
        print(
            f"{label:<34} {med / 1e3:10.1f} {p10 / 1e3:8.1f} {p90 / 1e3:8.1f} "
            f"{statistics.median(ratios):18.3f}x [{min(ratios):.3f}, {max(ratios):.3f}]"
        )
    print(f"({steps} steps x {passes} passes per variant, order rotated per pass)")
    mp, ma = statistics.median(plain_a + plain_b), statistics.median(annotated)
    aa = statistics.median(plain_b) - statistics.median(plain_a)
    print()
    print(f"alternating steps in one smppy session ({len(annotated)} annotated, {2 * len(plain_a)} plain):")
    print(f"  median step, plain / annotated        {mp / 1e3:10.1f} / {ma / 1e3:.1f} us")
    print(f"  annotated / plain                     {ma / mp:10.3f}x   ({(ma - mp) / 1e3:+.1f} us per step)")
    print(f"  noise floor: plain B - plain A        {aa / 1e3:+10.1f} us per step")
    print(f"  the six annotations alone             {statistics.median(only) / 1e3:10.1f} us per step")
    print("Nothing is asserted.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
