"""How each session ended, in words: the footer's ``SessionEnd`` (trace.proto; ``end`` of a footer
dict, of each ``ranks`` row of the summary). ``smprof info``, ``summary`` and the report say it
the same way; an end that is not a plain stop or exit is also one of the summary's warnings (a missing footer
already is: the reader's "truncated: no footer")."""

from __future__ import annotations

import signal
from typing import Any

NO_FOOTER = "no footer: still running, or killed (SIGKILL, the OOM killer) or crashed"


def _end(how: str) -> dict[str, Any]:
    return {"how": how, "exit_code": None, "signal": 0, "exception_type": "", "exception_message": ""}


def end_of_file(footer: dict[str, Any] | None) -> dict[str, Any] | None:
    """How the session of a file with this footer ended (the summary's ``ranks[].end`` shape);
    None for a rotated file that the session continued after."""
    if footer is None:
        return _end("no_footer")
    if footer["next_file"]:
        return None
    return footer["end"] or _end("unknown")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _how(end: dict[str, Any] | None) -> str:
    return "no_footer" if end is None else end["how"]


def end_label(end: dict[str, Any] | None) -> str:
    """A table cell: ``stop``, ``exit 3``, ``SIGTERM``, ``ValueError``, ``os._exit(5)``, ``no footer``."""
    how = _how(end)
    if how == "exit":
        return "exit" if end["exit_code"] is None else f"exit {end['exit_code']}"
    if how == "signal":
        return _signal_name(end["signal"])
    if how == "exception":
        return end["exception_type"] or "exception"
    if how == "os_exit":
        return f"os._exit({end['exit_code']})"
    return {"stop": "stop", "no_footer": "no footer"}.get(how, "-")


def end_sentence(end: dict[str, Any] | None) -> str:
    """The end as a sentence, e.g. "ended by an uncaught ValueError: bad batch"."""
    how = _how(end)
    if how == "stop":
        return "profiling stopped (stop_profiling, or the schedule's end)"
    if how == "exit":
        return "the process exited" + ("" if end["exit_code"] is None else f" with status {end['exit_code']}")
    if how == "signal":
        return f"ended by {_signal_name(end['signal'])}"
    if how == "exception":
        message = end["exception_message"]
        kind = end["exception_type"] or "exception"
        return f"ended by an uncaught {kind}" + (f": {message}" if message else "")
    if how == "os_exit":
        return f"left through os._exit({end['exit_code']})"
    if how == "no_footer":
        return NO_FOOTER
    return "how it ended is not recorded (written by an older smprof)"


def ended_abnormally(end: dict[str, Any] | None) -> bool:
    """Anything but a stop, or an exit (interpreter exit, exit(), os._exit) with status 0 or unknown."""
    how = _how(end)
    if how == "stop":
        return False
    if how in ("exit", "os_exit"):
        return end["exit_code"] not in (None, 0)
    return how != "unknown"


def end_warnings(summary: dict[str, Any]) -> list[str]:
    """One warning per process whose session ended abnormally, as the summary's per-process
    warnings are worded (``HOST rank R pid P: ...``): its end, and the steps it had finished. A
    file without a footer is already the reader's warning, naming the file."""
    out = []
    for r in summary["ranks"]:
        if ended_abnormally(r["end"]) and r["end"]["how"] != "no_footer":
            steps = r["steps"]["count"]
            after = f" (after {steps} step{'s' if steps != 1 else ''})" if steps else ""
            out.append(f"{r['host']} rank {r['rank']} pid {r['pid']}: {end_sentence(r['end'])}{after}")
    return out
