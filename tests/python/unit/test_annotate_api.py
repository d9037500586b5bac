"""smppy.annotate (context manager, decorator) and annotation_begin/end."""

from __future__ import annotations

import asyncio
import random
import string
import threading
import warnings
from collections import Counter
from pathlib import Path

import pytest
import smppy
from conftest import read_annotations, start_session
from smppy import analysis
from smppy.analysis.trace import find_trace_files
from smppy.analysis.trace_info import read_info


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


def test_handle_misuse_of_other_types_names_the_type(trace_dir: Path) -> None:
    start_session(trace_dir)
    h = smppy.annotation_begin("kept")
    with pytest.raises(TypeError, match=r"int handle that annotation_begin\(\) returned, not bytes"):
        smppy.annotation_end(b"\x01")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not float"):
        smppy.annotation_end(float(h))  # type: ignore[arg-type]
    # Ints that no handle can be (negative, wider than 64 bits) are unknown handles.
    for never_issued in (-1, 1 << 70):
        with pytest.warns(RuntimeWarning, match=rf"annotation_end\({never_issued}\): unknown handle"):
            smppy.annotation_end(never_issued)
    smppy.annotation_end(h)
    stop()
    assert [e["name"] for e in read_annotations(trace_dir)] == ["kept"]


def test_misuse_warnings_point_at_the_caller(trace_dir: Path) -> None:
    start_session(trace_dir)
    with pytest.warns(RuntimeWarning) as caught:
        smppy.annotation_end(123456789)
    stop()
    assert caught[0].filename == __file__


def test_lone_surrogates_work_whether_or_not_profiling(trace_dir: Path) -> None:
    def annotate_everywhere(name: str) -> None:
        with smppy.annotate(name):
            pass
        smppy.annotation_end(smppy.annotation_begin(name))
        smppy.annotate(name)(lambda: None)()

    annotate_everywhere("\udcff")
    start_session(trace_dir)
    annotate_everywhere("\udcff")
    annotate_everywhere("a\ud800b")
    stop()
    names = Counter(e["name"] for e in read_annotations(trace_dir))
    # Recorded with the surrogates escaped: a name every reader can print.
    assert names == {"\\udcff": 3, "a\\ud800b": 3}


def test_name_by_keyword_and_bad_calls(trace_dir: Path) -> None:
    with pytest.raises(TypeError, match="one optional argument, name"):
        smppy.annotate("a", "b")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="one optional argument, name"):
        smppy.annotate(label="a")  # type: ignore[call-overload]
    assert smppy.annotate().name is None
    assert smppy.annotate.__new__(smppy.annotate, "by-new").name == "by-new"
    start_session(trace_dir)
    with smppy.annotate(name="by-keyword"):
        pass
    stop()
    assert [e["name"] for e in read_annotations(trace_dir)] == ["by-keyword"]


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


def test_ranges_past_the_open_limit_are_counted_not_lost_silently(trace_dir: Path) -> None:
    # 10,000 nested annotation_begin on one thread: those past 4,096 open are refused (handle 0),
    # and the footer, info and the summary's drops count every one of them.
    start_session(trace_dir)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        handles = [smppy.annotation_begin(f"level{i}") for i in range(10_000)]
    for handle in reversed(handles):
        smppy.annotation_end(handle)
    stop()
    refused = handles.count(0)
    kept = len(read_annotations(trace_dir))
    assert 0 < refused < 10_000 and kept + refused == 10_000, (kept, refused)
    [file] = find_trace_files(trace_dir)
    info = read_info(file)
    assert info.footer["annotations_refused_open_limit"] == info.refused_open_limit == refused
    assert analysis.summarize(str(trace_dir))["drops"]["annotations_refused_open_limit"] == refused
    assert smppy.SMProfiler.instance().last_session()["annotations_dropped"] == refused


def test_names_past_16_kib_are_cut_counted_and_the_trace_reads_back(trace_dir: Path) -> None:
    # A 17,000,000-character name once made a frame the reader refused (a 1,683-byte zstd frame
    # claiming 17 MB), losing every annotation of the file. Names at the limit, one byte under and
    # one over, compressible and random, and 200 ordinary annotations all read back.
    limit = 16 * 1024
    rng = random.Random(7)

    def random_name(size: int) -> str:
        return "".join(rng.choice(string.ascii_letters) for _ in range(size))

    whole = ["a" * (limit - 1), "b" * limit, random_name(limit - 1), random_name(limit)]
    cut = ["c" * (limit + 1), random_name(limit + 1), "d" * 17_000_000, random_name(200_000)]
    start_session(trace_dir)
    for name in whole + cut:
        with smppy.annotate(name):
            pass
    for i in range(200):
        with smppy.annotate(f"step_{i}"):
            pass
    stop()
    names = [e["name"] for e in read_annotations(trace_dir)]
    assert len(names) == len(whole) + len(cut) + 200
    assert [n for n in names if not n.startswith("step_")][: len(whole)] == whole
    for original, recorded in zip(cut, names[len(whole) : len(whole) + len(cut)]):
        kept = recorded.index(" [cut: ")
        assert len(recorded.encode()) <= limit and recorded[:kept] == original[:kept]
        assert recorded[kept:] == f" [cut: {len(original) - kept} bytes]"
    [file] = find_trace_files(trace_dir)
    info = read_info(file)
    assert info.problem is None and info.names_cut == len(cut) and info.names_refused == 0
    assert analysis.summarize(str(trace_dir))["drops"]["annotation_names_cut"] == len(cut)
