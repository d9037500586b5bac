"""A running job read from its trace files as they are written (``smprof top``, docs/TOP.md).

Each refresh lists the job directory's rank files, reads the header of the new ones, and follows
each rank process's newest file from where the last refresh stopped (``TraceFile(path,
follow=True)``: a frame not yet whole at a file's end is read at a later refresh, never reported as
damage); a process's older files (rotated, earlier sessions) are not read. Nothing is locked or
written, so the job runs as it did; what is kept per rank process is bounded (its last
``STEP_HISTORY`` steps, the GPU work and data waits of the last ``WINDOW_S`` seconds before its
newest event), whatever the job's length.

Per rank process (DataLoader workers and other ``ProcessRole=worker`` processes left out): its
newest step and the steps per second over the window, the last step against the median of the
kept ones, the share of the kept steps' time spent in data waits (the summary's data-wait
pattern), the GPU busy share over the window (the union of its kernels, copies and sets), its
machine's CPU utilization and its own CPU (the newest samples), and whether its session ended.
"""

from __future__ import annotations

import re
import statistics
from collections import deque
from pathlib import Path
from typing import Any

from smppy import _smppy

STEP_HISTORY = 100
WINDOW_S = 10.0
_WINDOW_NS = int(WINDOW_S * 1e9)
_MAX_GPU_FRAMES = 4096  # frames with GPU work kept for the window at most (a window of more is read in part)


class _Rank:
    """One rank process's recent history, bounded."""

    def __init__(self, header: dict[str, Any]) -> None:
        self.host, self.rank, self.pid = header["host"], header["rank"], header["pid"]
        self.steps: deque[tuple[int, int, int, int]] = deque(maxlen=STEP_HISTORY)  # (number, end, dur, wait)
        self.data_waits: deque[tuple[int, int]] = deque(maxlen=4 * STEP_HISTORY)  # (start, end), wall ns
        # Per frame with GPU work: (its last end, its offset, its united intervals' starts and ends).
        self.gpu: deque[tuple[int, int, list[int], list[int]]] = deque(maxlen=_MAX_GPU_FRAMES)
        self.newest_ns = 0
        self.cpu_percent: float | None = None
        self.process_cpu_percent: float | None = None
        self.ended = False
        self.files = 0

    def add_frame(self, frame: dict[str, Any], offset: int, steps: re.Pattern, waits: re.Pattern) -> None:
        a = frame["annotations"]
        rows = sorted(zip(a["start_ns"], a["dur_ns"], a["name"]), key=lambda r: r[0] + r[1])
        for start, dur, name in rows:  # by end: a step's data waits end before it does
            begin, end = start + offset, start + dur + offset
            self.newest_ns = max(self.newest_ns, end)
            if waits.fullmatch(name):
                self.data_waits.append((begin, end))
                continue
            m = steps.fullmatch(name)
            if m is None:
                continue
            number = int(m.group(1)) if m.group(1) else (self.steps[-1][0] + 1 if self.steps else 0)
            waited = 0
            for s, e in reversed(self.data_waits):  # by end: the step's own are the newest
                if e <= begin:
                    break
                waited += max(0, min(e, end) - max(s, begin))
            self.steps.append((number, end, dur, waited))
        ends = frame["gpu_end_ns"]
        if ends:  # the frame's GPU work, united; kept as the frame's lists, read at a snapshot
            last = max(ends) + offset
            self.gpu.append((last, offset, frame["gpu_start_ns"], ends))
            self.newest_ns = max(self.newest_ns, last)
        c = frame["counters"]
        for ts, value, name in zip(c["ts_ns"], c["value"], c["name"]):
            self.newest_ns = max(self.newest_ns, ts + offset)
            if name == "cpu.utilization":
                self.cpu_percent = value
            elif name == "process.cpu_percent":
                self.process_cpu_percent = value
        horizon = self.newest_ns - _WINDOW_NS
        while self.gpu and self.gpu[0][0] < horizon:
            self.gpu.popleft()

    def snapshot(self) -> dict[str, Any]:
        horizon = self.newest_ns - _WINDOW_NS
        recent = [s for s in self.steps if s[1] >= horizon]
        durations = [s[2] for s in self.steps]
        step_time = sum(durations)
        return {
            "host": self.host,
            "rank": self.rank,
            "pid": self.pid,
            "step": self.steps[-1][0] if self.steps else None,
            "steps_kept": len(self.steps),
            "steps_per_s": len(recent) / WINDOW_S,
            "last_step_ns": durations[-1] if durations else None,
            "median_step_ns": round(statistics.median(durations)) if durations else None,
            "input_wait_share": sum(s[3] for s in self.steps) / step_time if step_time else None,
            "gpu_busy_share": _union_ns(self.gpu, horizon, self.newest_ns) / _WINDOW_NS if self.gpu else None,
            "cpu_utilization_percent": self.cpu_percent,
            "process_cpu_percent": self.process_cpu_percent,
            "newest_wall_ns": self.newest_ns,
            "ended": self.ended,
            "files": self.files,
        }


