"""The decorator behind ``smppy.annotate``.

``annotate``, ``annotation_begin`` and ``annotation_end`` themselves are C
(``src/bindings/annotate_type.cc``): no Python frame on the hot path.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

from smppy import _smppy

F = TypeVar("F", bound=Callable[..., Any])


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
