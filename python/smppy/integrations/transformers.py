"""Hugging Face integration: ``smppy.transformers.ProfilerCallback``.

::

    import smppy
    import smppy.transformers

    trainer = transformers.Trainer(..., callbacks=[smppy.transformers.ProfilerCallback(
        schedule=smppy.schedule(wait=1, warmup=1, active=3))])

Each optimizer step is a step, numbered globally across epochs
(``ProfilerStep#N``); ``Epoch#E`` spans an epoch, ``OptimizerStep`` the
optimizer's step, ``Evaluate`` and ``Save`` the evaluation and checkpoint the
Trainer runs after a step or an epoch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

try:
    from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
except ImportError as error:
    raise ImportError(
        f"smppy.transformers needs transformers (pip install 'smprof[transformers]'): {error}"
    ) from error

from smppy._profiler import Config
from smppy._schedule import Schedule
from smppy.integrations._training_session import TrainingSession


class ProfilerCallback(TrainerCallback):
    """Profiles ``Trainer.train()``.

    ``config`` and ``schedule`` configure the session the callback starts
    (``smppy.SMProfiler.configure``); when the script already runs a session,
    the callback adds steps and phases to it and leaves it running.
    """

    def __init__(
        self, config: Config | Mapping[str, Any] | None = None, *, schedule: Schedule | None = None
    ) -> None:
        self._session = TrainingSession(config, schedule)
        self._epoch = ""

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._session.begin()

    def on_epoch_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        # state.epoch counts from 0 (fractional during an epoch); resumed runs go on from theirs.
        self._epoch = f"Epoch#{int(state.epoch or 0)}"
        self._session.phase_begin(self._epoch)

    def on_pre_optimizer_step(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._session.phase_begin("OptimizerStep")

    def on_optimizer_step(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._session.phase_end("OptimizerStep")

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._session.step()
        self._open_follow_up(control)

    def on_epoch_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._session.phase_end(self._epoch)
        self._open_follow_up(control)

    def on_evaluate(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._session.phase_end("Evaluate")
        if control.should_save:
            self._session.phase_begin("Save")

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._session.phase_end("Save")

    def on_train_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._session.end()

    def _open_follow_up(self, control: TrainerControl) -> None:
        # The Trainer logs, evaluates, then saves after a step or an epoch, as
        # its DefaultFlowCallback (which runs before this one) decided.
        if control.should_evaluate:
            self._session.phase_begin("Evaluate")
        elif control.should_save:
            self._session.phase_begin("Save")
