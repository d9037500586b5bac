"""``--scheduler`` faults, each a one-line error in bounded time (docs/RELIABILITY.md): nothing
listening, a service that is not Dask (a real ``python -m http.server``, a banner), one that
accepts and never answers; and with real ``dask scheduler`` and ``dask worker`` processes, a
scheduler without workers, and workers that die on every stream, with and without a nanny."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
from report_benchmark import write_job  # noqa: E402

pytestmark = [pytest.mark.dask, pytest.mark.slow]

pytest.importorskip("distributed")

# Makes every stream's task kill the worker that runs it (a preload of `dask worker`).
KILLER = """
import smppy.analysis._parallel_summary as tasks

def _die(*args, **kwargs):
    import os

    os._exit(1)

tasks.stream_partial = _die
"""


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("job")
    write_job(directory, events=20_000, ranks=2)  # two files: the summary goes to the cluster
    return directory


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _summary(job: Path, address: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["smprof", "summary", str(job), "--scheduler", address, *extra],
        capture_output=True,
        text=True,
        timeout=180,
    )


def _one_line_error(proc: subprocess.CompletedProcess, expected: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("smprof: error:")]
    assert len(errors) == 1 and expected in errors[0], proc.stderr


@pytest.fixture
def server() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback TCP server that sends each connection what the test puts in the list (nothing
    while it is empty) and keeps it open."""
    listener = socket.create_server(("127.0.0.1", 0))
    greeting: list[bytes] = []
    open_connections = []

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            open_connections.append(connection)
            for chunk in greeting:
                connection.sendall(chunk)

    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{listener.getsockname()[1]}", greeting
    listener.close()
    for connection in open_connections:
        connection.close()


def test_nothing_listening(job: Path) -> None:
    address = f"tcp://127.0.0.1:{_free_port()}"
    _one_line_error(_summary(job, address), f"no Dask scheduler at {address}: nothing listens there")


def test_a_service_that_accepts_and_never_answers(job: Path, server) -> None:
    address, _ = server
    _one_line_error(
        _summary(job, address, "--scheduler-timeout", "1"),
        f"no Dask scheduler at {address}: it accepts connections but sent nothing within 1 s",
    )


def test_a_service_that_writes_bytes(job: Path, server) -> None:
    address, greeting = server
    greeting.append(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
    _one_line_error(
        _summary(job, address),
        f"no Dask scheduler at {address}: a service that is not Dask answers there ('SSH-2.0-OpenSSH_9.2p1",
    )


def test_a_real_http_server(job: Path, tmp_path: Path) -> None:
    port = _free_port()
    http = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_until_listening(port)
        _one_line_error(
            _summary(job, f"tcp://127.0.0.1:{port}", "--scheduler-timeout", "1"),
            "it accepts connections but sent nothing within 1 s",
        )
    finally:
        http.kill()
        http.wait()


def _wait_until_listening(port: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port} after {timeout_s} s")


@pytest.fixture
def scheduler(tmp_path: Path) -> Iterator[str]:
    """A real `dask scheduler` on loopback, without workers."""
    port = _free_port()
    process = subprocess.Popen(
        ["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_until_listening(port)
        yield f"tcp://127.0.0.1:{port}"
    finally:
        process.kill()
        process.wait()


def test_a_scheduler_without_workers(job: Path, scheduler: str) -> None:
    proc = _summary(job, scheduler, "--worker-timeout", "2")
    assert f"smprof: waiting for Dask workers at {scheduler} (up to 2 s, --worker-timeout)" in proc.stderr
    _one_line_error(proc, f"no Dask worker joined the scheduler at {scheduler} within 2 s")


@pytest.mark.parametrize("nanny", [False, True], ids=["no-nanny", "nanny"])
def test_workers_that_die_on_every_stream(job: Path, scheduler: str, tmp_path: Path, nanny: bool) -> None:
    (tmp_path / "killer.py").write_text(KILLER)
    worker = subprocess.Popen(
        ["dask", "worker", scheduler, "--nthreads", "1", "--preload", str(tmp_path / "killer.py"),
         "--nanny" if nanny else "--no-nanny", "--no-dashboard"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        # With a nanny, long enough for its restarts (seconds each); without, 3 s without any.
        proc = _summary(job, scheduler, "--worker-timeout", "60" if nanny else "3")
    finally:
        worker.kill()
        worker.wait()
    assert "left the cluster; its streams run again on the others" in proc.stderr, proc.stderr
    if nanny:  # restarted each time, the worker dies again: distributed gives up on the stream
        _one_line_error(proc, f"the Dask workers at {scheduler} died running one stream, again and again")
    else:
        _one_line_error(
            proc, f"the Dask cluster at {scheduler} has had no worker for 3 s (lost: tcp://127.0.0.1:"
        )
