#!/usr/bin/env python3
"""smppy next to torch.profiler on one real training loop: step-time overhead, events, bytes, peak memory.

    python3 bench/compare_torch_profiler.py             # full run, about 4 minutes
    python3 bench/compare_torch_profiler.py --quick     # smoke run, about 10 s
    python3 bench/compare_torch_profiler.py --markdown  # full run, results into docs/BENCHMARKS.md

Two models, trained on synthetic data (made here, no download), one intra-op
thread on the CPU (the GPU when there is one):

- ``large``: a small CNN on 32x32 images, steps of tens of ms, dominated by
  compute;
- ``tiny``: six residual LayerNorm-Linear-GELU blocks 32 wide, batch 8, Adam:
  about a thousand small ops per step of a few ms, bound by op dispatch, where
  profilers that record every op suffer most.

Each step carries the same six annotations (``step`` around ``data``,
``forward``, ``loss``, ``backward``, ``optimizer``; bench_common.Trainer). The
variants: no profiler; smppy with those annotations, CPU sampling and perf
counters on (``EnablePerf=1``); smppy's automatic PyTorch mode
(``TorchAutoSteps=1``, what ``smprof run`` uses) on the loop without
annotations; torch.profiler (CPU activity; CUDA too on a
GPU) with the same names as ``record_function``, exporting its Chrome JSON;
and, with a GPU, smppy with GPU collection on (``EnableCuda=1``).

Every repetition of every variant runs in a process of its own, forked from
this one after ``import torch`` (spawned fresh with ``--spawn``, and always on
a GPU: CUDA does not survive a fork), so that peak RSS is the variant's own and
no profiler state leaks into the next. The repetitions are interleaved, the
variants' order rotating.

Inside a process: warm-up steps; then plain blocks alternating with profiled
blocks (each profiled block a profiling session of its own), a fraction of a
second each, plain first and last; then one longer session whose trace is
measured (for smppy, also the same steps with only the annotation collector
on, for the like-for-like size). The step time on this kind of machine drifts
by 10-30% over seconds, so a profiled block is compared with the plain blocks
on either side of it: a process's overhead is the median over its profiled
blocks of (block's median step) / (mean of its neighbours' median steps). For
"no profiler" the profiled blocks are plain too: its row is the method's noise
floor. The CPU-time overhead is the same with the process's CPU time per step
(all threads, so a profiler's background threads count). The first steps of
every block are not timed (warm-up); the traces hold them.

After the timed part each process reads its own trace: smppy's with
``smppy.analysis.trace`` (every event type: annotations, counter samples, ...; the
header's list of active collectors), torch.profiler's JSON event by event
(count and bytes by category; gzip level 6 of the file). Peak RSS is VmHWM,
read before any trace is analysed. Everything is written under a temporary
directory, removed at exit. How busy the machine was with other work is
printed with the results. Targets are printed and never asserted; the
statistics, targets, tables and the Markdown section are in
comparison_report.py. ``--variants`` adds diagnostics: ``smppy-annotations``
(a session with every collector but the annotations off), ``smppy-noperf``
(the default collection less the perf counters) and ``smppy-off`` (the
annotated loop with no session).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import smppy
import smppy.analysis.trace
import torch
import torch._dynamo  # noqa: F401  (the optimizers import it lazily: once here, not in every fork)
import torch.nn as nn
from bench_common import (
    PHASES,
    MachineLoad,
    Trainer,
    installed_package_state,
    machine_line,
    measure_chrome_trace,
)
from comparison_report import (
    DOC,
    Report,
    Row,
    fmt_pct,
    markdown,
    print_report,
    profiled_steps,
    run_overhead,
    write_markdown,
)
from torch.profiler import ProfilerActivity

# ---------------------------------------------------------------- the models


def _batches(device: torch.device, n: int, make: Callable[[torch.Generator], tuple[torch.Tensor, ...]]):
    g = torch.Generator().manual_seed(0)
    return [tuple(t.to(device) for t in make(g)) for _ in range(n)]


def build_large(device: torch.device, batch: int) -> Trainer:
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 8 * 8, 10),
    ).to(device)
    batches = _batches(
        device,
        8,
        lambda g: (torch.randn(batch, 3, 32, 32, generator=g), torch.randint(0, 10, (batch,), generator=g)),
    )
    return Trainer(model, batches, nn.CrossEntropyLoss(), torch.optim.Adam(model.parameters(), lr=1e-3))


class ResidualBlock(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + nn.functional.gelu(self.fc(self.norm(x)))


def build_tiny(device: torch.device, batch: int) -> Trainer:
    torch.manual_seed(0)
    width = 32
    model = nn.Sequential(*[ResidualBlock(width) for _ in range(6)], nn.Linear(width, 4)).to(device)
    batches = _batches(
        device,
        16,
        lambda g: (torch.randn(batch, width, generator=g), torch.randint(0, 4, (batch,), generator=g)),
    )
    return Trainer(model, batches, nn.CrossEntropyLoss(), torch.optim.Adam(model.parameters(), lr=1e-3))


class Plan(NamedTuple):
    """The steps of one process."""

    warmup: int  # plain steps first, untimed
    rounds: int  # profiled blocks, each between two plain blocks
    skip: int  # untimed steps at the start of each block
    steps: int  # timed steps per block
    session_steps: int  # steps of the session whose trace is measured


@dataclass(frozen=True)
class Model:
    key: str
    build: Callable[[torch.device, int], Trainer]
    batch: dict[str, int]  # by device type
    full: Plan
    quick: Plan

    def describe(self, device: str) -> str:
        if self.key == "large":
            return (
                f"CNN: conv 3-16-32-64 (3x3) with ReLU and 2 max-pools, linear 4096-10; "
                f"32x32 images, batch {self.batch[device]}, Adam"
            )
        return (
            f"6 residual blocks (LayerNorm, Linear 32-32, GELU), linear 32-4; "
            f"batch {self.batch[device]}, Adam (per-parameter loop)"
        )


MODELS = {
    "large": Model(
        "large", build_large, {"cpu": 16, "cuda": 4096}, full=Plan(5, 16, 1, 3, 60), quick=Plan(1, 2, 0, 2, 3)
    ),
    "tiny": Model(
        "tiny", build_tiny, {"cpu": 8, "cuda": 8}, full=Plan(30, 16, 2, 20, 120), quick=Plan(3, 2, 1, 4, 10)
    ),
}

VARIANTS = {
    "none": "no profiler",
    "smppy": "smppy",
    "torch": "torch.profiler",
    "smppy-gpu": "smppy, GPU collection on",
    # The loop with no annotations, smppy's automatic PyTorch mode annotating it
    # (TorchAutoSteps=1: ProfilerStep#N from the optimizer, Backward), as
    # `smprof run` profiles an unmodified script.
    "smppy-auto": "smppy automatic mode (TorchAutoSteps=1)",
    # Diagnostics, not run by default (--variants): where smppy's cost comes from.
    "smppy-annotations": "smppy, annotations only",
    "smppy-noperf": "smppy without perf counters",
    "smppy-off": "smppy calls, not profiling",
}
DEFAULT_VARIANTS = ["none", "smppy", "smppy-auto", "torch"]

ANNOTATIONS_ONLY = {"EnablePerf": "0", "EnableCuda": "0", "CpuProfilingDurationS": "0"}


# ---------------------------------------------------------------- one repetition, in its own process


def proc_status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def smppy_config(spec: dict[str, Any], directory: str) -> dict[str, str]:
    config = {
        "RecordFile": os.path.join(directory, "rank%r_pid%p_s%s.smprof"),
        "EnableCuda": "1" if spec["variant"] == "smppy-gpu" else "0",
        "EnablePerf": "1",  # perf counters; CPU sampling is on by default (CpuProfilingDurationS)
    }
    config.update(spec["smppy_settings"])
    if spec["variant"] == "smppy-auto":
        config["TorchAutoSteps"] = "1"
    if spec["variant"] == "smppy-annotations":
        config.update(annotations_only_config())
    if spec["variant"] == "smppy-noperf":
        config["EnablePerf"] = "0"
    return config


def annotations_only_config() -> dict[str, str]:
    """Every collector off but the annotations (CpuProfilingDurationS only where the build knows it)."""
    keys = smppy.Config.keys()
    return {k: v for k, v in ANNOTATIONS_ONLY.items() if k in keys}


def read_smppy(directory: str) -> dict[str, Any]:
    """Bytes on disk, every event by type (counted through ``iter_events``, so
    each event type the reader knows is included), the collectors and drops."""
    files = smppy.analysis.trace.find_trace_files(directory)
    out: dict[str, Any] = {
        "files": len(files),
        "bytes": sum(os.path.getsize(p) for p in files),
        "by_type": Counter(),
        "annotations_by_name": Counter(),
        "counters_by_name": Counter(),
        "collectors": [],
        "dropped": 0,
        "problems": [],
    }
    for event in smppy.analysis.trace.iter_events(directory):
        if event["type"] == "file":
            continue
        out["by_type"][event["type"]] += 1
        if event["type"] == "annotation":
            out["annotations_by_name"][event["name"]] += 1
        elif event["type"] == "counter":
            out["counters_by_name"][event["name"]] += 1
    for path in files:
        trace = smppy.analysis.trace.open_trace(path)
        out["collectors"] = trace.header.get("collectors", [])
        out["config"] = trace.header.get("config", {})
        for _ in trace.frames():
            pass
        if trace.problem:
            out["problems"].append(f"{path.name}: {trace.problem}")
        if trace.footer is None:
            out["problems"].append(f"{path.name}: no footer")
        else:
            out["dropped"] += sum(
                v for k, v in trace.footer.items() if k.endswith("dropped") and isinstance(v, int)
            )
    out["events"] = sum(out["by_type"].values())
    return out


def read_torch(path: str) -> dict[str, Any]:
    t = measure_chrome_trace(path, select=PHASES)
    os.remove(path)
    return {
        "bytes": t.bytes,
        "gz_bytes": t.gz_bytes,
        "events": t.events,
        "by_kind": dict(t.by_kind),
        "bytes_by_kind": dict(t.bytes_by_kind),
        "annotations": t.annotations,
        "selected": t.selected,
        "selected_bytes": t.selected_bytes,
        "selected_gz_bytes": t.selected_gz_bytes,
    }


class Session:
    """How one variant profiles a run of steps: ``block(n)`` is a short session
    whose steps are timed, ``measured(n)`` the session whose trace is kept."""

    def __init__(self, trainer: Trainer, spec: dict[str, Any], directory: str) -> None:
        self.trainer = trainer
        self.spec = spec
        self.directory = directory
        self.costs = {"start_s": 0.0, "stop_s": 0.0, "export_s": 0.0}
        self.trace_path = ""

    def block(self, steps: int) -> list[int]:
        return self.trainer.run_plain(steps)

    def measured(self, steps: int) -> list[int]:
        return self.block(steps)

    def read_trace(self) -> dict[str, Any] | None:
        return None

    def annotations_only(self, steps: int) -> dict[str, Any] | None:
        return None


class SmppySession(Session):
    def _run(self, steps: int, directory: str, overrides: dict[str, str] | None = None) -> list[int]:
        profiler = smppy.SMProfiler.instance()
        profiler.configure({**smppy_config(self.spec, directory), **(overrides or {})})
        t0 = time.perf_counter()
        profiler.start_profiling()
        t1 = time.perf_counter()
        if not profiler.is_profiling:
            raise RuntimeError("smppy profiling did not start (is SMP_DISABLE set?)")
        times = self._steps(steps)
        t2 = time.perf_counter()
        profiler.stop_profiling()
        self.costs.update(start_s=t1 - t0, stop_s=time.perf_counter() - t2)
        return times

    def _steps(self, steps: int) -> list[int]:
        return self.trainer.run_smppy(steps)

    def block(self, steps: int) -> list[int]:
        return self._run(steps, os.path.join(self.directory, "blocks"))

    def measured(self, steps: int) -> list[int]:
        return self._run(steps, os.path.join(self.directory, "trace"))

    def read_trace(self) -> dict[str, Any]:
        return read_smppy(os.path.join(self.directory, "trace"))

    def annotations_only(self, steps: int) -> dict[str, Any] | None:
        """The same steps with every collector but the annotations off: the bytes
        smppy spends on the information torch.profiler's annotation events hold."""
        if self.spec["variant"] != "smppy":
            return None
        directory = os.path.join(self.directory, "annotations_only")
        self._run(steps, directory, annotations_only_config())
        return read_smppy(directory)


