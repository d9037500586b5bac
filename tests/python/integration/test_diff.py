"""``smprof diff RUN_A RUN_B``: two real PyTorch training runs, B slowed on purpose in one named
annotation, compared in the terminal, as JSON, through the regression gate and as a comparison
page in real headless Chromium."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import s3_server as fixtures
import synthetic_trace as st
from conftest import ANNOTATED_STEP, EXAMPLE_STEPS, run_python
from s3_server import S3Server
from smppy import analysis, cli
from smppy.diagnose import Finding
from smppy.diff import OTHER_KERNELS, diff_summaries
from smppy.report.comparison import write_comparison
from test_report import XSS_IMG, browser, open_report, panel_states  # noqa: F401  (browser: a fixture)

pytestmark = [pytest.mark.slow, pytest.mark.torch, pytest.mark.s3]

torch = pytest.importorskip("torch")

# The loopback S3 server (tests/python/support/s3_server.py), as a fixture of this module.
_module_s3_server = fixtures._module_s3_server
s3_server = fixtures.s3_server

STEPS = 8
SLOW_PHASE = "Augment"

TRAIN = """
import time
import torch
import smppy

config = smppy.Config()
config.profiler = {{"RecordFile": "{out}/rank%r_pid%p.smprof"}}
profiler = smppy.SMProfiler.instance()
profiler.configure(config)
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(256, 16), torch.randint(0, 4, (256,))
profiler.start_profiling()
for step in range({steps}):
{train_step}
        with smppy.annotate("{slow_phase}"):
            time.sleep({sleep_s})
        with smppy.annotate({extra_name!r}):
            pass
profiler.stop_profiling()
"""


def train(out: Path, *, sleep_s: float, extra_name: str) -> Path:
    """A real training run of STEPS annotated steps, each with an ``Augment`` phase that sleeps
    ``sleep_s`` and an empty annotation named ``extra_name``; its trace directory."""
    out.mkdir()
    code = TRAIN.format(
        out=out,
        steps=STEPS,
        train_step=ANNOTATED_STEP,
        slow_phase=SLOW_PHASE,
        sleep_s=sleep_s,
        extra_name=extra_name,
    )
    proc = run_python(code, cwd=out)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Run A, and run B whose ``Augment`` phase sleeps 40 ms more per step (and which has one
    annotation, named like markup, that A does not)."""
    root = tmp_path_factory.mktemp("diff-runs")
    return (
        train(root / "run-a", sleep_s=0.0, extra_name="Log"),
        train(root / "run-b", sleep_s=0.04, extra_name=XSS_IMG),
    )


def smprof(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "smppy.cli", *args], capture_output=True, text=True, timeout=120
    )


def summaries(runs: tuple[Path, Path]) -> tuple[dict[str, Any], dict[str, Any]]:
    return analysis.summarize(runs[0]), analysis.summarize(runs[1])


def test_the_slowed_phase_is_the_largest_change(runs: tuple[Path, Path]) -> None:
    d = diff_summaries(*summaries(runs))
    assert d["headline"]["name"] == "mean step time"
    assert d["headline"]["change"] > 1.0  # 40 ms of sleep on steps of a few ms
    assert d["steps"][0]["change_ns"] > 0
    assert {r["name"] for r in d["steps"]} == {
        f"{scope} {stat}" for scope in ("all ranks", "rank 0") for stat in ("mean", "p50", "p90")
    }
    names = [r["name"] for r in d["annotations"]]
    # The steps contain the slowed phase: both grew by the same sleeps, more than anything else.
    assert set(names[:2]) == {"step", SLOW_PHASE}, names
    augment = next(r for r in d["annotations"] if r["name"] == SLOW_PHASE)
    assert augment["b_ns"] >= STEPS * 40_000_000 and augment["change_ns"] > 0
    assert augment["count_a"] == augment["count_b"] == STEPS
    new = next(r for r in d["annotations"] if r["name"] == XSS_IMG)
    gone = next(r for r in d["annotations"] if r["name"] == "Log")
    assert (new["a_ns"], new["count_b"], gone["b_ns"], gone["count_a"]) == (None, STEPS, None, STEPS)
    changes = [abs(r["change_ns"]) for r in d["annotations"]]
    assert changes == sorted(changes, reverse=True)
    assert d["kernels"] == [] and d["gpu"] == []  # CPU runs: nothing recorded on a GPU
    assert d["collectives"] == []  # one process: no process group


