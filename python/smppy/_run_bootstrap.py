"""How a Python process started under ``smprof run`` profiles itself from
interpreter start-up (docs/RUN.md). ``smprof run`` passes its settings in
SMP_* environment variables, which libsmprof reads as it does for the API."""

from __future__ import annotations

import os
import sys

# Python launchers that only start the processes that train, and
# multiprocessing's bookkeeping process: not profiled.
LAUNCHER_MODULES = ("torch.distributed.run", "torch.distributed.launch")
LAUNCHER_SCRIPTS = ("torchrun",)
HELPER_MARKERS = ("multiprocessing.resource_tracker",)
# Command lines of multiprocessing's spawn and forkserver children (DataLoader
# workers, Pool processes): workers of the rank that started them.
WORKER_MARKERS = ("--multiprocessing-fork", "multiprocessing.spawn", "multiprocessing.forkserver")


def command_line() -> list[str]:
    """This process's command line, as the kernel has it (sys.argv is not set yet)."""
    try:
        with open("/proc/self/cmdline", "rb") as f:
            return [arg.decode(errors="replace") for arg in f.read().split(b"\0") if arg]
    except OSError:
        return list(getattr(sys, "orig_argv", sys.argv))


def is_launcher(argv: list[str]) -> bool:
    """Whether ``argv`` runs torchrun (or torch.distributed.launch), or a
    multiprocessing helper."""
    if any(marker in arg for arg in argv for marker in HELPER_MARKERS):
        return True
    for i, arg in enumerate(argv[1:3], start=1):
        if os.path.basename(arg) in LAUNCHER_SCRIPTS:
            return True
        if arg == "-m" and i + 1 < len(argv) and argv[i + 1] in LAUNCHER_MODULES:
            return True
    return False


def is_worker(argv: list[str]) -> bool:
    """Whether ``argv`` is a spawn or forkserver child of multiprocessing."""
    return any(marker in arg for arg in argv for marker in WORKER_MARKERS)


def start_from_environment() -> None:
    """Start this process's profiler if ``smprof run`` started it: with the
    schedule and the PyTorch hooks, the first step opening at the first
    batch fetch, backward or optimizer step."""
    argv = command_line()
    if os.environ.get("SMP_RUN") != "1" or is_launcher(argv):
        return
    from smppy._profiler import SMProfiler

    profiler = SMProfiler.instance()
    try:
        profiler.configure({"ProcessRole": "worker"} if is_worker(argv) else {})
    except ValueError as e:
        print(f"smprof run: profiling is off in pid {os.getpid()}: {e}", file=sys.stderr)
        return
    profiler._start(open_first_step=False, stacklevel=2)
