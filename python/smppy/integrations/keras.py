"""Keras integration: ``smppy.keras.ProfilerCallback``.

::

    import smppy            # before TensorFlow (docs/INTEGRATIONS.md)
    import smppy.keras

    model.fit(x, y, epochs=3, callbacks=[smppy.keras.ProfilerCallback(
        schedule=smppy.schedule(wait=1, warmup=1, active=3))])

Each training batch is a step, numbered globally across epochs
(``ProfilerStep#N``, as torch.profiler and ``smprof summary`` number them);
each epoch is annotated ``Epoch#E``, validation ``Validation``, and
``evaluate()`` / ``predict()`` calls ``Evaluate`` / ``Predict``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

try:
    import keras
except ImportError as error:
    raise ImportError(f"smppy.keras needs keras (pip install 'smprof[keras]'): {error}") from error

from smppy._profiler import Config
from smppy._schedule import Schedule
from smppy.integrations._tf_function_check import enable_tf_function_check
from smppy.integrations._training_session import TrainingSession

enable_tf_function_check()


class ProfilerCallback(keras.callbacks.Callback):
    """Profiles ``fit``, ``evaluate`` and ``predict``.

    ``config`` and ``schedule`` configure the session the callback starts
    (``SMProfiler.configure``); when the script already runs a session, the
    callback adds steps and phases to it and leaves it running.
    """

    def __init__(
        self, config: Config | Mapping[str, Any] | None = None, *, schedule: Schedule | None = None
    ) -> None:
        super().__init__()
        self._session = TrainingSession(config, schedule)
        self._in_fit = False

    def on_train_begin(self, logs: Any = None) -> None:
        self._in_fit = True
        self._session.begin()

    def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
        self._session.phase_begin(f"Epoch#{epoch}")

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        self._session.phase_end(f"Epoch#{epoch}")

    def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
        self._session.step()

    def on_train_end(self, logs: Any = None) -> None:
        self._in_fit = False
        self._session.end()

    def on_test_begin(self, logs: Any = None) -> None:
        self._phase_begin("Validation" if self._in_fit else "Evaluate")

    def on_test_end(self, logs: Any = None) -> None:
        self._phase_end("Validation" if self._in_fit else "Evaluate")

    def on_predict_begin(self, logs: Any = None) -> None:
        self._phase_begin("Predict")

    def on_predict_end(self, logs: Any = None) -> None:
        self._phase_end("Predict")

    def _phase_begin(self, name: str) -> None:
        if not self._in_fit:  # evaluate() / predict() on their own: a session of their own, no steps
            self._session.begin(training=False)
        self._session.phase_begin(name)

    def _phase_end(self, name: str) -> None:
        self._session.phase_end(name)
        if not self._in_fit:
            self._session.end()