def _collective_job(directory: Path, late_ms: int, wait_ms: int = 0) -> dict[str, Any]:
    """The summary of a two-rank job of three all-reduces where rank 1 arrives ``late_ms`` late;
    with ``wait_ms``, each call's Work.wait() takes that long, 1 ms after the call."""
    pb = st.pb()
    wait = (1_000_000, wait_ms * 1_000_000) if wait_ms else ()
    for rank in (0, 1):
        frame = pb.Frame(sequence=0)
        st.add_collectives(
            frame,
            [
                ((k * 10 + late_ms * rank) * 1_000_000, 50_000, "allreduce_", "0", 2, rank, k, 4096, 7, *wait)
                for k in (1, 2, 3)
            ],
        )
        header = st.header(host="host-a", rank=rank, world_size=2, realtime_ns=1_700_000_000_000_000_000)
        header.pid = 10 + rank
        st.write_trace(directory / f"rank{rank}.smprof", header, [frame], pb.Footer(frames_written=1))
    return analysis.summarize(directory)


def test_collective_waits_compared_per_op_and_rank(tmp_path: Path) -> None:
    d = diff_summaries(_collective_job(tmp_path / "a", 2), _collective_job(tmp_path / "b", 5))
    rows = {r["name"]: r for r in d["collectives"]}
    assert set(rows) == {"allreduce_ (group 0) wait", "rank 0 wait", "rank 1 wait"}
    # Three instances, each 3 ms longer for rank 0 to wait; rank 1 never waits.
    for name in ("allreduce_ (group 0) wait", "rank 0 wait"):
        assert (rows[name]["a_ns"], rows[name]["b_ns"], rows[name]["change"]) == (6_000_000, 15_000_000, 1.5)
    assert rows["allreduce_ (group 0) wait"]["calls_b"] == 6
    assert rows["rank 1 wait"]["change_ns"] == 0 and rows["rank 1 wait"]["last_arrivals_b"] == 3


def test_work_waits_compared_where_a_run_has_them(tmp_path: Path) -> None:
    d = diff_summaries(_collective_job(tmp_path / "a", 2), _collective_job(tmp_path / "b", 2, wait_ms=4))
    rows = {r["name"]: r for r in d["collectives"]}
    assert {"allreduce_ (group 0) Work.wait", "rank 0 Work.wait", "rank 1 Work.wait"} <= set(rows)
    op = rows["allreduce_ (group 0) Work.wait"]
    assert (op["a_ns"], op["b_ns"], op["waits_a"], op["waits_b"]) == (0, 6 * 4_000_000, 0, 6)
    assert rows["rank 1 Work.wait"]["b_ns"] == 3 * 4_000_000
    assert not any("GPU wait" in name for name in rows)  # no NCCL kernel in either run


def test_a_run_against_itself_shows_no_change(runs: tuple[Path, Path]) -> None:
    a = analysis.summarize(runs[0])
    d = diff_summaries(a, a)
    rows = (
        d["steps"]
        + d["annotations"]
        + d["kernels"]
        + d["gpu"]
        + d["collectives"]
        + d["findings"]
        + [d["headline"]]
    )
    assert rows and {(r["change_ns"], r["change"]) for r in rows} == {(0, 0.0)}


def test_gate_fails_the_slower_run_and_passes_the_same_or_faster_one(runs: tuple[Path, Path]) -> None:
    a, b = (str(r) for r in runs)
    slower = smprof("diff", a, b, "--fail-if-slower", "5%")
    assert slower.returncode == 1, slower.stderr
    assert "smprof diff: regression: mean step time is" in slower.stderr
    assert "more than --fail-if-slower 5%" in slower.stderr
    table = slower.stdout.split("annotations, total time")[1].splitlines()
    assert {line.split()[0] for line in table[3:5]} == {"step", SLOW_PHASE}  # below the title and header
    same = smprof("diff", a, a, "--fail-if-slower", "5%")
    assert same.returncode == 0, same.stderr
    assert "regression gate passed: within --fail-if-slower 5%" in same.stdout
    assert "+0.000 ms (+0.0%)" in same.stdout
    faster = smprof("diff", b, a, "--fail-if-slower", "0%")
    assert faster.returncode == 0, faster.stderr


def test_json_carries_the_comparison_and_the_gate(runs: tuple[Path, Path]) -> None:
    a, b = (str(r) for r in runs)
    proc = smprof("diff", a, b, "--json", "--fail-if-slower", "2.5%")
    assert proc.returncode == 1
    d = json.loads(proc.stdout)
    assert d["schema_version"] == 1
    assert (d["a"]["location"], d["b"]["location"], d["a"]["steps"]) == (a, b, STEPS)
    assert d["gate"]["threshold"] == 0.025 and d["gate"]["failed"]
    assert d["gate"]["reason"] in proc.stderr
    assert d["headline"]["name"] == "mean step time" and d["headline"]["change"] > 0.025
    assert d["headline"] == diff_summaries(*summaries(runs))["headline"]
    without_gate = json.loads(smprof("diff", a, a, "--json").stdout)
    assert without_gate["gate"] is None


