"""``SMProfiler`` and ``Config``: the SageMaker Profiler session API."""

from __future__ import annotations

import atexit
import multiprocessing.util
import os
import sys
import threading
import warnings
from collections.abc import Mapping
from typing import Any

from smppy import _clock_alignment, _process_end, _smppy
from smppy._foreign_profilers import foreign_profiler_warning
from smppy._schedule import SCHEDULE_KEYS, ProfilerAction, Schedule
from smppy.integrations import _torch_collectives


def not_a_dict(value: object) -> TypeError:
    """The error for settings given as anything but a mapping (``configure("EnableCuda=1")``)."""
    return TypeError(
        "smppy.Config, Config.profiler and configure() take a dict of config keys to values, such as "
        f"{{'EnableCuda': '1'}} (keys: docs/CONFIG.md, Config.keys()), "
        f"not {type(value).__name__}: {value!r:.80}"
    )


class Config:
    """Profiler settings: ``config.profiler`` is a dict of string values.

    Keys and values are documented in docs/CONFIG.md; ``Config.keys()`` lists
    the keys. Values may also be ints or bools (stored as strings).
    """

    def __init__(self, profiler: Mapping[str, Any] | None = None) -> None:
        if profiler is not None and not isinstance(profiler, Mapping):
            raise not_a_dict(profiler)
        self.profiler: dict[str, str] = dict(profiler or {})

    @staticmethod
    def keys() -> list[str]:
        """The valid configuration keys."""
        return list(_smppy.config_keys())

    def validated(self) -> dict[str, str]:
        """The settings as strings; raises ValueError naming a bad key or value."""
        if not isinstance(self.profiler, Mapping):
            raise not_a_dict(self.profiler)
        values: dict[str, str] = {}
        for key, value in self.profiler.items():
            if not isinstance(key, str):
                raise TypeError(f"profiler config keys are str, not {type(key).__name__}: {key!r}")
            if isinstance(value, bool):
                value = "1" if value else "0"
            elif isinstance(value, int):
                # Too long for str() (and for every key): libsmprof refuses it, naming the key.
                value = str(value) if value.bit_length() < 256 else f"an integer of {value.bit_length()} bits"
            elif not isinstance(value, str):
                raise TypeError(
                    f"profiler config key {key!r}: value must be a str (or int/bool), "
                    f"not {type(value).__name__}"
                )
            values[key] = value
        _smppy.validate_config(_encoded(values))
        return values

    def __repr__(self) -> str:
        return f"Config(profiler={self.profiler!r})"


def _encoded(values: Mapping[str, str]) -> dict[bytes, bytes]:
    """Keys and values as bytes for libsmprof: a value is encoded like a file name
    (``os.fsencode``), so a RecordFile path with undecodable bytes round-trips;
    what cannot be encoded at all is refused naming its key."""
    encoded: dict[bytes, bytes] = {}
    for key, value in values.items():
        try:
            encoded[os.fsencode(key)] = os.fsencode(value)
        except UnicodeEncodeError as e:
            what = "key" if e.object == key else f"value {value!r} for profiler config key {key!r}"
            raise ValueError(
                f"invalid profiler config {what}: it cannot be encoded ({e.reason}); "
                "valid values are text (docs/CONFIG.md lists each key's)"
            ) from None
    return encoded


