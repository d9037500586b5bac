"""``smprof export DIR --format chrome|perfetto -o FILE``: the job's timeline for ui.perfetto.dev and
chrome://tracing; ``--format parquet -o OUT/``: its tables as Parquet datasets (``parquet_export.py``)
(docs/EXPORT.md).

The C++ exporters (``_smppy.export_timeline``) stream the rank files frame by frame, in this process or
in parts on worker processes (``_parallel_timeline.py``, ``--jobs``); this module finds the files, turns
``--ranks``, ``--start/--end`` and ``--steps`` into a rank list and a wall-clock window, and reports what
was written.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from smppy import _smppy
from smppy._inputs import resolve_traces
from smppy._local_workers import add_jobs_argument, worker_count
from smppy._parallel_timeline import export_on_workers
from smppy.parquet_export import DEFAULT_BATCH_ROWS, export_parquet
from smppy.trace import find_trace_files

TIMELINE_FORMATS = ("chrome", "perfetto")
FORMATS = (*TIMELINE_FORMATS, "parquet")
DEFAULT_OUTPUT = {"chrome": "trace.json.gz", "perfetto": "trace.perfetto-trace", "parquet": "parquet"}
# --start/--end values at least this large are absolute wall-clock times (ns since the Unix epoch);
# smaller ones are seconds since the job's start (1e12 s is 31,000 years: never a relative time).
ABSOLUTE_NS_THRESHOLD = 1e12


def parse_int_ranges(text: str, what: str) -> list[int]:
    """``"0,2-3"`` -> ``[0, 2, 3]``; a ValueError naming ``what`` otherwise."""
    values: list[int] = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            first = int(lo)
            last = int(hi) if sep else first
        except ValueError:
            raise ValueError(f"{what}: '{part}' is not N or N-M (e.g. 0,2-3)") from None
        if last < first:
            raise ValueError(f"{what}: range '{part}' ends before it starts")
        values.extend(range(first, last + 1))
    return values


def job_start_wall_ns(files: list[Path]) -> int:
    """The earliest session start (wall clock, ns; each process on its corrected clock) among the rank
    files: the origin of relative times."""
    return _smppy.job_start_wall_ns([os.fspath(f) for f in files])


def time_arg(text: str) -> float:
    """A ``--start``/``--end`` argument: an int stays exact (wall-clock ns), anything else is a float."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def window_bound_ns(value: float, job_start_ns: int) -> int:
    """A ``--start``/``--end`` value as absolute wall-clock ns (see ABSOLUTE_NS_THRESHOLD)."""
    if value >= ABSOLUTE_NS_THRESHOLD:
        return int(value)
    return job_start_ns + round(value * 1e9)


def step_window_ns(path: Path, first: int, last: int, ranks: list[int] | None) -> tuple[int, int]:
    """From the start of step ``first`` to the end of step ``last``, over the selected ranks
    (``smppy.analysis`` finds the steps)."""
    from smppy import analysis

    steps = analysis.load(os.fspath(path), tables=("steps",)).steps
    columns = steps.to_dict("list") if hasattr(steps, "to_dict") else steps
    starts, ends = [], []
    for rank, step, start, end in zip(
        columns["rank"], columns["step"], columns["start_wall_ns"], columns["end_wall_ns"]
    ):
        if first <= step <= last and (not ranks or rank in ranks):
            starts.append(start)
            ends.append(end)
    if not starts:
        raise ValueError(
            f"--steps: no step {first}-{last} in {path}" + (f" for ranks {ranks}" if ranks else "")
        )
    return int(min(starts)), int(max(ends))


def export_timeline(
    location: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    format: str = "chrome",
    ranks: list[int] | None = None,
    start: float | None = None,
    end: float | None = None,
    steps: tuple[int, int] | None = None,
    gpu_utilization_max_buckets: int = 10_000,
    jobs: int | None = None,
) -> dict[str, Any]:
    """Writes the timeline of the traces at ``location`` to ``output`` (gzip-compressed when it ends
    in ``.gz``; its folder is created if missing) and returns what went in: counts, warnings, ``file_bytes``.

    ``start``/``end``: seconds since the job's start, or absolute wall-clock ns (>= 1e12).
    ``steps``: (first, last) step numbers; the window runs from the first's start to the last's end.
    ``jobs``: worker processes that write the rank processes' parts (default: the usable cores, from
    4 MiB of traces); 1 exports in this process. The file is the same to the byte whichever way.
    """
    if format not in TIMELINE_FORMATS:
        raise ValueError(f"format must be one of: {', '.join(TIMELINE_FORMATS)} (got '{format}')")
    path = resolve_traces(os.fspath(location))
    files = find_trace_files(path)
    start_ns = end_ns = None
    if start is not None or end is not None:
        origin = job_start_wall_ns(files)
        start_ns = None if start is None else window_bound_ns(start, origin)
        end_ns = None if end is None else window_bound_ns(end, origin)
    if steps is not None:
        step_start, step_end = step_window_ns(path, steps[0], steps[1], ranks)
        start_ns = step_start if start_ns is None else max(start_ns, step_start)
        end_ns = step_end if end_ns is None else min(end_ns, step_end)
    if start_ns is not None and end_ns is not None and end_ns < start_ns:
        raise ValueError("the window is empty: --end is before --start")
    out = os.fspath(output)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    paths = [os.fspath(f) for f in files]
    gzip = out.endswith(".gz")
    options = {
        "ranks": ranks or [],
        "start_wall_ns": start_ns,
        "end_wall_ns": end_ns,
        "gpu_utilization_max_buckets": gpu_utilization_max_buckets,
    }
    if worker_count(jobs) > 1:
        result = export_on_workers(paths, out, format, gzip, jobs, options)
        if result is not None:
            return result
    return _smppy.export_timeline(paths, out, format, gzip=gzip, **options)


def cmd_export_parquet(args: argparse.Namespace) -> int:
    timeline_only = [flag for flag, value in (("--ranks", args.ranks), ("--start", args.start),
                     ("--end", args.end), ("--steps", args.steps)) if value is not None]  # fmt: skip
    if timeline_only:
        raise ValueError(f"{', '.join(timeline_only)}: only for the timeline formats (chrome, perfetto)")
    output = args.output or DEFAULT_OUTPUT["parquet"]
    result = export_parquet(args.path, output, batch_rows=args.batch_rows, jobs=args.jobs)
    for warning in result["warnings"]:
        print(f"smprof: warning: {warning}", file=sys.stderr)
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
    for warning in result["warnings"]:
        print(f"smprof: warning: {warning}", file=sys.stderr)
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
    p.add_argument("path", help="a trace file or a directory of them (searched recursively)")
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
    add_jobs_argument(p, "write the parts of the export (rank processes, parquet files)")
    p.set_defaults(func=cmd_export)
