"""Session lifecycle: repeated sessions, misuse, exit flush, SMP_DISABLE, import smprof."""

from __future__ import annotations

from pathlib import Path

import pytest
import smppy
from conftest import read_annotations, run_python, start_session
from smppy.analysis.trace import find_trace_files, open_trace


def test_import_smprof_is_the_same_module() -> None:
    import smprof

    assert smprof is smppy
    assert smprof.annotate is smppy.annotate
    assert smprof.SMProfiler.instance() is smppy.SMProfiler.instance()


def test_repeated_sessions_write_new_files(trace_dir: Path) -> None:
    for i in range(3):
        start_session(trace_dir)
        for _ in range(i + 1):
            with smppy.annotate(f"session{i}"):
                pass
        smppy.SMProfiler.instance().stop_profiling()
    files = find_trace_files(trace_dir)
    assert len(files) == 3
    by_session = {open_trace(f).header["session_index"]: f for f in files}
    indices = sorted(by_session)
    assert indices == list(range(indices[0], indices[0] + 3))
    counts = sorted(len(read_annotations(f)) for f in files)
    assert counts == [1, 2, 3]


def test_start_twice_and_stop_twice_warn_and_do_no_harm(trace_dir: Path) -> None:
    profiler = smppy.SMProfiler.instance()
    with pytest.warns(RuntimeWarning, match="not running"):
        profiler.stop_profiling()
    start_session(trace_dir)
    with pytest.warns(RuntimeWarning, match="already running"):
        profiler.start_profiling()
    with smppy.annotate("once"):
        pass
    profiler.stop_profiling()
    with pytest.warns(RuntimeWarning, match="not running"):
        profiler.stop_profiling()
    assert [e["name"] for e in read_annotations(trace_dir)] == ["once"]
    assert profiler.last_session()["annotations_written"] == 1


def test_session_running_at_exit_is_flushed(tmp_path: Path) -> None:
    proc = run_python(
        f"""
        import smppy
        c = smppy.Config(); c.profiler = {{"RecordFile": "{tmp_path}/exit.smprof"}}
        p = smppy.SMProfiler.instance(); p.configure(c); p.start_profiling()
        for _ in range(1000):
            with smppy.annotate("work"):
                pass
        """,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    events = read_annotations(tmp_path / "exit.smprof")
    assert len(events) == 1000


def test_killed_process_leaves_a_readable_file(tmp_path: Path) -> None:
    proc = run_python(
        f"""
        import os, signal, time, smppy
        from smppy.analysis.trace import open_trace
        c = smppy.Config(); c.profiler = {{"RecordFile": "{tmp_path}/killed.smprof", "FlushIntervalMs": "20"}}
        p = smppy.SMProfiler.instance(); p.configure(c); p.start_profiling()
        for _ in range(500):
            with smppy.annotate("work"):
                pass
        def flushed():  # the annotations the file holds so far
            return sum(len(f["annotations"]["name"]) for f in open_trace("{tmp_path}/killed.smprof").frames())
        # Killed once the flush thread has written them, however long that takes on a busy machine
        # (a sleep of a few flush intervals assumed a quiet one).
        while flushed() < 500:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGKILL)
        """,
        cwd=tmp_path,
    )
    assert proc.returncode == -9
    trace = open_trace(tmp_path / "killed.smprof")
    frames = list(trace.frames())
    assert sum(len(f["annotations"]["name"]) for f in frames) == 500
    assert trace.footer is None
    assert trace.problem is not None and "no footer" in trace.problem


def test_smp_disable_turns_everything_into_no_ops(tmp_path: Path) -> None:
    proc = run_python(
        f"""
        import smppy
        c = smppy.Config(); c.profiler = {{"RecordFile": "{tmp_path}/off.smprof"}}
        p = smppy.SMProfiler.instance(); p.configure(c); p.start_profiling()
        with smppy.annotate("x"):
            pass
        assert not p.is_profiling
        p.stop_profiling()
        """,
        cwd=tmp_path,
        env={"SMP_DISABLE": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "SMP_DISABLE is set" in proc.stderr
    assert not (tmp_path / "off.smprof").exists()


def test_forked_child_does_not_touch_the_parents_file(trace_dir: Path) -> None:
    import os

    start_session(trace_dir)
    with smppy.annotate("parent-before"):
        pass
    pid = os.fork()
    if pid == 0:  # child: annotate and stop, then leave without cleanup
        code = 0
        try:
            with smppy.annotate("child"):
                pass
            smppy.SMProfiler.instance().stop_profiling()
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with smppy.annotate("parent-after"):
        pass
    smppy.SMProfiler.instance().stop_profiling()
    assert sorted(e["name"] for e in read_annotations(trace_dir)) == ["parent-after", "parent-before"]


def test_unwritable_trace_path_warns_and_training_goes_on(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    profiler = smppy.SMProfiler.instance()
    profiler.configure({"RecordFile": str(blocker / "trace.smprof")})
    with pytest.warns(RuntimeWarning, match="cannot create trace file"):
        profiler.start_profiling()
    assert not profiler.is_profiling
    with smppy.annotate("still-fine"):
        pass


def test_a_stop_during_a_cuda_graph_capture_does_not_wait_for_the_gpu(
    trace_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No GPU here: torch's two answers are what a capturing thread gets from them.
    import torch
    from smppy import _profiler

    assert _profiler._no_gpu_wait_reason() == ""  # CUDA not initialised: torch is not asked
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    reasons: list[str] = []
    real_stop = _profiler._smppy.stop

    def stop(no_gpu_wait: str = "") -> object:
        reasons.append(no_gpu_wait)
        return real_stop(no_gpu_wait)

    monkeypatch.setattr(_profiler._smppy, "stop", stop)
    start_session(trace_dir)
    smppy.SMProfiler.instance().stop_profiling()
    assert reasons == ["the stopping thread's stream is capturing a CUDA graph"]

    def fails() -> bool:
        raise RuntimeError("CUDA driver shutting down")

    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", fails)
    assert _profiler._no_gpu_wait_reason() == ""
