"""``smprof export JOB --steps A-B`` under two builds, runs interleaved (issue 27): wall seconds and
peak RSS (``wait4``, the largest of the process and the workers it waited for) of each fresh
interpreter, medians. Without ``--job``, writes an 8-rank synthetic job (export_benchmark.py's
frames, every 64th annotation a ``step``) of ``--events`` per rank, with the build on PYTHONPATH.

    PYTHONPATH=build-b/python python3 bench/export_steps_benchmark.py \\
        before=build-a/python after=build-b/python [--job DIR] [--steps 40-42] [--runs 5] \\
        [--export-args='--ranks 0,2 --jobs 2']
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import export_benchmark


def synthetic_job(directory: Path, events: int) -> Path:
    export_benchmark.NAMES[0] = "step"  # numbered by its ordinal in the rank's stream
    for rank in range(8):
        export_benchmark.write_trace(directory, events, rank=rank, world_size=8)
    return directory


def run_once(pythonpath: str, job: Path, steps: str, out: Path, extra: list[str]) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": pythonpath, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "smppy.cli", "export", str(job), "--format", "chrome", "--steps", steps,
               "-o", str(out), *extra]  # fmt: skip
    start = time.perf_counter()
    # stderr: the synthetic files' footers count no frames, a warning per file and run.
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{' '.join(command)} failed ({status})")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("builds", nargs="+", help="NAME=PYTHONPATH of a staged build (scripts/dev_python.sh)")
    parser.add_argument("--job", type=Path, help="a recorded job (default: the synthetic 8-rank job)")
    parser.add_argument("--events", type=int, default=2_000_000, help="per rank of the synthetic job")
    parser.add_argument("--steps", default="40-42")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--export-args", default="", help="more arguments of smprof export, e.g. '--jobs 2'")
    args = parser.parse_args()
    extra = args.export_args.split()
    builds = dict(b.split("=", 1) for b in args.builds)
    with tempfile.TemporaryDirectory() as tmp:
        job = args.job or synthetic_job(Path(tmp) / "job", args.events)
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in builds}
        for _ in range(args.runs):
            for name, path in builds.items():
                results[name].append(run_once(path, job, args.steps, Path(tmp) / f"{name}.json.gz", extra))
    for name, rows in results.items():
        walls = sorted(r[0] for r in rows)
        rss = sorted(r[1] for r in rows)
        print(
            f"{name}: wall s {statistics.median(walls):.2f} ({walls[0]:.2f}-{walls[-1]:.2f}), "
            f"peak RSS MiB {statistics.median(rss):.0f} ({rss[0]:.0f}-{rss[-1]:.0f}), {len(rows)} runs"
        )


if __name__ == "__main__":
    main()
