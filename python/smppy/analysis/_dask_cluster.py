"""The Dask cluster of ``--scheduler``, met in bounded time (docs/ANALYSIS.md "On a Dask cluster").

Before distributed's client is made, the address is probed: a TCP connection within
``connect_timeout_s``, then the first bytes a Dask scheduler sends unasked (its handshake, framed
as distributed's TCP comm frames every message). Nothing listening, a service that is not Dask,
or one that accepts and says nothing is then one line naming the address and what was found,
never a traceback or a wait without end. A scheduler without workers is waited for on stderr,
at most ``worker_timeout_s``; workers lost mid-run are named as they go, their streams run again
on the others (distributed does that), and a cluster left without any worker for
``worker_timeout_s`` ends the run with the streams not done.
"""

from __future__ import annotations

import socket
import struct
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

POLL_S = 1.0  # how often the run looks at the cluster's workers


@dataclass(frozen=True)
class DaskScheduler:
    """Where the cluster is (``tcp://HOST:PORT``) and how long smprof waits for it."""

    address: str
    connect_timeout_s: float = 5.0  # the connection and the scheduler's first answer
    worker_timeout_s: float = 60.0  # for a first worker, and without any worker mid-run


def scheduler_of(scheduler: str | DaskScheduler) -> DaskScheduler:
    return scheduler if isinstance(scheduler, DaskScheduler) else DaskScheduler(scheduler)


def _looks_like_dask(head: bytes) -> bool:
    """Whether ``head`` starts as distributed's TCP frames do: the message's byte count, then a
    small number of frames (distributed/comm/tcp.py, protocol/utils.py pack_frames_prelude)."""
    if len(head) < 16:
        return False
    total, frames = struct.unpack("<QQ", head[:16])
    return 16 <= total < 1 << 30 and 1 <= frames <= 1024


def probe(scheduler: DaskScheduler) -> None:
    """Raises RuntimeError, one line naming the address and what answers there, unless a Dask
    scheduler does within ``connect_timeout_s``. Only ``tcp://`` addresses (and bare HOST:PORT)
    are probed: TLS and other transports are left to distributed's own timeout."""
    address, timeout = scheduler.address, scheduler.connect_timeout_s
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme != "tcp":
        return
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or port is None:
        raise RuntimeError(f"--scheduler {address}: not an address of the form tcp://HOST:PORT")
    where = f"no Dask scheduler at {address}"
    try:
        connection = socket.create_connection((host, port), timeout=timeout)
    except ConnectionRefusedError:
        raise RuntimeError(f"{where}: nothing listens there (connection refused)") from None
    except (socket.timeout, TimeoutError):
        raise RuntimeError(f"{where}: the connection was not accepted within {timeout:g} s") from None
    except OSError as error:
        raise RuntimeError(f"{where}: {error.strerror or error}") from None
    with connection:
        head = b""
        deadline = time.monotonic() + timeout
        try:
            while len(head) < 16 and time.monotonic() < deadline:
                connection.settimeout(max(deadline - time.monotonic(), 0.01))
                more = connection.recv(64)
                if not more:
                    break
                head += more
        except (socket.timeout, TimeoutError):
            pass
        except OSError as error:
            raise RuntimeError(f"{where}: the connection failed ({error.strerror or error})") from None
    if _looks_like_dask(head):
        return
    if not head:
        raise RuntimeError(
            f"{where}: it accepts connections but sent nothing within {timeout:g} s "
            "(a Dask scheduler speaks first; --scheduler-timeout S waits longer)"
        )
    shown = head[:48].decode("ascii", errors="replace").encode("unicode_escape").decode("ascii")
    raise RuntimeError(f"{where}: a service that is not Dask answers there ('{shown}')")


def connect(scheduler: DaskScheduler) -> Any:
    """distributed's Client of the scheduler, after the probe; RuntimeError when it cannot be made."""
    try:
        from distributed import Client
    except ImportError as error:
        raise RuntimeError("a Dask scheduler needs the dask extra: pip install 'smprof[dask]'") from error
    probe(scheduler)
    try:
        return Client(scheduler.address, timeout=scheduler.connect_timeout_s)
    except Exception as error:  # distributed's errors vary by version and transport
        raise RuntimeError(
            f"cannot reach the Dask scheduler at {scheduler.address}: {type(error).__name__}: {error}"
        ) from None


def _workers(client: Any) -> set[str]:
    return set(client.scheduler_info()["workers"])


def _wait_for_a_worker(client: Any, scheduler: DaskScheduler) -> set[str]:
    workers = _workers(client)
    if workers:
        return workers
    print(
        f"smprof: waiting for Dask workers at {scheduler.address} "
        f"(up to {scheduler.worker_timeout_s:g} s, --worker-timeout)",
        file=sys.stderr,
        flush=True,
    )
    try:
        client.wait_for_workers(1, timeout=scheduler.worker_timeout_s)
    except (TimeoutError, OSError):
        raise RuntimeError(
            f"no Dask worker joined the scheduler at {scheduler.address} within "
            f"{scheduler.worker_timeout_s:g} s: start one with `dask worker {scheduler.address}`"
        ) from None
    return _workers(client)


def run_on_cluster(
    scheduler: str | DaskScheduler,
    task: Callable[..., bytes],
    items: Sequence[Any],
    *per_item: Sequence[Any],
    **common: Any,
) -> Iterable[tuple[int, bytes]]:
    """``(i, task(items[i], *per_item[...][i], **common))`` for each item, computed on the
    cluster's workers, as they finish (see the module's docstring for the faults)."""
    from distributed import wait
    from distributed.scheduler import KilledWorker

    scheduler = scheduler_of(scheduler)
    with connect(scheduler) as client:
        known = _wait_for_a_worker(client, scheduler)
        futures = client.map(task, items, *per_item, pure=False, **common)
        index = {future.key: i for i, future in enumerate(futures)}
        pending, lost, alone_since = set(futures), [], None
        while pending:
            try:
                done, pending = wait(pending, timeout=POLL_S, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            for future in done:
                try:
                    yield index[future.key], future.result()
                except KilledWorker as error:
                    raise RuntimeError(
                        f"the Dask workers at {scheduler.address} died running one stream, again and "
                        f"again ({error}); lost so far: {', '.join(lost) or 'none'}"
                    ) from None
                except (RuntimeError, ValueError, OSError):  # the task's own clear errors (S3Error...)
                    raise
                except Exception as error:  # anything else raised on the worker: one line too
                    raise RuntimeError(
                        f"a stream failed on the Dask cluster at {scheduler.address}: "
                        f"{type(error).__name__}: {error}"
                    ) from None
            if not pending:
                break
            workers = _workers(client)
            for worker in sorted(known - workers):
                lost.append(worker)
                print(
                    f"smprof: Dask worker {worker} left the cluster; its streams run again on the others",
                    file=sys.stderr,
                    flush=True,
                )
            known = workers
            if workers:
                alone_since = None
            elif alone_since is None:
                alone_since = time.monotonic()
            elif time.monotonic() - alone_since > scheduler.worker_timeout_s:
                raise RuntimeError(
                    f"the Dask cluster at {scheduler.address} has had no worker for "
                    f"{scheduler.worker_timeout_s:g} s (lost: {', '.join(lost)}); "
                    f"{len(pending)} of {len(futures)} streams not summarized"
                )
