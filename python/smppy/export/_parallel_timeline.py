"""The timeline export (``smprof export --format chrome|perfetto``) written by worker processes of
this machine: each writes the segments of a run of rank processes into a part file, and this process
puts the file together from the parts (src/analysis/timeline/timeline_export.h): the same bytes as an export
in one process, gzip included."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from smppy import _smppy
from smppy.analysis._local_workers import on_local_workers, stays_in_process, task_groups, worker_count


class _Group(NamedTuple):
    """A rank process of the timeline: its index in export order and its trace bytes."""

    index: int
    bytes: int


def timeline_part(
    run: tuple[int, int], streams: list[Any], part_dir: str, format: str, gzip: bool, options: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """Writes the rank processes ``run`` = [first, end) into a part file of ``part_dir``: what a worker
    runs. Returns the part's path and what went in."""
    part = os.path.join(part_dir, f"part-{run[0]:08d}")
    return part, _smppy.export_timeline_part(streams, run[0], run[1], part, format, gzip=gzip, **options)


def export_on_workers(
    files: list[str], output: str, format: str, gzip: bool, jobs: int | None, options: dict[str, Any]
) -> dict[str, Any] | None:
    """Exports on ``jobs`` workers (default: the usable cores), or returns None when the job is for one
    process (see ``stays_in_process``; one rank process in the export)."""
    streams, job_warnings = _smppy.job_streams(files)
    if stays_in_process(streams, jobs):
        return None
    groups = [_Group(i, n) for i, n in enumerate(_smppy.timeline_group_bytes(streams, options["ranks"]))]
    if len(groups) <= 1:
        return None
    # The steps' window is found once, here, and the parts get its bounds.
    start_ns, end_ns = _smppy.timeline_window(
        streams, options["ranks"], options["start_wall_ns"], options["end_wall_ns"],
        options["steps"], options["step_pattern"],
    )  # fmt: skip
    part_options = {
        "ranks": options["ranks"],
        "start_wall_ns": start_ns,
        "end_wall_ns": end_ns,
        "gpu_utilization_max_buckets": options["gpu_utilization_max_buckets"],
    }
    if format == "chrome":  # the collectives' flows: each instance's first and last rank, found once here
        part_options["collective_chains"] = _smppy.timeline_collective_chains(
            streams, options["ranks"], start_ns, end_ns
        )
    runs = [(run[0].index, run[-1].index + 1) for run in task_groups(groups, worker_count(jobs))]
    # The parts go beside the output: as much room as it needs, and no copy across file systems.
    with tempfile.TemporaryDirectory(prefix=".smprof-export-", dir=Path(output).parent) as part_dir:
        done = dict(
            on_local_workers(
                timeline_part, runs, worker_count(jobs), work="export",
                streams=streams, part_dir=part_dir, format=format, gzip=gzip, options=part_options,
            )
        )  # fmt: skip
        parts = [done[run] for run in runs]  # in export order
        result = _smppy.assemble_timeline(
            streams, [path for path, _ in parts], output, format, gzip=gzip, ranks=options["ranks"]
        )
    for key in ("files", "slices", "counter_samples", "flows"):
        result[key] += sum(stats[key] for _, stats in parts)
    result["warnings"] = list(job_warnings) + [w for _, stats in parts for w in stats["warnings"]]
    result.update(path=output, format=format)
    return result
