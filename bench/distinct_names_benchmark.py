#!/usr/bin/env python3
"""Peak memory of the readers (``smprof info``, ``summary``, ``report``) against the number of
distinct annotation names, and the size of the report page (issue 32, item 8).

    python3 bench/distinct_names_benchmark.py           # 1 k, 10 k, 100 k and 200 k names, about 1 min
    python3 bench/distinct_names_benchmark.py --quick   # 1 k and 10 k: a smoke run of seconds

Each job is one real profiled process (``smppy.annotate``): 20 ``step_N`` annotations, with the
names ``layer_<i>.forward`` spread over them, each opened once. Each command runs in a fresh
interpreter (``python -m smppy.cli``), measured by ``os.wait4``'s ``ru_maxrss``; the baseline is
an interpreter that imports the command line and exits, in the same run. Printed: peak RSS above
the baseline, its ratio to the smallest job's, and KiB per distinct name. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

WRITER = """
import smppy, sys
names, out = int(sys.argv[1]), sys.argv[2]
c = smppy.Config(); c.profiler = {"RecordFile": out + "/trace.smprof", "EnablePerf": "0"}
p = smppy.SMProfiler.instance(); p.configure(c); p.start_profiling()
for step in range(20):
    with smppy.annotate(f"step_{step}"):
        for i in range(step * names // 20, (step + 1) * names // 20):
            with smppy.annotate(f"layer_{i}.forward"):
                pass
p.stop_profiling()
"""


def peak_rss_bytes(argv: list[str]) -> int:
    """Runs argv to its end (stdout discarded) and returns its peak RSS."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr.read().decode()[-500:]}")
    proc.stderr.close()
    return usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 k and 10 k names: a smoke run")
    args = parser.parse_args()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000, 200_000]
    cli = [sys.executable, "-m", "smppy.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        baseline = peak_rss_bytes([sys.executable, "-c", "import smppy.cli, smppy.report"])
        print(f"baseline (import smppy.cli, smppy.report): {baseline / 2**20:.0f} MiB peak RSS")
        print(f"{'names':>8} {'trace':>9} {'command':>8} {'peak-base':>10} {'x smallest':>10} {'KiB/name':>9}"
              f" {'page':>9}")  # fmt: skip
        first: dict[str, int] = {}
        for names in sizes:
            job = Path(tmp) / f"job{names}"
            job.mkdir()
            subprocess.run([sys.executable, "-c", textwrap.dedent(WRITER), str(names), str(job)], check=True)
            trace_bytes = sum(f.stat().st_size for f in job.iterdir())
            page = job.parent / f"report{names}.html"
            commands = {
                "info": cli + ["info", str(job)],
                "summary": cli + ["summary", str(job), "--jobs", "1"],
                "report": cli + ["report", str(job), "--jobs", "1", "-o", str(page)],
            }
            for what, argv in commands.items():
                above = max(0, peak_rss_bytes(argv) - baseline)
                first.setdefault(what, max(above, 1))
                page_text = f"{page.stat().st_size / 2**20:8.1f}M" if what == "report" else ""
                print(
                    f"{names:>8} {trace_bytes / 2**20:8.1f}M {what:>8} {above / 2**20:9.0f}M"
                    f" {above / first[what]:10.1f} {above / 1024 / names:9.2f} {page_text:>9}"
                )


if __name__ == "__main__":
    main()
