"""smppy.annotate (context manager, decorator) and annotation_begin/end."""

from __future__ import annotations

import asyncio
import threading
import warnings
from collections import Counter
from pathlib import Path

import pytest
import smppy
from conftest import read_annotations, start_session


def stop() -> None:
    smppy.SMProfiler.instance().stop_profiling()


def test_annotate_records_nothing_when_profiling_is_off(trace_dir: Path) -> None:
    with smppy.annotate("before"):
        pass
    assert smppy.annotation_begin("before") == 0
    smppy.annotation_end(0)
    start_session(trace_dir)
    with smppy.annotate("during"):
        pass
    stop()
    with smppy.annotate("after"):
        pass
    assert [e["name"] for e in read_annotations(trace_dir)] == ["during"]


def test_bare_decorator_uses_qualified_name_and_keeps_metadata(trace_dir: Path) -> None:
    class Model:
        @smppy.annotate
        def forward(self, x: int) -> int:
            """Doubles."""
            return 2 * x

    @smppy.annotate("custom")
    def loss(x: int) -> int:
        return x + 1

    @smppy.annotate()
    def optimizer_step() -> None:
        pass

    start_session(trace_dir)
    assert Model().forward(3) == 6
    assert loss(1) == 2
    optimizer_step()
    stop()
    assert Model.forward.__doc__ == "Doubles."
    assert Model.forward.__name__ == "forward"
    names = Counter(e["name"] for e in read_annotations(trace_dir))
    assert names == {
        "test_bare_decorator_uses_qualified_name_and_keeps_metadata.<locals>.Model.forward": 1,
        "custom": 1,
        "test_bare_decorator_uses_qualified_name_and_keeps_metadata.<locals>.optimizer_step": 1,
    }


def test_decorated_recursion_nests(trace_dir: Path) -> None:
    @smppy.annotate("fib")
    def fib(n: int) -> int:
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    start_session(trace_dir)
    assert fib(6) == 8
    stop()
    events = read_annotations(trace_dir)
    assert len(events) == 25  # calls of fib(6)
    assert max(e["depth"] for e in events) == 5
    assert sum(1 for e in events if e["depth"] == 0) == 1


def test_async_function_decorator_covers_the_awaits(trace_dir: Path) -> None:
    @smppy.annotate("fetch")
    async def fetch() -> int:
        await asyncio.sleep(0.01)
        return 7

    start_session(trace_dir)
    assert asyncio.run(fetch()) == 7
    stop()
    (event,) = read_annotations(trace_dir)
    assert event["name"] == "fetch" and event["dur_ns"] >= 10_000_000


def test_exception_inside_annotate_closes_the_range_and_propagates(trace_dir: Path) -> None:
    @smppy.annotate("fails")
    def fails() -> None:
        raise KeyError("boom")

    start_session(trace_dir)
    with pytest.raises(ValueError, match="inside"):
        with smppy.annotate("outer"):
            with smppy.annotate("inner"):
                raise ValueError("inside")
    with pytest.raises(KeyError):
        fails()
    with smppy.annotate("later"):
        pass
    stop()
    depth = {e["name"]: e["depth"] for e in read_annotations(trace_dir)}
    assert depth == {"outer": 0, "inner": 1, "fails": 0, "later": 0}


def test_handles_nest_with_context_managers(trace_dir: Path) -> None:
    start_session(trace_dir)
    h = smppy.annotation_begin("epoch")
    with smppy.annotate("step"):
        h2 = smppy.annotation_begin("data")
        smppy.annotation_end(h2)
    smppy.annotation_end(h)
    stop()
    depth = {e["name"]: e["depth"] for e in read_annotations(trace_dir)}
    assert depth == {"epoch": 0, "step": 1, "data": 2}


def test_handle_misuse_warns_and_never_records_twice(trace_dir: Path) -> None:
    start_session(trace_dir)
    outer = smppy.annotation_begin("outer")
    inner = smppy.annotation_begin("inner")
    with pytest.warns(RuntimeWarning, match="ended before ranges opened after it"):
        smppy.annotation_end(outer)
    smppy.annotation_end(inner)
    with pytest.warns(RuntimeWarning, match="unknown handle, or already ended"):
        smppy.annotation_end(inner)
    with pytest.warns(RuntimeWarning, match="unknown handle"):
        smppy.annotation_end(123456789)
    with pytest.raises(TypeError, match="int handle"):
        smppy.annotation_end("not a handle")  # type: ignore[arg-type]
    stop()
    assert Counter(e["name"] for e in read_annotations(trace_dir)) == {"outer": 1, "inner": 1}


def test_handle_can_end_on_another_thread(trace_dir: Path) -> None:
    start_session(trace_dir)
    h = smppy.annotation_begin("async-work")
    t = threading.Thread(target=smppy.annotation_end, args=(h,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t.start()
        t.join()
    stop()
    (event,) = read_annotations(trace_dir)
    assert event["name"] == "async-work"
    assert event["tid"] == threading.get_native_id()  # the thread that began it


def test_bad_arguments_raise_type_errors() -> None:
    with pytest.raises(TypeError, match="str name"):
        smppy.annotate(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="str name"):
        smppy.annotation_begin(None)  # type: ignore[arg-type]


def test_unnamed_annotate_as_context_manager_is_an_error(trace_dir: Path) -> None:
    start_session(trace_dir)
    with pytest.raises(TypeError, match="needs a name"):
        with smppy.annotate():
            pass
    stop()


def test_names_are_kept_exactly(trace_dir: Path) -> None:
    names = ["ascii", "ünïcödé ✓", "with spaces and / slashes", "x" * 500, ""]
    start_session(trace_dir)
    for name in names:
        with smppy.annotate(name):
            pass
    stop()
    assert sorted(e["name"] for e in read_annotations(trace_dir)) == sorted(names)


def test_help_shows_docstrings() -> None:
    assert "context manager" in smppy.annotate.__doc__
    assert "handle" in smppy.annotation_begin.__doc__
    assert "start_profiling" in smppy.SMProfiler.__doc__
