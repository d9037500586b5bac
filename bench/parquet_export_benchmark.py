"""Peak memory and rate of ``smprof export --format parquet`` on a small and a big job, against
``analysis.load()`` (which holds every table in memory) on the same traces in the same run.

Each job is recorded by a real session (one thread, ``N`` empty annotations); each measurement runs in a
fresh interpreter and reports its peak RSS (``ru_maxrss``). The export reads in batches of
``--batch-rows`` rows, so its peak should not grow with the job while load()'s does.

    python3 bench/parquet_export_benchmark.py            # 50 k and 1.5 M annotations
    python3 bench/parquet_export_benchmark.py --quick    # 20 k and 200 k
    python3 bench/parquet_export_benchmark.py --json     # one JSON object (the tests read it)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
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
from smppy.parquet_export import export_parquet
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
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 k and 200 k annotations")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--batch-rows", type=int, default=65_536)
    args = parser.parse_args()
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
