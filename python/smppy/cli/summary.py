"""``smprof summary DIR``: the job summary (docs/ANALYSIS.md) as terminal
tables per job and per rank, or as JSON with ``--json``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from smppy import analysis
from smppy.analysis import input_pipeline_wait
from smppy.analysis._inputs import require_readable, summary_input
from smppy.analysis.session_end import end_label
from smppy.cli import options
from smppy.cli.messages import warn_grouped
from smppy.cli.terminal_text import ms, print_findings, short, table
from smppy.diagnose import diagnose
from smppy.diagnose.input_wait import input_wait_sentence

TOP_FINDINGS = 3


def _stats_row(label: str, s: dict[str, Any]) -> list[Any]:
    return [label, s["count"], ms(s["mean_ns"]), ms(s["p50_ns"]), ms(s["p90_ns"]), ms(s["max_ns"])]


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _print_collectives(c: dict[str, Any], top: int) -> None:
    if not c["calls"]:
        return
    print(
        f"\ncollectives ({c['calls']} calls, {c['instances_matched']} of {c['instances']} instances matched "
        "across ranks" + (f", {c['dropped']} dropped" if c["dropped"] else "") + "):"
    )
    gpu = c.get("kernels_linked", 0) > 0  # NCCL kernels linked to the calls
    waits = any(o.get("waits") for o in c["ops"])  # Work.wait() recorded (Python waited on a call)
    table(
        ["op", "group", "ranks", "calls", "bytes", "call time"]
        + (["Work.wait"] if waits else [])
        + ["wait", "skew p50", "skew max"]
        + (["GPU time", "GPU wait"] if gpu else []),
        [
            [
                o["op"],
                o["group"],
                o["group_size"],
                o["calls"],
                _bytes(o["bytes"]),
                ms(o["call_ns"]),
            ]
            + ([ms(o["work_wait_ns"])] if waits else [])
            + [
                ms(o["wait_ns"]),
                ms(o["skew"]["p50_ns"]),
                ms(o["skew"]["max_ns"]),
            ]
            + ([ms(o["device_ns"]), ms(o["device_wait_ns"])] if gpu else [])
            for o in c["ops"][:top]
        ],
    )
    print(
        "  per rank ("
        + ("Work.wait: blocked in the calls' Work.wait(); " if waits else "")
        + "wait: from its arrival to the last rank's, over the matched instances):"
    )
    table(
        ["process", "calls"] + (["Work.wait"] if waits else []) + ["wait", "arrived last", "late by (mean)"],
        [
            [f"{r['host']} rank {r['rank']} pid {r['pid']}", r["calls"]]
            + ([ms(r["work_wait_ns"])] if waits else [])
            + [
                ms(r["wait_ns"]),
                f"{r['last_arrivals']} of {r['instances_matched']}",
                ms(r["late_by_ns"] / r["last_arrivals"]) if r["last_arrivals"] else "-",
            ]
            for r in c["ranks"]
            if r["calls"]
        ],
    )
    if gpu:
        print(
            f"  on the GPU ({c['instances_matched_on_device']} instances matched on their NCCL kernels' "
            "starts"
            + (f", {c['kernels_not_linked']} kernels not linked to a call" if c["kernels_not_linked"] else "")
            + "):"
        )
        table(
            ["process", "kernels", "GPU time", "wait", "arrived last", "late by (mean)"],
            [
                [
                    f"{r['host']} rank {r['rank']} pid {r['pid']}",
                    r["kernels"],
                    ms(r["device_ns"]),
                    ms(r["device_wait_ns"]),
                    f"{r['device_last_arrivals']} of {r['instances_matched_on_device']}",
                    ms(r["device_late_by_ns"] / r["device_last_arrivals"])
                    if r["device_last_arrivals"]
                    else "-",
                ]
                for r in c["ranks"]
                if r["kernels"]
            ],
        )
    if c.get("instances_op_differ"):
        e = c["op_differ_examples"][0]
        print(
            f"  {c['instances_op_differ']} instance(s) called as different ops across ranks, e.g. "
            f"#{e['sequence']} of group {e['group']}: rank {e['rank']} {e['op']}, "
            f"rank {e['other_rank']} {e['other_op']}"
        )
    if c["instances_bytes_differ"]:
        e = c["bytes_differ_examples"][0]
        print(
            f"  {c['instances_bytes_differ']} instance(s) with different bytes across ranks, e.g. {e['op']} "
            f"#{e['sequence']} of group {e['group']}: rank {e['rank_min']} {e['bytes_min']} B, "
            f"rank {e['rank_max']} {e['bytes_max']} B"
        )


def print_summary(s: dict[str, Any], top: int) -> None:
    job = s["job"]
    print(
        f"job {', '.join(job['jobs']) or '-'}: {len(job['hosts'])} host(s), ranks {job['ranks']}, "
        f"{len(job['files'])} file(s), span {job['span_ns'] / 1e9:.3f} s"
    )
    findings = diagnose(s)
    if findings:
        print(f"\ntop findings (smprof diagnose for all {len(findings)}):")
        print_findings(findings, TOP_FINDINGS)
        print()
    gpu, cpu = s["gpu"], s["cpu"]
    if gpu["reason"]:
        print(f"GPU: {gpu['reason']}")
    else:
        print(f"GPU active: {gpu['active_percent']:.1f}% ({gpu['active_ns'] / 1e9:.3f} s over all GPUs)")
    if cpu["reason"]:
        print(f"CPU: {cpu['reason']}")
    for host in cpu["hosts"]:
        print(
            f"CPU {host['host']}: utilization {host['utilization_percent']:.1f}%, "
            f"active {host['active_ns'] / 1e9:.3f} core-s over {len(host['cores'])} core(s)"
        )

    print("\nper rank:")
    rows = []
    for r in s["ranks"]:
        cpu_pct = "-" if r["cpu_utilization_percent"] is None else f"{r['cpu_utilization_percent']:.1f}%"
        st = r["steps"]
        rows.append(
            [
                f"{r['host']} rank {r['rank']}"
                + (f" worker of pid {r['worker_of_pid']}" if r["worker_of_pid"] else "")
                + f" pid {r['pid']}",
                f"{r['span_ns'] / 1e9:.3f} s",
                f"{r['gpu_active_percent']:.1f}%",
                cpu_pct,
                r["annotations"],
                st["count"],
                ms(st["mean_ns"]),
                ms(st["max_ns"]),
                end_label(r["end"]),
            ]
        )
    table(
        ["process", "span", "GPU active", "CPU util", "annotations", "steps"]
        + ["step mean", "step max", "ended"],
        rows,
    )

    steps = s["steps"]
    if steps["stats"]["count"]:
        print(f"\nsteps (pattern {steps['pattern']}):")
        stat_rows = [_stats_row("all ranks", steps["stats"])]
        stat_rows += [
            _stats_row(f"{p['host']} rank {p['rank']}", p["stats"])
            for p in steps["per_rank"]
            if p["stats"]["count"]
        ]
        table(["", "count", "mean", "p50", "p90", "max"], stat_rows)
        slow = steps["slowest_rank"]
        print(f"  slowest: {slow['host']} rank {slow['rank']} (mean {ms(slow['mean_ns'])})")
    wait = input_pipeline_wait(s)
    if wait:
        print(f"\ninput-pipeline wait: {input_wait_sentence(wait)}")

    kernels = gpu["kernels"]
    if kernels["count"]:
        for key, title in (("by_time", "time"), ("by_launches", "launches")):
            print(f"\ntop kernels by {title} ({kernels['distinct']} distinct, {kernels['count']} launches):")
            total_time = kernels["time_ns"] or 1
            table(
                ["kernel", "time", "share", "launches"],
                [
                    [
                        short(k["name"]),
                        ms(k["time_ns"]),
                        f"{100 * k['time_ns'] / total_time:.1f}%",
                        k["launches"],
                    ]
                    for k in kernels[key][: top + 1]
                ],
            )

    if s["annotations"]:
        print(f"\nannotations (top {min(top, len(s['annotations']))} by total time):")
        table(
            ["name", "count", "total", "mean", "p50", "p90", "max"],
            [
                [short(a["name"], 40), a["stats"]["count"], ms(a["stats"]["total_ns"])]
                + _stats_row("", a["stats"])[2:]
                for a in s["annotations"][:top]
            ],
        )

    _print_collectives(s["collectives"], top)

    drops = {k: v for k, v in s["drops"].items() if v}
    print("\ndrops: " + (", ".join(f"{k} {v}" for k, v in drops.items()) if drops else "none"))


def cmd_summary(args: argparse.Namespace) -> int:
    s = analysis.summarize(summary_input(args.path), top_k=args.top, **options.summary_options(args))
    require_readable(s, args.path)
    warn_grouped(s["warnings"])
    if args.json:
        findings = [f.to_json() for f in diagnose(s)]
        json.dump(
            {**s, "input_pipeline_wait": input_pipeline_wait(s), "findings": findings}, sys.stdout, indent=1
        )
        print()
    else:
        print_summary(s, args.top)
    return 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("summary", help="job summary: GPU/CPU use, kernels, steps, annotations, drops")
    options.add_path(p)
    options.add_json(p, "the summary dict (docs/ANALYSIS.md)")
    options.add_summary_options(p)
    p.add_argument("--top", type=int, default=15, help="kernels and annotations to list (default 15)")
    p.set_defaults(func=cmd_summary)
