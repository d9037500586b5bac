"""Peak memory and rate of ``smprof export --format parquet`` on a small and a big job, against
``analysis.load()`` (which holds every table in memory) on the same traces in the same run.

Each job is recorded by a real session (one thread, ``N`` empty annotations); each measurement runs in a
fresh interpreter and reports its peak RSS (``ru_maxrss``). The export reads in batches of
``--batch-rows`` rows, so its peak should not grow with the job while load()'s does.

    python3 bench/parquet_export_benchmark.py            # 50 k and 1.5 M annotations
    python3 bench/parquet_export_benchmark.py --quick    # 20 k and 200 k
    python3 bench/parquet_export_benchmark.py --json     # one JSON object (the tests read it)
    python3 bench/parquet_export_benchmark.py --workers  # --jobs 1 against --jobs 2 on 8 ranks

``--workers``: an 8-rank synthetic job (report_benchmark.py's writer: steps, phases, kernels, copies and
their launches; 480 k events per rank, one frame with ``--quick``) exported with ``jobs=1`` (the baseline,
in this process) and ``jobs=2`` (two worker processes, one stream at a time each), in turn in this process:
wall seconds (median of 3 runs, 1 with ``--quick``), the speedup against the baseline of the same run, and
the peak RSS of the parent and of the largest worker (scale_benchmark.py's sampler). Every part file of each
export is compared with the first baseline's (the run fails on a difference).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RECORD = """
import smppy, sys
config = smppy.Config()
config.profiler = {"RecordFile": sys.argv[1] + "/rank%r_pid%p_s%s.smprof", "EnableCuda": "0",
                   "CpuProfilingDurationS": "0", "BucketCount": "64"}
profiler = smppy.SMProfiler.instance()
profiler.configure(config)
profiler.start_profiling()
for i in range(int(sys.argv[2])):
    with smppy.annotate("op"):
        pass
profiler.stop_profiling()
"""

MEASURE = """
import json, resource, sys, time
from smppy import analysis
from smppy.export.parquet import export_parquet
started = time.perf_counter()
if sys.argv[1] == "export":
    rows = export_parquet(sys.argv[2], sys.argv[3], tables=("annotations",),
                          batch_rows=int(sys.argv[4]))["rows"]["annotations"]
else:
    rows = len(analysis.load(sys.argv[2], tables=("annotations",)).annotations)
