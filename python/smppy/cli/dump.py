"""``smprof dump PATH --json``: every event as one JSON object per line (``smppy.analysis.trace``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from smppy.analysis._inputs import resolve_traces
from smppy.analysis.trace import file_events, find_trace_files, open_trace
from smppy.cli.messages import warn

# info and dump treat damaged input alike (smppy.cli.info).


def cmd_dump(args: argparse.Namespace) -> int:
    out = sys.stdout
    read = 0
    for f in find_trace_files(resolve_traces(args.path)):
        try:
            trace = open_trace(f)
        except ValueError as e:
            warn(f"skipping {f}: {e}")
            continue
        read += 1
        for event in file_events(trace):
            out.write(json.dumps(event, separators=(",", ":")) + "\n")
        if trace.problem:
            warn(f"{f}: {trace.problem}")
    return 0 if read else 1


def add_parser(subparsers: Any) -> None:
    dump = subparsers.add_parser("dump", help="every event as one JSON object per line")
    dump.add_argument("path", help="a trace file or a directory of them (searched recursively)")
    dump.add_argument("--json", action="store_true", help="JSON lines (the only format, for now)")
    dump.set_defaults(func=cmd_dump)