class SmppyAutoSession(SmppySession):
    """The unannotated loop; the automatic mode's hooks annotate it."""

    def _steps(self, steps: int) -> list[int]:
        return self.trainer.run_plain(steps)


class SmppyOffSession(Session):
    """The annotated loop with no session: what the smppy calls cost when they record nothing."""

    def block(self, steps: int) -> list[int]:
        return self.trainer.run_smppy(steps)


class TorchSession(Session):
    def _run(self, steps: int, export: str | None) -> list[int]:
        activities = [ProfilerActivity.CPU]
        if self.trainer.cuda:
            activities.append(ProfilerActivity.CUDA)
        prof = torch.profiler.profile(activities=activities)
        t0 = time.perf_counter()
        prof.start()
        t1 = time.perf_counter()
        times = self.trainer.run_torch(steps)
        t2 = time.perf_counter()
        prof.stop()
        t3 = time.perf_counter()
        if export:
            prof.export_chrome_trace(export)
        self.costs.update(start_s=t1 - t0, stop_s=t3 - t2, export_s=time.perf_counter() - t3)
        return times

    def block(self, steps: int) -> list[int]:
        return self._run(steps, None)  # timed only; the measured session's trace is the one exported

    def measured(self, steps: int) -> list[int]:
        self.trace_path = os.path.join(self.directory, "torch_trace.json")
        return self._run(steps, self.trace_path)

    def read_trace(self) -> dict[str, Any]:
        return read_torch(self.trace_path)


