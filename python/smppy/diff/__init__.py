"""What changed between two runs: the comparison of two job summaries (docs/DIFF.md).

``diff_summaries(a, b)`` is a pure function of two summary dicts of docs/ANALYSIS.md (and of the
findings ``smppy.diagnose.diagnose`` draws from each). Every table is a list of rows
``{"name", "a_ns", "b_ns", "change_ns", "change"}``: ``a_ns``/``b_ns`` are None where the run does
not have the row, ``change_ns`` counts a missing side as 0, and ``change`` is the relative change
against A (None when A has nothing to compare with). Rows are sorted by ``|change_ns|``, largest
first, so what changed most comes first.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from smppy.diagnose import diagnose
from smppy.diagnose.input_wait import input_pipeline_wait

SCHEMA_VERSION = 1
STEP_STATS = (("mean", "mean_ns"), ("p50", "p50_ns"), ("p90", "p90_ns"))


def change_row(name: str, a_ns: int | None, b_ns: int | None, **extra: Any) -> dict[str, Any]:
    """One compared quantity: both values, the absolute and the relative change."""
    change_ns = (b_ns or 0) - (a_ns or 0)
    change = change_ns / a_ns if a_ns else None
    return {"name": name, "a_ns": a_ns, "b_ns": b_ns, "change_ns": change_ns, "change": change, **extra}


def _by_change(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (-abs(r["change_ns"]), r["name"]))


def _paired(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """The keys of ``a`` then the new ones of ``b``, each with its value in both (None: absent)."""
    return [(key, a.get(key), b.get(key)) for key in [*a, *(k for k in b if k not in a)]]


def _numbered(keys: list[str]) -> list[str]:
    """``keys`` made unique: a repeated key gets " #2", " #3"... in its order of appearance."""
    seen: Counter[str] = Counter()
    out = []
    for key in keys:
        seen[key] += 1
        out.append(key if seen[key] == 1 else f"{key} #{seen[key]}")
    return out


def _rank_steps(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per-rank step statistics keyed by rank (hosts differ between runs; ranks do not)."""
    rows = [p for p in summary["steps"]["per_rank"] if p["stats"]["count"]]
    return dict(zip(_numbered([f"rank {p['rank']}" for p in rows]), (p["stats"] for p in rows)))


