"""``smprof run``: unmodified programs, torchrun ranks, spawned DataLoader workers, native programs."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from conftest import REPO, read_annotations
from smppy import analysis
from smppy.analysis.trace import counter_events, find_trace_files, open_trace
from smppy.diagnose.input_wait import input_wait_sentence

pytestmark = [pytest.mark.slow, pytest.mark.torch]


def smprof_run(args: list[str], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    """``smprof run ARGS`` in a fresh interpreter, as a user would type it."""
    return subprocess.run(
        [sys.executable, "-m", "smppy.cli", "run", *args],
        cwd=cwd,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_torchrun_job_with_spawned_workers_and_no_smppy_import(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    script = REPO / "examples" / "plain_train.py"
    assert "smppy" not in script.read_text() and "smprof" not in script.read_text().split('"""')[2]
    proc = smprof_run(
        ["-o", str(out), "--", sys.executable, "-m", "torch.distributed.run", "--standalone",
         "--nproc-per-node", "2", str(script), "--steps", "4", "--workers", "1"],
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"trace file(s) under {out}" in proc.stdout
    assert "per rank:" in proc.stdout  # the job's summary
    headers = {f: open_trace(f).header for f in find_trace_files(out)}
    ranks = {f: h for f, h in headers.items() if h["config"]["ProcessRole"] == "main"}
    workers = {f: h for f, h in headers.items() if h["config"]["ProcessRole"] == "worker"}
    # One file per rank (the torchrun agent is not profiled) and one per worker.
    assert sorted(h["rank"] for h in ranks.values()) == [0, 1]
    assert {h["rank_source"] for h in headers.values()} == {"torchrun"}
    assert sorted(h["rank"] for h in workers.values()) == [0, 1]
    assert {h["parent_pid"] for h in workers.values()} == {h["pid"] for h in ranks.values()}
    for f in ranks:
        counts = Counter(e["name"] for e in read_annotations(f))
        # 4 optimizer steps are 4 steps: the fetch after the last opens no fifth one.
        assert [counts[f"ProfilerStep#{n}"] for n in range(5)] == [1, 1, 1, 1, 0]
        assert counts["AfterLastStep"] == 1
        assert counts["Backward"] == 4 and counts["InputWait"] >= 4
    for f in workers:  # the machine's counters come from the ranks only
        names = {e["name"] for e in counter_events(open_trace(f))}
        assert "process.cpu_percent" in names
        assert not [n for n in names if n.startswith(("cpu", "machine."))]
    summary = analysis.summarize(str(out))
    assert [r["steps"]["count"] for r in summary["ranks"] if not r["worker_of_pid"]] == [4, 4]
    # The summary's input-pipeline wait is the steady-state figure, word for word the report's.
    wait = analysis.input_pipeline_wait(summary)
    assert f"input-pipeline wait: {input_wait_sentence(wait)}" in proc.stdout
    assert "% of steady-state step time" in proc.stdout
    # Then where to look next, relative to the working directory.
    next_lines = proc.stdout.split("\nnext:\n", 1)[1].splitlines()
    assert [line.strip() for line in next_lines[1:6:2]] == [
        "smprof diagnose traces",
        "smprof report traces -o traces/report.html",
        "smprof export traces --format perfetto -o traces/timeline.perfetto-trace",
    ]
    labels = {(r["rank"], r["worker_of_pid"] != 0) for r in summary["ranks"]}
    assert labels == {(0, False), (1, False), (0, True), (1, True)}
    # The session began before init_process_group: the torch hooks took the
    # clock-alignment rounds; each worker has its rank's correction.
    clocks = {
        (p["rank"], p["worker_of_pid"] != 0): (p["clock_correction_ns"], p["clock_correction_uncertainty_ns"])
        for p in summary["job"]["processes"]
    }
    assert all(p["clock_alignment_problem"] == "" for p in summary["job"]["processes"])
    assert clocks[(0, False)] == clocks[(0, True)] == (0, 0), "rank 0 is the reference"
    assert clocks[(1, False)][1] > 0, "rank 1 measured its offset"
    assert clocks[(1, True)] == clocks[(1, False)]


def test_forked_dataloader_worker_is_a_worker_of_its_rank(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """\
        import torch
        data = torch.utils.data.TensorDataset(torch.randn(8, 2))
        loader = torch.utils.data.DataLoader(data, batch_size=4, num_workers=1,
                                             multiprocessing_context="fork")
        assert len(list(loader)) == 2
        """
    )
    proc = smprof_run(["-o", str(tmp_path), "--", sys.executable, "-c", code], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert " worker of pid " in proc.stdout
    traces = [open_trace(f) for f in find_trace_files(tmp_path)]
    [main] = [t for t in traces if not t.header["forked_child"]]
    [worker] = [t for t in traces if t.header["forked_child"]]
    assert worker.header["parent_pid"] == main.header["pid"]
    worker_counters = {e["name"] for e in counter_events(worker)}
    assert "process.cpu_percent" in worker_counters
    assert not [n for n in worker_counters if n.startswith(("cpu", "machine."))]
    assert "machine.memory_used_bytes" in {e["name"] for e in counter_events(main)}
    timeline = tmp_path / "timeline.json"
    export = [
        sys.executable,
        "-m",
        "smppy.cli",
        "export",
        str(tmp_path),
        "--format",
        "chrome",
        "-o",
        str(timeline),
    ]
    subprocess.run(export, check=True, capture_output=True)
    assert f"rank 0 worker of pid {main.header['pid']} (pid {worker.header['pid']})" in timeline.read_text()


def test_forkserver_workers_are_workers_of_the_rank(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """\
            import torch
            if __name__ == "__main__":
                data = torch.utils.data.TensorDataset(torch.randn(8, 2))
                loader = torch.utils.data.DataLoader(data, batch_size=4, num_workers=1,
                                                     multiprocessing_context="forkserver")
                assert len(list(loader)) == 2
            """
        )
    )
    proc = smprof_run(["-o", str(tmp_path / "traces"), "--", sys.executable, str(script)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    ranks = analysis.summarize(str(tmp_path / "traces"))["ranks"]
    [main] = [r["pid"] for r in ranks if r["worker_of_pid"] == 0]
    # The forkserver and the worker it forked, both workers of the rank.
    assert [r["worker_of_pid"] for r in ranks if r["worker_of_pid"]] == [main, main]


def test_python_child_imports_the_smppy_of_smprof_run(tmp_path: Path) -> None:
    # The child has no smppy on PYTHONPATH (and may have another version installed).
    import smppy

    launcher = f"import sys; sys.path.insert(0, {str(Path(smppy.__file__).parent.parent)!r}); "
    launcher += "from smppy.cli import main; sys.exit(main())"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    child = "import smppy; assert smppy.SMProfiler.instance().is_profiling"
    proc = subprocess.run(
        [sys.executable, "-c", launcher, "run", "-o", str(tmp_path), "--", sys.executable, "-c", child],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert len(find_trace_files(tmp_path)) == 1


def test_exit_code_and_bad_settings(tmp_path: Path) -> None:
    proc = smprof_run(
        ["-o", str(tmp_path), "--no-summary", "--", sys.executable, "-c", "raise SystemExit(3)"], tmp_path
    )
    assert proc.returncode == 3, proc.stderr
    assert len(find_trace_files(tmp_path)) == 1
    proc = smprof_run(["--no-summary", "--", str(tmp_path / "no-such-program")], tmp_path)
    assert proc.returncode == 127
    assert "cannot start" in proc.stderr and "no-such-program" in proc.stderr
    proc = smprof_run(["--set", "ScheduleActive=x", "--", "true"], tmp_path)
    assert proc.returncode == 2
    assert "ScheduleActive" in proc.stderr and "valid values" in proc.stderr


def test_schedule_keys_through_set(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """\
        import torch
        model = torch.nn.Linear(2, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(6):
            model(torch.ones(1, 2)).sum().backward()
            opt.step()
        """
    )
    sets = ["ScheduleWait=1", "ScheduleWarmup=1", "ScheduleActive=2", "ScheduleRepeat=1"]
    args = [a for s in sets for a in ("--set", s)]
    proc = smprof_run([*args, "-o", str(tmp_path), "--", sys.executable, "-c", code], tmp_path)
    assert proc.returncode == 0, proc.stderr
    files = find_trace_files(tmp_path)
    assert len(files) == 1
    steps = sorted(e["name"] for e in read_annotations(files[0]) if e["name"].startswith("Profiler"))
    assert steps == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerWarmup#1"]


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_native_program_under_ld_preload(tmp_path: Path) -> None:
    source = tmp_path / "spin.c"
    source.write_text(
        "#include <time.h>\n"
        "int main(void) { volatile unsigned long n = 0; time_t end = time(0) + 1;\n"
        "  while (time(0) <= end) ++n; return 7; }\n"
    )
    subprocess.run(["cc", "-O1", "-o", str(tmp_path / "spin"), str(source)], check=True)
    out = tmp_path / "traces"
    proc = smprof_run(
        ["-o", str(out), "--set", "CpuSampleIntervalMs=50", "--", str(tmp_path / "spin")], tmp_path
    )
    assert proc.returncode == 7, proc.stderr
    files = find_trace_files(out)
    assert len(files) == 1
    trace = open_trace(files[0])
    assert trace.header["argv"] == [str(tmp_path / "spin")]
    assert "process.cpu_percent" in {e["name"] for e in counter_events(trace)}
    assert trace.footer is not None  # stopped at exit (read after the frames)


NO_GPU_DRIVER = not os.path.exists("/proc/driver/nvidia/version")


@pytest.mark.skipif(not NO_GPU_DRIVER, reason="needs a machine without a GPU driver")
def test_a_warning_of_every_process_is_said_once(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    children = " & ".join([f"{shlex.quote(sys.executable)} -c pass"] * 3)
    # The shell (through LD_PRELOAD) and its three Python children: four processes, each warned.
    proc = smprof_run(
        ["--set", "EnableCuda=1", "-o", str(out), "--", "sh", "-c", f"{children}; wait"], tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(find_trace_files(out)) == 4
    said = [line for line in proc.stderr.splitlines() if "EnableCuda=1: GPU activity is not recorded" in line]
    assert len(said) == 1, proc.stderr
    # The summary names every process it concerns, in one line.
    grouped = [
        line for line in proc.stderr.splitlines() if line.startswith("smprof: warning: collector cuda off")
    ]
    assert len(grouped) == 1 and "(4 processes" in grouped[0], proc.stderr
    assert not [line for line in proc.stdout.splitlines() if "warning:" in line], proc.stdout