SESSIONS: dict[str, type[Session]] = {
    "none": Session,
    "smppy": SmppySession,
    "torch": TorchSession,
    "smppy-gpu": SmppySession,
    "smppy-auto": SmppyAutoSession,
    "smppy-annotations": SmppySession,
    "smppy-noperf": SmppySession,
    "smppy-off": SmppyOffSession,
}


def run_child(spec: dict[str, Any]) -> dict[str, Any]:
    """One repetition of one variant, in its own process: warm-up; rounds of a
    plain block and a profiled block (a short session of its own), the order
    alternating; then one longer session whose trace is measured."""
    torch.set_num_threads(spec["threads"])
    device = torch.device(spec["device"])
    model = MODELS[spec["model"]]
    trainer = model.build(device, spec["batch"])
    plan = Plan(*spec["plan"])
    directory = os.path.join(spec["tmpdir"], f"rep{spec['rep']}_{model.key}_{spec['variant']}")
    os.makedirs(directory)
    session = SESSIONS[spec["variant"]](trainer, spec, directory)
    result: dict[str, Any] = {"rss_start_kb": proc_status_kb("VmRSS")}
    if device.type == "cuda":
        result["gpu"] = torch.cuda.get_device_name(device)

    trainer.run_plain(plan.warmup)
    # Plain and profiled blocks strictly alternate, plain first and last, so that
    # every profiled block has a plain one on either side.
    blocks: list[tuple[list[int], list[int]]] = []  # (wall ns, CPU ns) of the timed steps
    n, skip = plan.skip + plan.steps, plan.skip
    for i in range(2 * plan.rounds + 1):
        times = trainer.run_plain(n) if i % 2 == 0 else session.block(n)
        blocks.append((times[skip:], trainer.cpu_ns[skip:]))
    session.measured(plan.session_steps)
    result["peak_rss_kb"] = proc_status_kb("VmHWM")  # before any trace is read
    result.update(session.costs)
    result["blocks"] = blocks
    result["session_steps"] = plan.session_steps
    trace = session.read_trace()
    if trace is not None:
        result["trace"] = trace
    only = session.annotations_only(plan.session_steps)
    if only is not None:
        result["annotations_only"] = only
    return result


