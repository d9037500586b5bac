#!/usr/bin/env python3
"""Checks that every `#include "..."` in include/ and src/ follows the layers.

Each folder names what it may include (as Perfetto's tools/check_include_violations
does); anything else fails, naming file:line and the rule. The layers, low to high:

    include/smprof (+ internal/)  <  src/trace  <  src/runtime  <  src/collectors/{cpu,cuda}
                                  <  src/session  <  src/bindings
    src/analysis/base  <  src/analysis/job  <  src/analysis/{summary,timeline,tables}
    src/trace  <  src/testing (the test-only _smprof_testing extension, never shipped)

Siblings ({cpu,cuda}, {summary,timeline,tables}) may not include each other. analysis
reads traces only: it may include src/trace and include/smprof, never runtime, collectors
or session. bindings may include anything but testing. testing (the test-only extension that
writes synthetic traces) may include the format alone: nothing shipped includes it, and it
depends on no session. `proto` is the generated schema
(`smprof/trace.pb.h` from proto/smprof/trace.proto): everything from src/trace up may
include it, the public headers may not.

An include resolves against src/, then include/, then proto/ (`X.pb.h` of `X.proto`).
A file in a folder without a rule, or an include that resolves nowhere, fails too.

    python3 scripts/check_include_layers.py [--root DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

PUBLIC = "include/smprof"
PROTO = "proto"
TRACE = "src/trace"
RUNTIME = "src/runtime"
CPU = "src/collectors/cpu"
CUDA = "src/collectors/cuda"
SESSION = "src/session"
BINDINGS = "src/bindings"
TESTING = "src/testing"
BASE = "src/analysis/base"
JOB = "src/analysis/job"
SUMMARY = "src/analysis/summary"
TIMELINE = "src/analysis/timeline"
TABLES = "src/analysis/tables"

# Folder -> the folders its files may include (itself included). A file belongs to the
# longest folder that is a prefix of its path.
RULES: dict[str, tuple[str, ...]] = {
    PUBLIC: (PUBLIC,),  # include/smprof/internal/ too: it is under include/smprof
    TRACE: (PUBLIC, PROTO, TRACE),
    RUNTIME: (PUBLIC, PROTO, TRACE, RUNTIME),
    CPU: (PUBLIC, PROTO, TRACE, RUNTIME, CPU),
    CUDA: (PUBLIC, PROTO, TRACE, RUNTIME, CUDA),
    SESSION: (PUBLIC, PROTO, TRACE, RUNTIME, CPU, CUDA, SESSION),
    BINDINGS: (PUBLIC, PROTO, TRACE, RUNTIME, CPU, CUDA, SESSION, "src/analysis", BINDINGS),  # all but testing
    TESTING: (PUBLIC, PROTO, TRACE, TESTING),
    BASE: (PUBLIC, PROTO, TRACE, BASE),
    JOB: (PUBLIC, PROTO, TRACE, BASE, JOB),
    SUMMARY: (PUBLIC, PROTO, TRACE, BASE, JOB, SUMMARY),
    TIMELINE: (PUBLIC, PROTO, TRACE, BASE, JOB, TIMELINE),
    TABLES: (PUBLIC, PROTO, TRACE, BASE, JOB, TABLES),
}

# Where the files to check live.
CHECKED_ROOTS = ("include", "src")
SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".c", ".cc", ".cpp")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(path: str, folders) -> str | None:
    """The longest folder in `folders` that contains `path` (a root-relative path)."""
    best = None
    for folder in folders:
        if (path == folder or path.startswith(folder + "/")) and (best is None or len(folder) > len(best)):
            best = folder
    return best


def resolve(root: Path, included: str) -> str | None:
    """The root-relative path an include names, or None when it names no file."""
    for base in ("src", "include"):
        if (root / base / included).is_file():
            return f"{base}/{included}"
    if included.endswith(".pb.h"):
        proto = f"{PROTO}/{included[: -len('.pb.h')]}.proto"
        if (root / proto).is_file():
            return proto
    return None


def check(root: Path) -> list[str]:
    problems: list[str] = []
    for top in CHECKED_ROOTS:
        for dirpath, dirnames, filenames in os.walk(root / top):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = (Path(dirpath) / name).relative_to(root).as_posix()
                layer = folder_of(path, RULES)
                if layer is None:
                    problems.append(f"{path}:1: no layer rule covers this folder (add it to RULES)")
                    continue
                allowed = RULES[layer]
                text = (root / path).read_text(encoding="utf-8", errors="replace")
                for number, line in enumerate(text.splitlines(), 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    included = match.group(1)
                    target = resolve(root, included)
                    if target is None:
                        problems.append(
                            f'{path}:{number}: #include "{included}" names no file in src/, include/, proto/'
                        )
                    elif folder_of(target, allowed) is None:
                        problems.append(
                            f'{path}:{number}: #include "{included}" ({target}) breaks the layers: '
                            f"{layer} may include only {', '.join(allowed)}"
                        )
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="the tree to check (default: this repository)",
    )
    args = parser.parse_args(argv)
    problems = check(args.root)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check_include_layers: {len(problems)} include(s) against the layers", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
