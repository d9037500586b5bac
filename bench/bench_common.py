"""What the Python benchmarks share: the annotated training loop, the machine
description, and the measurement of a torch.profiler Chrome trace.

Imported by the scripts beside it (``python3 bench/<script>.py`` puts
``bench/`` on ``sys.path``).
"""

from __future__ import annotations

import gzip
import json
import os
import platform
import resource
import subprocess
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import smppy
import torch
import torch.nn as nn
from torch.profiler import record_function

REPO = Path(__file__).resolve().parents[1]
CLOCKSOURCE = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

# The annotations of one training step: ``step`` around five phases.
PHASES = ("step", "data", "forward", "loss", "backward", "optimizer")


class Trainer:
    """One training step, run three ways with identical work: plain, annotated
    with smppy (three ``with smppy.annotate``, three ``annotation_begin/end``),
    and annotated with torch's ``record_function`` under the same names.

    Each ``run_*`` returns the wall time of every step in ns, and leaves the
    process CPU time of every step (all threads: the profilers' own included)
    in ``cpu_ns``. On a CUDA device each step ends with a synchronisation, so
    that it is timed whole.
    """

    def __init__(
        self,
        model: nn.Module,
        batches: Sequence[tuple[torch.Tensor, torch.Tensor]],
        loss_fn: nn.Module,
        optimizer: torch.optim.Optimizer,
    ) -> None:
        self.model = model
        self.batches = list(batches)
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.cuda = self.batches[0][0].is_cuda
        self.cpu_ns: list[int] = []

    def _sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def run_plain(self, steps: int) -> list[int]:
        times = []
        self.cpu_ns = cpu = []
        for i in range(steps):
            t0, c0 = time.perf_counter_ns(), time.process_time_ns()
            x, y = self.batches[i % len(self.batches)]
            logits = self.model(x)
            loss = self.loss_fn(logits, y)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self._sync()
            times.append(time.perf_counter_ns() - t0)
            cpu.append(time.process_time_ns() - c0)
        return times

    def run_smppy(self, steps: int) -> list[int]:
        times = []
        self.cpu_ns = cpu = []
        for i in range(steps):
            t0, c0 = time.perf_counter_ns(), time.process_time_ns()
            with smppy.annotate("step"):
                h = smppy.annotation_begin("data")
                x, y = self.batches[i % len(self.batches)]
                smppy.annotation_end(h)
                with smppy.annotate("forward"):
                    logits = self.model(x)
                h = smppy.annotation_begin("loss")
                loss = self.loss_fn(logits, y)
                smppy.annotation_end(h)
                with smppy.annotate("backward"):
                    self.optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                h = smppy.annotation_begin("optimizer")
                self.optimizer.step()
                smppy.annotation_end(h)
                self._sync()
            times.append(time.perf_counter_ns() - t0)
            cpu.append(time.process_time_ns() - c0)
        return times

    def run_torch(self, steps: int) -> list[int]:
        times = []
        self.cpu_ns = cpu = []
        for i in range(steps):
            t0, c0 = time.perf_counter_ns(), time.process_time_ns()
            with record_function("step"):
                with record_function("data"):
                    x, y = self.batches[i % len(self.batches)]
                with record_function("forward"):
                    logits = self.model(x)
                with record_function("loss"):
                    loss = self.loss_fn(logits, y)
                with record_function("backward"):
                    self.optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                with record_function("optimizer"):
                    self.optimizer.step()
                self._sync()
            times.append(time.perf_counter_ns() - t0)
            cpu.append(time.process_time_ns() - c0)
        return times


@dataclass
class ChromeTrace:
    """A torch.profiler Chrome trace, measured: sizes, and its ``traceEvents``
    counted and sized (in the file's own bytes) by phase and category."""

    bytes: int = 0
    gz_bytes: int = 0  # the whole file, gzip level 6
    events: int = 0  # every entry of traceEvents (metadata, flows and instants too)
    complete: int = 0  # "X" events: ops and annotations
    annotations: int = 0  # "X" events of category user_annotation
    by_kind: Counter[str] = field(default_factory=Counter)  # "X cpu_op", "s fwdbwd", "M", ...
    bytes_by_kind: Counter[str] = field(default_factory=Counter)
    # The events named in ``select`` (user_annotation only): their count, the
    # bytes they take in the file, and those bytes gzipped on their own.
    selected: int = 0
    selected_bytes: int = 0
    selected_gz_bytes: int = 0