@pytest.mark.parametrize("value", ["5", "-5%", "five%", "5%%", ""])
def test_bad_threshold_is_a_clear_error(runs: tuple[Path, Path], value: str) -> None:
    proc = smprof("diff", str(runs[0]), str(runs[1]), f"--fail-if-slower={value}")
    assert proc.returncode == 2
    assert "argument --fail-if-slower" in proc.stderr
    assert "followed by %, such as 5% or 2.5%" in proc.stderr


def test_missing_run_is_a_clear_error(runs: tuple[Path, Path], tmp_path: Path) -> None:
    proc = smprof("diff", str(runs[0]), str(tmp_path / "nothing"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"smprof: error: no such file or directory: {tmp_path / 'nothing'}"


def _augment_detector(summary: dict[str, Any]) -> list[Finding]:
    """A detector for the test: a finding per run (``steps``), one for a slow ``Augment``, one for
    runs without it; costs from the summary, so they differ between the runs."""
    stats = {a["name"]: a["stats"] for a in summary["annotations"]}
    step = stats["step"]
    found = [Finding("steps", "every step", "low", step["mean_ns"], step["total_ns"], "test", {}, "none")]
    augment = stats[SLOW_PHASE]
    if augment["mean_ns"] > 10_000_000:
        found.append(
            Finding(
                "slow_augment",
                "Augment sleeps",
                "high",
                augment["mean_ns"],
                augment["total_ns"],
                "test",
                {"count": augment["count"]},
                "do not sleep",
            )
        )
    else:
        found.append(Finding("fast_augment", "Augment is fast", "low", 0, 0, "test", {}, "keep it"))
    return found


def test_findings_in_a_only_b_only_and_both(runs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        sys.modules, "smppy.diagnose.test_augment", types.SimpleNamespace(detect=_augment_detector)
    )
    monkeypatch.setattr("smppy.diagnose._DETECTOR_MODULES", ("test_augment",))
    a, b = summaries(runs)
    findings = {r["name"]: r for r in diff_summaries(a, b)["findings"]}
    assert {name: r["presence"] for name, r in findings.items()} == {
        "steps": "both",
        "slow_augment": "b",
        "fast_augment": "a",
    }
    slow = findings["slow_augment"]
    assert (slow["a_ns"], slow["b"]["evidence"], slow["b"]["recommendation"]) == (
        None,
        {"count": STEPS},
        "do not sleep",
    )
    assert findings["steps"]["change_ns"] == b["steps"]["stats"]["total_ns"] - a["steps"]["stats"]["total_ns"]
    changes = [abs(r["change_ns"]) for r in diff_summaries(a, b)["findings"]]
    assert changes == sorted(changes, reverse=True) and changes[-1] == 0  # fast_augment: costs 0 in A


def test_gpu_rows_show_the_idle_breakdown_totals(runs: tuple[Path, Path]) -> None:
    a = analysis.summarize(runs[0])
    gpu_a, gpu_b = copy.deepcopy(a), copy.deepcopy(a)
    for s, active in ((gpu_a, 100), (gpu_b, 250)):
        s["gpu"].update(
            reason="", active_ns=active, activity=[{"kind": "kernel", "count": 1, "time_ns": active}]
        )
        s["gpu"]["kernels"]["by_time"] = [
            {"name": "gemm", "time_ns": active, "launches": 1, "other": False},
            {"name": "other", "time_ns": 5, "launches": 1, "other": True},
        ]
    idle = gpu_a["gpu"]["idle"]
    idle.update(step_time_ns=140, idle_ns=100, launch_bound_ns=50, unexplained_ns=50)
    idle["devices"] = [  # per GPU: not rows of their own
        {**idle, "host": "h", "rank": 0, "pid": 1, "device": 0, "steps": 2, "idle_ns": 40},
        {**idle, "host": "h", "rank": 0, "pid": 1, "device": 1, "steps": 2, "idle_ns": 60},
    ]
    del gpu_b["gpu"]["idle"]  # a summary from before the idle breakdown
    d = diff_summaries(gpu_a, gpu_b)
    rows = {r["name"]: (r["a_ns"], r["b_ns"]) for r in d["gpu"]}
    assert rows == {
        "GPU active (all GPUs)": (100, 250),
        "kernel time": (100, 250),
        "idle: step_time_ns": (140, None),
        "idle: idle_ns": (100, None),
        "idle: launch_bound_ns": (50, None),
        "idle: data_wait_ns": (0, None),
        "idle: sync_ns": (0, None),
        "idle: communication_ns": (0, None),
        "idle: unexplained_ns": (50, None),
    }
    assert [r["name"] for r in d["gpu"]][:2] == ["GPU active (all GPUs)", "kernel time"]
    assert {r["name"]: r["change_ns"] for r in d["kernels"]} == {"gemm": 150, OTHER_KERNELS: 0}


def test_comparison_page_draws_offline_with_names_as_text(
    browser: Any,  # noqa: F811
    runs: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    out = tmp_path / "diff.html"
    proc = smprof("diff", str(runs[0]), str(runs[1]), "--html", str(out))
    assert proc.returncode == 0, proc.stderr
    assert str(out) in proc.stdout.splitlines()
    open_report(browser, out)
    states = panel_states(browser)
    assert states == {
        "runs": "plot",
        "steps": "plot",
        "annotations": "plot",
        "kernels": "no GPU kernels in either run",
        "gpu": "no GPU activity in either run",
        "collectives": "no collectives in either run",
        "findings": "no findings in either run (smprof diagnose found nothing)",
    }
    assert browser.execute_script("return document.querySelector('.headline').dataset.direction") == "slower"
    assert browser.execute_script("return window.__xss") is None
    cells = browser.execute_script(
        "return [...document.querySelectorAll('section[data-panel=annotations] td:first-child')]"
        ".map((td) => td.textContent)"
    )
    assert set(cells[:2]) == {"step", SLOW_PHASE} and XSS_IMG in cells
    bars = browser.execute_script(
        "return document.querySelector('section[data-panel=annotations] .js-plotly-plot').data[0].y"
    )
    assert bars[-1] in ("1. step", f"1. {SLOW_PHASE}")  # the largest change is drawn on top


def test_comparison_page_lists_the_findings_of_both_runs(
    browser: Any,  # noqa: F811
    runs: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(
        sys.modules, "smppy.diagnose.test_augment", types.SimpleNamespace(detect=_augment_detector)
    )
    monkeypatch.setattr("smppy.diagnose._DETECTOR_MODULES", ("test_augment",))
    page = write_comparison(diff_summaries(*summaries(runs)), tmp_path / "diff.html")
    open_report(browser, page)
    assert panel_states(browser)["findings"] == "plot"
    rows = browser.execute_script(
        "return [...document.querySelectorAll('section[data-panel=findings] tbody tr')]"
        ".map((tr) => [0, 1, 5].map((i) => tr.cells[i].textContent))"
    )
    assert sorted(rows) == [
        ["fast_augment: Augment is fast", "A only", "keep it"],
        ["slow_augment: Augment sleeps", "B only", "do not sleep"],
        ["steps: every step", "both", "none"],
    ]


def test_a_baseline_on_s3_is_compared_like_a_directory(
    s3_server: S3Server, runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    client = s3_server.client()
    client.create_bucket(Bucket="baselines")
    for file in runs[0].iterdir():
        client.upload_file(str(file), "baselines", f"train/{file.name}")
    assert cli.main(["diff", "s3://baselines/train", str(runs[1]), "--json", "--fail-if-slower", "5%"]) == 1
    from_s3 = json.loads(capsys.readouterr().out)
    assert from_s3["a"]["location"] == "s3://baselines/train"
    local = diff_summaries(*summaries(runs))
    assert from_s3["headline"] == local["headline"]
    assert [r["name"] for r in from_s3["annotations"]] == [r["name"] for r in local["annotations"]]


def test_ranks_are_matched_by_rank_number(example_job: Path) -> None:
    """The torchrun example (2 ranks) against itself: per-rank rows for both ranks, no change."""
    s = analysis.summarize(example_job)
    d = diff_summaries(s, s)
    assert {r["name"] for r in d["steps"]} == {
        f"{scope} {stat}" for scope in ("all ranks", "rank 0", "rank 1") for stat in ("mean", "p50", "p90")
    }
    assert {(r["count_a"], r["change_ns"]) for r in d["steps"] if r["name"].startswith("rank")} == {
        (EXAMPLE_STEPS, 0)
    }


def test_without_steps_the_gate_compares_the_span(runs: tuple[Path, Path]) -> None:
    a, b = (str(r) for r in runs)
    proc = smprof("diff", a, b, "--step-pattern", "no-such-step", "--fail-if-slower", "5%")
    assert proc.returncode == 1
    assert "smprof diff: regression: span is" in proc.stderr
    assert "step time (by change" not in proc.stdout
    same = smprof("diff", a, a, "--step-pattern", "no-such-step", "--fail-if-slower", "0%", "--json")
    assert same.returncode == 0
    assert json.loads(same.stdout)["headline"] | {"a_ns": 0, "b_ns": 0} == {
        "name": "span",
        "a_ns": 0,
        "b_ns": 0,
        "change_ns": 0,
        "change": 0.0,
    }
