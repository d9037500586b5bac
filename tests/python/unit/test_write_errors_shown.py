"""Frames lost to write errors (disk full) are visible: `smprof info` prints the footer's
counts and the last error, `smprof summary` adds the annotations to its drops."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import synthetic_trace as st

ERROR = "cannot write trace file '/data/rank0.smprof': No space left on device"


def smprof(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("smprof")
    assert exe
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)


def trace_with_lost_frames(tmp_path: Path) -> Path:
    frame = st.pb().Frame(sequence=0)
    st.add_annotations(frame, [(1_000, 500, "step", 7, 0)])
    footer = st.pb().Footer(
        annotations_written=1,
        frames_written=1,
        frames_lost_to_write_errors=3,
        annotations_lost_to_write_errors=1234,
        last_write_error=ERROR.encode(),
    )
    footer.stop.monotonic_ns = 10_000
    return st.write_trace(tmp_path / "lost.smprof", st.header(), [frame], footer)


def test_info_prints_the_loss_and_its_cause(tmp_path: Path) -> None:
    path = trace_with_lost_frames(tmp_path)
    text = smprof("info", str(path))
    assert text.returncode == 0, text.stderr
    assert f"lost to write errors: 3 frame(s), 1234 annotations (last: {ERROR})" in text.stdout
    (info,) = json.loads(smprof("info", str(path), "--json").stdout)
    assert info["frames_lost_to_write_errors"] == 3
    assert info["annotations_lost_to_write_errors"] == 1234
    assert info["last_write_error"] == ERROR


def test_summary_counts_them_as_drops(tmp_path: Path) -> None:
    path = trace_with_lost_frames(tmp_path)
    summary = json.loads(smprof("summary", str(path), "--json").stdout)
    assert summary["drops"]["annotations_lost_to_write_errors"] == 1234
    text = smprof("summary", str(path)).stdout
    assert "annotations_lost_to_write_errors 1234" in text
