#!/usr/bin/env python3
"""Time and peak memory of ``smprof report`` on big synthetic traces: 1 M against 10 M events.

    python3 bench/report_benchmark.py            # 1 M and 10 M events, about 3 min
    python3 bench/report_benchmark.py --quick    # 20 k and 200 k events: a smoke run of seconds

Writes a two-rank job with the real TraceWriter (bench/synthetic_trace.py): each step is a
``step`` annotation around four phases, four kernels (names drawn from 200) and a HtoD copy, each
launched by an API call under the step's annotation, so every event table the report reads is
full. Events counted: annotation, GPU activity and API call rows. The frames repeat one template
of 1,000 steps, shifted in time, with fresh correlation ids.

Each measurement runs in a fresh interpreter and reports its wall time and peak RSS
(``ru_maxrss``): the baseline (importing smppy.report and reading plotly.js: what any report
costs), ``summarize()`` alone, and the whole report (summarize, render, write). The ratios
compare the large trace with the small one: time should grow with the events, memory above the
baseline should not (it is bounded by the aggregates: distinct names, steps, GPUs, buckets).
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS_PER_FRAME = 1_000
STEP_NS = 2_000_000
KERNEL_NAMES = [f"void gemm_kernel_{i}<float, {i % 7}>(Params)" for i in range(200)]
PHASES = ("Forward", "Loss", "Backward", "Optimizer")
# Per step: the step and its phases, 4 kernels and a copy, and their 5 launches.
EVENTS_PER_STEP = 1 + len(PHASES) + 5 + 5


def _template_frame(st):
    """STEPS_PER_FRAME steps from time 0, correlation ids from 1."""
    frame = st.pb().Frame()
    st.string_index(frame, "")  # index 0 is "", as the writer's string tables have it
    tid = 1000
    annotations, gpu, api = [], [], []
    for step in range(STEPS_PER_FRAME):
        start = step * STEP_NS
        annotations.append((start, STEP_NS - 10_000, "step", tid, 0))
        for i, phase in enumerate(PHASES):
            annotations.append((start + 10_000 + i * 400_000, 350_000, phase, tid, 1))
        for i in range(5):
            correlation = step * 5 + i + 1
            launch = start + 20_000 + i * 380_000
            copy = i == 4
            api.append((launch, 4_000, "cudaMemcpyAsync" if copy else "cudaLaunchKernel", tid, correlation))
            row = {"start": launch + 15_000, "dur": 300_000, "correlation_id": correlation}
            if copy:
                row.update(kind=2, name="Memcpy HtoD", copy_kind=1, bytes=1 << 20)
            else:
                row.update(kind=1, name=KERNEL_NAMES[(step * 4 + i) % len(KERNEL_NAMES)], precision=2 + i % 4)
            gpu.append(row)
    st.add_annotations(frame, annotations)
    st.add_api_calls(frame, api)
    st.add_gpu_activities(frame, gpu)
    ext = frame.external_correlations
    ext.correlation_id.extend(r["correlation_id"] for r in gpu)
    ext.external_id.extend(r["correlation_id"] for r in gpu)
    ext.external_kind.extend(5 for _ in gpu)  # CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2: smprof's own
    ext.name_index.extend(st.string_index(frame, "step") for _ in gpu)
    return frame


def _correlation_columns(frame):
    return (
        frame.gpu.correlation_id,
        frame.api_calls.correlation_id,
        frame.external_correlations.correlation_id,
    )


def _frames(template, count: int):
    """``count`` copies of ``template``, each after the previous one, with its own correlation ids."""
    originals = [list(column) for column in _correlation_columns(template)]
    for i in range(count):
        frame = type(template)()
        frame.CopyFrom(template)
        frame.sequence = i
        for table in (frame.annotations, frame.gpu, frame.api_calls):
            table.base_ns += i * STEPS_PER_FRAME * STEP_NS
        for column, original in zip(_correlation_columns(frame), originals):
            del column[:]
            column.extend(c + i * STEPS_PER_FRAME * 5 for c in original)
        yield frame


def write_job(directory: Path, events: int, ranks: int = 2) -> int:
    """Writes ``ranks`` ranks' files (one host each) of about ``events`` events in all;
    returns the exact count."""
    import synthetic_trace as st

    template = _template_frame(st)
    frames = max(1, round(events / (ranks * STEPS_PER_FRAME * EVENTS_PER_STEP)))
    for rank in range(ranks):
        header = st.header(host=f"host-{rank}", rank=rank, world_size=ranks, job="bench", realtime_ns=10**18)
        footer = st.pb().Footer(frames_written=frames)
        footer.stop.monotonic_ns = frames * STEPS_PER_FRAME * STEP_NS
        st.write_trace(
            directory / f"host-{rank}" / f"rank{rank}.smprof", header, _frames(template, frames), footer
        )
    return ranks * frames * STEPS_PER_FRAME * EVENTS_PER_STEP


def _measure_here(what: str, trace: str, out: str) -> None:
    """In a fresh interpreter: runs one measurement and prints its JSON line."""
    from smppy.report.html_document import plotly_bundle

    plotly_bundle()  # the baseline's work: what every report pays before reading a trace
    started, cpu_started = time.perf_counter(), time.process_time()
    if what == "summarize":
        from smppy import analysis

        analysis.summarize(trace)
    elif what == "report":
        from smppy.report import write_report

        write_report(trace, out)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu_seconds, "peak_rss_bytes": peak}))


def measure(what: str, trace: Path, out: Path) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, __file__, "--measure", what, str(trace), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def _spread(values: list[float], unit: float, fmt: str) -> str:
    """The median, with min-max when there are several values."""
    values = sorted(v / unit for v in values)
    median = format(_median(values), fmt)
    return median if len(values) == 1 else f"{median} ({values[0]:{fmt}}-{values[-1]:{fmt}})"


MB = 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 k and 200 k events, one repetition")
    parser.add_argument("--repeat", type=int, default=None, help="runs per measurement (default 3; quick 1)")
    parser.add_argument("--measure", nargs=3, metavar=("WHAT", "TRACE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        _measure_here(*args.measure)
        return
    sizes = (20_000, 200_000) if args.quick else (1_000_000, 10_000_000)
    repeat = args.repeat or (1 if args.quick else 3)
    print(f"machine: {os.cpu_count()} cpus, python {sys.version.split()[0]}; {repeat} run(s) per measurement")
    with tempfile.TemporaryDirectory(prefix="smprof-report-bench-") as tmp:
        root = Path(tmp)
        out = root / "report.html"
        base_rss = _median([measure("baseline", root, out)["peak_rss_bytes"] for _ in range(repeat)])
        print(f"baseline (interpreter, smppy.report, plotly.js read): peak RSS {base_rss / MB:.0f} MB")
        print("times in s, sizes in MB: median (min-max); events/s per CPU second of the report")
        print(
            f"{'events':>10} {'trace MB':>8} {'summarize s':>18} {'report s':>18} {'report CPU s':>18}"
            f" {'M events/s':>10} {'peak RSS MB':>12} {'above baseline':>14} {'report MB':>9}"
        )
        results = []
        for wanted in sizes:
            trace = root / f"job-{wanted}"
            events = write_job(trace, wanted)
            trace_mb = sum(f.stat().st_size for f in trace.rglob("*.smprof")) / MB
            summarize = [measure("summarize", trace, out)["seconds"] for _ in range(repeat)]
            runs = [measure("report", trace, out) for _ in range(repeat)]
            seconds = [r["seconds"] for r in runs]
            cpu = [r["cpu_seconds"] for r in runs]
            rss = [r["peak_rss_bytes"] for r in runs]
            above = _median(rss) - base_rss
            results.append((events, _median(cpu), above))
            print(
                f"{events:>10,} {trace_mb:>8.1f} {_spread(summarize, 1, '.2f'):>18}"
                f" {_spread(seconds, 1, '.2f'):>18} {_spread(cpu, 1, '.2f'):>18}"
                f" {events / _median(cpu) / 1e6:>10.2f} {_spread(rss, MB, '.0f'):>12}"
                f" {above / MB:>14.0f} {out.stat().st_size / MB:>9.2f}"
            )
            shutil.rmtree(trace)
    (small, t_small, m_small), (large, t_large, m_large) = results
    print(
        f"ratio {large:,} / {small:,} events: report CPU time {t_large / t_small:.2f}x, peak RSS above the"
        f" baseline {m_large / max(m_small, 1):.2f}x ({m_small / MB:.0f} -> {m_large / MB:.0f} MB)"
    )


if __name__ == "__main__":
    main()
