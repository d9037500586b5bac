"""The options the ``smprof`` commands share, each defined once (pip's ``cli/cmdoptions.py``): a
command adds them with these functions, so ``--jobs`` or ``--step-pattern`` means the same
everywhere and no analysis command lacks one."""

from __future__ import annotations

import argparse
from typing import Any

from smppy import analysis
from smppy.analysis._dask_cluster import DaskScheduler
from smppy.analysis._parallel_summary import SCHEDULER_ENV, scheduler_from_env


def add_path(parser: argparse.ArgumentParser, *, s3: bool = True) -> None:
    """The location of the traces: a file, a directory searched recursively, or ``s3://...``."""
    where = "a trace file, a directory of them (searched recursively)"
    parser.add_argument("path", help=where + (" or s3://..." if s3 else ""))


def add_json(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def add_jobs(parser: argparse.ArgumentParser, work: str) -> None:
    """``--jobs``: the worker processes that do ``work`` on the job's streams."""
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help=f"worker processes that {work} (default: the usable cores from 4 MiB of traces)",
    )


def add_scheduler(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scheduler",
        default=None,
        help=f"summarize on the Dask cluster at this scheduler, tcp://HOST:PORT (default ${SCHEDULER_ENV})",
    )
    parser.add_argument(
        "--scheduler-timeout",
        type=float,
        default=DaskScheduler.connect_timeout_s,
        metavar="S",
        help="seconds for the scheduler to accept the connection and answer (default %(default)g)",
    )
    parser.add_argument(
        "--worker-timeout",
        type=float,
        default=DaskScheduler.worker_timeout_s,
        metavar="S",
        help="seconds to wait for a first Dask worker, or for one to come back when all are lost "
        "(default %(default)g)",
    )


def add_step_pattern(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--step-pattern",
        default=None,
        help=f"regex for step annotations (full match; default {analysis.DEFAULT_STEP_PATTERN})",
    )


def add_summary_options(parser: argparse.ArgumentParser) -> None:
    """What every command that summarizes a job takes: the name patterns, the step list length, and
    where the summary runs (``--jobs``, ``--scheduler``). ``summary_options(args)`` reads them."""
    add_step_pattern(parser)
    parser.add_argument(
        "--data-wait-pattern",
        default=None,
        help="regex for annotations during which the host waits for input data (full match, any case; "
        "default: InputWait and the usual names of data phases, DataLoad, data_loading, get_batch, "
        "next_batch, Fetch, ... docs/ANALYSIS.md)",
    )
    parser.add_argument(
        "--max-profiled-steps",
        type=int,
        default=analysis.DEFAULT_MAX_PROFILED_STEPS,
        help="steps per process listed one by one in the summary's step_profile "
        f"(the totals count every step; default {analysis.DEFAULT_MAX_PROFILED_STEPS})",
    )
    add_jobs(parser, "summarize streams")
    add_scheduler(parser)


def summary_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``analysis.summarize`` keyword arguments of ``add_summary_options``' options."""
    return {
        "step_pattern": args.step_pattern,
        "data_wait_pattern": args.data_wait_pattern,
        "max_profiled_steps": args.max_profiled_steps,
        "jobs": args.jobs,
        "scheduler": scheduler_option(args),
    }


def scheduler_option(args: argparse.Namespace) -> DaskScheduler | None:
    """``--scheduler`` (else ``$SMPROF_DASK_SCHEDULER``) with the two timeouts; None for neither."""
    address = scheduler_from_env(args.scheduler)
    if address is None:
        return None
    timeouts = {"--scheduler-timeout": args.scheduler_timeout, "--worker-timeout": args.worker_timeout}
    for option, value in timeouts.items():
        if not value > 0:
            raise ValueError(f"{option} must be a number of seconds above 0, not {value:g}")
    return DaskScheduler(str(address), args.scheduler_timeout, args.worker_timeout)
