"""The summary's warnings as a reader wants them: one line per distinct warning, with the processes
it concerns. The summary says per process what each process's trace says ("host rank R pid P:
collector cuda off: ..."), so a job of six processes repeats one cause six times; the text of
``smprof summary`` and ``diagnose`` and the report's warning box show each once, and ``--json``
keeps the full list."""

from __future__ import annotations

import re

_PER_PROCESS = re.compile(r"(?P<host>.*?) rank (?P<rank>-?\d+) pid (?P<pid>\d+): (?P<text>.+)", re.DOTALL)


def _ranks(ranks: list[int]) -> str:
    """0, 1, 2, 3, 5 -> "0-3, 5"."""
    spans: list[list[int]] = []
    for rank in sorted(set(ranks)):
        if spans and rank == spans[-1][1] + 1:
            spans[-1][1] = rank
        else:
            spans.append([rank, rank])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def grouped_warnings(warnings: list[str]) -> list[str]:
    """Each distinct warning once, in the order of its first occurrence. A per-process warning
    that several processes share names how many, their ranks and hosts; any other repeated
    warning says how often it came."""
    groups: dict[str, list[tuple[str, int]]] = {}
    first: dict[str, str] = {}  # each group's first warning as the summary said it
    for warning in warnings:
        match = _PER_PROCESS.fullmatch(warning)
        key = match["text"] if match else warning
        where = (match["host"], int(match["rank"])) if match else ("", -1)
        groups.setdefault(key, []).append(where)
        first.setdefault(key, warning)
    out = []
    for text, where in groups.items():
        if len(where) == 1:
            out.append(first[text])
        elif all(rank < 0 for _, rank in where):
            out.append(f"{text} (x{len(where)})")
        else:
            hosts = sorted({host for host, _ in where})
            on = f"host {hosts[0]}" if len(hosts) == 1 else f"{len(hosts)} hosts"
            ranks = _ranks([rank for _, rank in where])
            out.append(f"{text} ({len(where)} processes: ranks {ranks} on {on})")
    return out
