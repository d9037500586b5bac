"""Clock alignment between the ranks of a job (docs/ANALYSIS.md, "One clock across hosts").

Rank 0 is the reference. Every other rank measures NTP-style round trips
with it over a key-value exchange (torch.distributed's store by default):
the rank sends at t0, rank 0 receives at t1 and answers at t2, the rank
receives the answer at t3, each on its own ``CLOCK_MONOTONIC``. The rounds go
in the trace's footer; the analysis places each process on rank 0's wall
clock with its best sample. A round is bounded by ``timeout_s``; a failure is
one warning and is recorded as the round's problem, the training goes on.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
import warnings
from datetime import timedelta
from typing import Any, Protocol

from smppy import _smppy

SAMPLES = 8
TIMEOUT_S = 10.0
_KEY_PREFIX = "smprof/clock"

_lock = threading.Lock()
# Rounds taken, per rank (one in a process, but any in a test): the number
# names a round's keys, so the ranks must take their rounds in the same order.
_rounds_taken: dict[int, int] = {}
_automatic_off = False  # after a failed automatic round: no more waiting in this process


class Exchange(Protocol):
    """What ``align_clocks`` talks through: a key-value store every rank reaches."""

    def set(self, key: str, value: bytes) -> None:
        """Publish ``value`` under ``key``."""

    def get(self, key: str, timeout_s: float) -> bytes:
        """The value under ``key`` once it is set; raises if none comes within ``timeout_s``."""


class TorchStoreExchange:
    """An ``Exchange`` over a ``torch.distributed.Store`` (TCPStore, FileStore, PrefixStore...)."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def set(self, key: str, value: bytes) -> None:
        self._store.set(key, value)

    def get(self, key: str, timeout_s: float) -> bytes:
        self._store.wait([key], timedelta(seconds=max(timeout_s, 0.001)))
        value = bytes(self._store.get(key))
        try:
            self._store.delete_key(key)  # each key is read once: keep the store small
        except Exception:  # a store without deletion: the key stays, harmless
            pass
        return value


def align_clocks(
    exchange: Exchange | None = None,
    *,
    rank: int | None = None,
    world_size: int | None = None,
    phase: str = "manual",
    samples: int = SAMPLES,
    timeout_s: float = TIMEOUT_S,
) -> str | None:
    """Measure this rank's clock against rank 0's and record it in the running session.

    Every rank of the job calls it at about the same time, in the same order
    as its other rounds. Without ``exchange``, torch.distributed's default
    store, rank and world size are used (the process group must be
    initialised). Returns None, or the problem (also warned, and recorded in
    the trace): a timeout, a peer that did not answer.
    """
    if not _smppy.is_profiling():
        return None
    if samples < 1:
        raise ValueError("samples must be at least 1")
    try:
        if exchange is None:
            exchange, rank, world_size = _torch_default(rank, world_size)
        if rank is None or world_size is None:
            raise ValueError("rank and world_size are needed with an exchange")
    except Exception as e:
        return _failed(phase, f"{type(e).__name__}: {e}")
    if world_size < 2:
        return None
    with _lock:
        round_id = _rounds_taken.get(rank, 0)
        _rounds_taken[rank] = round_id + 1
    prefix = f"{_KEY_PREFIX}/{round_id}"
    deadline = time.monotonic() + timeout_s
    if rank == 0:
        offset = _smppy.clock_offset_ns()  # the one the ranks get, and recorded with the round
        problem = _serve(exchange, prefix, offset, world_size, samples, deadline)
        message = _smppy.record_clock_alignment(phase, 0, socket.gethostname(), offset, [], problem)
    else:
        reference, measured, problem = _measure(exchange, prefix, rank, samples, deadline)
        offset, host = reference
        message = _smppy.record_clock_alignment(phase, 0, host, offset, measured, problem)
    problem = problem or message or ""
    if problem:
        _warn(phase, problem)
    return problem or None


