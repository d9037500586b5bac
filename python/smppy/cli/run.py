"""``smprof run [--set Key=Value ...] [-o DIR] -- COMMAND ...``: profile an
unmodified program and every Python process it starts (docs/RUN.md).

Settings travel as SMP_* environment variables, the ones the API reads.
Python processes start profiling at interpreter start-up through the
``sitecustomize`` in ``smppy/_run_site`` (put first on PYTHONPATH); the
command itself, when it is a native program, through libsmprof on
LD_PRELOAD. At the end: where the traces are, the job's summary, and the
program's exit code.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from smppy import _smppy, analysis
from smppy._profiler import Config

# smppy/, not resolved: a staged package's links stay.
PACKAGE_DIR = Path(os.path.abspath(__file__)).parent.parent
SITE_DIR = PACKAGE_DIR / "_run_site"
LIBSMPROF = PACKAGE_DIR / "libsmprof.so"

# What `smprof run` sets unless the user does (--set or the environment).
RUN_DEFAULTS = {"TorchAutoSteps": "1", "EnableForkFollow": "1"}
NATIVE_CHOICES = ("top", "all", "none")


def parse_settings(pairs: list[str]) -> dict[str, str]:
    """``Key=Value`` pairs, validated; ValueError names a bad one."""
    settings: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--set takes Key=Value, not {pair!r}; keys: {', '.join(Config.keys())}")
        settings[key] = value
    Config(settings).validated()
    return settings


def job_environment(
    base: Mapping[str, str], settings: Mapping[str, str], output_dir: Path, explicit_output: bool, native: str
) -> dict[str, str]:
    """The environment of the profiled command. Precedence: --set, then -o,
    then the caller's SMP_* variables, then ``RUN_DEFAULTS``."""
    env = dict(base)
    for key, value in RUN_DEFAULTS.items():
        env.setdefault(_smppy.config_env_name(key), value)
    env.setdefault("SMP_JOB_NAME", output_dir.name)
    record_file = str(output_dir / "%h" / "rank%r_pid%p_%t.smprof")
    if explicit_output:
        env["SMP_RECORD_FILE"] = record_file
    else:
        env.setdefault("SMP_RECORD_FILE", record_file)
    env.update({_smppy.config_env_name(key): value for key, value in settings.items()})
    env["SMP_RUN"] = "1"
    env["SMP_RUN_NATIVE"] = native
    env["SMP_RUN_LAUNCHER_PID"] = str(os.getpid())
    env["SMP_RUN_SMPPY_PATH"] = str(PACKAGE_DIR.parent)  # the bootstrap imports this smppy
    env["PYTHONPATH"] = os.pathsep.join(
        [str(SITE_DIR)] + ([base["PYTHONPATH"]] if base.get("PYTHONPATH") else [])
    )
    if native != "none":
        env["LD_PRELOAD"] = " ".join(
            [str(LIBSMPROF)] + ([base["LD_PRELOAD"]] if base.get("LD_PRELOAD") else [])
        )
    return env


def trace_directory(env: Mapping[str, str]) -> Path:
    """The directory that holds every trace file: RecordFile's part before its first %-field."""
    pattern = env["SMP_RECORD_FILE"]
    fixed = pattern.split("%", 1)[0]
    return Path(fixed if fixed.endswith("/") else os.path.dirname(fixed) or ".").resolve()


# si_code of a signal the kernel sent (a terminal's Ctrl-C reaches the whole foreground process
# group, the command included), as against one a process sent with kill() (SI_USER, SI_QUEUE).
SI_KERNEL = 0x80
PASSED_ON = (signal.SIGINT, signal.SIGTERM)