class SMProfiler:
    """The process's profiler. Use ``SMProfiler.instance()``.

    ``configure(config)`` then ``start_profiling()`` / ``stop_profiling()``,
    any number of times: each session writes a new trace file. A session
    still running at interpreter exit is stopped and flushed then.

    Steps, as torch.profiler's ``prof.step()``: call ``step()`` at the end of
    each training step. Step N (from 0; the count restarts with each
    ``start_profiling()``) is recorded as the annotation ``ProfilerStep#N``,
    step N+1 starting at the N-th ``step()``. Step 0 starts at
    ``start_profiling()`` when a schedule is set or ``use_manual_steps()`` was
    called before it; otherwise the first ``step()`` ends an unrecorded step 0
    (a script that never calls ``step()`` gets no step annotations). With a
    schedule (``ScheduleActive`` > 0, or ``configure(...,
    schedule=smppy.schedule(...))``), ``start_profiling()`` only arms it: a
    session runs for the warm-up and active steps of each cycle (warm-up steps
    are annotated ``ProfilerWarmup#N``) and ends, writing its file, after the
    cycle's last active step. Without a schedule one session covers every
    step. A step still open when the session stops never reached its end: it
    is recorded as ``AfterLastStep``, not as a step.

    With ``TorchAutoSteps=1`` (the default of ``smprof run``), PyTorch
    training counts steps itself (docs/PYTORCH.md): each ``optimizer.step()``
    ends a step, and a step opens at its first batch fetch, backward or
    optimizer step. A framework callback (Keras, Lightning, Hugging Face)
    calls ``use_manual_steps()`` when training begins and ``step()`` at the
    end of each batch: automatic counting is then off and no step is counted
    twice. The first explicit ``step()`` also turns it off.
    """

    _instance: SMProfiler | None = None
    _instance_lock = threading.Lock()

    def __init__(self) -> None:
        self._config: dict[str, str] = {}
        self._schedule_override: Schedule | None = None
        self._lock = threading.RLock()
        self._exit_hook = False
        self._armed = False  # between start_profiling() and stop_profiling()
        self._schedule = Schedule()
        self._step_num = 0
        self._action = ProfilerAction.NONE
        self._step_handle = 0  # the open ProfilerStep#N / ProfilerWarmup#N annotation
        self._manual_steps = False
        self._auto_steps = False  # the PyTorch hooks act (TorchAutoSteps=1, armed)
        self._collectives = False  # collectives are recorded (TorchAutoSteps=1 or TorchCollectives=1, armed)
        # Every key's effective value, as libsmprof resolves it, at the last start; None before.
        self._resolved: dict[str, str] | None = None

    @classmethod
    def instance(cls) -> SMProfiler:
        """The one profiler of this process."""
        with cls._instance_lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def configure(self, config: Config | Mapping[str, Any], *, schedule: Schedule | None = None) -> None:
        """Validate and keep ``config`` for the next ``start_profiling()``.

        ``schedule`` (``smppy.schedule(wait=..., warmup=..., active=...)``)
        takes the place of the ``Schedule*`` keys. Raises ValueError naming
        the key and its valid values.
        """
        cfg = config if isinstance(config, Config) else Config(config)
        values = cfg.validated()
        if schedule is not None and not isinstance(schedule, Schedule):
            raise TypeError(f"schedule must be a smppy.Schedule, not {type(schedule).__name__}")
        with self._lock:
            self._config = values
            self._schedule_override = schedule

    def start_profiling(self) -> None:
        """Start a session (with a schedule: arm it). Starting twice only
        warns; so does a trace file that cannot be created (profiling stays
        off, training goes on)."""
        self._start(open_first_step=True, stacklevel=3)

    def stop_profiling(self) -> None:
        """Stop the session (and the schedule) and flush its trace. Stopping
        twice only warns."""
        with self._lock:
            was_armed = self._armed
            self._end_tail()
            self._armed = False
            self._auto_steps = False
            self._collectives = False
            self._manual_steps = False
            self._action = ProfilerAction.NONE
            _torch_collectives.quiesce()
            _torch_collectives.flush()
            if _smppy.is_profiling():
                self._align_clocks("stop")
            message = _smppy.stop(_no_gpu_wait_reason()) if (_smppy.is_profiling() or not was_armed) else None
        if message is not None:
            warnings.warn(f"stop_profiling: {message}", RuntimeWarning, stacklevel=2)

    def step(self) -> None:
        """End the current step and begin the next (torch.profiler's ``step()``).

        Moves the schedule on: starts or stops sessions as it says. A no-op
        outside ``start_profiling()`` / ``stop_profiling()``. The first call
        turns automatic PyTorch step counting off.
        """
        with self._lock:
            if self._armed:
                self._manual_steps = True
                self._advance(open_next=True)

    def use_manual_steps(self) -> None:
        """Steps end only at ``step()`` until ``stop_profiling()``: automatic
        PyTorch step counting stops (the InputWait, Backward and module
        annotations stay). Before ``start_profiling()``: step 0 starts there;
        after it: the current step starts now, if none is open."""
        with self._lock:
            self._manual_steps = True
            if self._step_handle == 0:
                self._begin_step()

    @property
    def is_armed(self) -> bool:
        """True between ``start_profiling()`` (or ``smprof run``'s start) and
        ``stop_profiling()``, also while a schedule keeps the session off."""
        return self._armed

    @property
    def step_num(self) -> int:
        """The number of the current step (0 before the first ``step()``)."""
        return self._step_num

    @property
    def schedule(self) -> Schedule:
        """The schedule of the armed (or last) run; ``active == 0``: none."""
        return self._schedule

    @property
    def is_profiling(self) -> bool:
        """True while a session is running."""
        return bool(_smppy.is_profiling())

    def last_session(self) -> dict[str, Any]:
        """What the last session wrote: its path, counts of annotations
        written and dropped, frames and bytes."""
        return dict(_smppy.last_session_stats())

    # Internals shared with the automatic PyTorch hooks and the bootstrap.

    def _start(self, *, open_first_step: bool, stacklevel: int) -> None:
        message = None
        foreign = foreign_profiler_warning()
        with self._lock:
            if self._armed and (_smppy.is_profiling() or self._schedule.enabled):
                message = "profiling is already running; ignored"
            else:
                self._resolved = _smppy.resolve_config(_encoded(self._config))
                self._schedule = self._schedule_override or _schedule_from(self._resolved)
                self._armed = True
                self._step_num = 0
                self._action = self._schedule.action(0)
                if self._action is not ProfilerAction.NONE:
                    message = self._start_session()
                if open_first_step and (self._schedule.enabled or self._manual_steps):
                    self._begin_step()
                self._auto_steps = self._resolved["TorchAutoSteps"].lower() in _TRUE
                self._collectives = self._auto_steps or self._resolved["TorchCollectives"].lower() in _TRUE
                if self._collectives:
                    message = message or self._enable_torch_hooks()
            if not self._exit_hook:
                atexit.register(_stop_at_exit)
                _process_end.note_uncaught_exceptions()
                _process_end.stop_at_os_exit()
                self._exit_hook = True
        message = message or foreign
        if message is not None:
            warnings.warn(f"start_profiling: {message}", RuntimeWarning, stacklevel=stacklevel)

    def _enable_torch_hooks(self) -> str | None:
        """Install the automatic PyTorch hooks (inert but for the collectives unless
        TorchAutoSteps=1); a message if this torch lacks what they need."""
        from smppy.integrations import _torch_auto

        try:
            _torch_auto.enable(self, int(self._setting("TorchModuleDepth")))
            _torch_collectives.resume()
        except Exception as e:  # an unexpected torch: the training goes on, without the hooks
            self._auto_steps = self._collectives = False
            return f"{_TORCH_KEYS}: the PyTorch hooks could not be installed ({type(e).__name__}: {e})"
        return None

    def _auto_step(self) -> None:
        """An optimizer step ended a step (automatic PyTorch mode)."""
        with self._lock:
            if not self._manual_steps:
                self._advance(open_next=False)

    def _ensure_step(self) -> None:
        """Automatic mode: a step's work began; open its annotation if none is."""
        if self._step_handle or self._manual_steps:  # the usual case, without the lock
            return
        with self._lock:
            if not self._manual_steps and self._step_handle == 0:
                self._begin_step()

    def _advance(self, *, open_next: bool) -> None:
        if not self._armed:
            return
        self._end_step()
        self._step_num += 1
        previous, self._action = self._action, self._schedule.action(self._step_num)
        if previous is ProfilerAction.RECORD_AND_SAVE or (
            previous is not ProfilerAction.NONE and self._action is ProfilerAction.NONE
        ):
            if _smppy.is_profiling():
                _torch_collectives.flush()
                self._align_clocks("stop")
                _smppy.stop(_no_gpu_wait_reason())
            previous = ProfilerAction.NONE
        if previous is ProfilerAction.NONE and self._action is not ProfilerAction.NONE:
            message = self._start_session()
            if message is not None:
                warnings.warn(f"step: {message}", RuntimeWarning, stacklevel=4)
        if open_next:
            self._begin_step()

    def _begin_step(self) -> None:
        if not self._armed or self._action is ProfilerAction.NONE:
            return
        prefix = "ProfilerWarmup#" if self._action is ProfilerAction.WARMUP else "ProfilerStep#"
        self._step_handle = _smppy.annotation_begin(f"{prefix}{self._step_num}")

    def _end_step(self) -> None:
        if self._step_handle:
            # Ranges the user opened inside the step may still be open (the
            # optimizer runs inside them): the step is recorded all the same.
            _smppy.annotation_end(self._step_handle)
            self._step_handle = 0

    def _end_tail(self) -> None:
        """The session stops: a step still open reached no step boundary (the last batch fetch that
        found no data, the teardown after the loop), so it is recorded as ``AfterLastStep``, not as a
        step."""
        if self._step_handle:
            _smppy._annotation_end_as(self._step_handle, TAIL_ANNOTATION)
            self._step_handle = 0

    def _start_session(self) -> str | None:
        upload_uri = self._setting("UploadUri")
        if upload_uri:
            from smppy.storage import _background_upload

            _background_upload.ensure(upload_uri)
        message = _smppy.start(_encoded(self._config))
        if message is None:
            self._align_clocks("start")
        return message

    def _setting(self, key: str) -> str:
        """A key's effective value for the armed (or last) run: libsmprof's resolution (config, else
        environment, else default), taken at start."""
        if self._resolved is None:
            self._resolved = _smppy.resolve_config(_encoded(self._config))
        return self._resolved[key]

    def _align_clocks(self, phase: str) -> None:
        """A clock-alignment round with rank 0 if torch.distributed is initialised (ClockAlignTimeoutS)."""
        timeout_s = int(self._setting("ClockAlignTimeoutS"))
        if timeout_s > 0:
            _clock_alignment.align_automatically(phase, timeout_s)


