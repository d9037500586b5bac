"""The timeline export written in parts and assembled (src/analysis/timeline/timeline_export.h), cut in
several ways, for comparison with the export in one process."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from smppy import _smppy


def timelines_via_parts(files: list[str], format: str, gzip: bool, **options: Any) -> dict[str, bytes]:
    """The bytes of the timeline of ``files`` assembled from parts: all rank processes in one part, a
    part per rank process, and two halves. ``options``: ``_smppy.export_timeline``'s after ``gzip``."""
    streams, _ = _smppy.job_streams(files)
    ranks = options.get("ranks", [])
    groups = len(_smppy.timeline_group_bytes(streams, ranks))
    # The parts take the window with its steps applied, once, as smppy.export's workers do.
    steps, step_pattern = options.pop("steps", None), options.pop("step_pattern", "")
    if steps is not None:
        options["start_wall_ns"], options["end_wall_ns"] = _smppy.timeline_window(
            streams, ranks, options.get("start_wall_ns"), options.get("end_wall_ns"), steps, step_pattern
        )
    if format == "chrome" and groups > 1:  # the collectives' flows, found once too
        options["collective_chains"] = _smppy.timeline_collective_chains(
            streams, ranks, options.get("start_wall_ns"), options.get("end_wall_ns")
        )
    cuts = {
        "in one part": [(0, groups)],
        "a part per rank process": [(i, i + 1) for i in range(groups)],
        "in two halves": [(0, groups // 2), (groups // 2, groups)],
    }
    out: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="smprof-timeline-parts-") as directory:
        for n, (how, runs) in enumerate(cuts.items()):
            parts = []
            for first, end in runs:
                parts.append(str(Path(directory) / f"{n}-{first}-{end}"))
                _smppy.export_timeline_part(streams, first, end, parts[-1], format, gzip=gzip, **options)
            assembled = Path(directory) / f"{n}.out"
            _smppy.assemble_timeline(streams, parts, str(assembled), format, gzip=gzip, ranks=ranks)
            out[how] = assembled.read_bytes()
    return out
