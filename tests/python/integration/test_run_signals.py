"""Signals to `smprof run`: a SIGINT or SIGTERM sent to the launcher alone (a supervisor, ``kill -INT
PID``) reaches the profiled command once; a terminal's Ctrl-C, which reaches the whole foreground
process group, is not sent a second time; after a SIGINT the launcher exits 130."""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import subprocess
import sys
import termios
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]

# Counts the signals it gets (one line each), says when its handlers are in place, and exits 0 half
# a second after the first, so that a second delivery would be counted.
COMMAND = textwrap.dedent(
    """
    import signal, sys, time
    log, ready = sys.argv[1], sys.argv[2]
    got = []
    def on_signal(signum, frame):
        got.append(signum)
        with open(log, "a") as f:
            f.write(signal.Signals(signum).name + "\\n")
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    open(ready, "w").close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not got:
        time.sleep(0.02)
    time.sleep(0.5)
    sys.exit(0 if got else 9)
    """
)


def start_launcher(tmp_path: Path, **popen: object) -> subprocess.Popen:
    script = tmp_path / "wait_for_signal.py"
    script.write_text(COMMAND)
    argv = [sys.executable, "-m", "smppy.cli", "run", "-o", str(tmp_path / "traces"), "--no-summary", "--"]
    argv += [sys.executable, str(script), str(tmp_path / "signals.log"), str(tmp_path / "ready")]
    return subprocess.Popen(argv, cwd=tmp_path, **popen)


def wait_until_ready(tmp_path: Path, launcher: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while not (tmp_path / "ready").exists():
        assert launcher.poll() is None, "smprof run ended before its command was ready"
        assert time.monotonic() < deadline, "the command never became ready"
        time.sleep(0.05)


def signals_received(tmp_path: Path) -> list[str]:
    log = tmp_path / "signals.log"
    return log.read_text().split() if log.exists() else []


@pytest.mark.parametrize(("signum", "expected_rc"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_a_signal_to_the_launcher_alone_reaches_the_command_once(
    tmp_path: Path, signum: signal.Signals, expected_rc: int
) -> None:
    launcher = start_launcher(tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until_ready(tmp_path, launcher)
        os.kill(launcher.pid, signum)
        _, stderr = launcher.communicate(timeout=60)
    finally:
        launcher.kill()
    assert signals_received(tmp_path) == [signum.name]
    assert launcher.returncode == expected_rc, stderr.decode()
    assert b"Traceback" not in stderr


def test_ctrl_c_in_a_terminal_reaches_the_command_once_and_the_launcher_exits_130(tmp_path: Path) -> None:
    master, slave = pty.openpty()

    def controlling_terminal() -> None:  # in the launcher, a session leader after setsid
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    launcher = start_launcher(
        tmp_path,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=controlling_terminal,
    )
    os.close(slave)
    try:
        wait_until_ready(tmp_path, launcher)
        os.write(master, b"\x03")  # the terminal's ISIG: SIGINT to its foreground process group
        launcher.wait(timeout=60)
    finally:
        launcher.kill()
        os.close(master)
    assert signals_received(tmp_path) == ["SIGINT"]
    assert launcher.returncode == 130