def launch_fork(spec: dict[str, Any]) -> dict[str, Any]:
    """Runs ``run_child`` in a forked process; its stderr goes to a file, shown if it fails."""
    read_fd, write_fd = os.pipe()
    with tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 1
            try:
                os.close(read_fd)
                os.dup2(err.fileno(), 2)
                result = run_child(spec)
                with os.fdopen(write_fd, "w") as f:
                    json.dump(result, f)
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code)
        os.close(write_fd)
        with os.fdopen(read_fd) as f:
            data = f.read()
        _, status, _ = os.wait4(pid, 0)
        if status != 0 or not data:
            err.seek(0)
            tail = err.read().decode(errors="replace")[-4000:]
            raise RuntimeError(f"{spec['model']}/{spec['variant']} failed (wait status {status}):\n{tail}")
    return json.loads(data)


def launch_spawn(spec: dict[str, Any]) -> dict[str, Any]:
    """Runs ``run_child`` in a fresh interpreter (needed for CUDA, which does not survive a fork)."""
    # The spec goes through stdin: on the command line it would land in smppy's trace header (argv).
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child"],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"{spec['model']}/{spec['variant']} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
        )
    return json.loads(lines[-1])


def gpu_available() -> bool:
    """Asked in a separate interpreter, so that this process never initialises CUDA before forking."""
    if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
        return False
    proc = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.cuda.is_available())"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.stdout.strip().endswith("True")


