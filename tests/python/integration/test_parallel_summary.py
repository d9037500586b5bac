"""The job summary on every local core and on a Dask cluster (docs/ANALYSIS.md,
"Every core and a Dask cluster"): the same bytes as the summary in one process,
a worker that dies is an error on local cores and retried by Dask."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
import worker_crash
from conftest import REPO
from gpu_job import synthetic_gpu_job
from smppy import analysis
from smppy.analysis import _local_workers, _parallel_summary
from smprof_command import smprof

sys.path.insert(0, str(REPO / "bench"))
from report_benchmark import write_job  # noqa: E402

pytestmark = [pytest.mark.dask]

OPTIONS = {"step_pattern": "", "top_k": 3, "max_buckets": 50, "reorder_window_ns": 5_000_000_000}


def in_process(paths: list[str]) -> bytes:
    return _parallel_summary.summary_text(paths, OPTIONS, jobs=1, scheduler=None, progress=None)


@pytest.fixture
def job(tmp_path: Path) -> list[str]:
    return [str(synthetic_gpu_job(tmp_path / "job"))]


@pytest.mark.parametrize("tasks_per_worker", [1, 4])  # 1: tasks of several streams
@pytest.mark.parametrize("start", ["fork", "forkserver"])
@pytest.mark.parametrize("merge_batch", [1, 32])  # 1: the running result merged with each partial
def test_local_workers_give_the_in_process_bytes(
    job: list[str], merge_batch: int, start: str, tasks_per_worker: int, monkeypatch
) -> None:
    monkeypatch.setattr(_parallel_summary, "MERGE_BATCH", merge_batch)
    monkeypatch.setattr(_local_workers, "TASKS_PER_WORKER", tasks_per_worker)
    monkeypatch.setattr(_local_workers, "_single_threaded", lambda: start == "fork")
    reported: list[tuple[int, int]] = []
    text = _parallel_summary.summary_text(
        job, OPTIONS, jobs=2, scheduler=None, progress=lambda done, total: reported.append((done, total))
    )
    assert text == in_process(job)
    assert json.loads(text)["warnings"]  # the damaged files of the job are still named
    tasks = _local_workers.task_groups(analysis.job_streams(job).streams, 2)
    assert len(reported) == len(tasks) and reported[-1][0] == reported[-1][1]
    assert (len(tasks) == 2) == (tasks_per_worker == 1)


def test_task_groups_keep_the_order_and_even_out_bytes() -> None:
    streams = [SimpleNamespace(bytes=b) for b in [10] * 60 + [500] + [10] * 4]
    groups = _local_workers.task_groups(streams, 2)
    assert [s for group in groups for s in group] == streams
    assert len(groups) <= 2 * _local_workers.TASKS_PER_WORKER
    sizes = [sum(s.bytes for s in group) for group in groups]
    assert [500] in [[s.bytes for s in group] for group in groups]  # larger than a share: alone
    assert max(size for size in sizes if size != 500) <= 2 * 1140 / 8
    assert _local_workers.task_groups(streams[:3], 4) == [[s] for s in streams[:3]]


def test_workers_are_forks_only_of_a_single_threaded_process() -> None:
    code = (
        "from smppy.analysis import _local_workers as w; print(w.worker_context('smppy').get_start_method())"
    )
    alone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert alone.stdout.strip() == "fork"
    release = threading.Event()
    waiting = threading.Thread(target=release.wait)
    waiting.start()
    try:
        assert _local_workers.worker_context("smppy").get_start_method() == "forkserver"
    finally:
        release.set()
        waiting.join()


def test_an_os_thread_outliving_its_join_is_waited_for(monkeypatch) -> None:
    # A joined thread's OS thread lingers for a moment (a previous pool's manager thread):
    # the next call still forks, once the OS lists one thread.
    listed = iter([2, 2, 2, 1])
    monkeypatch.setattr(_local_workers, "_os_threads", lambda: next(listed))
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # Python knows of no other thread
    assert _local_workers._single_threaded()
    monkeypatch.setattr(_local_workers, "_os_threads", lambda: 2)
    monkeypatch.setattr(_local_workers, "THREAD_EXIT_WAIT_S", 0.01)
    assert not _local_workers._single_threaded()  # a native thread that stays: a forkserver


def test_summarize_defaults_to_the_usable_cores_and_takes_jobs(job: list[str], monkeypatch) -> None:
    one = analysis.summarize(job, jobs=1)
    pools: list[int] = []
    on_local_workers = _parallel_summary._on_local_workers

    def counted(streams, options, jobs):
        pools.append(jobs)
        return on_local_workers(streams, options, jobs)

    monkeypatch.setattr(_parallel_summary, "_on_local_workers", counted)
    assert analysis.summarize(job) == one  # a small job: in this process
    assert pools == []
    monkeypatch.setattr(_local_workers, "IN_PROCESS_BELOW_BYTES", 0)
    assert analysis.summarize(job) == one
    assert analysis.summarize(job, jobs=3) == one
    assert pools == [len(os.sched_getaffinity(0)), 3]
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        analysis.summarize(job, jobs=0)


def test_a_worker_that_dies_is_an_error_not_a_hang(job: list[str], monkeypatch) -> None:
    monkeypatch.setattr(_parallel_summary, "streams_partial", worker_crash.kill_this_process)
    with pytest.raises(RuntimeError, match="worker process ended abruptly"):
        _parallel_summary.summary_text(job, OPTIONS, jobs=2, scheduler=None, progress=None)


def test_cli_summary_with_jobs_prints_the_same_json(job: list[str]) -> None:
    def summary(*extra: str) -> str:
        proc = smprof("summary", "--json", *extra, job[0])
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    assert summary("--jobs", "2") == summary("--jobs", "1")


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as local_cluster:
        assert local_cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        yield local_cluster


def test_dask_workers_give_the_in_process_bytes(job: list[str], cluster, monkeypatch) -> None:
    expected = in_process(job)
    assert (
        _parallel_summary.summary_text(
            job, OPTIONS, jobs=None, scheduler=cluster.scheduler_address, progress=None
        )
        == expected
    )
    monkeypatch.setenv(_parallel_summary.SCHEDULER_ENV, cluster.scheduler_address)
    assert _parallel_summary.summary_text(job, OPTIONS, jobs=None, scheduler=None, progress=None) == expected


def test_a_dask_worker_killed_mid_job_is_retried_without_a_wrong_result(tmp_path: Path, cluster) -> None:
    from distributed import Client

    write_job(tmp_path / "big", events=4_000_000, ranks=4)  # streams that take a while each
    paths = [str(tmp_path / "big")]
    expected = in_process(paths)
    with Client(cluster) as watcher, ThreadPoolExecutor(1) as thread:
        pids = watcher.run(os.getpid)
        summary = thread.submit(
            _parallel_summary.summary_text,
            paths,
            OPTIONS,
            jobs=None,
            scheduler=cluster.scheduler_address,
            progress=None,
        )
        busy: list[str] = []
        deadline = time.monotonic() + 60
        while not busy and time.monotonic() < deadline and not summary.done():
            busy = [worker for worker, keys in watcher.processing().items() if keys]
            time.sleep(0.02)
        assert busy, "no task ever ran on a worker"
        os.kill(pids[busy[0]], signal.SIGKILL)
        assert summary.result(timeout=300) == expected


def test_an_unreachable_scheduler_is_a_clear_error(job: list[str]) -> None:
    pytest.importorskip("distributed")
    unused_port = "tcp://127.0.0.1:9"  # discard: nothing listens on loopback
    proc = subprocess.run(
        [shutil.which("smprof"), "summary", "--scheduler", unused_port, job[0]],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"},
    )
    assert proc.returncode == 2
    assert f"smprof: error: no Dask scheduler at {unused_port}: nothing listens there" in proc.stderr
