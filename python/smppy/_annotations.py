"""Handle-style annotations and the decorator behind ``smppy.annotate``."""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, TypeVar

from smppy import _smppy

F = TypeVar("F", bound=Callable[..., Any])

# smprof::EndResult codes returned by _smppy.annotation_end.
_END_OK = 0
_END_NOT_PROFILING = 1
_END_UNKNOWN_HANDLE = 2
_END_OUT_OF_ORDER = 3


def annotation_begin(name: str) -> int:
    """Open a range named ``name`` and return its handle.

    End it with :func:`annotation_end`, on any thread. Returns 0 (a handle
    that ``annotation_end`` accepts and ignores) when profiling is off.
    """
    return _smppy.annotation_begin(name)


def annotation_end(handle: int) -> None:
    """Close the range opened by :func:`annotation_begin`.

    Misuse never corrupts the trace; it warns (``RuntimeWarning``): a handle
    ended twice or unknown is ignored, and a range ended while ranges opened
    after it are still open is recorded, its inner ranges staying open.
    """
    result = _smppy.annotation_end(handle)
    if result == _END_UNKNOWN_HANDLE:
        warnings.warn(
            f"annotation_end({handle}): unknown handle, or already ended; ignored",
            RuntimeWarning,
            stacklevel=2,
        )
    elif result == _END_OUT_OF_ORDER:
        warnings.warn(
            f"annotation_end({handle}): ended before ranges opened after it; "
            "it is recorded, the inner ranges stay open",
            RuntimeWarning,
            stacklevel=2,
        )


def decorate(func: F, name: str | None) -> F:
    """Wrap ``func`` so each call is recorded as a range (see ``annotate``)."""
    label = name if name is not None else getattr(func, "__qualname__", repr(func))
    annotate = _smppy.annotate

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            with annotate(label):
                return await func(*args, **kwargs)

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with annotate(label):
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


_smppy._set_decorator(decorate)
