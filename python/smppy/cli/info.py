"""``smprof info PATH``: metadata, event counts, drops and time span per rank file
(``smppy.analysis.trace_info``)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from typing import Any

from smppy.analysis._inputs import resolve_traces
from smppy.analysis.session_end import end_sentence
from smppy.analysis.trace import find_trace_files
from smppy.analysis.trace_info import NameStats, TraceInfo, read_info
from smppy.cli.messages import warn
from smppy.cli.terminal_text import ms


def _print_info(infos: list[TraceInfo], top: int) -> None:
    for info in infos:
        h = info.header
        print(f"{info.path}")
        print(
            f"  rank {h['rank']}/{h['world_size']} (local {h['local_rank']}, from {h['rank_source']})"
            f"  host {h['host']}  pid {h['pid']}  job {h['job']}  session {h['session_index']}"
        )
        print(f"  command: {' '.join(h['argv'])}")
        if h["file_index"] or (info.footer and info.footer["next_file"]):
            following = (
                f", continued in {info.footer['next_file']}"
                if info.footer and info.footer["next_file"]
                else ""
            )
            print(f"  rotated file {h['file_index']} of the session{following}")
        if h["forked_child"]:
            print(f"  forked child of pid {h['parent_pid']} (parent's trace: {h['parent_trace']})")
        print(f"  status: {info.status}")
        if info.end is not None:
            print(f"  ended: {end_sentence(info.end)}")
        print(
            f"  span {info.span_ns / 1e9:.3f} s  frames {info.frames}  annotations {info.annotations}"
            f"  dropped {info.dropped}  threads {len(info.threads)}  distinct names {len(info.names)}"
        )
        if info.frames_lost_to_write_errors:
            print(
                f"  lost to write errors: {info.frames_lost_to_write_errors} frame(s),"
                f" {info.annotations_lost_to_write_errors} annotations (last: {info.last_write_error})"
            )
        if info.refused_open_limit:
            print(
                f"  not recorded: {info.refused_open_limit} annotation_begin calls past 4096 ranges open"
                " on one thread"
            )
        if info.names_cut or info.names_refused:
            print(
                f"  names not kept whole: {info.names_cut} cut at 16 KiB (ending ' [cut: N bytes]'), "
                f"{info.names_refused} past the name table's limits (as '<too many distinct names>')"
            )
        print(f"  counters: {info.counter_samples} samples of {len(info.counters)} counters")
        for line in info.gpu_lines():
            print(line)
        if info.collectives or info.collectives_dropped:
            calls = ", ".join(
                f"{n} {op}" for op, n in sorted(info.collectives.items(), key=lambda kv: -kv[1])
            )
            print(f"  collectives: {calls or 'none'}; dropped {info.collectives_dropped}")
        inactive = [c for c in h["collectors"] if not c["active"]]
        for c in inactive:
            print(f"  collector {c['name']}: off ({c['reason']})")
        missing: dict[str, list[str]] = defaultdict(list)
        for e in h["perf_events"]:
            if not e["active"]:
                missing[e["reason"]].append(e["name"])
        for reason, names in missing.items():
            print(f"  perf events not counted: {', '.join(names)} ({reason})")
        if h["perf_per_cpu_reason"]:
            print(f"  perf events not counted per CPU: {h['perf_per_cpu_reason']}")
    totals: dict[str, NameStats] = defaultdict(NameStats)
    for info in infos:
        for name, s in info.names.items():
            t = totals[name]
            t.count += s.count
            t.total_ns += s.total_ns
            t.max_ns = max(t.max_ns, s.max_ns)
    if not totals:
        return
    ranks = sorted({i.header["rank"] for i in infos})
    print(
        f"\n{len(infos)} file(s), ranks {ranks}, "
        f"{sum(i.annotations for i in infos)} annotations, {sum(i.dropped for i in infos)} dropped"
    )
    print(f"top {min(top, len(totals))} annotations by total time (all files):")
    print(f"  {'name':<32} {'count':>8} {'total':>14} {'mean':>12} {'max':>12}")
    for name, s in sorted(totals.items(), key=lambda kv: -kv[1].total_ns)[:top]:
        print(
            f"  {name[:32]:<32} {s.count:>8} {ms(s.total_ns):>14} {ms(s.total_ns // s.count):>12}"
            f" {ms(s.max_ns):>12}"
        )


# info and dump treat damaged input alike: each file that cannot be opened, or that is truncated,
# corrupt or inconsistent with its footer, is one warning on stderr (the readable part is still
# used); the exit status is 0 when at least one file could be read, 1 when none could.


def cmd_info(args: argparse.Namespace) -> int:
    infos = []
    for f in find_trace_files(resolve_traces(args.path)):
        try:
            infos.append(read_info(f))
        except ValueError as e:
            warn(f"skipping {f}: {e}")
    for info in infos:
        if info.problem:
            warn(f"{info.path}: {info.problem}")
    if args.json:
        json.dump([i.to_json() for i in infos], sys.stdout, indent=2)
        print()
    else:
        _print_info(infos, args.top)
    return 0 if infos else 1


def add_parser(subparsers: Any) -> None:
    info = subparsers.add_parser("info", help="metadata, event counts, drops and time span per rank file")
    info.add_argument("path", help="a trace file or a directory of them (searched recursively)")
    info.add_argument("--json", action="store_true", help="print JSON instead of text")
    info.add_argument("--top", type=int, default=10, help="annotations to list by total time (default 10)")
    info.set_defaults(func=cmd_info)
