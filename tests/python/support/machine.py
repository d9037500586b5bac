"""What the tests may ask of the machine they run on, read the way libsmprof reads it (docs/TESTING.md,
"What the tests may not assume"): the online CPUs, the CPUs this process may use, whether a CUDA driver
library loads."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from functools import cache

ONLINE_CPUS = "/sys/devices/system/cpu/online"


def parse_cpu_list(text: str) -> list[int]:
    """A kernel CPU list ("0-3,6,8-9") as CPU numbers."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        first, _, last = part.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def online_cpus() -> list[int]:
    """The online CPUs, by number (not necessarily 0..n-1): the per-CPU tracks and the host's cores
    in a summary are these."""
    with open(ONLINE_CPUS) as f:
        return parse_cpu_list(f.read())


def usable_cpus() -> set[int]:
    """The CPUs this process may run on (its affinity: a cpuset may leave out some online ones)."""
    return os.sched_getaffinity(0)


@cache
def cuda_driver_loads() -> bool:
    """Whether libcuda.so.1 loads here (libsmprof's test for a CUDA driver), tried in a separate
    process so that this one does not load it. A driver library may be installed without a GPU
    (a container image, a machine whose GPU is gone)."""
    code = "import ctypes, sys\ntry:\n    ctypes.CDLL('libcuda.so.1')\nexcept OSError:\n    sys.exit(1)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60).returncode == 0


@cache
def perf_events_permitted() -> str:
    """Whether this process may count its own software events with perf_event_open (task-clock,
    user space only, like libsmprof's per-process counters): "" if so, else why not. Containers
    often refuse the system call (Docker's default seccomp profile), and perf_event_paranoid 3
    (some distributions' kernels) refuses it to unprivileged processes."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint64 * 8)()  # struct perf_event_attr, its first version (64 bytes)
    attr[0] = 1 | 64 << 32  # type PERF_TYPE_SOFTWARE, size 64
    attr[1] = 1  # config PERF_COUNT_SW_TASK_CLOCK
    attr[6] = 1 | 1 << 5 | 1 << 6  # disabled, exclude_kernel, exclude_hv
    perf_event_open = 298  # x86-64
    fd = libc.syscall(perf_event_open, ctypes.byref(attr), 0, -1, -1, 8)  # PERF_FLAG_FD_CLOEXEC
    if fd < 0:
        return f"perf_event_open refused here: {os.strerror(ctypes.get_errno())}"
    os.close(fd)
    return ""
