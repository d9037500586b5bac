"""GPU tables through the readers: a synthetic trace with every GPU table, written
by the real TraceWriter, comes back from ``smprof dump --json`` as exactly the
documented events and is counted by ``smprof info``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import synthetic_trace as st
from smppy.analysis.trace import open_trace

KERNEL = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16> >(int)"
NCCL = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
ORIGIN = {"rank": 3, "host": "gpu-node-1", "pid": 4242}


def smprof(*args: str) -> subprocess.CompletedProcess:
    """The smprof command of the package under test (PYTHONPATH's, not an installed one)."""
    code = "import sys; from smppy.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)


def write_gpu_trace(tmp_path: Path) -> Path:
    frame = st.pb().Frame(sequence=0, gpu_dropped_total=2)
    st.add_device(
        frame,
        id=0,
        name="NVIDIA H200",
        uuid="GPU-00010203-0405-0607-0809-0a0b0c0d0e0f",
        sm_count=132,
        global_memory_bytes=150 << 30,
        compute_capability_major=9,
        compute_capability_minor=0,
        global_memory_bandwidth_kbps=4800000000,
        max_threads_per_block=1024,
    )
    st.add_context(frame, 1, 0)
    st.add_gpu_activities(
        frame,
        [
            {
                "start": 1_000,
                "dur": 500,
                "name": KERNEL,
                "correlation_id": 11,
                "kernel_class": 1,
                "precision": 5,
                "grid": (80, 1, 1),
                "block": (256, 1, 1),
                "shared_memory_bytes": 4096,
                "registers_per_thread": 32,
            },
            {
                "start": 2_000,
                "dur": 9_000,
                "name": NCCL,
                "stream": 13,
                "kernel_class": 2,
                "precision": 5,
                "graph_id": 4,
                "graph_node_id": 77,
            },
            {
                "start": 500,
                "dur": 300,
                "name": "Memcpy HtoD",
                "kind": 2,
                "copy_kind": 1,
                "bytes": 1 << 20,
                "correlation_id": 10,
                "src_memory_kind": 1,
                "dst_memory_kind": 3,
            },
            {
                "start": 12_000,
                "dur": 100,
                "name": "Memcpy PtoP",
                "kind": 2,
                "copy_kind": 10,
                "bytes": 64,
                "peer_device": 1,
            },
            {"start": 13_000, "dur": 50, "name": "Memset", "kind": 3, "bytes": 512},
            {"start": 14_000, "dur": 800, "name": "Stream synchronize", "kind": 4},
        ],
    )
    st.add_api_calls(frame, [(900, 40, "cudaLaunchKernel", 4242, 11), (400, 30, "cudaMemcpyAsync", 4242, 10)])
    st.add_external_correlations(frame, [(11, 9, 5, "forward"), (10, 123, 3, "")])
    st.add_markers(frame, [(300, 20_000, "step 1", 4242)])
    st.add_overheads(frame, [(100, 10, "buffer flush", 4243)])
    footer = st.pb().Footer(gpu_records_written=11, gpu_records_dropped=2, cupti_records_dropped=5)
    footer.stop.monotonic_ns = 30_000
    h = st.header(
        host=ORIGIN["host"],
        rank=ORIGIN["rank"],
        world_size=8,
        pid=ORIGIN["pid"],
        cupti_version=130001,
        cuda_driver_version=13000,
        gpu_timebase="cupti timestamp callback: CLOCK_MONOTONIC",
    )
    return st.write_trace(tmp_path / "rank3.smprof", h, [frame], footer)


def test_trace_file_reader_returns_gpu_columns_and_header_fields(tmp_path: Path) -> None:
    trace = open_trace(write_gpu_trace(tmp_path))
    assert trace.header["cupti_version"] == 130001
    assert trace.header["gpu_timebase"] == "cupti timestamp callback: CLOCK_MONOTONIC"
    frame = next(trace.frames())
    assert frame["gpu"]["start_ns"] == [500, 1_000, 2_000, 12_000, 13_000, 14_000]
    assert frame["gpu"]["grid"][1] == (80, 1, 1)
    assert frame["api_calls"]["name"] == ["cudaMemcpyAsync", "cudaLaunchKernel"]
    assert frame["external_correlations"]["name"] == ["forward", ""]
    assert frame["gpu_dropped_total"] == 2
    assert trace.footer is None  # read once iteration has reached it
    assert list(trace.frames()) == []
    assert trace.footer["cupti_records_dropped"] == 5


def test_dump_json_prints_every_gpu_event_exactly(tmp_path: Path) -> None:
    path = write_gpu_trace(tmp_path)
    proc = smprof("dump", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()][1:]  # after the "file" record
    assert events == [
        {
            "type": "device",
            "id": 0,
            "name": "NVIDIA H200",
            "uuid": "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f",
            "sm_count": 132,
            "global_memory_bytes": 150 << 30,
            "global_memory_bandwidth_kbps": 4800000000,
            "max_threads_per_block": 1024,
            "compute_capability": "9.0",
            **ORIGIN,
        },
        {"type": "context", "id": 1, "device": 0, **ORIGIN},
        {
            "type": "memcpy",
            "name": "Memcpy HtoD",
            "ts_ns": 500,
            "dur_ns": 300,
            "device": 0,
            "context": 1,
            "stream": 7,
            "correlation_id": 10,
            "bytes": 1 << 20,
            "copy_kind": "HtoD",
            "src_memory": "pageable",
            "dst_memory": "device",
            "graph_id": 0,
            "graph_node_id": 0,
            **ORIGIN,
        },
        {
            "type": "kernel",
            "name": KERNEL,
            "ts_ns": 1_000,
            "dur_ns": 500,
            "device": 0,
            "context": 1,
            "stream": 7,
            "correlation_id": 11,
            "kernel_class": "compute",
            "precision": "bf16",
            "grid": [80, 1, 1],
            "block": [256, 1, 1],
            "shared_memory_bytes": 4096,
            "registers_per_thread": 32,
            "graph_id": 0,
            "graph_node_id": 0,
            **ORIGIN,
        },
        {
            "type": "kernel",
            "name": NCCL,
            "ts_ns": 2_000,
            "dur_ns": 9_000,
            "device": 0,
            "context": 1,
            "stream": 13,
            "correlation_id": 0,
            "kernel_class": "communication",
            "precision": "bf16",
            "grid": [0, 0, 0],
            "block": [0, 0, 0],
            "shared_memory_bytes": 0,
            "registers_per_thread": 0,
            "graph_id": 4,
            "graph_node_id": 77,
            **ORIGIN,
        },
        {
            "type": "memcpy",
            "name": "Memcpy PtoP",
            "ts_ns": 12_000,
            "dur_ns": 100,
            "device": 0,
            "context": 1,
            "stream": 7,
            "correlation_id": 0,
            "bytes": 64,
            "copy_kind": "PtoP",
            "peer_device": 1,
            "src_memory": "unknown",
            "dst_memory": "unknown",
            "graph_id": 0,
            "graph_node_id": 0,
            **ORIGIN,
        },
        {
            "type": "memset",
            "name": "Memset",
            "ts_ns": 13_000,
            "dur_ns": 50,
            "device": 0,
            "context": 1,
            "stream": 7,
            "correlation_id": 0,
            "bytes": 512,
            "graph_id": 0,
            "graph_node_id": 0,
            **ORIGIN,
        },
        {
            "type": "sync",
            "name": "Stream synchronize",
            "ts_ns": 14_000,
            "dur_ns": 800,
            "device": 0,
            "context": 1,
            "stream": 7,
            "correlation_id": 0,
            **ORIGIN,
        },
        {
            "type": "api",
            "name": "cudaMemcpyAsync",
            "ts_ns": 400,
            "dur_ns": 30,
            "tid": 4242,
            "thread": "",
            "correlation_id": 10,
            "domain": "runtime",
            **ORIGIN,
        },
        {
            "type": "api",
            "name": "cudaLaunchKernel",
            "ts_ns": 900,
            "dur_ns": 40,
            "tid": 4242,
            "thread": "",
            "correlation_id": 11,
            "domain": "runtime",
            **ORIGIN,
        },
        {
            "type": "external_correlation",
            "correlation_id": 11,
            "external_id": 9,
            "external_kind": 5,
            "name": "forward",
            **ORIGIN,
        },
        {
            "type": "external_correlation",
            "correlation_id": 10,
            "external_id": 123,
            "external_kind": 3,
            "name": "",
            **ORIGIN,
        },
        {
            "type": "marker",
            "name": "step 1",
            "domain": "",
            "ts_ns": 300,
            "dur_ns": 20_000,
            "tid": 4242,
            "thread": "",
            **ORIGIN,
        },
        {"type": "overhead", "name": "buffer flush", "ts_ns": 100, "dur_ns": 10, "tid": 4243, **ORIGIN},
    ]


def test_info_counts_gpu_records_and_drops(tmp_path: Path) -> None:
    path = write_gpu_trace(tmp_path)
    proc = smprof("info", str(path))
    assert proc.returncode == 0, proc.stderr
    gpu_lines = [line for line in proc.stdout.splitlines() if line.startswith(("  gpu", "  cupti"))]
    assert gpu_lines == [
        "  gpu: 2 kernel, 2 memcpy, 1 memset, 1 sync, 2 api calls, 1 markers, 1 overheads,"
        " 2 external correlations; dropped 2 (smprof buffers) + 5 (CUPTI)",
        "  cupti 130001  driver 13000  timebase: cupti timestamp callback: CLOCK_MONOTONIC",
        "  gpu 0: NVIDIA H200  sm 9.0  132 SMs  150.0 GiB  GPU-00010203-0405-0607-0809-0a0b0c0d0e0f",
    ]
    info = json.loads(smprof("info", str(path), "--json").stdout)[0]
    assert info["gpu"] == {
        "api_calls": 2,
        "external_correlations": 2,
        "kernel": 2,
        "markers": 1,
        "memcpy": 2,
        "memset": 1,
        "overheads": 1,
        "sync": 1,
    }
    assert (info["gpu_dropped"], info["cupti_dropped"]) == (2, 5)
    assert info["gpu_devices"][0]["name"] == "NVIDIA H200"
    assert info["cuda_driver_version"] == 13000


def test_info_of_a_cpu_only_trace_has_no_gpu_lines(tmp_path: Path) -> None:
    frame = st.pb().Frame(sequence=0)
    st.add_annotations(frame, [(100, 50, "step", 1, 0)])
    path = st.write_trace(tmp_path / "cpu.smprof", st.header(), [frame])
    proc = smprof("info", str(path))
    assert proc.returncode == 0, proc.stderr
    assert not [line for line in proc.stdout.splitlines() if line.startswith(("  gpu", "  cupti"))]


def test_the_collectors_report_reaches_info_and_the_summary(tmp_path: Path) -> None:
    from smppy import analysis

    frame = st.pb().Frame(sequence=0)
    st.add_gpu_activities(frame, [{"start": 1_000, "dur": 100, "name": "k", "kind": 1}])
    footer = st.pb().Footer(gpu_records_written=1)
    footer.stop.monotonic_ns = 30_000
    report = footer.gpu_collection
    report.incomplete_records = 3
    report.zero_timestamp_records = 5
    report.foreign_timebase_records = 2
    report.marker_unmatched_end = 1
    report.buffers_not_returned = 4
    report.contexts_synchronized = 1
    report.foreign_client = "4 CUPTI buffers never came back"
    h = st.header(host="h", rank=0, world_size=1, pid=7, cupti_version=130001, cuda_driver_version=13000)
    path = st.write_trace(tmp_path / "rank0.smprof", h, [frame], footer)

    proc = smprof("info", str(path))
    assert proc.returncode == 0, proc.stderr
    assert (
        "  gpu collection: waited for 1 contexts at stop; records dropped: 3 unfinished at stop,"
        " 5 finished but stamped 0 by CUPTI, 2 on another clock, 1 NVTX ends unpaired,"
        " 4 buffers never returned"
    ) in proc.stdout
    assert "  another CUDA profiler in the process: 4 CUPTI buffers never came back" in proc.stdout
    info = json.loads(smprof("info", str(path), "--json").stdout)[0]
    assert info["gpu_collection"]["incomplete_records"] == 3
    assert info["gpu_collection"]["zero_timestamp_records"] == 5
    assert info["gpu_collection"]["synchronize_failure"] == ""
    drops = analysis.summarize(tmp_path)["drops"]
    assert drops["gpu_records_incomplete"] == 3
    assert drops["gpu_records_zero_timestamp"] == 5
    assert drops["gpu_records_foreign_timebase"] == 2
    assert drops["gpu_markers_unpaired"] == 1
    assert drops["gpu_buffers_not_returned"] == 4
    assert drops["processes_with_foreign_cupti_client"] == 1
