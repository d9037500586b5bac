"""The job's timeline for ui.perfetto.dev and chrome://tracing (``smprof export DIR --format
chrome|perfetto -o FILE``, docs/EXPORT.md).

The C++ exporters (``_smppy.export_timeline``) stream the rank files frame by frame, in this process or
in parts on worker processes (``_parallel_timeline.py``, ``jobs``); this module finds the files and turns
ranks and a ``start``/``end`` window into a rank list and wall-clock bounds; a step range goes to C++
as it is, which finds its window in the plan it exports from (src/analysis/timeline/step_window.h).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from smppy import _smppy
from smppy.analysis._inputs import resolve_traces
from smppy.analysis._local_workers import worker_count
from smppy.analysis.trace import find_trace_files
from smppy.export._parallel_timeline import export_on_workers

TIMELINE_FORMATS = ("chrome", "perfetto")
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


def export_timeline(
    location: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    format: str = "chrome",
    ranks: list[int] | None = None,
    start: float | None = None,
    end: float | None = None,
    steps: tuple[int, int] | None = None,
    step_pattern: str | None = None,
    gpu_utilization_max_buckets: int = 10_000,
    jobs: int | None = None,
) -> dict[str, Any]:
    """Writes the timeline of the traces at ``location`` to ``output`` (gzip-compressed when it ends
    in ``.gz``; its folder is created if missing) and returns what went in: counts, warnings, ``file_bytes``.

    ``start``/``end``: seconds since the job's start, or absolute wall-clock ns (>= 1e12).
    ``steps``: (first, last) step numbers; the window runs from the first's start to the last's end
    among the selected ranks, steps named by ``step_pattern`` (default: the summary's) and numbered as
    the summary numbers them.
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
    if steps is None and start_ns is not None and end_ns is not None and end_ns < start_ns:
        raise ValueError("the window is empty: --end is before --start")  # with steps: C++ says it
    out = os.fspath(output)
    created = [d for d in (Path(out).parent, *Path(out).parent.parents) if not d.exists()]
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    paths = [os.fspath(f) for f in files]
    gzip = out.endswith(".gz")
    options = {
        "ranks": ranks or [],
        "start_wall_ns": start_ns,
        "end_wall_ns": end_ns,
        "gpu_utilization_max_buckets": gpu_utilization_max_buckets,
        "steps": steps,
        "step_pattern": step_pattern or "",
    }
    try:
        if worker_count(jobs) > 1:
            result = export_on_workers(paths, out, format, gzip, jobs, options)
            if result is not None:
                return result
        return _smppy.export_timeline(paths, out, format, gzip=gzip, **options)
    except _smppy.NoStepError:
        _remove_empty(created)
        raise ValueError(
            f"--steps: no step {steps[0]}-{steps[1]} in {path}" + (f" for ranks {ranks}" if ranks else "")
        ) from None
    except ValueError:  # a window C++ found empty: nothing written, no folder left behind either
        _remove_empty(created)
        raise


def _remove_empty(folders: list[Path]) -> None:
    """Removes the folders an export created for a file it did not write, innermost first."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()
