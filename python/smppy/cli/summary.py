"""``smprof summary DIR``: the job summary (docs/ANALYSIS.md) as terminal
tables per job and per rank, or as JSON with ``--json``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from smppy import analysis
from smppy._inputs import add_summary_arguments, require_readable, summary_input
from smppy._parallel_summary import add_worker_arguments
from smppy._torch_auto import INPUT_WAIT
from smppy.diagnose import diagnose
from smppy.diagnose.command import print_findings

TOP_FINDINGS = 3


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms"


def _table(headers: list[str], rows: list[list[Any]], indent: str = "  ") -> None:
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        print(
            indent
            + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
        )
        if n == 0:
            print(indent + "  ".join("-" * w for w in widths))


def _short(name: str, width: int = 60) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."


def _stats_row(label: str, s: dict[str, Any]) -> list[Any]:
    return [label, s["count"], _ms(s["mean_ns"]), _ms(s["p50_ns"]), _ms(s["p90_ns"]), _ms(s["max_ns"])]


def input_pipeline_wait(s: dict[str, Any]) -> dict[str, Any] | None:
    """The time steps waited for their batches (``InputWait`` annotations,
    docs/PYTORCH.md): total, count and share of step time; None without any."""
    wait = next((a["stats"] for a in s["annotations"] if a["name"] == INPUT_WAIT), None)
    if wait is None:
        return None
    step_ns = s["steps"]["stats"]["total_ns"]
    return {
        "annotation": INPUT_WAIT,
        "count": wait["count"],
        "total_ns": wait["total_ns"],
        "step_percent": 100.0 * wait["total_ns"] / step_ns if step_ns else None,
    }


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
                _ms(st["mean_ns"]),
                _ms(st["max_ns"]),
            ]
        )
    _table(
        ["process", "span", "GPU active", "CPU util", "annotations", "steps", "step mean", "step max"], rows
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
        _table(["", "count", "mean", "p50", "p90", "max"], stat_rows)
        slow = steps["slowest_rank"]
        print(f"  slowest: {slow['host']} rank {slow['rank']} (mean {_ms(slow['mean_ns'])})")
    wait = input_pipeline_wait(s)
    if wait:
        share = "" if wait["step_percent"] is None else f", {wait['step_percent']:.1f}% of step time"
        total = _ms(wait["total_ns"])
        print(f"\ninput-pipeline wait ({INPUT_WAIT}): {total} over {wait['count']} fetches{share}")

    kernels = gpu["kernels"]
    if kernels["count"]:
        for key, title in (("by_time", "time"), ("by_launches", "launches")):
            print(f"\ntop kernels by {title} ({kernels['distinct']} distinct, {kernels['count']} launches):")
            total_time = kernels["time_ns"] or 1
            _table(
                ["kernel", "time", "share", "launches"],
                [
                    [
                        _short(k["name"]),
                        _ms(k["time_ns"]),
                        f"{100 * k['time_ns'] / total_time:.1f}%",
                        k["launches"],
                    ]
                    for k in kernels[key][: top + 1]
                ],
            )

    if s["annotations"]:
        print(f"\nannotations (top {min(top, len(s['annotations']))} by total time):")
        _table(
            ["name", "count", "total", "mean", "p50", "p90", "max"],
            [
                [_short(a["name"], 40), a["stats"]["count"], _ms(a["stats"]["total_ns"])]
                + _stats_row("", a["stats"])[2:]
                for a in s["annotations"][:top]
            ],
        )

    drops = {k: v for k, v in s["drops"].items() if v}
    print("\ndrops: " + (", ".join(f"{k} {v}" for k, v in drops.items()) if drops else "none"))
    for w in s["warnings"]:
        print(f"warning: {w}")


def cmd_summary(args: argparse.Namespace) -> int:
    path = summary_input(args.path)
    s = analysis.summarize(
        path,
        step_pattern=args.step_pattern,
        data_wait_pattern=args.data_wait_pattern,
        max_profiled_steps=args.max_profiled_steps,
        top_k=args.top,
        jobs=args.jobs,
        scheduler=args.scheduler,
    )
    require_readable(s, args.path)
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
    p.add_argument("path", help="a trace file, a directory of them (searched recursively) or s3://...")
    p.add_argument("--json", action="store_true", help="print the summary dict (docs/ANALYSIS.md) as JSON")
    add_summary_arguments(p)
    p.add_argument("--top", type=int, default=15, help="kernels and annotations to list (default 15)")
    add_worker_arguments(p)
    p.set_defaults(func=cmd_summary)
