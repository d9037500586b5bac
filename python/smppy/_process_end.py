"""How the process ends, for the footer's ``SessionEnd`` (trace.proto): smppy's exit stops say
whether the interpreter exited, an uncaught exception ended it (its type and message), or
``os._exit`` did (its status). Exit stops never wait for the GPU: a kernel that never ends (a
collective whose peer died) would turn a crashing rank into a hung one. SIGTERM, and ``exit()``
of a program without Python, are libsmprof's own (src/session/session_end.h)."""

from __future__ import annotations

import os
import sys
from types import TracebackType
from typing import Any

from smppy import _smppy

# The uncaught exception that is ending the interpreter: (type, message), UTF-8.
_uncaught: tuple[bytes, bytes] | None = None


def _type_name(kind: type[BaseException]) -> str:
    module = getattr(kind, "__module__", "") or ""
    name = getattr(kind, "__qualname__", kind.__name__)
    return name if module == "builtins" else f"{module}.{name}"


def _message(value: BaseException) -> str:
    try:
        return str(value)
    except Exception:  # a __str__ that raises: the type still says what ended the run
        return "<str() of the exception raised>"


def note_uncaught_exceptions() -> None:
    """Chains ``sys.excepthook`` (once): an exception that reaches it ends the interpreter, so the
    exit stop that follows records it. An interactive interpreter goes on after one: not noted."""
    previous = sys.excepthook
    if getattr(previous, "_smppy_notes_exceptions", False):
        return

    def hook(kind: type[BaseException], value: BaseException, traceback: TracebackType | None) -> None:
        global _uncaught
        if not (sys.flags.interactive or hasattr(sys, "ps1")):
            text = (_type_name(kind), _message(value))
            _uncaught = (text[0].encode("utf-8", "replace"), text[1].encode("utf-8", "replace"))
        previous(kind, value, traceback)

    hook._smppy_notes_exceptions = True  # type: ignore[attr-defined]
    sys.excepthook = hook


def stop_at_interpreter_exit() -> None:
    """The interpreter is exiting: stop the session, saying whether an uncaught exception ends it
    (Python then exits with status 1; KeyboardInterrupt, by SIGINT)."""
    if not _smppy.is_profiling():
        return
    if _uncaught is None:
        _smppy.stop_at_end("exit")
        return
    kind, message = _uncaught
    exit_code = None if kind == b"KeyboardInterrupt" else 1
    _smppy.stop_at_end("exception", exit_code, kind, message)


def stop_at_os_exit() -> None:
    """Wraps ``os._exit`` (once): it skips atexit, so the session stops there first, with the
    status, and then the process leaves as it would have."""
    exit_now = os._exit
    if hasattr(exit_now, "__wrapped__"):
        return

    def _exit(status: Any) -> None:
        if _smppy.is_profiling() and isinstance(status, int):
            _smppy.stop_at_end("os_exit", status)
        exit_now(status)

    _exit.__wrapped__ = exit_now  # type: ignore[attr-defined]
    os._exit = _exit