def measure_chrome_trace(path: str | os.PathLike[str], select: Iterable[str] = ()) -> ChromeTrace:
    """Sizes and counts of the Chrome trace at ``path``. Each event is sized by
    its own text in the file (from its ``{`` to its ``}``), so the bytes of a
    category, or of the annotations in ``select``, add up to the file's."""
    with open(path, "rb") as f:
        data = f.read()
    out = ChromeTrace(bytes=len(data), gz_bytes=len(gzip.compress(data, compresslevel=6)))
    text = data.decode("utf-8")
    names = set(select)
    selected: list[str] = []
    decoder = json.JSONDecoder()
    pos = text.index("[", text.index('"traceEvents"')) + 1
    end = len(text)
    while pos < end:
        c = text[pos]
        if c in " \t\r\n,":
            pos += 1
            continue
        if c == "]":
            break
        event, stop = decoder.raw_decode(text, pos)
        ph, cat = event.get("ph", "?"), event.get("cat")
        kind = f"{ph} {cat}" if cat else ph
        out.events += 1
        out.by_kind[kind] += 1
        out.bytes_by_kind[kind] += stop - pos
        if ph == "X":
            out.complete += 1
            if cat == "user_annotation":
                out.annotations += 1
                if event.get("name") in names:
                    selected.append(text[pos:stop])
        pos = stop
    out.selected = len(selected)
    out.selected_bytes = sum(len(s.encode()) for s in selected)
    if selected:
        subset = ('{"traceEvents": [\n' + ",\n".join(selected) + "\n]}\n").encode()
        out.selected_gz_bytes = len(gzip.compress(subset, compresslevel=6))
    return out


def read_first(path: str, prefix: str | None = None) -> str:
    """The first line of ``path``, or the value of its first ``prefix: value`` line; "?" if none."""
    try:
        with open(path) as f:
            for line in f:
                if prefix is None:
                    return line.strip()
                if line.startswith(prefix):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def machine_line() -> str:
    """One line: cpus, CPU model, clocksource."""
    return (
        f"machine: {os.cpu_count()} cpus, {read_first('/proc/cpuinfo', 'model name')}, clocksource "
        f"{read_first(CLOCKSOURCE)}"
    )


def git_commit() -> str:
    """The repository's short commit, with "+ local changes" when the tree is dirty; "?" outside git."""
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"
    return f"{head} + local changes" if head and dirty else head or "?"


def os_name() -> str:
    """PRETTY_NAME from /etc/os-release, or "?"."""
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return "?"


def installed_package_state() -> str:
    """Whether the installed smppy's Python files are those of this working tree
    (the compiled part cannot be compared this way)."""
    installed = Path(smppy.__file__).parent
    tree = REPO / "python" / "smppy"
    if not tree.is_dir():
        return f"installed at {installed}"
    differ = [
        p.name
        for p in sorted(tree.glob("*.py"))
        if not (installed / p.name).is_file() or (installed / p.name).read_bytes() != p.read_bytes()
    ]
    if differ:
        return f"installed; its {', '.join(differ)} differ from the working tree's: reinstall"
    return "installed from this working tree (`pip install --no-build-isolation .`)"


def machine_description() -> list[tuple[str, str]]:
    """The machine, as rows of (what, value), for a results table."""
    mem_kb = read_first("/proc/meminfo", "MemTotal").split()
    memory = f"{int(mem_kb[0]) / (1 << 20):.0f} GiB" if mem_kb and mem_kb[0].isdigit() else "?"
    uname = platform.uname()
    cuda = "CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda} build"
    return [
        ("`nproc`", str(os.cpu_count())),
        ("CPU (`/proc/cpuinfo`)", f"`{read_first('/proc/cpuinfo', 'model name')}`"),
        ("kernel", f"Linux {uname.release} {uname.machine}"),
        ("clocksource", f"`{read_first(CLOCKSOURCE)}`"),
        ("memory", memory),
        ("OS", os_name()),
        ("Python, torch", f"CPython {platform.python_version()}, torch {torch.__version__} ({cuda})"),
        ("smppy", f"{smppy.__version__}, {installed_package_state()}"),
    ]


class MachineLoad:
    """How busy the machine was with other work while this benchmark ran: CPU
    time of the whole machine (/proc/stat) less that of this process and its
    children, as a share of all CPUs."""

    def __init__(self) -> None:
        self.start = self._snapshot()
        self.loadavg = [self._loadavg()]

    @staticmethod
    def _loadavg() -> str:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]

    @staticmethod
    def _snapshot() -> tuple[float, float, float]:
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:9]]
        busy = (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # less idle and iowait
        ours = 0.0
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
            ru = resource.getrusage(who)
            ours += ru.ru_utime + ru.ru_stime
        return time.monotonic(), busy, ours

    def finish(self) -> str:
        t1, busy1, ours1 = self._snapshot()
        t0, busy0, ours0 = self.start
        self.loadavg.append(self._loadavg())
        others = max(0.0, (busy1 - busy0) - (ours1 - ours0)) / max(1e-9, (t1 - t0) * (os.cpu_count() or 1))
        return (
            f"other processes used {others * 100:.0f}% of the machine's CPU time during the run "
            f"(load average {self.loadavg[0]} at the start, {self.loadavg[1]} at the end)"
        )