def _schedule_from(resolved: Mapping[str, str]) -> Schedule:
    """The schedule the ``Schedule*`` keys describe (``resolved``: libsmprof's effective values)."""
    return Schedule(**{field: int(resolved[key]) for key, field in SCHEDULE_KEYS.items()})


# What a step still open when the session stops is recorded as (docs/PYTORCH.md "Steps").
TAIL_ANNOTATION = "AfterLastStep"

# The spellings of true that libsmprof accepts for a boolean key (the others mean false).
_TRUE = ("1", "true", "yes", "on")
_TORCH_KEYS = "TorchAutoSteps/TorchCollectives"  # the keys that install the PyTorch hooks


def _no_gpu_wait_reason() -> str:
    """Why a stop from this thread must not wait for the GPU, "" when it may.

    While the thread's current stream captures a CUDA graph (torch.cuda.graph, torch.compile's
    "reduce-overhead"; a schedule's stop runs in the optimizer-step hook, inside a whole-step capture),
    a device-wide wait is illegal and breaks the capture. Asks torch only if the script imported it
    and CUDA is initialised: never imports torch, never initialises CUDA.
    """
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    try:
        if cuda is not None and cuda.is_initialized() and cuda.is_current_stream_capturing():
            return "the stopping thread's stream is capturing a CUDA graph"
    except Exception:  # a torch without CUDA, or one mid-teardown: nothing to protect
        return ""
    return ""


