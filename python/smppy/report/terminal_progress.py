"""A one-line progress bar on a terminal, fed with (done, total) byte counts."""

from __future__ import annotations

import time
from typing import TextIO

_WIDTH = 30
_REDRAW_INTERVAL_S = 0.1


class TerminalProgress:
    """Callable as ``progress(done_bytes, total_bytes)``; draws ``label [#####-----] 50% 1.2/2.4 GB``
    on ``stream`` at most ten times a second, and only when ``stream`` is a terminal (logs and
    pipes stay clean). ``finish()`` ends the line."""

    def __init__(self, stream: TextIO, label: str, enabled: bool | None = None) -> None:
        self._stream = stream
        self._label = label
        self._enabled = stream.isatty() if enabled is None else enabled
        self._last_draw = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self._enabled:
            return
        now = time.monotonic()
        if now - self._last_draw < _REDRAW_INTERVAL_S and done < total:
            return
        self._last_draw = now
        fraction = min(1.0, done / total) if total > 0 else 1.0
        filled = int(fraction * _WIDTH)
        bar = "#" * filled + "-" * (_WIDTH - filled)
        self._stream.write(f"\r{self._label} [{bar}] {fraction * 100:3.0f}% {_size(done)}/{_size(total)}")
        self._stream.flush()
        self._drawn = True

    def finish(self) -> None:
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False


def _size(n: float) -> str:
    units = ("B", "KB", "MB", "GB")
    unit = 0
    while n >= 1000 and unit < len(units) - 1:
        n /= 1000
        unit += 1
    return f"{n:.0f} B" if unit == 0 else f"{n:.1f} {units[unit]}"