def plan_text(plan: Plan) -> str:
    return (
        f"Per process: {plan.warmup} warm-up steps; {plan.rounds + 1} plain blocks alternating with "
        f"{plan.rounds} profiled ones (each a session of its own), every block {plan.skip} untimed + "
        f"{plan.steps} timed steps; then one session of {plan.session_steps} steps, whose trace is measured."
    )


# ---------------------------------------------------------------- main

DEFAULT_REPS = 5


def command_line(args: argparse.Namespace) -> str:
    """The command that reproduces this run, for the Markdown section."""
    cmd = "python3 bench/compare_torch_profiler.py" + (" --quick" if args.quick else "") + " --markdown"
    for key, value in sorted(args.smppy_settings.items()):
        cmd += f" --smppy {key}={value}"
    if args.reps != (1 if args.quick else DEFAULT_REPS):
        cmd += f" --reps {args.reps}"
    if args.models != "large,tiny":
        cmd += f" --models {args.models}"
    if args.variants != ",".join(DEFAULT_VARIANTS):
        cmd += f" --variants {args.variants}"
    if args.threads != 1:
        cmd += f" --threads {args.threads}"
    return cmd


def parse_settings(values: list[str]) -> dict[str, str]:
    settings = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--smppy takes KEY=VALUE, not {item!r}")
        settings[key] = value
    return settings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 repetition, few steps, ~10 s")
    parser.add_argument("--reps", type=int, help=f"repetitions per variant (default {DEFAULT_REPS}, quick 1)")
    parser.add_argument("--models", default="large,tiny", help="comma-separated: large, tiny")
    parser.add_argument(
        "--variants",
        default=",".join(DEFAULT_VARIANTS),
        help=f"comma-separated, from: {', '.join(VARIANTS)} (default: %(default)s; smppy-gpu added on a GPU)",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--spawn", action="store_true", help="a fresh interpreter per repetition, not a fork")
    parser.add_argument(
        "--smppy",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra smppy config for its variants",
    )
    parser.add_argument(
        "--markdown",
        nargs="?",
        const=str(DOC),
        metavar="PATH",
        help="also write the results into PATH (default docs/BENCHMARKS.md), between its marks",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # spec on stdin
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_child(json.loads(sys.stdin.read()))))
        return 0
    args.reps = args.reps or (1 if args.quick else DEFAULT_REPS)
    args.smppy_settings = parse_settings(args.smppy)
    smppy.Config(args.smppy_settings).validated()  # a bad key fails here, not in a child
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    for m in models:
        if m not in MODELS:
            parser.error(f"unknown model {m!r}; choose from {', '.join(MODELS)}")

    skipped = []
    has_gpu = args.device != "cpu" and gpu_available()
    if args.device == "cuda" and not has_gpu:
        parser.error("--device cuda: no GPU is available")
    device = "cuda" if has_gpu else "cpu"
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    for v in variants:
        if v not in VARIANTS:
            parser.error(f"unknown variant {v!r}; choose from {', '.join(VARIANTS)}")
    if "none" not in variants:
        variants.insert(0, "none")
    if has_gpu and "smppy-gpu" not in variants:
        variants.append("smppy-gpu")
    elif not has_gpu:
        if "smppy-gpu" in variants:
            variants.remove("smppy-gpu")
        skipped.append(f"{VARIANTS['smppy-gpu']}: skipped, no GPU (torch.cuda.is_available() is False)")
    launch = launch_spawn if (args.spawn or has_gpu) else launch_fork

    started = datetime.now(timezone.utc)
    print(
        f"compare_torch_profiler: smppy {smppy.__version__}, torch {torch.__version__}, "
        f"Python {platform.python_version()}, {'quick' if args.quick else 'full'} mode, {args.reps} reps, "
        f"device {device}, {args.threads} thread(s), {'spawned' if launch is launch_spawn else 'forked'} "
        "process per repetition"
    )
    print(machine_line())
    print(f"smppy {installed_package_state()}")
    for line in skipped:
        print(f"note: {line}")
    sys.stdout.flush()
    t_start = time.perf_counter()
    load = MachineLoad()
    rows: dict[tuple[str, str], Row] = {}
    with tempfile.TemporaryDirectory(prefix="smprof-vs-torch-") as tmpdir:
        for rep in range(args.reps):
            for model in models:
                m = MODELS[model]
                for i in range(len(variants)):
                    variant = variants[(rep + i) % len(variants)]
                    spec = {
                        "model": model,
                        "variant": variant,
                        "rep": rep,
                        "device": device,
                        "batch": m.batch[device],
                        "threads": args.threads,
                        "plan": m.quick if args.quick else m.full,
                        "tmpdir": tmpdir,
                        "smppy_settings": args.smppy_settings,
                    }
                    result = launch(spec)
                    rows.setdefault((model, variant), Row(model, variant, [])).runs.append(result)
                    for problem in result.get("trace", {}).get("problems", []):
                        print(f"warning: {model}/{variant}: {problem}")
                    o = run_overhead(result)
                    print(
                        f"  rep {rep + 1}/{args.reps} {model:<5} {VARIANTS[variant]:<26} "
                        f"step {statistics.median(profiled_steps(result)) / 1e6:8.3f} ms  {fmt_pct(o):>7}  "
                        f"({time.perf_counter() - t_start:.0f} s)",
                        file=sys.stderr,
                        flush=True,
                    )
    rep = Report(
        command=command_line(args),
        reps=args.reps,
        threads=args.threads,
        device=device,
        variant_names=VARIANTS,
        descriptions={m: MODELS[m].describe(device) for m in models},
        plans={m: plan_text(MODELS[m].quick if args.quick else MODELS[m].full) for m in models},
        models=models,
        variants=[v for v in variants if any((m, v) in rows for m in models)],
        rows=rows,
        skipped=skipped,
        started=started,
        seconds=time.perf_counter() - t_start,
        load=load.finish(),
    )
    print_report(rep)
    if args.markdown:
        write_markdown(Path(args.markdown), markdown(rep))
        print(f"results written into {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
