"""Each distinct warning once (issue 31, item 4): the summary lists a per-process warning for every
process it concerns; `smprof summary` and `diagnose` print it once with the processes, ranks and
hosts, the report's warning box does the same, and `--json` keeps every one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from driverless_job import GROUPED, NO_DRIVER, write_driverless_job
from smppy.analysis.warning_groups import grouped_warnings
from smppy.cli import main


def test_per_process_warnings_are_grouped_with_their_ranks_and_hosts() -> None:
    six = [f"node1 rank {i // 3} pid {100 + i}: collector cuda off: {NO_DRIVER}" for i in range(6)]
    two_hosts = ["a rank 0 pid 1: collector cpu off: x", "b rank 3 pid 2: collector cpu off: x"]
    single = "node1 rank 2 pid 9: collector perf off: y"
    assert grouped_warnings([*six, "frame 3 skipped", *two_hosts, "frame 3 skipped", single]) == [
        f"collector cuda off: {NO_DRIVER} (6 processes: ranks 0-1 on host node1)",
        "frame 3 skipped (x2)",
        "collector cpu off: x (2 processes: ranks 0, 3 on 2 hosts)",
        single,  # one process: as the summary said it
    ]


def test_summary_and_diagnose_print_it_once_and_json_keeps_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = str(write_driverless_job(tmp_path))
    for command in ("summary", "diagnose"):
        assert main([command, job]) == 0
        out = capsys.readouterr().out
        warned = [w for w in out.splitlines() if w.startswith("warning:") and NO_DRIVER in w]
        assert warned == [f"warning: {GROUPED}"], out
    assert main(["summary", job, "--json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert sum(NO_DRIVER in w for w in warnings) == 3, warnings
