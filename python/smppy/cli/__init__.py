"""The ``smprof`` command: one module of this package per subcommand (``COMMAND_MODULES``), each with
``add_parser(subparsers)``, which registers the command and its handler; the options several
commands share are defined once, in ``options.py``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

import smppy

COMMAND_MODULES: tuple[str, ...] = (
    "smppy.cli.info",
    "smppy.cli.dump",
    "smppy.cli.export",
    "smppy.cli.report",
    "smppy.cli.upload",
    "smppy.cli.summary",
    "smppy.cli.run",
    "smppy.cli.diagnose",
    "smppy.cli.diff",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="smprof", description="Inspect smprof trace files.")
    parser.add_argument("--version", action="version", version=f"smprof {smppy.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        importlib.import_module(module).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (FileNotFoundError, ValueError, RuntimeError) as e:  # RuntimeError: summary workers
        print(f"smprof: error: {e}", file=sys.stderr)
        return 2
