"""``smprof export DIR --format chrome|perfetto -o FILE``: the job's timeline for ui.perfetto.dev and
chrome://tracing; ``--format parquet -o OUT/``: its tables as Parquet datasets (docs/EXPORT.md).

The writing is ``smppy.export``'s; this command turns ``--ranks``, ``--start/--end`` and ``--steps``
into its arguments and reports what was written.
"""

from __future__ import annotations

import argparse
from typing import Any

from smppy.cli import options
from smppy.cli.messages import warn_grouped
from smppy.export import (
    DEFAULT_BATCH_ROWS,
    TIMELINE_FORMATS,
    export_parquet,
    export_timeline,
    parse_int_ranges,
    time_arg,
)

FORMATS = (*TIMELINE_FORMATS, "parquet")
DEFAULT_OUTPUT = {"chrome": "trace.json.gz", "perfetto": "trace.perfetto-trace", "parquet": "parquet"}


def cmd_export_parquet(args: argparse.Namespace) -> int:
    timeline_only = [flag for flag, value in (("--ranks", args.ranks), ("--start", args.start),
                     ("--end", args.end), ("--steps", args.steps)) if value is not None]  # fmt: skip
    if timeline_only:
        raise ValueError(f"{', '.join(timeline_only)}: only for the timeline formats (chrome, perfetto)")
    output = args.output or DEFAULT_OUTPUT["parquet"]
    result = export_parquet(args.path, output, batch_rows=args.batch_rows, jobs=args.jobs)
    warn_grouped(result["warnings"])
    rows = ", ".join(f"{table} {n}" for table, n in result["rows"].items())
    print(
        f"{output}: parquet datasets (rows: {rows}) from {result['streams']} process stream(s),"
        f" {result['files']} file(s)"
    )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    if args.format == "parquet":
        return cmd_export_parquet(args)
    ranks = parse_int_ranges(args.ranks, "--ranks") if args.ranks else None
    steps = None
    if args.steps:
        numbers = parse_int_ranges(args.steps, "--steps")
        steps = (min(numbers), max(numbers))
    output = args.output or DEFAULT_OUTPUT[args.format]
    result = export_timeline(
        args.path,
        output,
        format=args.format,
        ranks=ranks,
        start=args.start,
        end=args.end,
        steps=steps,
        gpu_utilization_max_buckets=args.gpu_buckets,
        jobs=args.jobs,
    )
    warn_grouped(result["warnings"])
    print(
        f"{output}: {args.format} trace, {result['file_bytes'] / 1e6:.1f} MB:"
        f" {result['processes']} processes,"
        f" {result['slices']} slices, {result['counter_samples']} counter samples, {result['flows']} flows"
        f" from {result['files']} file(s)"
    )
    return 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "export",
        help="the timeline as a Chrome JSON or Perfetto trace (ui.perfetto.dev, chrome://tracing),"
        " or the tables as Parquet datasets",
        description="Writes the job's timeline: every rank on one wall clock, threads' annotations, CUDA API "
        "calls, GPU streams with launch->kernel arrows, counters; or (--format parquet) the tables of "
        "smppy.analysis.load as Parquet datasets partitioned by host and rank, for DuckDB, pandas, Dask, "
        "Spark. docs/EXPORT.md describes both.",
    )
    options.add_path(p)
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="chrome",
        help="chrome (JSON) or perfetto (protobuf) timeline, or parquet tables",
    )
    p.add_argument(
        "-o",
        "--output",
        help="output file, gzipped if it ends in .gz"
        " (default: trace.json.gz for chrome, trace.perfetto-trace for perfetto);"
        " for parquet a folder that gets one dataset per table (default: parquet)",
    )
    p.add_argument("--ranks", help="only these ranks, e.g. 0,2-3")
    p.add_argument(
        "--start",
        type=time_arg,
        help="window start: seconds since the job's start, or wall-clock ns (>= 1e12)",
    )
    p.add_argument("--end", type=time_arg, help="window end, like --start")
    p.add_argument(
        "--steps", help="window from the start of the first to the end of the last step, e.g. 40-42"
    )
    p.add_argument(
        "--gpu-buckets",
        type=int,
        default=10_000,
        help="most buckets of each GPU utilization counter (1 ms wide, doubled until the job fits)",
    )
    p.add_argument(
        "--batch-rows",
        type=int,
        default=DEFAULT_BATCH_ROWS,
        help="parquet: most rows of a table held in memory and written as one row group",
    )
    options.add_jobs(p, "write the parts of the export (rank processes, parquet files)")
    p.set_defaults(func=cmd_export)
