"""What the framework integrations (smppy.keras, .lightning, .transformers) share:
the session they run, global step numbers, and phase annotations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from smppy import _smppy
from smppy._profiler import Config, SMProfiler
from smppy._schedule import Schedule


class TrainingSession:
    """Runs the profiler for a framework's fit: ``begin()`` at the start of
    training, ``step()`` after each optimizer step, ``end()`` at the end.

    Steps are the profiler's (``SMProfiler.step()``): numbered globally from 0
    across epochs, annotated ``ProfilerStep#N`` (``ProfilerWarmup#N`` in a
    schedule's warm-up), and the schedule decides which are recorded. When a
    session is already armed at ``begin()`` (the script started it), the
    integration only adds steps and phases and leaves the session to the
    script; otherwise it starts the session and stops it at ``end()``.
    """

    def __init__(
        self, config: Config | Mapping[str, Any] | None = None, schedule: Schedule | None = None
    ) -> None:
        if schedule is not None and not isinstance(schedule, Schedule):
            raise TypeError(f"schedule must be a smppy.Schedule (smppy.schedule(...)), not {schedule!r}")
        self._config = config
        self._schedule = schedule
        self._profiler = SMProfiler.instance()
        self._owns_session = False
        self._phases: dict[str, int] = {}  # open phase annotation -> its handle

    @property
    def profiler(self) -> SMProfiler:
        return self._profiler

    def begin(self, *, training: bool = True) -> None:
        """Start the session unless the script already runs one. ``training``:
        from now on only ``step()`` ends a step (no automatic PyTorch step
        counting), step 0 starting now; otherwise (inference) no step opens."""
        if self._owns_session:
            return
        if not self._profiler.is_armed:
            if self._config is not None or self._schedule is not None:
                self._profiler.configure(self._config or Config(), schedule=self._schedule)
            self._profiler.start_profiling()
            self._owns_session = True
        if training:
            self._profiler.use_manual_steps()

    def step(self) -> None:
        """A training step ended; the next begins."""
        self._profiler.step()

    def end(self) -> None:
        """Close the open phases; stop the session if ``begin()`` started it."""
        for name in list(self._phases):
            self.phase_end(name)
        if self._owns_session:
            self._owns_session = False
            self._profiler.stop_profiling()

    def phase_begin(self, name: str) -> None:
        """Open the phase annotation ``name`` (one of each name at a time)."""
        if name not in self._phases:
            self._phases[name] = _smppy.annotation_begin(name)

    def phase_end(self, name: str) -> None:
        """Close the phase annotation ``name``, if open.

        Phases and steps do not nest (a step runs from one optimizer step to
        the next, as torch.profiler's ``ProfilerStep#N``, so it may cross an
        epoch's end): ranges ended out of order are recorded all the same.
        """
        handle = self._phases.pop(name, 0)
        if handle:
            _smppy.annotation_end(handle)
