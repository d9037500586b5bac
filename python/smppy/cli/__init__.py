"""The ``smprof`` command: one module of this package per subcommand (``COMMAND_MODULES``), each with
``add_parser(subparsers)``, which registers the command and its handler; the options several
commands share are defined once, in ``options.py``."""

from __future__ import annotations

import argparse
import importlib
import os
import select
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
    "smppy.cli.top",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="smprof", description="Inspect smprof trace files.")
    parser.add_argument("--version", action="version", version=f"smprof {smppy.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        importlib.import_module(module).add_parser(sub)
    return parser


# The exit status of a Unix tool that wrote into a pipe whose reader had gone (128 + SIGPIPE).
CLOSED_STDOUT_EXIT = 141


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = args.func(args)
        sys.stdout.flush()  # here, not at interpreter exit, where a closed pipe is one more traceback
        return code
    except BrokenPipeError:
        if not stdout_reader_gone():
            raise
        # `smprof summary DIR | head -1`: end quietly, as Unix tools do; what is still buffered
        # goes nowhere instead of raising again when the interpreter flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return CLOSED_STDOUT_EXIT
    except (FileNotFoundError, ValueError, RuntimeError) as e:  # RuntimeError: summary workers
        print(f"smprof: error: {e}", file=sys.stderr)
        return 2


def stdout_reader_gone() -> bool:
    """Whether stdout is a pipe or socket whose reading end is closed (poll reports an error on the
    writing end), so that a BrokenPipeError of another pipe (a worker's) is not taken for it."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False
