"""Each distinct warning once (issue 31, item 4): the summary lists a per-process warning for every
process it concerns; `smprof summary` and `diagnose` print it once with the processes, ranks and
hosts, the report's warning box does the same, and `--json` keeps every one. Every command says
its warnings on stderr (issue 32, item 6), never on stdout."""

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


@pytest.mark.parametrize(
    "command",
    [
        ["summary"],
        ["summary", "--json"],
        ["diagnose"],
        ["diagnose", "--json"],
        ["report", "-o", "{tmp}/r.html"],
        ["diff", "{job}"],
    ],  # fmt: skip
    ids=lambda c: " ".join(c[:2]).replace("{job}", "").strip(),
)
def test_every_command_says_it_once_on_stderr_and_never_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    job = str(write_driverless_job(tmp_path / "job"))
    argv = [command[0], job] + [a.format(tmp=tmp_path, job=job) for a in command[1:]]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    if "--json" in command:
        json.loads(out)  # nothing but the JSON
    else:
        assert "warning" not in out, out
    warned = [line for line in err.splitlines() if NO_DRIVER in line]
    runs = ["run A: ", "run B: "] if command[0] == "diff" else [""]
    assert warned == [f"smprof: warning: {run}{GROUPED}" for run in runs], err


def test_json_keeps_every_process_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = str(write_driverless_job(tmp_path))
    assert main(["summary", job, "--json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert sum(NO_DRIVER in w for w in warnings) == 3, warnings