def run_command(command: list[str], env: Mapping[str, str]) -> int:
    """Run ``command`` and return its exit code (128+N when signal N ended it; 130 after a SIGINT,
    whatever the command then did). SIGTERM and a SIGINT sent to this process alone (a supervisor,
    ``kill -INT PID``) are passed on to the command; a terminal's Ctrl-C already reaches the command
    and is not sent twice."""
    try:
        child = subprocess.Popen(command, env=dict(env))
    except OSError as e:
        print(f"smprof run: cannot start {command[0]!r}: {e}", file=sys.stderr)
        return 127
    # Blocked after the fork, so that the command starts with the caller's signal mask; taken
    # synchronously, with the sender's si_code, and SIGCHLD ends the wait when the command exits.
    waited = {*PASSED_ON, signal.SIGCHLD}
    previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, waited)
    interrupted = False
    try:
        while child.poll() is None:
            info = signal.sigtimedwait(waited, 1.0)
            if info is None or info.si_signo == signal.SIGCHLD:
                continue
            interrupted |= info.si_signo == signal.SIGINT
            if info.si_code != SI_KERNEL:
                child.send_signal(info.si_signo)
        code = child.returncode
    finally:
        while signal.sigtimedwait(waited, 0) is not None:  # none left to raise once unblocked
            pass
        signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
    if interrupted:
        return 128 + signal.SIGINT
    return 128 - code if code < 0 else code


def report(trace_dir: Path, since: float) -> None:
    """Where this run's traces are, and their summary."""
    from smppy.analysis.trace import find_trace_files
    from smppy.cli.messages import warn_grouped
    from smppy.cli.summary import print_summary

    files = (
        [f for f in find_trace_files(trace_dir) if f.stat().st_mtime >= since] if trace_dir.exists() else []
    )
    if not files:
        print(f"smprof run: no trace files were written under {trace_dir}", file=sys.stderr)
        return
    print(f"\nsmprof run: {len(files)} trace file(s) under {trace_dir}")
    summary = analysis.summarize([str(f) for f in files])
    print_summary(summary, top=10)
    sys.stdout.flush()  # the summary, then its warnings
    warn_grouped(summary["warnings"])
    print_next_commands(trace_dir)


def print_next_commands(trace_dir: Path) -> None:
    """The commands that open the detail of this run's traces."""
    try:
        shown = trace_dir.relative_to(Path.cwd())
    except ValueError:
        shown = trace_dir
    where, report, timeline = (
        shlex.quote(str(p)) for p in (shown, shown / "report.html", shown / "timeline.perfetto-trace")
    )
    commands = [
        (f"smprof diagnose {where}", "every finding, with its evidence"),
        (f"smprof report {where} -o {report}", "the dashboard, one HTML file"),
        (f"smprof export {where} --format perfetto -o {timeline}", "the timeline, for ui.perfetto.dev"),
    ]
    print("\nnext:")
    for command, what in commands:
        print(f"  # {what}\n  {command}")


def cmd_run(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise ValueError(
            "smprof run needs a command: smprof run [--set Key=Value ...] [-o DIR] -- COMMAND ..."
        )
    settings = parse_settings(args.set)
    if args.output and "RecordFile" in settings:
        raise ValueError("smprof run: give -o DIR or --set RecordFile=..., not both")
    output_dir = Path(
        args.output or f"smprof-out/run-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    ).resolve()
    env = job_environment(os.environ, settings, output_dir, bool(args.output), args.native)
    started = time.time() - 1
    # Where the job's processes claim the warnings they print, so that each is said once
    # (src/runtime/warnings.cc); the summary then groups them with their processes.
    with tempfile.TemporaryDirectory(prefix="smprof-warned-") as warned:
        code = run_command(command, {**env, "SMP_RUN_WARNED_DIR": warned})
    if not args.no_summary:
        report(trace_directory(env), started)
    return code


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "run",
        help="profile an unmodified program and every Python process it starts",
        description="Profile COMMAND and every Python process it starts (docs/RUN.md); "
        "print where the traces are and their summary; exit with COMMAND's exit code.",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="Key=Value",
        help="a config key (docs/CONFIG.md), as SMP_* environment variables would set it; repeatable",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="directory for the trace files (default smprof-out/run-TIME-PID); sets RecordFile",
    )
    p.add_argument(
        "--native",
        choices=NATIVE_CHOICES,
        default="top",
        help="native (non-Python) processes to profile through LD_PRELOAD: the command itself "
        "(top, the default), every one (all), or none",
    )
    p.add_argument("--no-summary", action="store_true", help="do not print the summary at the end")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command and its arguments")
    p.set_defaults(func=cmd_run)
