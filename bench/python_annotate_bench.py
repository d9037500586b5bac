#!/usr/bin/env python3
"""What one Python annotation costs, against a no-op ``with`` and torch's record_function.

    python3 bench/python_annotate_bench.py            # full run, about 20 s
    python3 bench/python_annotate_bench.py --quick    # smoke run, a few seconds
    python3 bench/python_annotate_bench.py --cpu-time # timed by the thread's CPU time

Each case is a statement timed in a loop (``timeit``, garbage collection off)
for a calibrated number of iterations, many repetitions; the repetitions of all
cases are interleaved so that noise on a shared machine spreads over all of
them. The table gives the median ns per iteration, the spread of the
repetitions (min, quartiles, max) and the ratio of the median to the no-op
``with`` measured in the same run.

Cases that profile run each repetition in a session of their own: smppy
writing into a temporary directory (removed at exit), torch.profiler with CPU
activity and no trace export. Stopping a session is not timed. Targets are
printed for reference and never asserted: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
import timeit
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import smppy
import torch
from bench_common import machine_line
from torch.profiler import ProfilerActivity


class Noop:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


@dataclass
class Case:
    name: str
    stmt: str
    session: str | None  # None, "smppy" or "torch"
    number: int = 0  # iterations per repetition, calibrated
    ns: list[float] = field(default_factory=list)
    written: int = 0
    dropped: int = 0
    expected: int = 0


CASES = [
    Case("loop overhead (pass)", "pass", None),
    Case("with Noop():", "with Noop():\n    pass", None),
    Case('with smppy.annotate("x"): not profiling', 'with smppy.annotate("x"):\n    pass', None),
    Case('with smppy.annotate("x"): profiling', 'with smppy.annotate("x"):\n    pass', "smppy"),
    Case(
        "smppy.annotation_begin/end: profiling",
        'h = smppy.annotation_begin("x"); smppy.annotation_end(h)',
        "smppy",
    ),
    Case(
        'with record_function("x"): torch profiling',
        'with torch.profiler.record_function("x"):\n    pass',
        "torch",
    ),
]
NOOP, ANNOTATE_OFF, ANNOTATE_ON, BEGIN_END, RECORD_FUNCTION = CASES[1:]

STMT_GLOBALS = {"Noop": Noop, "smppy": smppy, "torch": torch}


class Sessions:
    """Starts and stops the profiling session a case needs around one repetition."""

    def __init__(self, tmpdir: str) -> None:
        self.tmpdir = tmpdir
        self.profiler = smppy.SMProfiler.instance()

    @contextmanager
    def around(self, case: Case, number: int) -> Iterator[None]:
        if case.session == "smppy":
            # Room for every range of the repetition twice over (32 B records).
            bucket_mb = max(4, (number * 32 * 2 // (1 << 20) + 1 + 15) // 16)
            self.profiler.configure(
                {
                    "RecordFile": os.path.join(self.tmpdir, "bench_%s.smprof"),
                    "BucketCount": "16",
                    "BucketSizeMB": str(bucket_mb),
                    "EnableCuda": "0",
                    "EnablePerf": "0",
                }
            )
            self.profiler.start_profiling()
            if not self.profiler.is_profiling:
                sys.exit("python_annotate_bench: profiling did not start (is SMP_DISABLE set?)")
            try:
                yield
            finally:
                self.profiler.stop_profiling()
                stats = self.profiler.last_session()
                os.remove(stats["path"])
                case.written += stats["annotations_written"]
                case.dropped += stats["annotations_dropped"]
        elif case.session == "torch":
            # No on_trace_ready and no export: nothing is written anywhere.
            with torch.profiler.profile(activities=[ProfilerActivity.CPU]):
                yield
        else:
            yield


def time_once(case: Case, number: int, sessions: Sessions, clock: Callable[[], float]) -> float:
    """ns per iteration, timed by ``clock``: the wall clock, or the thread's CPU
    time (--cpu-time), which a loaded machine's preemption does not inflate."""
    timer = timeit.Timer(case.stmt, timer=clock, globals=STMT_GLOBALS)
    with sessions.around(case, number):
        seconds = timer.timeit(number)
    return seconds * 1e9 / number


