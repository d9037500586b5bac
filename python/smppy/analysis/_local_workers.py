"""Work on a job's process streams spread over worker processes of this machine: what the
summary, the report (``_parallel_summary.py``), the timeline export (``_parallel_timeline.py``)
and the Parquet export (``smppy.export``) share. Workers receive streams (paths, never
trace bytes) and read their files themselves."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any

# Without an explicit ``jobs``, jobs of fewer trace bytes are handled in this process:
# starting worker processes costs more than it saves (bench/scale_benchmark.py --quick).
IN_PROCESS_BELOW_BYTES = 4 << 20


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), the default ``jobs``."""
    return len(os.sched_getaffinity(0))


def worker_count(jobs: int | None) -> int:
    """``jobs``, or the usable cores when it is not given; ValueError below 1."""
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    return jobs if jobs is not None else usable_cores()


def stays_in_process(streams: Sequence[Any], jobs: int | None) -> bool:
    """True when a job's streams are worked on in this process rather than on workers: a single
    stream, one worker, or (``jobs`` not given) fewer than IN_PROCESS_BELOW_BYTES of traces."""
    small = jobs is None and sum(stream.bytes for stream in streams) < IN_PROCESS_BELOW_BYTES
    return len(streams) <= 1 or worker_count(jobs) == 1 or small


# Local workers get about this many tasks each: enough to even out streams of unequal size,
# few enough that a job of many small streams is not dominated by per-task costs (sending a
# task, running it, merging its partial: ~1 ms each, docs/BENCHMARKS.md section 16).
TASKS_PER_WORKER = 4


def task_groups(streams: Sequence[Any], jobs: int) -> list[list[Any]]:
    """``streams`` (or anything with ``.bytes``) in reading order cut into at most
    ``jobs * TASKS_PER_WORKER`` runs of about equal bytes: a stream goes to the share its middle
    byte falls in (so a stream larger than a share is a task of its own)."""
    tasks = min(len(streams), jobs * TASKS_PER_WORKER)
    share = max(1, sum(stream.bytes for stream in streams)) / tasks
    groups: dict[int, list[Any]] = {}
    before = 0
    for stream in streams:
        index = min(tasks - 1, int((before + stream.bytes / 2) / share))
        groups.setdefault(index, []).append(stream)
        before += stream.bytes
    return list(groups.values())


# A Python thread that was just joined (the previous pool's manager thread) can still be
# an OS thread for a few milliseconds: how long to wait for it to be gone.
THREAD_EXIT_WAIT_S = 0.1


def _os_threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0  # unknown: never taken for single-threaded


def _single_threaded() -> bool:
    """True when this process runs one thread (Python's and native ones alike). When Python
    knows of no other thread but the OS still lists one, waits up to THREAD_EXIT_WAIT_S for it
    to end (the OS thread of a thread just joined outlives its join briefly)."""
    deadline = time.monotonic() + THREAD_EXIT_WAIT_S
    while (count := _os_threads()) > 1 and threading.active_count() == 1 and time.monotonic() < deadline:
        time.sleep(0.002)
    return count == 1


def worker_context(preload: str) -> Any:
    """How worker processes start: forked from this process when it runs a single thread
    (``smprof summary``: a worker is ready in a millisecond, smppy already imported), else
    from a forkserver, so that a threaded process (a training job, a notebook with
    background threads) is never forked with locks held by threads the child would lack.
    A forkserver starts a fresh interpreter and imports the module ``preload`` first (~0.1-0.2 s
    for smppy)."""
    if _single_threaded():
        return multiprocessing.get_context("fork")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([preload])
    return context


def on_local_workers(
    task: Callable[..., Any], items: Sequence[Any], jobs: int, *, work: str, **arguments: Any
) -> Iterable[tuple[Any, Any]]:
    """``(item, task(item, **arguments))`` for each of ``items``, computed on ``jobs`` worker
    processes (at most one per item), in the order they finish. A worker's exception is raised
    here, once the items being worked on are done (the others are not started); a worker that
    dies is a RuntimeError naming ``work`` ("summary", "export")."""
    context = worker_context(task.__module__)  # workers start with the task's module imported
    with ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=context) as pool:
        futures: dict[Any, Any] = {}
        try:  # a worker may die while the items are still being submitted
            for item in items:
                futures[pool.submit(task, item, **arguments)] = item
            for future in as_completed(futures):
                yield futures[future], future.result()
        except BrokenProcessPool as error:
            raise RuntimeError(
                f"a worker process ended abruptly during the {work} (killed, or out of memory); "
                f"run with jobs=1 (--jobs 1) to do the {work} in this process"
            ) from error
        finally:  # an error (or a caller that stops early) does not wait for the items not started
            for future in futures:
                future.cancel()
