"""``smprof top DIR``: a live view of a running job from its trace files as they are written, no
connection to the job (``smppy.analysis.live``; docs/TOP.md); ``--once --json`` prints one snapshot."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from smppy import analysis
from smppy.analysis.live import WINDOW_S, LiveJob
from smppy.cli import options
from smppy.cli.terminal_text import table
from smppy.diagnose import diagnose

_CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear the screen


def _newest_finding(directory: Path, step_pattern: str | None) -> dict[str, Any] | None:
    """The most costly finding of ``smprof diagnose`` on what the job wrote so far, or None."""
    kwargs = {"step_pattern": step_pattern} if step_pattern else {}
    findings = diagnose(analysis.summarize(directory, **kwargs))
    if not findings:
        return None
    f = findings[0]
    return {"id": f.id, "severity": f.severity, "title": f.title, "cost_total_ns": f.cost_total_ns}


def _duration(ns: int | None) -> str:
    if ns is None:
        return "-"
    return f"{ns / 1e6:.0f} ms" if ns >= 10e6 else f"{ns / 1e6:.1f} ms"


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.0f}%"


def _state(rank: dict[str, Any], now_ns: int) -> str:
    if rank["ended"]:
        return "ended"
    ago = (now_ns - rank["newest_wall_ns"]) / 1e9 if rank["newest_wall_ns"] else None
    return "running" if ago is None else f"running ({ago:.0f} s since its last event)"


HEADERS = ["rank", "host", "pid", "step", "steps/s", "last step", "median", "input wait", "GPU busy", "CPU"]
HEADERS += ["own CPU", "state"]


def _row(r: dict[str, Any], now_ns: int) -> list[Any]:
    cpu, own = r["cpu_utilization_percent"], r["process_cpu_percent"]
    return [
        r["rank"],
        r["host"],
        r["pid"],
        "-" if r["step"] is None else r["step"],
        f"{r['steps_per_s']:.1f}",
        _duration(r["last_step_ns"]),
        _duration(r["median_step_ns"]),
        _percent(r["input_wait_share"]),
        _percent(r["gpu_busy_share"]),
        "-" if cpu is None else f"{cpu:.0f}%",
        "-" if own is None else f"{own:.0f}%",
        _state(r, now_ns),
    ]


def _print(snapshot: dict[str, Any]) -> None:
    now = time.time_ns()
    print(
        f"smprof top {snapshot['directory']}: {len(snapshot['ranks'])} rank process(es), "
        f"{time.strftime('%H:%M:%S')} (steps/s and GPU over the last {WINDOW_S:g} s)"
    )
    table(HEADERS, [_row(r, now) for r in snapshot["ranks"]])
    finding = snapshot.get("finding")
    if finding:
        print(f"newest finding: [{finding['severity']}] {finding['title']}")
    for problem in snapshot["problems"][-3:]:
        print(f"problem: {problem}")


def cmd_top(args: argparse.Namespace) -> int:
    directory = Path(args.path)
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory}: not a directory (smprof top follows a job's trace directory)")
    job = LiveJob(directory, **({"step_pattern": args.step_pattern} if args.step_pattern else {}))
    findings_due = 0.0
    finding = None
    while True:
        snapshot = job.refresh()
        if args.findings_every >= 0 and time.monotonic() >= findings_due:
            finding = _newest_finding(directory, args.step_pattern)
            findings_due = time.monotonic() + args.findings_every
        snapshot["finding"] = finding
        if args.json:
            print(json.dumps(snapshot), flush=True)
        else:
            if not args.once and sys.stdout.isatty():
                print(_CLEAR, end="")
            _print(snapshot)
            sys.stdout.flush()
        if args.once:
            return 0
        try:
            time.sleep(args.interval)
        except KeyboardInterrupt:
            return 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "top",
        help="a live view of a running job from its trace files (steps/s, input wait, GPU, CPU per rank)",
    )
    p.add_argument("path", help="the job's trace directory (smprof run -o DIR), followed as it is written")
    p.add_argument("--interval", type=float, default=2.0, help="seconds between refreshes (default 2)")
    p.add_argument("--once", action="store_true", help="one snapshot, then exit")
    p.add_argument(
        "--findings-every",
        type=float,
        default=30.0,
        help="seconds between runs of smprof diagnose on what the job wrote so far (default 30; -1: never)",
    )
    options.add_json(p, "each snapshot, one line of JSON per refresh")
    options.add_step_pattern(p)
    p.set_defaults(func=cmd_top)
