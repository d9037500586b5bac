"""Stand-ins for a worker's task (the summary's partial, the Parquet export's part files): one
that kills its own process, as the kernel's out-of-memory killer or a crash in native code would,
and one that fails with an error."""

from __future__ import annotations

import os
import signal
from typing import Any


def kill_this_process(stream: Any, **arguments: Any) -> bytes:
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable: SIGKILL ends the process")


def disk_full(stream: Any, **arguments: Any) -> bytes:
    raise OSError(f"No space left on device (writing pid {stream.pid})")