def align_automatically(phase: str, timeout_s: float) -> None:
    """A round at a session's start or stop when torch.distributed is initialised; after one failure, none."""
    global _automatic_off
    if _automatic_off:
        return
    dist = _initialised_distributed()
    if dist is None or dist.get_world_size() < 2:
        return
    if align_clocks(phase=phase, timeout_s=timeout_s) is not None:
        _automatic_off = True


def _initialised_distributed() -> Any:
    torch = sys.modules.get("torch")
    dist = getattr(torch, "distributed", None) if torch is not None else None
    try:
        return dist if dist is not None and dist.is_available() and dist.is_initialized() else None
    except Exception:
        return None


def _torch_default(rank: int | None, world_size: int | None) -> tuple[Exchange, int, int]:
    dist = _initialised_distributed()
    if dist is None:
        raise RuntimeError("torch.distributed is not initialised; pass an exchange")
    store = dist.distributed_c10d._get_default_store()
    return (
        TorchStoreExchange(store),
        dist.get_rank() if rank is None else rank,
        dist.get_world_size() if world_size is None else world_size,
    )


def _serve(
    exchange: Exchange, prefix: str, offset: int, world_size: int, samples: int, deadline: float
) -> str:
    """Rank 0: send its clock offset, answer every rank's requests in turn; the problem, or ""."""
    exchange.set(f"{prefix}/reference", f"{offset},{socket.gethostname()}".encode())
    silent = []
    for peer in range(1, world_size):
        try:
            for i in range(samples):
                exchange.get(f"{prefix}/ask/{peer}/{i}", deadline - time.monotonic())
                received = time.monotonic_ns()
                sent = time.monotonic_ns()
                exchange.set(f"{prefix}/answer/{peer}/{i}", f"{received},{sent}".encode())
        except Exception:
            silent.append(peer)
    return f"no answer from ranks {_ranges(silent)} within the timeout" if silent else ""


def _measure(
    exchange: Exchange, prefix: str, rank: int, samples: int, deadline: float
) -> tuple[tuple[int, str], list[tuple[int, int, int, int]], str]:
    """A rank: round trips with rank 0; ((its clock offset, host), samples, problem)."""
    measured: list[tuple[int, int, int, int]] = []
    try:
        offset, _, host = (
            exchange.get(f"{prefix}/reference", deadline - time.monotonic()).decode().partition(",")
        )
        reference = (int(offset), host)
    except Exception as e:
        return (0, ""), measured, f"rank 0 did not answer within the timeout ({type(e).__name__})"
    try:
        for i in range(samples):
            sent = time.monotonic_ns()
            exchange.set(f"{prefix}/ask/{rank}/{i}", b"")
            answer = exchange.get(f"{prefix}/answer/{rank}/{i}", deadline - time.monotonic())
            received = time.monotonic_ns()
            t1, _, t2 = answer.decode().partition(",")
            measured.append((sent, int(t1), int(t2), received))
    except Exception as e:
        return (
            reference,
            measured,
            f"{len(measured)} of {samples} round trips within the timeout ({type(e).__name__})",
        )
    return reference, measured, ""


def _ranges(values: list[int]) -> str:
    """[1, 2, 3, 7] -> "1-3,7"."""
    parts: list[str] = []
    for v in values:
        if parts and parts[-1].split("-")[-1] == str(v - 1):
            parts[-1] = f"{parts[-1].split('-')[0]}-{v}"
        else:
            parts.append(str(v))
    return ",".join(parts)


def _failed(phase: str, problem: str) -> str:
    message = _smppy.record_clock_alignment(phase, 0, "", 0, [], problem)
    _warn(phase, problem if message is None else f"{problem}; {message}")
    return problem


def _warn(phase: str, problem: str) -> None:
    warnings.warn(
        f"smppy clock alignment ({phase}): {problem}; ranks are placed by their own clocks where it failed",
        RuntimeWarning,
        stacklevel=3,
    )
