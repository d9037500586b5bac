"""The package's lifetime rule and its single owners of each fact (issue 27): what ``import smppy``
loads in a training process, the old import paths that still work, the options every analysis
command shares, and the facts libsmprof owns that the Python side must not copy."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import smppy
from conftest import start_session
from smppy import _smppy, analysis, cli

PACKAGE = Path(smppy.__file__).resolve().parent

# What a training process must not pay for at `import smppy`: the command line, S3, the analysis,
# its data libraries and the report.
NOT_AT_IMPORT = (
    "argparse",
    "smppy.cli",
    "smppy.storage",
    "boto3",
    "botocore",
    "smppy.analysis",
    "pandas",
    "pyarrow",
    "smppy.report",
    "smppy.diagnose",
    "smppy.export",
)


def test_import_smppy_loads_only_what_a_training_process_needs() -> None:
    code = "import json, sys; import smppy; print(json.dumps(sorted(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    modules = json.loads(loaded.stdout)
    assert "smppy" in modules
    assert [m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_AT_IMPORT)] == []


# The documented paths of modules that moved (README.md, docs/): the same module objects.
MOVED = {
    "smppy.keras": "smppy.integrations.keras",
    "smppy.lightning": "smppy.integrations.lightning",
    "smppy.transformers": "smppy.integrations.transformers",
    "smppy.trace": "smppy.analysis.trace",
    "smppy.upload": "smppy.storage.upload",
    "smppy.s3": "smppy.storage.s3",
    "smppy.parquet_export": "smppy.export.parquet",
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_module_keeps_its_documented_path(old: str) -> None:
    new = MOVED[old]
    try:
        moved = importlib.import_module(new)
    except ImportError as e:  # a framework integration without its framework
        pytest.skip(f"{new}: {e}")
    assert importlib.import_module(old) is moved


def test_the_documented_entry_points_stay() -> None:
    import smprof
    from smppy.diff import diff_summaries
    from smppy.export import export_timeline

    assert smprof is smppy
    assert callable(cli.main) and callable(export_timeline) and callable(diff_summaries)
    assert callable(analysis.summarize) and callable(analysis.load)


SUMMARY_OPTIONS = ("step_pattern", "data_wait_pattern", "max_profiled_steps", "jobs", "scheduler")
ANALYSIS_COMMANDS = {
    "summary": ["summary", "DIR"],
    "diagnose": ["diagnose", "DIR"],
    "report": ["report", "DIR"],
    "diff": ["diff", "A", "B"],
}


@pytest.mark.parametrize("command", sorted(ANALYSIS_COMMANDS))
def test_every_analysis_command_takes_the_summary_options(command: str) -> None:
    argv = ANALYSIS_COMMANDS[command] + [
        "--step-pattern", "Step.*", "--data-wait-pattern", "Fetch", "--max-profiled-steps", "7",
        "--jobs", "3", "--scheduler", "tcp://h:1",
    ]  # fmt: skip
    args = cli.build_parser().parse_args(argv)
    assert [getattr(args, name) for name in SUMMARY_OPTIONS] == ["Step.*", "Fetch", 7, 3, "tcp://h:1"]


def test_each_shared_option_is_defined_once() -> None:
    sources = "\n".join(path.read_text() for path in (PACKAGE / "cli").glob("*.py"))
    for option in ("--step-pattern", "--data-wait-pattern", "--max-profiled-steps", "--jobs", "--scheduler"):
        definitions = len(re.findall(rf'add_argument\(\s*"{option}"', sources))
        # upload's --jobs counts files uploaded at once: its own option, not the summary's.
        assert definitions == (2 if option == "--jobs" else 1), option


def _package_sources() -> dict[str, str]:
    return {str(path.relative_to(PACKAGE)): path.read_text() for path in PACKAGE.rglob("*.py")}


def test_the_python_side_keeps_no_copy_of_libsmprofs_facts() -> None:
    for name, text in _package_sources().items():
        assert "SMPROF\\x00" not in text, f"{name}: the trace magic is the reader's (has_trace_magic)"
        for variable in (
            "SMP_SCHEDULE_",
            "SMP_TORCH_AUTO_STEPS",
            "SMP_UPLOAD_EXIT_TIMEOUT_S",
            "SMP_CLOCK_ALIGN",
        ):
            assert variable not in text, f"{name}: config resolution is libsmprof's (resolve_config)"


def test_a_trace_object_is_told_by_the_readers_magic_check() -> None:
    from smppy.storage import s3_cache

    class Objects:
        def __init__(self, data: bytes) -> None:
            self.data = data

        def get_object(self, Bucket: str, Key: str, Range: str) -> dict[str, Any]:  # noqa: N803
            first, last = (int(n) for n in Range.removeprefix("bytes=").split("-"))
            return {"Body": type("Body", (), {"read": lambda _self: self.data[first : last + 1]})()}

    assert s3_cache._is_trace_object(Objects(b"SMPROF\x00\x01" + bytes(40)), "b", "smpfile_1_2.raw")
    assert not s3_cache._is_trace_object(Objects(b"SMPROFX" + bytes(40)), "b", "other")
    assert not s3_cache._is_trace_object(Objects(b""), "b", "empty")


def test_start_takes_the_python_side_keys_from_libsmprofs_resolution(
    trace_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    resolved: list[dict[bytes, bytes]] = []
    direct = _smppy.resolve_config

    def spy(values: dict[bytes, bytes]) -> dict[str, str]:
        resolved.append(values)
        return direct(values)

    monkeypatch.setattr(_smppy, "resolve_config", spy)
    monkeypatch.setenv("SMP_SCHEDULE_ACTIVE", "2")
    monkeypatch.setenv("SMP_SCHEDULE_WAIT", "1")
    profiler = start_session(trace_dir, ScheduleWait="3")
    try:
        assert resolved, "start_profiling resolves the config through libsmprof"
        # Config over environment over default, as libsmprof resolves it.
        assert (profiler.schedule.wait, profiler.schedule.active, profiler.schedule.warmup) == (3, 2, 0)
    finally:
        profiler.stop_profiling()


def test_resolve_config_names_every_key_with_libsmprofs_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMP_TORCH_MODULE_DEPTH", "2")
    effective = _smppy.resolve_config({b"ClockAlignTimeoutS": b"5"})
    assert set(effective) == set(smppy.Config.keys())
    assert (effective["ClockAlignTimeoutS"], effective["TorchModuleDepth"], effective["TorchAutoSteps"]) == (
        "5",
        "2",
        "0",
    )
    with pytest.raises(ValueError, match="TorchModuleDepth"):
        _smppy.resolve_config({b"TorchModuleDepth": b"deep"})


def _job_with_fetch_waits(trace_dir: Path) -> Path:
    profiler = start_session(trace_dir)
    for step in range(4):
        with smppy.annotate(f"ProfilerStep#{step}"):
            with smppy.annotate("ShardRead"):  # no usual name of a data phase
                pass
            with smppy.annotate("Forward"):
                pass
    profiler.stop_profiling()
    return trace_dir


def test_input_pipeline_wait_follows_the_data_wait_pattern(trace_dir: Path) -> None:
    job = _job_with_fetch_waits(trace_dir)
    assert analysis.input_pipeline_wait(analysis.summarize(job, jobs=1)) is None  # not a default name
    wait = analysis.input_pipeline_wait(analysis.summarize(job, jobs=1, data_wait_pattern="shard.*"))
    assert wait is not None
    assert (wait["annotation"], wait["count"], wait["names"]) == ("shard.*", 4, ["ShardRead"])
    assert wait["total_ns"] > 0


def test_summary_json_input_pipeline_wait_uses_the_pattern(
    trace_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = _job_with_fetch_waits(trace_dir)
    assert cli.main(["summary", str(job), "--json", "--jobs", "1", "--data-wait-pattern", "Shard.*"]) == 0
    assert json.loads(capsys.readouterr().out)["input_pipeline_wait"]["count"] == 4


def test_a_local_summary_lists_its_directory_once(trace_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _job_with_fetch_waits(trace_dir)
    listings: list[str] = []

    def counting(name: str) -> Any:
        direct = getattr(_smppy, name)

        def counted(*args: Any, **named: Any) -> Any:
            # conftest.py's check of every summary against its partials lists the job again: not counted.
            if sys._getframe(1).f_globals["__name__"] != "partial_summaries":
                listings.append(name)
            return direct(*args, **named)

        return counted

    for name in ("summarize", "job_streams"):
        monkeypatch.setattr(_smppy, name, counting(name))
    monkeypatch.setattr(Path, "rglob", lambda *_: pytest.fail("the summary walked the directory in Python"))
    for jobs in ("1", "2"):
        listings.clear()
        assert cli.main(["summary", str(job), "--json", "--jobs", jobs]) == 0
        assert len(listings) == 1, (jobs, listings)


def test_imports_run_down_the_layers() -> None:
    """No library module imports the command line (argparse, smppy.cli); the summary does not import the
    PyTorch hooks; storage imports nothing above it; the analysis' tables do not import the façade that
    imports them."""
    for name, text in _package_sources().items():
        if not name.startswith("cli/"):
            assert not re.search(r"^\s*(import argparse|from smppy\.cli|import smppy\.cli)", text, re.M), name
        if name.startswith(("analysis/", "storage/", "export/", "report/", "diagnose/", "diff/")):
            assert "smppy.integrations" not in text, name
        if name.startswith("storage/"):  # below the analysis: the upload and the mirror list files themselves
            assert not re.search(r"smppy\.(analysis|export|report|diagnose|diff)\b", text), name
    tables = (PACKAGE / "analysis" / "_dask_tables.py").read_text()
    assert not re.search(r"^from smppy\.analysis import", tables, re.M)