def _union_ns(frames: deque[tuple[int, int, list[int], list[int]]], lo: int, hi: int) -> int:
    """The length of the union of the frames' GPU intervals clipped to [lo, hi]."""
    intervals = sorted(
        (s + offset, e + offset) for _, offset, starts, ends in frames for s, e in zip(starts, ends)
    )
    total, reach = 0, lo
    for start, end in intervals:
        start, end = max(start, reach), min(end, hi)
        if end > start:
            total += end - start
            reach = end
    return total


class _File:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.reader = _smppy.TraceFile(str(path), follow=True)
        header = self.reader.header
        self.key = (header["host"], header["rank"], header["pid"])
        self.worker = header.get("config", {}).get("ProcessRole", "main") == "worker"
        start = header["start"]
        self.offset = start["realtime_ns"] - start["monotonic_ns"]
        self.done = False


class LiveJob:
    """The rank processes of the job under ``directory``, refreshed by ``refresh()``."""

    def __init__(
        self,
        directory: str | Path,
        step_pattern: str = _smppy.DEFAULT_STEP_PATTERN,
        data_wait_pattern: str = _smppy.DEFAULT_DATA_WAIT_PATTERN,
    ) -> None:
        self.directory = Path(directory)
        self._steps = re.compile(step_pattern)
        self._waits = re.compile(data_wait_pattern, re.IGNORECASE)
        self._files: dict[Path, _File] = {}
        self._ranks: dict[tuple[str, int, int], _Rank] = {}
        self._newest: dict[tuple[str, int, int], Path] = {}  # each rank process's newest file
        self.problems: list[str] = []  # damage found while following (not a file still being written)

    def refresh(self) -> dict[str, Any]:
        """Reads what the job wrote since the last refresh; the job as it is now."""
        for path in sorted(self.directory.rglob("*.smprof")):  # a process's files sort oldest first
            f = self._files.get(path)
            if f is None:
                try:
                    f = self._files[path] = _File(path)
                except ValueError:  # its header is not written yet: the next refresh looks again
                    continue
                if f.worker:
                    f.done = True
                    continue
                rank = self._ranks.setdefault(f.key, _Rank(f.reader.header))
                rank.files += 1
                rank.ended = False  # a new session, or the next file of a rotated one
                older = self._newest.get(f.key)
                if older is not None:
                    self._files[older].done = True  # what it holds that was not read yet is past
                self._newest[f.key] = path
        for key, path in self._newest.items():
            if not self._files[path].done:
                self._read(self._files[path], self._ranks[key])
        ranks = sorted(self._ranks.values(), key=lambda r: (r.rank, r.host, r.pid))
        return {
            "directory": str(self.directory),
            "ranks": [r.snapshot() for r in ranks],
            "problems": self.problems,
        }

    def _read(self, f: _File, rank: _Rank) -> None:
        while (frame := f.reader.next_live_frame()) is not None:
            rank.add_frame(frame, f.offset, self._steps, self._waits)
        if f.reader.waiting:
            return
        f.done = True  # its footer (the session ended), or damage
        if f.reader.footer is not None:
            rank.ended = True
        if f.reader.problem is not None:
            self.problems.append(f"{f.path}: {f.reader.problem}")
