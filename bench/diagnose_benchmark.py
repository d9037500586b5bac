#!/usr/bin/env python3
"""What ``smprof diagnose`` costs against ``smprof summary`` on the same job (docs/DIAGNOSE.md).

    python3 bench/diagnose_benchmark.py            # 1 M events, 5 runs each
    python3 bench/diagnose_benchmark.py --quick    # 200 k events, 3 runs each
    python3 bench/diagnose_benchmark.py --baseline-pythonpath DIR   # also the summary of another build


Writes the two-rank job of bench/report_benchmark.py (a ``step`` around four phases, kernels,
copies and launches; the real TraceWriter) and runs, each in a fresh interpreter, the two
commands as a user does: ``smprof summary --json`` and ``smprof diagnose --json`` (output
discarded), alternating, and ``summarize()`` alone with the detectors timed apart. With
``--baseline-pythonpath``, ``smprof summary --json`` of the smppy importable from that path (a
build of the code before diagnosis, whose summary had no ``step_profile`` and no findings) runs
in the same rotation. Prints the medians and the ratios diagnose / summary (the issue's bound:
at most 1.5x). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report_benchmark import write_job


def _command_seconds(command: str, trace: Path, pythonpath: str | None = None) -> float:
    env = {**os.environ, "PYTHONPATH": pythonpath} if pythonpath else None
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "smppy.cli", command, "--json", str(trace)],
        stdout=subprocess.DEVNULL,
        check=True,
        env=env,
    )
    return time.perf_counter() - started


def _split_here(trace: str) -> None:
    """In a fresh interpreter: summarize() and the detectors on its dict, timed apart."""
    from smppy import analysis
    from smppy.diagnose import diagnose

    started = time.perf_counter()
    summary = analysis.summarize(trace)
    summarized = time.perf_counter()
    findings = diagnose(summary)
    print(
        json.dumps(
            {
                "summarize_s": summarized - started,
                "detectors_s": time.perf_counter() - summarized,
                "findings": len(findings),
            }
        )
    )


def _split(trace: Path) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, __file__, "--split", str(trace)], capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 k events, 3 runs")
    parser.add_argument("--events", type=int, default=None)
    parser.add_argument("--baseline-pythonpath", help="PYTHONPATH of a baseline build's smppy")
    parser.add_argument("--split", metavar="TRACE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.split:
        _split_here(args.split)
        return
    events = args.events or (200_000 if args.quick else 1_000_000)
    repeat = 3 if args.quick else 5
    print(f"machine: {os.cpu_count()} cpus, python {sys.version.split()[0]}; {repeat} runs each")
    with tempfile.TemporaryDirectory(prefix="smprof-diagnose-bench-") as tmp:
        trace = Path(tmp) / "job"
        written = write_job(trace, events)
        summary, diagnose, baseline = [], [], []
        for _ in range(repeat):  # alternating, so drifts in the machine's load hit all alike
            summary.append(_command_seconds("summary", trace))
            diagnose.append(_command_seconds("diagnose", trace))
            if args.baseline_pythonpath:
                baseline.append(_command_seconds("summary", trace, args.baseline_pythonpath))
        splits = [_split(trace) for _ in range(repeat)]
    s, d = _median(summary), _median(diagnose)
    print(f"{written:,} events, 2 ranks")
    print(f"smprof summary --json:  {s:.2f} s (median; {min(summary):.2f}-{max(summary):.2f})")
    print(f"smprof diagnose --json: {d:.2f} s (median; {min(diagnose):.2f}-{max(diagnose):.2f})")
    print(
        f"in one interpreter: summarize() {_median([x['summarize_s'] for x in splits]):.3f} s, "
        f"the detectors {_median([x['detectors_s'] for x in splits]):.3f} s, "
        f"{splits[0]['findings']} finding(s)"
    )
    print(f"ratio diagnose / summary: {d / s:.2f}x (bound 1.5x)")
    if baseline:
        b = _median(baseline)
        print(f"baseline smprof summary --json: {b:.2f} s (median; {min(baseline):.2f}-{max(baseline):.2f})")
        print(f"ratio diagnose / baseline summary: {d / b:.2f}x; summary / baseline summary: {s / b:.2f}x")


if __name__ == "__main__":
    main()
