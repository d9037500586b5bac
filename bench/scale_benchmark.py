#!/usr/bin/env python3
"""The job summary of 8, 64 and 256 ranks on 1 worker, on every local core and on a 2-worker Dask cluster.

    python3 bench/scale_benchmark.py            # 8, 64 and 256 ranks of 3.84 M events, 8 of 15.4 M; 3 runs
    python3 bench/scale_benchmark.py --quick    # 8 and 16 ranks, one 15 k-event frame per rank, 1 run

Writes synthetic jobs with report_benchmark.py's writer (one file per rank: steps, phases,
kernels from 200 names, copies and their launches). For each job, in turn:
``summarize(jobs=1)`` (the baseline: one process, no workers) and ``summarize(jobs=N)`` on the N
usable cores (local worker processes), each in a single-threaded child interpreter as
``smprof summary`` runs them (its start not timed), and, in this process,
``summarize(scheduler=...)`` on a ``distributed.LocalCluster``
of 2 worker processes of one thread on loopback TCP, started once before the runs, so its
start is not timed: the use case is an existing cluster.
Reported: wall seconds (median of the runs), the speedup against the baseline of the same run,
the peak RSS of the parent and of the largest worker process (local: getrusage; Dask: sampled
every 10 ms with psutil, and the Dask workers live through every run, so theirs is the peak so
far). Every result is compared with the baseline's JSON (the run fails on a difference).

Then the projection: the per-core rate (events per CPU second of the baseline on the largest
job) and the merge cost per stream (merging that job's per-stream partials into the running
result as the parent does, ``MERGE_BATCH`` at a time) give the time of a 1,000-rank job of 10^10 events on
N Dask workers: 10^10 / (rate x N) + 1,000 x merge seconds per stream (reading from shared
storage, network and scheduling are not in it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from report_benchmark import EVENTS_PER_STEP, STEPS_PER_FRAME, write_job
from smppy import _smppy, analysis
from smppy.analysis import _parallel_summary

FRAME_EVENTS = STEPS_PER_FRAME * EVENTS_PER_STEP
MB = 1e6


class PeakMemory:
    """Samples the RSS of this process and of the workers while it runs: ``dask_workers``
    (pids) for a Dask run, else its other descendants (the local workers)."""

    def __init__(self, dask_workers: set[int], on_dask: bool) -> None:
        self.parent = 0
        self.worker = 0
        self._dask_workers = dask_workers
        self._on_dask = on_dask
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        while not self._stop.wait(0.01):
            self.parent = max(self.parent, me.memory_info().rss)
            for child in me.children(recursive=True):
                if (child.pid in self._dask_workers) != self._on_dask:
                    continue
                try:
                    self.worker = max(self.worker, child.memory_info().rss)
                except psutil.NoSuchProcess:
                    pass

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _digest(summary: dict) -> str:
    return hashlib.sha256(json.dumps(summary, sort_keys=True).encode()).hexdigest()


def _timed_on_dask(paths: list[str], dask_workers: set[int], scheduler: str) -> tuple[str, float, int, int]:
    with PeakMemory(dask_workers, True) as peak:
        started = time.perf_counter()
        summary = analysis.summarize(paths, scheduler=scheduler)
        seconds = time.perf_counter() - started
    return _digest(summary), seconds, peak.parent, peak.worker


def _timed_locally(paths: list[str], jobs: int) -> tuple[str, float, int, int]:
    """``summarize(jobs=jobs)`` in a child interpreter with one thread, as ``smprof summary``
    runs it (this process has the Dask client's threads, and local workers are forks only of
    a single-threaded caller): its wall seconds (interpreter start not included), the peak
    RSS of the child and of its largest worker (getrusage; a forked worker's counts the
    pages it shares with its parent)."""
    child = subprocess.run(
        [sys.executable, __file__, "--child", str(jobs), *paths], capture_output=True, text=True, check=True
    )
    result = json.loads(child.stdout)
    return result["digest"], result["seconds"], result["parent"], result["worker"]


def _child(jobs: int, paths: list[str]) -> None:
    assert threading.active_count() == 1
    started = time.perf_counter()
    summary = analysis.summarize(paths, jobs=jobs)
    seconds = time.perf_counter() - started
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 if jobs > 1 else 0
    parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"digest": _digest(summary), "seconds": seconds, "parent": parent, "worker": workers}))


def measure_job(paths: list[str], repeat: int, client, scheduler: str) -> list[tuple[str, float, int, int]]:
    """Per way (1 worker, local cores, Dask): median wall seconds, parent and worker peak RSS."""
    rows = []
    baseline = None
    dask_workers = set(client.run(os.getpid).values())
    cores = len(os.sched_getaffinity(0))
    for label, timed in (
        ("1 worker", lambda: _timed_locally(paths, 1)),
        (f"{cores} local cores", lambda: _timed_locally(paths, cores)),
        ("Dask, 2 workers", lambda: _timed_on_dask(paths, dask_workers, scheduler)),
    ):
        seconds, parents, workers = [], [], []
        for _ in range(repeat):
            digest, spent, parent, worker = timed()
            if baseline is None:
                baseline = digest
            elif digest != baseline:
                raise SystemExit(f"{label}: the summary differs from the 1-worker one")
            seconds.append(spent)
            parents.append(parent)
            workers.append(worker)
        rows.append((label, statistics.median(seconds), max(parents), max(workers)))
    return rows


def rate_and_merge_cost(paths: list[str], events: int) -> tuple[float, float]:
    """Events per CPU second of the in-process summary, and CPU seconds to merge one stream's
    partial into the running result."""
    started = time.process_time()
    _smppy.summarize(paths)
    rate = events / (time.process_time() - started)
    streams, _ = _smppy.job_streams(paths)
    partials = [(s.bytes, _smppy.partial_summary([s])) for s in streams]
    started = time.process_time()
    _parallel_summary._merge_as_they_come(partials, 0, None)  # as the parent merges
    return rate, (time.process_time() - started) / len(partials)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        return _child(int(sys.argv[2]), sys.argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 and 16 ranks, one frame each, one run")
    parser.add_argument("--repeat", type=int, default=None, help="runs per measurement (default 3; quick 1)")
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    # (ranks, events): the same events whatever the ranks, then 8 ranks of 4x the events, where
    # the workers' fixed costs weigh less; quick: one frame per rank.
    jobs = (
        [(8, 8 * FRAME_EVENTS), (16, 16 * FRAME_EVENTS)]
        if args.quick
        else [
            (8, 256 * FRAME_EVENTS),
            (64, 256 * FRAME_EVENTS),
            (256, 256 * FRAME_EVENTS),
            (8, 1024 * FRAME_EVENTS),
        ]
    )
    repeat = args.repeat or (1 if args.quick else 3)
    print(
        f"machine: {os.cpu_count()} cpus ({len(os.sched_getaffinity(0))} usable), load average "
        f"{os.getloadavg()[0]:.1f}, python {sys.version.split()[0]}; {repeat} run(s) per measurement"
    )
    with (
        tempfile.TemporaryDirectory(prefix="smprof-scale-bench-") as tmp,
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        print(
            f"{'ranks':>5} {'events':>10} {'way':<18} {'wall s':>8} {'ratio':>6}"
            f" {'parent MB':>9} {'worker MB':>9}"
        )
        for count, job_events in jobs:
            root = Path(tmp) / f"ranks-{count}-events-{job_events}"
            events = write_job(root, job_events, ranks=count)
            paths = [str(root)]
            rows = measure_job(paths, repeat, client, cluster.scheduler_address)
            for label, seconds, parent, worker in rows:
                print(
                    f"{count:>5} {events:>10,} {label:<18} {seconds:>8.2f} {rows[0][1] / seconds:>6.2f}"
                    f" {parent / MB:>9.0f} {f'{worker / MB:.0f}' if worker else '-':>9}"
                )
            if count == max(ranks for ranks, _ in jobs):
                rate, merge_seconds = rate_and_merge_cost(paths, events)
    print(f"per-core rate: {rate / 1e6:.2f} M events per CPU second ({max(r for r, _ in jobs)} ranks)")
    print(f"merge: {merge_seconds * 1e3:.2f} ms per stream")
    print("projected summary of a 1,000-rank job of 10^10 events on N Dask workers (one core each):")
    for workers in (1, 16, 64, 256, 1000):
        projected = 1e10 / (rate * workers) + 1000 * merge_seconds
        print(f"  N = {workers:>4}: {projected:>9.0f} s ({projected / 3600:.2f} h)")


if __name__ == "__main__":
    main()