def calibrate(
    case: Case, target_s: float, sessions: Sessions, max_number: int, clock: Callable[[], float]
) -> None:
    """Picks the iterations per repetition so that one takes about ``target_s``."""
    probe = 2000
    ns = time_once(case, probe, sessions, clock)
    case.number = int(min(max_number, max(probe, target_s * 1e9 / ns)))


def check_torch_records() -> int:
    """Number of "x" events torch recorded for 10 record_function scopes (expect 10)."""
    with torch.profiler.profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(10):
            with torch.profiler.record_function("x"):
                pass
    return sum(1 for e in prof.events() if e.name == "x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    parser.add_argument("--reps", type=int, help="repetitions per case (default 25, quick 5)")
    parser.add_argument("--target-ms", type=float, help="time per repetition (default 40, quick 8)")
    parser.add_argument(
        "--cpu-time", action="store_true", help="time by the thread's CPU time, not the wall clock"
    )
    args = parser.parse_args()
    clock = time.thread_time if args.cpu_time else time.perf_counter
    reps = args.reps or (5 if args.quick else 25)
    target_s = (args.target_ms or (8.0 if args.quick else 40.0)) / 1000

    print(
        f"python_annotate_bench: smppy {smppy.__version__}, torch {torch.__version__}, "
        f"Python {platform.python_version()}, {'quick' if args.quick else 'full'} mode, "
        f"{reps} repetitions of ~{target_s * 1000:.0f} ms per case, "
        f"timed by {'thread CPU time' if args.cpu_time else 'wall clock'}"
    )
    print(machine_line())
    torch_events = check_torch_records()
    if torch_events != 10:
        print(f"warning: torch.profiler recorded {torch_events} of 10 record_function scopes")

    with tempfile.TemporaryDirectory(prefix="smprof-pybench-") as tmpdir:
        sessions = Sessions(tmpdir)
        for case in CASES:  # also the warm-up: names interned, chunks paged in
            # torch keeps every event in memory until the profile stops; cap it.
            calibrate(case, target_s, sessions, 50_000 if case.session == "torch" else 2_000_000, clock)
            case.written = case.dropped = 0
        for _ in range(reps):
            for case in CASES:
                case.ns.append(time_once(case, case.number, sessions, clock))
                if case.session == "smppy":
                    case.expected += case.number

    base = statistics.median(NOOP.ns)
    print()
    print(
        f"{'case':<44} {'median':>8} {'min':>8} {'p25':>8} {'p75':>8} {'max':>8} {'ratio vs':>9} "
        f"{'iters':>8}  recorded/dropped"
    )
    print(f"{'':<44} {'ns/op':>8} {'':>8} {'':>8} {'':>8} {'':>8} {'noop with':>9} {'per rep':>8}")
    for case in CASES:
        med = statistics.median(case.ns)
        p25, _, p75 = statistics.quantiles(case.ns, n=4, method="inclusive")
        counts = "-"
        if case.session == "smppy":
            counts = f"{case.written}/{case.dropped}"
            if case.written != case.expected:
                counts += f" (expected {case.expected})"
        print(
            f"{case.name:<44} {med:8.1f} {min(case.ns):8.1f} {p25:8.1f} {p75:8.1f} {max(case.ns):8.1f} "
            f"{med / base:8.2f}x {case.number:8d}  {counts}"
        )
    print("(every row includes the loop overhead of the first; nothing is subtracted)")

    on = statistics.median(ANNOTATE_ON.ns)
    off = statistics.median(ANNOTATE_OFF.ns)
    pair = statistics.median(BEGIN_END.ns)
    rf = statistics.median(RECORD_FUNCTION.ns)
    print()
    for label, ratio, target, met in (
        ("annotate (profiling) / no-op with:", on / base, "<= 1.3x", on / base <= 1.3),
        ("annotation_begin/end / no-op with:", pair / base, "<= 1.5x", pair / base <= 1.5),
        ("annotate (not profiling) / no-op with:", off / base, "", None),
        ("record_function (torch) / annotate (on):", rf / on, ">= 5x", rf / on >= 5),
    ):
        verdict = "" if met is None else f"target {target}  ({'met' if met else 'MISSED'})"
        print(f"{label:<42}{ratio:6.2f}x   {verdict}")
    print("Medians of the same run. Targets are reported, not asserted.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
