"""``SMProfiler`` and ``Config``: the SageMaker Profiler session API."""

from __future__ import annotations

import atexit
import multiprocessing.util
import os
import threading
import warnings
from collections.abc import Mapping
from typing import Any

from smppy import _smppy
from smppy._foreign_profilers import foreign_profiler_warning


class Config:
    """Profiler settings: ``config.profiler`` is a dict of string values.

    Keys and values are documented in docs/CONFIG.md; ``Config.keys()`` lists
    the keys. Values may also be ints or bools (stored as strings).
    """

    def __init__(self, profiler: Mapping[str, Any] | None = None) -> None:
        self.profiler: dict[str, str] = dict(profiler or {})

    @staticmethod
    def keys() -> list[str]:
        """The valid configuration keys."""
        return list(_smppy.config_keys())

    def validated(self) -> dict[str, str]:
        """The settings as strings; raises ValueError naming a bad key or value."""
        if not isinstance(self.profiler, Mapping):
            raise TypeError(f"Config.profiler must be a dict, not {type(self.profiler).__name__}")
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
    """

    _instance: SMProfiler | None = None
    _instance_lock = threading.Lock()

    def __init__(self) -> None:
        self._config: dict[str, str] = {}
        self._lock = threading.Lock()
        self._exit_hook = False

    @classmethod
    def instance(cls) -> SMProfiler:
        """The one profiler of this process."""
        with cls._instance_lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def configure(self, config: Config | Mapping[str, Any]) -> None:
        """Validate and keep ``config`` for the next ``start_profiling()``.

        Raises ValueError naming the key and its valid values.
        """
        cfg = config if isinstance(config, Config) else Config(config)
        values = cfg.validated()
        with self._lock:
            self._config = values

    def start_profiling(self) -> None:
        """Start a session. Starting twice only warns; so does a trace file
        that cannot be created (profiling stays off, training goes on)."""
        with self._lock:
            upload_uri = _effective(self._config, "UploadUri")
            if upload_uri:
                from smppy import _background_upload

                _background_upload.ensure(upload_uri)
            foreign = foreign_profiler_warning()
            message = _smppy.start(_encoded(self._config))
            if not self._exit_hook:
                atexit.register(_stop_at_exit)
                self._exit_hook = True
        if message is not None:
            warnings.warn(f"start_profiling: {message}", RuntimeWarning, stacklevel=2)
        elif foreign is not None:
            warnings.warn(f"start_profiling: {foreign}", RuntimeWarning, stacklevel=2)

    def stop_profiling(self) -> None:
        """Stop the session and flush its trace. Stopping twice only warns."""
        with self._lock:
            message = _smppy.stop()
        if message is not None:
            warnings.warn(f"stop_profiling: {message}", RuntimeWarning, stacklevel=2)

    @property
    def is_profiling(self) -> bool:
        """True while a session is running."""
        return bool(_smppy.is_profiling())

    def last_session(self) -> dict[str, Any]:
        """What the last session wrote: its path, counts of annotations
        written and dropped, frames and bytes."""
        return dict(_smppy.last_session_stats())


# Keys that libsmprof only records and this package acts on: (environment variable, default).
_PYTHON_SIDE_KEYS = {
    "UploadUri": ("SMP_UPLOAD_URI", ""),
    "UploadExitTimeoutS": ("SMP_UPLOAD_EXIT_TIMEOUT_S", "120"),
}


def _effective(config: Mapping[str, str], key: str) -> str:
    """A key's value as libsmprof resolves it: the config, else the environment, else the default."""
    env_name, default = _PYTHON_SIDE_KEYS[key]
    return config.get(key, os.environ.get(env_name, default))


def _stop_at_exit() -> None:
    if _smppy.is_profiling():
        _smppy.stop()
    from smppy import _background_upload

    # The last file of the session is queued now: give the uploader a bounded time.
    config = SMProfiler.instance()._config
    _background_upload.finish(float(_effective(config, "UploadExitTimeoutS")))


class _ForkHook:
    """A live object for multiprocessing's after-fork registry."""


def _stop_followed_child_on_exit(_: object) -> None:
    # With EnableForkFollow=1 a forked child runs its own session. Children of
    # multiprocessing (DataLoader workers) leave through os._exit after
    # multiprocessing's finalizers, not atexit: stop the session there too.
    if _smppy.is_profiling():
        multiprocessing.util.Finalize(None, _stop_at_exit, exitpriority=0)


def _stopping_first(exit_now: Any) -> Any:
    def _exit(status: int) -> None:
        if _smppy.is_profiling():
            _smppy.stop()
        exit_now(status)

    _exit.__wrapped__ = exit_now  # type: ignore[attr-defined]
    return _exit


def _stop_followed_child_at_os_exit() -> None:
    # A followed child that leaves through os._exit (no atexit, no finalizers:
    # a child of a bare os.fork, often forked from a thread) would lose its
    # events and footer: in such a child, os._exit stops the session first,
    # then calls the os._exit it replaces.
    if _smppy.is_profiling() and not hasattr(os._exit, "__wrapped__"):
        os._exit = _stopping_first(os._exit)


_fork_hook = _ForkHook()
multiprocessing.util.register_after_fork(_fork_hook, _stop_followed_child_on_exit)
os.register_at_fork(after_in_child=_stop_followed_child_at_os_exit)
