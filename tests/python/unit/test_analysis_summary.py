"""smppy.analysis.summarize and load over synthetic jobs with known ground truth, written by
the real TraceWriter: overlapping GPU intervals on several GPUs, steps, two hosts with
different clock offsets, a rotated rank, a truncated and a corrupt file."""

from __future__ import annotations

import builtins
import json
import sys
from pathlib import Path

import pytest
import synthetic_trace as st
from smppy import analysis
from smppy.cli import main

MS = 1_000_000
MONO_A, REAL_A = 5_000 * MS, 1_700_000_000_000 * MS  # host-a: wall = t - MONO_A + REAL_A
MONO_B, REAL_B = 9_000 * MS, REAL_A + 3 * MS  # host-b started 3 ms later on the wall clock


def frame(seq: int):
    f = st.pb().Frame(sequence=seq)
    f.strings.append(b"")  # index 0: "no name" for external correlations of other kinds
    return f


def footer(stop_mono: int, real_minus_mono: int, **fields):
    f = st.pb().Footer(**fields)
    f.stop.monotonic_ns = stop_mono
    f.stop.realtime_ns = stop_mono + real_minus_mono
    return f


def rank0_frames():
    t = MONO_A
    f0 = frame(0)
    st.add_annotations(
        f0,
        [
            (t, 10 * MS, "step_40", 1, 0),
            (t + 1 * MS, 3 * MS, "fwd", 1, 1),
            (t + 10 * MS, 12 * MS, "step_41", 1, 0),
            (t + 11 * MS, 2 * MS, "fwd", 1, 1),
        ],
    )
    st.add_api_calls(
        f0,
        [
            (t - 50_000, 10_000, "cudaLaunchKernel", 1, 1),
            (t + 2 * MS - 30_000, 10_000, "cudaLaunchKernel", 1, 2),
            (t + 10 * MS - 100_000, 10_000, "cudaMemcpyAsync", 1, 3),
        ],
    )
    st.add_external_correlations(f0, [(1, 7, 5, "fwd"), (2, 7, 5, "fwd"), (3, 8, 5, "bwd"), (9, 1, 3, "")])
    st.add_gpu_activities(
        f0,
        [
            {
                "start": t,
                "dur": 4 * MS,
                "name": "gemm_fp16",
                "correlation_id": 1,
                "precision": 4,
                "stream": 7,
            },
            {
                "start": t + 2 * MS,
                "dur": 4 * MS,
                "name": "gemm_bf16",
                "correlation_id": 2,
                "precision": 5,
                "stream": 8,
            },
            {
                "start": t + 10 * MS,
                "dur": 1 * MS,
                "name": "Memcpy HtoD",
                "kind": 2,
                "copy_kind": 1,
                "bytes": 1000,
                "correlation_id": 3,
            },
            {"start": t + 11 * MS, "dur": MS // 2, "name": "Memset", "kind": 3, "bytes": 64},
            {"start": t + 20 * MS, "dur": 1 * MS, "name": "Stream synchronize", "kind": 4},
            {"start": t, "dur": 1 * MS, "name": "gemm_fp16", "device": 1, "precision": 4},
        ],
    )
    st.add_device(f0, id=0, name="Fake GPU", uuid="GPU-0", sm_count=132)
    st.add_counter(f0, "cpu.utilization", "percent", [(t + 100 * MS, 50.0), (t + 200 * MS, 100.0)], 0.01)
    st.add_counter(f0, "cpu0.utilization", "percent", [(t + 100 * MS, 50.0), (t + 200 * MS, 100.0)], 0.01)
    f1 = frame(1)
    # Arrives a frame late but within the reorder window: merges into [0, 7 ms).
    st.add_gpu_activities(f1, [{"start": t + 5 * MS, "dur": 2 * MS, "name": "relu", "precision": 0}])
    st.add_annotations(f1, [(t + 22 * MS, 14 * MS, "step_42", 1, 0)])
    return [f0, f1]


def write_job(root: Path) -> None:
    st.write_trace(
        root / "host-a" / "rank0.smprof",
        st.header(
            host="host-a",
            rank=0,
            world_size=2,
            monotonic_ns=MONO_A,
            realtime_ns=REAL_A,
            pid=100,
            argv=["train.py", "--steps", "3"],
        ),
        rank0_frames(),
        footer(MONO_A + 300 * MS, REAL_A - MONO_A, annotations_dropped=2, cupti_records_dropped=1),
    )
    # host-b rank 1, rotated into two files: one continuous stream of ProfilerStep#N.
    for index in (0, 1):
        f = frame(0)
        start = MONO_B + index * 100 * MS
        st.add_annotations(f, [(start, 20 * MS, f"ProfilerStep#{index}", 2, 0)])
        st.write_trace(
            root / "host-b" / f"rank1_{index}.smprof",
            st.header(
                host="host-b",
                rank=1,
                world_size=2,
                monotonic_ns=start,
                realtime_ns=start - MONO_B + REAL_B,
                pid=200,
                file_index=index,
                collectors=[
                    st.pb().CollectorStatus(name="cuda", reason="no GPU"),
                    st.pb().CollectorStatus(name="perf", reason="disabled by EnablePerf"),
                ],
            ),
            [f],
            footer(start + 50 * MS, REAL_B - MONO_B),
        )


def test_gpu_metrics_are_exact(tmp_path: Path) -> None:
    write_job(tmp_path)
    s = analysis.summarize(tmp_path)
    gpu = s["gpu"]
    assert gpu["reason"] == ""
    devices = {(d["rank"], d["device"]): d for d in gpu["devices"]}
    # device 0: kernels [0,4) [2,6) [5,7) + memcpy [10,11) + memset [11,11.5); the sync is excluded
    assert devices[(0, 0)]["active_ns"] == 8_500_000
    assert devices[(0, 1)]["active_ns"] == 1 * MS
    assert devices[(0, 0)]["span_ns"] == 300 * MS + 50_000  # the API call starts 50 us before the header
    kinds = {a["kind"]: a for a in gpu["activity"]}
    assert (kinds["kernel"]["count"], kinds["kernel"]["time_ns"]) == (4, 11 * MS)
    assert (kinds["memcpy"]["time_ns"], kinds["memset"]["time_ns"], kinds["sync"]["time_ns"]) == (
        MS,
        MS // 2,
        MS,
    )
    assert kinds["kernel"]["share"] == pytest.approx(11 / 13.5)
    ops = {o["kind"]: o for o in gpu["memory_ops"]}
    assert (ops["HtoD"]["bytes"], ops["HtoD"]["time_ns"], ops["memset"]["bytes"]) == (1000, MS, 64)
    assert ops["HtoD"]["share"] == pytest.approx(2 / 3)
    precision = {p["precision"]: p["time_ns"] for p in gpu["precision"]}
    assert precision == {**{p: 0 for p in precision}, "FP16": 5 * MS, "BF16": 4 * MS, "unknown": 2 * MS}
    by_time = gpu["kernels"]["by_time"]
    assert [(k["name"], k["time_ns"], k["launches"]) for k in by_time] == [
        ("gemm_fp16", 5 * MS, 2),
        ("gemm_bf16", 4 * MS, 1),
        ("relu", 2 * MS, 1),
    ]
    latency = gpu["launch_latency"]
    assert (latency["count"], latency["min_ns"], latency["max_ns"]) == (2, 30_000, 50_000)
    per_annotation = {a["name"]: (a["gpu_time_ns"], a["activities"]) for a in gpu["per_annotation"]}
    assert per_annotation == {"fwd": (8 * MS, 2), "bwd": (1 * MS, 1)}
    # kernels 11 ms + memcpy 1 ms + memset 0.5 ms; relu, the device-1 kernel and the memset have no annotation
    attribution = gpu["attribution"]
    assert (attribution["attributed_time_ns"], attribution["unattributed_time_ns"]) == (9 * MS, 3_500_000)
    assert attribution["unattributed_share"] == pytest.approx(3.5 / 12.5)


def test_gpu_top_k_folds_the_rest_into_other(tmp_path: Path) -> None:
    write_job(tmp_path)
    kernels = analysis.summarize(tmp_path, top_k=1)["gpu"]["kernels"]
    assert [(k["name"], k["time_ns"], k["other"]) for k in kernels["by_time"]] == [
        ("gemm_fp16", 5 * MS, False),
        ("other", 6 * MS, True),
    ]
    assert kernels["by_launches"][0]["name"] == "gemm_fp16"


def test_steps_per_rank_and_rotated_stream(tmp_path: Path) -> None:
    write_job(tmp_path)
    s = analysis.summarize(tmp_path)
    per_rank = {p["rank"]: p["stats"] for p in s["steps"]["per_rank"]}
    assert (per_rank[0]["count"], per_rank[0]["total_ns"], per_rank[0]["max_ns"]) == (3, 36 * MS, 14 * MS)
    assert per_rank[0]["mean_ns"] == 12 * MS
    assert (per_rank[1]["count"], per_rank[1]["mean_ns"]) == (2, 20 * MS)
    assert s["steps"]["slowest_rank"]["rank"] == 1
    assert len(s["job"]["processes"]) == 2  # the rotated files are one stream
    assert s["job"]["processes"][1]["files"] == 2
    job = analysis.load(tmp_path)
    steps = job.steps
    rows = sorted(zip(steps["rank"], steps["step"], steps["start_wall_ns"], steps["dur_ns"]))
    assert rows == [
        (0, 40, REAL_A, 10 * MS),
        (0, 41, REAL_A + 10 * MS, 12 * MS),
        (0, 42, REAL_A + 22 * MS, 14 * MS),
        (1, 0, REAL_B, 20 * MS),
        (1, 1, REAL_B + 100 * MS, 20 * MS),
    ]


def test_max_profiled_steps_bounds_the_step_list_not_the_totals(tmp_path: Path, capsys) -> None:
    write_job(tmp_path)

    def profile(summary: dict) -> dict[int, tuple[int, list[int]]]:
        return {
            p["rank"]: (p["steps_seen"], [x["step"] for x in p["steps"]])
            for p in summary["step_profile"]["per_rank"]
        }

    full = analysis.summarize(tmp_path)
    assert full["options"]["max_profiled_steps"] == analysis.DEFAULT_MAX_PROFILED_STEPS
    assert profile(full) == {0: (3, [40, 41, 42]), 1: (2, [0, 1])}
    one = analysis.summarize(tmp_path, max_profiled_steps=1)
    assert one["options"]["max_profiled_steps"] == one["step_profile"]["max_profiled_steps"] == 1
    assert profile(one) == {0: (3, [40]), 1: (2, [0])}
    assert one["steps"] == full["steps"]
    assert main(["summary", str(tmp_path), "--json", "--max-profiled-steps", "2"]) == 0
    assert profile(json.loads(capsys.readouterr().out)) == {0: (3, [40, 41]), 1: (2, [0, 1])}
    with pytest.raises(ValueError, match="max_profiled_steps"):
        analysis.summarize(tmp_path, max_profiled_steps=-1)


def test_unnumbered_steps_are_numbered_by_ordinal_and_pattern_is_configurable(tmp_path: Path) -> None:
    f = frame(0)
    st.add_annotations(
        f, [(i * MS, MS // 2, "step", 1, 0) for i in range(4)] + [(9 * MS, MS, "train_it_7", 1, 0)]
    )
    st.write_trace(tmp_path / "r.smprof", st.header(), [f], footer(10 * MS, 0))
    assert analysis.summarize(tmp_path)["steps"]["stats"]["count"] == 4
    assert list(analysis.load(tmp_path).steps["step"]) == [0, 1, 2, 3]
    custom = analysis.summarize(tmp_path, step_pattern=r"train_it_(\d+)")
    assert (custom["steps"]["stats"]["count"], custom["steps"]["stats"]["total_ns"]) == (1, MS)
    assert list(analysis.load(tmp_path, step_pattern=r"train_it_(\d+)").steps["step"]) == [7]
    with pytest.raises(ValueError, match="step_pattern"):
        analysis.summarize(tmp_path, step_pattern="(")


def test_annotation_statistics_and_percentile_bound(tmp_path: Path) -> None:
    values = [1000 + 37 * i for i in range(1, 101)]
    f = frame(0)
    st.add_annotations(f, [(i * 10_000, v, "op", 1, 0) for i, v in enumerate(values)])
    st.write_trace(tmp_path / "r.smprof", st.header(), [f], footer(10 * MS, 0))
    (op,) = analysis.summarize(tmp_path)["annotations"]
    stats = op["stats"]
    assert (stats["count"], stats["total_ns"], stats["min_ns"], stats["max_ns"]) == (
        100,
        sum(values),
        min(values),
        max(values),
    )
    assert stats["mean_ns"] == sum(values) // 100
    for key, q in (("p50_ns", 50), ("p90_ns", 90), ("p99_ns", 99)):
        exact = sorted(values)[q - 1]  # nearest rank
        assert abs(stats[key] - exact) <= exact / 32
    assert sum(b[2] for b in stats["histogram"]) == 100


def test_wall_clock_places_hosts_with_their_offsets(tmp_path: Path) -> None:
    write_job(tmp_path)
    s = analysis.summarize(tmp_path)
    assert s["job"]["start_wall_ns"] == REAL_A - 50_000
    procs = {p["rank"]: p for p in s["job"]["processes"]}
    assert procs[0]["clock_offset_ns"] == REAL_A - MONO_A
    assert procs[1]["clock_offset_ns"] == REAL_B - MONO_B
    assert procs[1]["start_wall_ns"] == REAL_B
    assert procs[1]["end_wall_ns"] == REAL_B + 150 * MS
    assert s["job"]["end_wall_ns"] == REAL_A + 300 * MS  # host-a's footer
    annotations = analysis.load(tmp_path).annotations
    starts = {
        (r, n): w for r, n, w in zip(annotations["rank"], annotations["name"], annotations["start_wall_ns"])
    }
    assert starts[(1, "ProfilerStep#1")] - starts[(0, "step_40")] == 3 * MS + 100 * MS


def test_cpu_utilization_and_active_time(tmp_path: Path) -> None:
    write_job(tmp_path)
    s = analysis.summarize(tmp_path)
    (host,) = s["cpu"]["hosts"]
    assert host["host"] == "host-a"
    assert host["utilization_percent"] == pytest.approx(75.0)
    assert host["cores"] == [{"core": 0, "active_ns": 150 * MS, "utilization_percent": pytest.approx(75.0)}]
    ranks = {r["rank"]: r for r in s["ranks"]}
    assert ranks[0]["cpu_utilization_percent"] == pytest.approx(75.0)
    assert ranks[1]["cpu_utilization_percent"] is None


def test_timeline_buckets(tmp_path: Path) -> None:
    write_job(tmp_path)
    s = analysis.summarize(tmp_path, max_buckets=100)
    tl = s["timeline"]
    # span ~ 300 ms from the job start: the smallest 1 ms x 2^k with <= 100 buckets is 4 ms
    assert tl["bucket_ns"] == 4 * MS
    assert tl["start_wall_ns"] == REAL_A - 50_000 or tl["start_wall_ns"] == REAL_A
    per_device = {(d["rank"], d["device"]): d["busy_fraction"] for d in tl["gpu_per_device"]}
    busy = per_device[(0, 0)]
    assert len(busy) == tl["buckets"]
    assert sum(busy) * 4 * MS == pytest.approx(8.5 * MS)
    (node,) = tl["gpu_per_node"]
    assert node["gpus"] == 2
    assert sum(node["busy_fraction"]) * 4 * MS * 2 == pytest.approx(9.5 * MS)
    cpu = {c["host"]: c["utilization_percent"] for c in tl["cpu_per_node"]}
    assert [v for v in cpu["host-a"] if v is not None] == [pytest.approx(50.0), pytest.approx(100.0)]


def test_drops_warnings_and_metadata(tmp_path: Path) -> None:
    write_job(tmp_path)
    s = analysis.summarize(tmp_path)
    assert s["drops"]["annotations_dropped"] == 2
    assert s["drops"]["cupti_records_dropped"] == 1
    assert any("collector cuda off: no GPU" in w for w in s["warnings"])
    assert not any("disabled by" in w for w in s["warnings"])  # a config choice, not a problem
    assert {"name": "perf", "active": False, "reason": "disabled by EnablePerf"}.items() <= next(
        c for c in s["collectors"] if c.get("name") == "perf"
    ).items()
    assert s["job"]["hosts"] == ["host-a", "host-b"]
    assert s["job"]["ranks"] == [0, 1]
    assert s["job"]["processes"][0]["argv"] == ["train.py", "--steps", "3"]
    assert s["job"]["devices"][0]["name"] == "Fake GPU"
    json.dumps(s)  # JSON-able


def test_truncated_and_corrupt_files_are_read_up_to_their_last_good_frame(tmp_path: Path) -> None:
    frames = []
    for i in range(3):
        f = frame(i)
        st.add_annotations(f, [(i * MS, MS, "op", 1, 0)])
        frames.append(f)
    good = st.write_trace(
        tmp_path / "t.smprof", st.header(rank=0), frames, footer(5 * MS, 0), compression_level=0
    )
    data = good.read_bytes()
    truncated = tmp_path / "truncated.smprof"
    truncated.write_bytes(data[:-40])  # loses the footer and part of the last frame
    corrupt = tmp_path / "corrupt.smprof"
    corrupt.write_bytes(data.replace(b"op", b"oq", 1)[:])  # a byte of a frame's payload: checksum mismatch
    good.unlink()
    s = analysis.summarize(tmp_path)
    warnings = "\n".join(s["warnings"])
    assert str(truncated) in warnings and "truncated" in warnings
    assert str(corrupt) in warnings and "corrupt" in warnings
    files = {Path(f["path"]).name: f for f in s["job"]["files"]}
    assert files["truncated.smprof"]["complete"] is False
    (op,) = s["annotations"]
    assert op["stats"]["count"] == files["truncated.smprof"]["frames"] + files["corrupt.smprof"]["frames"]


def test_drops_of_a_rotated_session_add_up_over_its_files(tmp_path: Path) -> None:
    # Footers count their own file; frames carry the session's running total.
    # 1 drop before rotation, 2 after the second file's last frame (at stop):
    # the session lost 3, which neither the frames (1) nor one footer (2) say.
    for index, (frame_total, footer_drops) in enumerate([(1, 1), (1, 2)]):
        f = frame(index)
        f.dropped_total = frame_total
        start = MONO_B + index * 100 * MS
        st.add_annotations(f, [(start, 20 * MS, "step_1", 2, 0)])
        st.write_trace(
            tmp_path / f"rank0_{index}.smprof",
            st.header(host="h", monotonic_ns=start, realtime_ns=start, pid=7, file_index=index),
            [f],
            footer(start + 50 * MS, 0, annotations_dropped=footer_drops),
        )
    assert analysis.summarize(tmp_path)["drops"]["annotations_dropped"] == 3


def test_progress_reports_bytes(tmp_path: Path) -> None:
    write_job(tmp_path)
    calls = []
    analysis.summarize(tmp_path, jobs=1, progress=lambda done, total: calls.append((done, total)))
    total = sum(p.stat().st_size for p in tmp_path.rglob("*.smprof"))
    assert calls[-1] == (total, total)
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)
    files = list(tmp_path.rglob("*.smprof"))
    assert len(calls) > len(files)  # jobs=1: after each frame too, not only after each file
    assert all(done <= t == total for done, t in calls)


def test_load_without_pandas_gives_column_dicts(tmp_path: Path, monkeypatch) -> None:
    write_job(tmp_path)
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("hidden")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "pandas", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_pandas)
    job = analysis.load(tmp_path)
    assert isinstance(job.kernels, dict)
    assert sorted(job.kernels["name"]) == ["gemm_bf16", "gemm_fp16", "gemm_fp16", "relu"]
    assert job.copies["copy_kind"] == ["HtoD", ""]
    assert job.api_calls["correlation_id"] == [1, 2, 3]
    assert len(job.counters["value"]) == 4


def test_load_with_pandas_gives_dataframes(tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas")
    write_job(tmp_path)
    job = analysis.load(tmp_path)
    assert isinstance(job.kernels, pandas.DataFrame)
    assert job.kernels["dur_ns"].sum() == 11 * MS
    assert set(job.steps.columns) >= {"host", "rank", "step", "start_wall_ns", "end_wall_ns", "dur_ns"}


def test_summary_command_tables_and_json(tmp_path: Path, capsys) -> None:
    write_job(tmp_path)
    assert main(["summary", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "gemm_fp16" in text and "host-b rank 1" in text and "slowest" in text
    assert main(["summary", str(tmp_path), "--json", "--step-pattern", "fwd"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["steps"]["stats"]["count"] == 2


def test_load_only_the_tables_asked_for(tmp_path: Path) -> None:
    write_job(tmp_path)
    job = analysis.load(tmp_path, tables=("steps",))
    assert len(job.steps["step"]) == 5
    with pytest.raises(ValueError, match="not loaded"):
        job.table("kernels")
    with pytest.raises(ValueError, match="tables: unknown"):
        analysis.load(tmp_path, tables=("steps", "frames"))
