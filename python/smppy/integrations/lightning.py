"""Lightning integration: ``smppy.lightning.SMProfiler``.

::

    import smppy
    import smppy.lightning

    trainer = lightning.Trainer(profiler=smppy.lightning.SMProfiler(
        schedule=smppy.schedule(wait=1, warmup=1, active=3)))

Every action Lightning profiles (``run_training_epoch``, ``run_training_batch``,
``[Strategy]SingleDeviceStrategy.training_step``, ``[LightningModule]Model.optimizer_step``,
``[Callback]...``) is an annotation of that name; the stage (``fit``, ``validate``, ``test``,
``predict``) is ``[Stage]fit``; each training batch is a step, numbered
globally (``ProfilerStep#N``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

try:
    from lightning.pytorch.profilers import Profiler
except ImportError as error:
    raise ImportError(
        f"smppy.lightning needs lightning (pip install 'smprof[lightning]'): {error}"
    ) from error

from smppy import _smppy
from smppy._profiler import Config
from smppy._schedule import Schedule
from smppy.integrations._training_session import TrainingSession

# The action around one training batch (lightning.pytorch.loops.training_epoch_loop).
_TRAINING_BATCH = "run_training_batch"


class SMProfiler(Profiler):
    """A Lightning profiler that records with smprof.

    ``config`` and ``schedule`` configure the session it starts for each
    stage (``smppy.SMProfiler.configure``); when the script already runs a
    session, it adds to it and leaves it running.
    """

    def __init__(
        self, config: Config | Mapping[str, Any] | None = None, *, schedule: Schedule | None = None
    ) -> None:
        super().__init__()
        self._session = TrainingSession(config, schedule)
        self._actions: dict[str, list[int]] = {}  # action -> handles of its open annotations

    def setup(self, stage: str, local_rank: int | None = None, log_dir: str | None = None) -> None:
        super().setup(stage, local_rank, log_dir)
        self._session.begin()
        # Lightning passes its TrainerFn, a str enum: its value is "fit", "validate", ...
        self._session.phase_begin(f"[Stage]{getattr(stage, 'value', stage)}")

    def start(self, action_name: str) -> None:
        self._actions.setdefault(action_name, []).append(_smppy.annotation_begin(action_name))

    def stop(self, action_name: str) -> None:
        handles = self._actions.get(action_name)
        if handles:
            _smppy.annotation_end(handles.pop())
        if action_name == _TRAINING_BATCH:
            self._session.step()

    def teardown(self, stage: str | None) -> None:
        for handles in self._actions.values():
            while handles:
                _smppy.annotation_end(handles.pop())
        self._session.end()
        super().teardown(stage)