def _stop_at_exit() -> None:
    profiler = SMProfiler.instance()
    with profiler._lock:
        profiler._end_tail()
        profiler._armed = False
        profiler._auto_steps = False
        profiler._collectives = False
    _torch_collectives.flush()
    _process_end.stop_at_interpreter_exit()
    if profiler._resolved is None:  # never started: no uploader either
        return
    from smppy.storage import _background_upload

    # The last file of the session is queued now: give the uploader a bounded time.
    _background_upload.finish(float(profiler._resolved["UploadExitTimeoutS"]))


class _ForkHook:
    """A live object for multiprocessing's after-fork registry."""


def _stop_followed_child_on_exit(_: object) -> None:
    # With EnableForkFollow=1 a forked child runs its own session. Children of
    # multiprocessing (DataLoader workers) leave through os._exit after
    # multiprocessing's finalizers, not atexit: stop the session there too.
    if _smppy.is_profiling():
        multiprocessing.util.Finalize(None, _stop_at_exit, exitpriority=0)


def _stop_followed_child_at_os_exit() -> None:
    # A followed child that leaves through os._exit (no atexit, no finalizers:
    # a child of a bare os.fork, often forked from a thread) would lose its
    # events and footer: in such a child, os._exit stops the session first,
    # then calls the os._exit it replaces.
    if _smppy.is_profiling():
        _process_end.stop_at_os_exit()


_fork_hook = _ForkHook()
multiprocessing.util.register_after_fork(_fork_hook, _stop_followed_child_on_exit)
os.register_at_fork(after_in_child=_stop_followed_child_at_os_exit)