def _step_rows(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    def stats(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
        job = summary["steps"]["stats"]
        return {"all ranks": job, **_rank_steps(summary)} if job["count"] else {}

    rows = []
    for scope, sa, sb in _paired(stats(a), stats(b)):
        for label, key in STEP_STATS:
            rows.append(
                change_row(
                    f"{scope} {label}",
                    sa and sa[key],
                    sb and sb[key],
                    count_a=sa and sa["count"],
                    count_b=sb and sb["count"],
                )
            )
    wa, wb = _input_wait_per_step(a), _input_wait_per_step(b)
    if wa is not None or wb is not None:  # the steady-state figure summary and diagnose give
        rows.append(change_row("input-pipeline wait per step", wa, wb))
    return _by_change(rows)


def _input_wait_per_step(summary: dict[str, Any]) -> int | None:
    wait = input_pipeline_wait(summary)
    return wait["wait_per_step_ns"] if wait and wait["step_percent"] is not None else None


def _compared(
    a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], key: str, extras: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """Rows of ``a`` and ``b`` (by name) compared on ``key``, with each field of ``extras`` of both
    as ``FIELD_a`` and ``FIELD_b``."""
    rows = []
    for name, ra, rb in _paired(a, b):
        sides = {
            f"{field}_{side}": row and row[field] for field in extras for side, row in (("a", ra), ("b", rb))
        }
        rows.append(change_row(name, ra and ra[key], rb and rb[key], **sides))
    return _by_change(rows)


def _annotation_rows(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    def stats(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {row["name"]: row["stats"] for row in summary["annotations"]}

    return _compared(stats(a), stats(b), "total_ns", ("count", "mean_ns"))


OTHER_KERNELS = "(kernels not listed)"


def _kernel_rows(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """Kernel time of the kernels each summary lists (``top_k`` of them) and of the rest."""

    def kernels(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
        rows = summary["gpu"]["kernels"]["by_time"]
        return {OTHER_KERNELS if k["other"] else k["name"]: k for k in rows}

    return _compared(kernels(a), kernels(b), "time_ns", ("launches",))


def _idle_times(idle: Any) -> dict[str, int]:
    """The job-wide ``*_ns`` totals of ``gpu.idle`` (docs/ANALYSIS.md: step time, idle time
    and its causes, summed over GPUs); none for a summary without it."""
    if not isinstance(idle, dict):
        return {}
    return {
        key: value
        for key, value in idle.items()
        if key.endswith("_ns") and isinstance(value, int) and not isinstance(value, bool)
    }


def _gpu_times(summary: dict[str, Any]) -> dict[str, int]:
    gpu = summary["gpu"]
    if gpu["reason"]:
        return {}
    times = {"GPU active (all GPUs)": gpu["active_ns"]}
    times.update({f"{row['kind']} time": row["time_ns"] for row in gpu["activity"]})
    times.update({f"idle: {key}": ns for key, ns in _idle_times(gpu.get("idle")).items()})
    return times


def _gpu_rows(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    return _by_change([change_row(name, ta, tb) for name, ta, tb in _paired(_gpu_times(a), _gpu_times(b))])


def _collective_rows(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """The wait in each op and group's matched instances, and each rank's wait for the others; where
    either run has them, the same on the GPU (the NCCL kernels' starts) and the time in Work.wait()."""

    def ops(summary: dict[str, Any], what: str) -> dict[str, dict[str, Any]]:
        rows = summary.get("collectives", {}).get("ops", [])
        return {f"{o['op']} (group {o['group']}) {what}": o for o in rows if not o["point_to_point"]}

    def ranks(summary: dict[str, Any], what: str) -> dict[str, dict[str, Any]]:
        rows = [r for r in summary.get("collectives", {}).get("ranks", []) if r["calls"]]
        return dict(zip(_numbered([f"rank {r['rank']} {what}" for r in rows]), rows))

    def either(key: str) -> bool:
        return any(c.get(key) for s in (a, b) for c in s.get("collectives", {}).get("ops", []))

    # (the rows' name, the key compared, the ops' and the ranks' extras, what either run needs for them)
    readings = (
        ("wait", "wait_ns", ("calls", "instances_matched"), ("calls", "last_arrivals"), ""),
        (
            "GPU wait",
            "device_wait_ns",
            ("instances_matched_on_device",),
            ("device_last_arrivals",),
            "kernels",
        ),
        ("Work.wait", "work_wait_ns", ("waits",), ("calls",), "waits"),
    )
    rows = []
    for what, key, op_extras, rank_extras, needs in readings:
        if not needs or either(needs):
            rows += _compared(ops(a, what), ops(b, what), key, op_extras)
            rows += _compared(ranks(a, what), ranks(b, what), key, rank_extras)
    return _by_change(rows)


def _finding_rows(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """Findings matched by id (a repeated id by its order): in A only, B only, or both."""

    def findings(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
        found = [f.to_json() for f in diagnose(summary)]
        return dict(zip(_numbered([f["id"] for f in found]), found))

    rows = []
    for key, fa, fb in _paired(findings(a), findings(b)):
        presence = "both" if fa and fb else "a" if fa else "b"
        rows.append(
            change_row(
                key,
                fa and fa["cost_total_ns"],
                fb and fb["cost_total_ns"],
                presence=presence,
                title=(fb or fa)["title"],
                a=fa,
                b=fb,
            )
        )
    return _by_change(rows)


def headline(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The number the regression gate compares: the job's mean step time when both runs have
    steps, else the job's span."""
    sa, sb = a["steps"]["stats"], b["steps"]["stats"]
    if sa["count"] and sb["count"]:
        return change_row("mean step time", sa["mean_ns"], sb["mean_ns"])
    return change_row("span", a["job"]["span_ns"], b["job"]["span_ns"])


def _run(summary: dict[str, Any], location: str) -> dict[str, Any]:
    job = summary["job"]
    return {
        "location": location,
        "jobs": job["jobs"],
        "hosts": job["hosts"],
        "ranks": job["ranks"],
        "span_ns": job["span_ns"],
        "steps": summary["steps"]["stats"]["count"],
        "warnings": summary["warnings"],
    }


def diff_summaries(
    a: dict[str, Any], b: dict[str, Any], *, a_location: str = "A", b_location: str = "B"
) -> dict[str, Any]:
    """The comparison of run B against run A (docs/DIFF.md has the schema)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "a": _run(a, a_location),
        "b": _run(b, b_location),
        "headline": headline(a, b),
        "steps": _step_rows(a, b),
        "annotations": _annotation_rows(a, b),
        "kernels": _kernel_rows(a, b),
        "gpu": _gpu_rows(a, b),
        "collectives": _collective_rows(a, b),
        "findings": _finding_rows(a, b),
    }
