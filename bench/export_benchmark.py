"""Timeline export of big synthetic traces: time, peak memory and output size of
``smprof export --format chrome`` (gzipped JSON) and ``--format perfetto``.

    python3 bench/export_benchmark.py            # 1 M and 10 M events (a few minutes)
    python3 bench/export_benchmark.py --quick    # smoke run, 20 k and 200 k events
    python3 bench/export_benchmark.py --workers  # --jobs 1 against --jobs 2 on 8 ranks (--quick: small)

The trace is one rank file written by libsmprof's TraceWriter (bench/synthetic_trace.py):
frames of 65,536 rows, half annotations (4 nesting levels, 64 names), a quarter CUDA launches and a
quarter kernels on 4 streams with their correlation ids, and a few counters. Each export runs in a
fresh process; its peak RSS (``wait4``) includes the interpreter, so a child that only imports smppy
is measured as the baseline. The ratios of the big run to the small one show whether time grows
with the events (linear) and memory does not (bounded).

``--workers``: 8 such rank files of 250 k events each (8 x 20 k with ``--quick``), each format exported
with ``jobs=1`` (the baseline: one process) and ``jobs=2`` (two worker processes writing parts, the
parent assembling), interleaved, 3 runs (1 with ``--quick``): median wall seconds, the speedup over the
baseline of the same run, CPU seconds (the child and its workers) and the peak RSS of the largest
process. Every ``jobs=2`` file is compared with its ``jobs=1`` file byte for byte (the run fails on a
difference). Then the Chrome export's first pass over the ranks' collectives (which it reads before the
walk, for the flows across ranks) alone, as a share of the jobs=1 Chrome export.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import synthetic_trace as st

FRAME_ROWS = 65_536
NAMES = [f"layer{i}.{part}" for i in range(16) for part in ("forward", "backward", "optimizer", "data")]
KERNEL = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn"
EXPORT = (
    "import sys, time; from smppy.export import export_timeline; start = time.perf_counter(); "
    "export_timeline(sys.argv[1], sys.argv[2], format=sys.argv[3], jobs=int(sys.argv[4])); "
    "print(time.perf_counter() - start)"
)
VARIANTS = (
    ("chrome", "trace.json"),
    ("chrome", "trace.json.gz"),
    ("perfetto", "trace.perfetto-trace"),
    ("perfetto", "trace.perfetto-trace.gz"),
)
IMPORT_ONLY = "import smppy.export"
# The Chrome export's pass over the collectives before the walk (collective_chains.h), alone.
CHAINS = (
    "import glob, sys, time; from smppy import _smppy; "
    "files = sorted(glob.glob(sys.argv[1] + '/*.smprof')); streams, _ = _smppy.job_streams(files); "
    "start = time.perf_counter(); _smppy.timeline_collective_chains(streams); "
    "print(time.perf_counter() - start)"
)


def frame_of(sequence: int, first_row: int, rows: int):
    """``rows`` events: rows/2 annotations, rows/4 launches, rows/4 kernels, 1 µs apart per row."""
    pb = st.pb()
    frame = pb.Frame(sequence=sequence)
    frame.strings.extend(s.encode() for s in [*NAMES, "cudaLaunchKernel", KERNEL])
    frame.threads.add(tid=4242, name=b"python")
    n_ann, n_gpu = rows // 2, rows // 4
    base = first_row * 1_000
    a = frame.annotations
    a.base_ns = base
    a.start_delta_ns.extend([0] + [2_000] * (n_ann - 1))
    a.dur_ns.extend([1_500 - 300 * (i % 4) for i in range(n_ann)])
    a.name_index.extend([i % len(NAMES) for i in range(n_ann)])
    a.thread_index.extend([0] * n_ann)
    a.depth.extend([i % 4 for i in range(n_ann)])
    correlation = [first_row + i + 1 for i in range(n_gpu)]
    api = frame.api_calls
    api.base_ns = base + 100
    api.start_delta_ns.extend([0] + [4_000] * (n_gpu - 1))
    api.dur_ns.extend([3_000] * n_gpu)
    api.name_index.extend([len(NAMES)] * n_gpu)
    api.thread_index.extend([0] * n_gpu)
    api.correlation_id.extend(correlation)
    api.domain.extend([1] * n_gpu)
    g = frame.gpu
    g.base_ns = base + 5_000
    g.start_delta_ns.extend([0] + [4_000] * (n_gpu - 1))
    g.dur_ns.extend([3_500] * n_gpu)
    zeros = [0] * n_gpu
    for column, values in (
        ("kind", [1] * n_gpu),
        ("device", zeros),
        ("context", [1] * n_gpu),
        ("stream", [7 + i % 4 for i in range(n_gpu)]),
        ("correlation_id", correlation),
        ("name_index", [len(NAMES) + 1] * n_gpu),
        ("kernel_class", [1] * n_gpu),
        ("precision", [5] * n_gpu),
        ("bytes", zeros),
        ("copy_kind", zeros),
        ("peer_device", zeros),
        ("graph_id", zeros),
        ("graph_node_id", zeros),
        ("grid_x", [128] * n_gpu),
        ("grid_y", [1] * n_gpu),
        ("grid_z", [1] * n_gpu),
        ("block_x", [256] * n_gpu),
        ("block_y", [1] * n_gpu),
        ("block_z", [1] * n_gpu),
        ("shared_memory_bytes", [49_152] * n_gpu),
        ("registers_per_thread", [96] * n_gpu),
    ):
        getattr(g, column).extend(values)
    st.add_counter(frame, "process.rss_bytes", "bytes", [(base, 1 << 30)])
    st.add_counter(frame, "cpu0.utilization", "percent", [(base, 50.0)])  # a machine counter
    return frame


def write_trace(directory: Path, events: int, rank: int = 0, world_size: int = 1) -> Path:
    pb = st.pb()
    header = st.header(
        host="bench", rank=rank, world_size=world_size, monotonic_ns=0, realtime_ns=1_700_000_000_000_000_000
    )
    header.pid = 1000 + rank
    frames = (
        frame_of(i, first, min(FRAME_ROWS, events - first))
        for i, first in enumerate(range(0, events, FRAME_ROWS))
    )
    return st.write_trace(directory / f"rank{rank}.smprof", header, frames, pb.Footer())


def run_child(code: str, *args: str) -> tuple[float, int, str, float]:
    """Wall seconds, peak RSS (bytes; the largest of the child and the children it waited for), stdout
    and CPU seconds (the same processes) of a fresh interpreter running ``code``."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"child failed ({proc.returncode}): {code[:60]} {args}")
    return time.perf_counter() - start, usage.ru_maxrss * 1024, out, usage.ru_utime + usage.ru_stime


