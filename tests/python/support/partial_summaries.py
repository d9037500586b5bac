"""The job summary computed from per-stream partial summaries, merged in several
orders (docs/ANALYSIS.md, "Partial summaries"), for comparison with the direct one."""

from __future__ import annotations

from typing import Any

from smppy import _smppy


def _tree_merge(partials: list[bytes]) -> bytes:
    """Merges neighbours pairwise, level by level, down to one partial."""
    while len(partials) > 1:
        partials = [_smppy.merge_partial_summaries(partials[i : i + 2]) for i in range(0, len(partials), 2)]
    return partials[0]


def summaries_via_partials(paths: list[str], *options: Any, **named: Any) -> dict[str, bytes]:
    """The summary JSON text of the files under ``paths``, by way of partial summaries:
    all streams in one partial, one partial per stream merged in order, reversed, and
    as a tree. ``options`` are ``_smppy.summarize``'s after ``paths`` (no progress)."""
    streams, warnings = _smppy.job_streams(paths)
    every = _smppy.partial_summary(streams, *options, **named)
    if not streams:
        return {"one partial": _smppy.summary_from_partial(every, warnings)}
    per_stream = [_smppy.partial_summary([s], *options, **named) for s in streams]
    merged = {
        "one partial": every,
        "merged in order": _smppy.merge_partial_summaries(per_stream),
        "merged reversed": _smppy.merge_partial_summaries(per_stream[::-1]),
        "merged as a tree": _tree_merge(per_stream[::-1]),
    }
    return {how: _smppy.summary_from_partial(partial, warnings) for how, partial in merged.items()}