print(json.dumps({"rows": rows, "seconds": time.perf_counter() - started,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(code: str, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=Path(__file__).parent,  # the other benchmarks' modules are importable
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stdout + proc.stderr)
    return proc.stdout


def measure_job(work: Path, annotations: int, batch_rows: int) -> dict[str, dict]:
    """Records a job of ``annotations`` annotations under ``work``; its export's and load()'s numbers."""
    traces = work / f"job-{annotations}"
    traces.mkdir()
    run(RECORD, str(traces), str(annotations))
    export = json.loads(
        run(MEASURE, "export", str(traces), str(work / f"parquet-{annotations}"), str(batch_rows))
    )
    load = json.loads(run(MEASURE, "load", str(traces)))
    return {"export": export, "load": load}


def same_part_files(one: Path, other: Path) -> bool:
    """Whether the exports ``one`` and ``other`` hold the same part files with the same rows (read a pair
    at a time, so the parent's memory stays that of one file)."""
    import pyarrow.parquet as pq

    paths = sorted(path.relative_to(one) for path in one.rglob("*.parquet"))
    if paths != sorted(path.relative_to(other) for path in other.rglob("*.parquet")):
        return False
    return all(pq.read_table(one / path).equals(pq.read_table(other / path)) for path in paths)


def compare_workers(work: Path, quick: bool) -> None:
    """``jobs=1`` against ``jobs=2`` on an 8-rank job: wall time, speedup, peak RSS; same part files."""
    from report_benchmark import EVENTS_PER_STEP, STEPS_PER_FRAME
    from scale_benchmark import PeakMemory
    from smppy.export.parquet import export_parquet

    ranks = 8
    wanted = (1 if quick else 32) * ranks * STEPS_PER_FRAME * EVENTS_PER_STEP
    # In another interpreter, so that the writer's memory is not in this process's peak.
    writer = "import sys; from pathlib import Path; from report_benchmark import write_job; "
    writer += "print(write_job(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))"
    events = int(run(writer, str(work / "job"), str(wanted), str(ranks)))
    repeat = 1 if quick else 3
    seconds: dict[int, list[float]] = {1: [], 2: []}
    parents: dict[int, list[int]] = {1: [], 2: []}
    workers: dict[int, list[int]] = {1: [], 2: []}
    rows = 0
    for run_index in range(repeat):
        for jobs in seconds:  # interleaved: a change in the machine's load hits both alike
            out = work / f"parquet-{jobs}-{run_index}"
            with PeakMemory(set(), False) as peak:
                started = time.perf_counter()
                result = export_parquet(work / "job", out, jobs=jobs)
                seconds[jobs].append(time.perf_counter() - started)
            parents[jobs].append(peak.parent)
            workers[jobs].append(peak.worker if jobs > 1 else 0)
            rows = sum(result["rows"].values())
            baseline = work / "parquet-1-0"
            if out != baseline:
                if not same_part_files(baseline, out):
                    raise SystemExit(f"jobs={jobs}: the part files differ from the jobs=1 export")
                shutil.rmtree(out)
    baseline_seconds = statistics.median(seconds[1])
    print(f"{ranks} ranks, {events:,} events, {rows:,} rows: export --format parquet")
    print(f"{'jobs':>6}{'seconds':>10}{'speedup':>9}{'rows/s':>14}{'parent MiB':>12}{'worker MiB':>12}")
    for jobs, runs in seconds.items():
        median = statistics.median(runs)
        print(f"{jobs:>6}{median:>10.2f}{baseline_seconds / median:>8.2f}x{rows / median:>14,.0f}"
              f"{max(parents[jobs]) / 2**20:>12.0f}{max(workers[jobs]) / 2**20:>12.0f}")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 k and 200 k annotations")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--batch-rows", type=int, default=65_536)
    parser.add_argument("--workers", action="store_true", help="jobs=1 against jobs=2 on an 8-rank job")
    args = parser.parse_args()
    if args.workers:
        with tempfile.TemporaryDirectory(prefix="smprof-parquet-bench-") as work:
            compare_workers(Path(work), args.quick)
        return 0
    sizes = (20_000, 200_000) if args.quick else (50_000, 1_500_000)
    with tempfile.TemporaryDirectory(prefix="smprof-parquet-bench-") as work:
        results = {size: measure_job(Path(work), size, args.batch_rows) for size in sizes}
    small, big = (results[size] for size in sizes)
    growth = {kind: big[kind]["peak_rss_mib"] - small[kind]["peak_rss_mib"] for kind in ("export", "load")}
    if args.json:
        print(json.dumps({"small": small, "big": big, "growth_mib": growth}))
        return 0
    header = ("job", "rows", "export MiB", "load MiB", "export rows/s", "load rows/s")
    print("".join(f"{name:>{width}}" for name, width in zip(header, (22, 11, 12, 10, 15, 13))))
    for size, r in results.items():
        e, ld = r["export"], r["load"]
        print(f"{size:>12} annotations {e['rows']:>10} {e['peak_rss_mib']:>11.0f} {ld['peak_rss_mib']:>9.0f}"
              f" {e['rows'] / e['seconds']:>14,.0f} {ld['rows'] / ld['seconds']:>12,.0f}")  # fmt: skip
    ratio = growth["export"] / max(growth["load"], 1e-9)
    print(f"peak RSS growth, small -> big job: export {growth['export']:.0f} MiB,"
          f" load() {growth['load']:.0f} MiB; ratio export/load {ratio:.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