def compare_workers(quick: bool) -> None:
    """Each format with jobs=1 and jobs=2 on an 8-rank job: seconds, speedup, CPU, peak RSS; same bytes."""
    ranks, per_rank = 8, 20_000 if quick else 250_000
    repeat = 1 if quick else 3
    with tempfile.TemporaryDirectory(prefix="smprof-export-bench-") as tmp:
        job = Path(tmp) / "job"
        for rank in range(ranks):
            write_trace(job, per_rank, rank, ranks)
        print(f"{ranks} ranks x {per_rank:,} events, {repeat} run(s), interleaved")
        print("| output | jobs | seconds (median) | speedup | CPU s | peak RSS MiB |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        chrome_seconds = 0.0
        for fmt, name in VARIANTS:
            seconds: dict[int, list[float]] = {1: [], 2: []}
            cpu: dict[int, list[float]] = {1: [], 2: []}
            rss: dict[int, int] = {1: 0, 2: 0}
            for _ in range(repeat):
                for jobs in seconds:  # interleaved: a change in the machine's load hits both alike
                    out = Path(tmp) / f"{jobs}-{name}"
                    _, peak, stdout, cpu_seconds = run_child(EXPORT, str(job), str(out), fmt, str(jobs))
                    seconds[jobs].append(float(stdout))
                    cpu[jobs].append(cpu_seconds)
                    rss[jobs] = max(rss[jobs], peak)
                if not filecmp.cmp(Path(tmp) / f"1-{name}", Path(tmp) / f"2-{name}", shallow=False):
                    raise SystemExit(f"{name}: the jobs=2 file differs from the jobs=1 file")
            baseline = statistics.median(seconds[1])
            if name == "trace.json":
                chrome_seconds = baseline
            for jobs in seconds:
                median = statistics.median(seconds[jobs])
                print(
                    f"| {name} | {jobs} | {median:.2f} | {baseline / median:.2f}x |"
                    f" {statistics.median(cpu[jobs]):.2f} | {rss[jobs] / 2**20:.0f} |"
                )
        chains = statistics.median(float(run_child(CHAINS, str(job))[2]) for _ in range(repeat))
        print(
            f"the collectives' pass of the Chrome export alone: {chains:.2f} s, "
            f"{chains / chrome_seconds:.2f}x the jobs=1 trace.json export"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, for CI")
    parser.add_argument("--workers", action="store_true", help="jobs=1 against jobs=2 on an 8-rank job")
    args = parser.parse_args()
    if args.workers:
        compare_workers(args.quick)
        return
    sizes = (20_000, 200_000) if args.quick else (1_000_000, 10_000_000)
    _, import_rss, _, _ = run_child(IMPORT_ONLY)
    print(f"baseline: python + import smppy.export, peak RSS {import_rss / 2**20:.0f} MiB")
    print("| events | format | output | export s | events/s | peak RSS MiB | output bytes | bytes/event |")
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    results = {}
    with tempfile.TemporaryDirectory(prefix="smprof-export-bench-") as tmp:
        for events in sizes:
            trace = write_trace(Path(tmp) / f"trace{events}", events)
            print(
                f"| {events:,} | smprof input | {trace.name} | | | | {trace.stat().st_size:,} |"
                f" {trace.stat().st_size / events:.1f} |"
            )
            for fmt, name in VARIANTS:
                out = Path(tmp) / f"{events}-{name}"
                _, rss, stdout, _ = run_child(EXPORT, str(trace.parent), str(out), fmt, "1")
                seconds = float(stdout)
                size = out.stat().st_size
                results[(events, name)] = (seconds, rss)
                print(
                    f"| {events:,} | {fmt} | {name} | {seconds:.2f} | {events / seconds:,.0f} |"
                    f" {rss / 2**20:.0f} | {size:,} | {size / events:.1f} |"
                )
                out.unlink()
            trace.unlink()
    small, big = sizes
    for _, name in VARIANTS:
        (t0, m0), (t1, m1) = results[(small, name)], results[(big, name)]
        print(
            f"{name}: {big // small}x the events -> time ratio {t1 / t0:.1f}, peak RSS ratio {m1 / m0:.2f}"
            f" ({(m1 - import_rss) / max(m0 - import_rss, 1):.2f} above the baseline)"
        )


if __name__ == "__main__":
    main()
