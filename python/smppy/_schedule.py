"""The step schedule: which steps a session records, as torch.profiler's ``schedule``."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ProfilerAction(enum.Enum):
    """What the profiler does during a step (torch.profiler.ProfilerAction)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


@dataclass(frozen=True)
class Schedule:
    """``skip_first`` steps off, then cycles of ``wait`` steps off, ``warmup``
    steps with the session running but labelled ``ProfilerWarmup#N``, and
    ``active`` steps recorded as ``ProfilerStep#N``; the session (one trace
    file) ends after the last active step of each cycle. ``repeat`` cycles,
    or until the end when 0. ``active == 0`` means no schedule: every step is
    recorded in one session. Semantics and step numbers (from 0) are those of
    ``torch.profiler.schedule``.
    """

    wait: int = 0
    warmup: int = 0
    active: int = 0
    repeat: int = 0
    skip_first: int = 0

    def __post_init__(self) -> None:
        for name in ("wait", "warmup", "active", "repeat", "skip_first"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"schedule {name} must be an integer >= 0, not {value!r}")

    @property
    def enabled(self) -> bool:
        return self.active > 0

    def action(self, step: int) -> ProfilerAction:
        """The action for step number ``step`` (0 is the first step)."""
        if not self.enabled:
            return ProfilerAction.RECORD
        if step < self.skip_first:
            return ProfilerAction.NONE
        step -= self.skip_first
        cycle = self.wait + self.warmup + self.active
        if self.repeat > 0 and step // cycle >= self.repeat:
            return ProfilerAction.NONE
        in_cycle = step % cycle
        if in_cycle < self.wait:
            return ProfilerAction.NONE
        if in_cycle < self.wait + self.warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if in_cycle < cycle - 1 else ProfilerAction.RECORD_AND_SAVE


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0) -> Schedule:
    """A :class:`Schedule`, with torch.profiler.schedule's signature."""
    if active < 1:
        raise ValueError(f"schedule active must be an integer >= 1, not {active!r}")
    return Schedule(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first)


# Config keys of the schedule and their Schedule fields (libsmprof owns their defaults and variables).
SCHEDULE_KEYS = {
    "ScheduleWait": "wait",
    "ScheduleWarmup": "warmup",
    "ScheduleActive": "active",
    "ScheduleRepeat": "repeat",
    "ScheduleSkipFirst": "skip_first",
}
