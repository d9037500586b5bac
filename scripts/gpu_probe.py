"""Probes, on a machine with an NVIDIA GPU, what issue 33 predicts of smprof's CUPTI path.

    python3 scripts/gpu_probe.py [--out DIR] [--budget SECONDS] [--only NAME,...]

Each scenario runs in its own fresh Python process with a hard time limit (the
process group is killed when it runs past it, and the row says HANG), writes
its traces under DIR/NAME/, and prints one JSON result line; this script
prints one table of them. smppy must be importable (PYTHONPATH=BUNDLE/python
with a bundle from scripts/gpu_bundle.sh), and torch with CUDA.

Scenarios (issue 33's numbers in brackets):
  versions   torch, its CUDA, the driver, the libcupti loaded and its version,
             the header's timebase method [7]
  idle3      three sessions in one process; in each, 5 s of GPU idle, then 50
             small kernels between host stamps t0..t1 with a sync: kernels
             recorded, zero/invalid/foreign-clock records, kernels outside
             [t0, t1], kernels that start before their launch API row [1]
  cuinit     fresh process, no torch: EnableCuda=1, start, one annotation,
             then cuDeviceGetCount on libcuda.so.1 (3 = not initialised) [6]
  cuinit_torch  the same after `import torch` (libcudart loaded, no context)
  queued     stop with >= 200 kernels still queued: all arrive? [2]
  graphs     a CUDA graph of 20 kernels replayed 10 times in session 1 and
             10 in session 2: kernels per session, links to a graph-launch
             API row, attribution to the annotation [4]
  capture    thread B captures torch.cuda.graph (global mode) while thread A
             calls stop_profiling(): capture and replay correct? [2]
  spin       an ~8 s kernel (torch.cuda._sleep) running at stop_profiling():
             how long stop takes (the wait has no deadline today) [2]

Exit status: 0 all scenarios ran (PASS or FAIL rows are findings, not errors),
1 a scenario crashed or hung, 2 no GPU here (nothing probed).
--cpu-rehearsal runs what can run without a GPU (torch on the CPU, no CUDA
calls) to check the script itself on a CPU machine; its rows say nothing about
a GPU.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

RESULT_PREFIX = "GPU_PROBE_RESULT "
SMPROF_EXTERNAL_KIND = 5  # CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 (docs/GPU.md)
CUDA_ERROR_NOT_INITIALIZED = 3

# name -> time limit in seconds, in the order they run (most telling first;
# spin is long by design and goes last).
SCENARIOS = {
    "versions": 90,
    "idle3": 75,
    "cuinit": 30,
    "cuinit_torch": 40,
    "queued": 45,
    "graphs": 45,
    "capture": 45,
    "spin": 50,
}

REHEARSAL = os.environ.get("GPU_PROBE_REHEARSAL") == "1"


# ----------------------------------------------------------------- child side


def device() -> str:
    return "cpu" if REHEARSAL else "cuda"


def sync() -> None:
    if not REHEARSAL:
        import torch

        torch.cuda.synchronize()


def launches(x: Any, count: int) -> None:
    """``count`` kernels: one elementwise kernel per in-place multiply."""
    for _ in range(count):
        x.mul_(1.0001)


def start(directory: Path, name: str, **keys: str) -> None:
    import smppy

    config = smppy.Config()
    config.profiler = {
        "EnableCuda": "1",
        "RecordFile": str(directory / f"{name}_%p.smprof"),
        "FlushIntervalMs": "200",
        **keys,
    }
    profiler = smppy.SMProfiler.instance()
    profiler.configure(config)
    profiler.start_profiling()


def stop() -> float:
    """stop_profiling(); its duration in seconds."""
    import smppy

    begin = time.monotonic()
    smppy.SMProfiler.instance().stop_profiling()
    return time.monotonic() - begin


class Trace:
    """One session's trace file, its events grouped by type."""

    def __init__(self, directory: Path, name: str) -> None:
        from smppy.trace import events, open_trace

        files = sorted(directory.glob(f"{name}_*.smprof"))
        if not files:
            raise RuntimeError(f"no trace file {name}_*.smprof in {directory}")
        trace = open_trace(str(files[0]))
        self.path = str(files[0])
        self.header = trace.header
        self.by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for event in events(trace):
            self.by_type[event["type"]].append(event)
        self.footer = trace.footer or {}
        self.report = self.footer.get("gpu_collection") or {}
        self.api = {e["correlation_id"]: e for e in self.by_type["api"]}
        self.annotation_of = {
            e["correlation_id"]: e.get("name", "")
            for e in self.by_type["external_correlation"]
            if e["external_kind"] == SMPROF_EXTERNAL_KIND
        }

    @property
    def kernels(self) -> list[dict[str, Any]]:
        return self.by_type["kernel"]

    def cuda_collector(self) -> str:
        cuda = next((c for c in self.header.get("collectors", []) if c["name"] == "cuda"), None)
        if cuda is None:
            return "no cuda collector in header"
        return "active" if cuda["active"] else f"inactive: {cuda['reason']}"

    def under(self, annotation: str) -> list[dict[str, Any]]:
        return [k for k in self.kernels if self.annotation_of.get(k["correlation_id"]) == annotation]

    def before_launch(self) -> tuple[int, float | None]:
        """Kernels whose start precedes their launch API row, and the smallest
        (kernel start - launch start) in microseconds."""
        gaps = [
            (k["ts_ns"] - self.api[k["correlation_id"]]["ts_ns"]) / 1e3
            for k in self.kernels
            if k["correlation_id"] in self.api
        ]
        return sum(g < 0 for g in gaps), (round(min(gaps), 1) if gaps else None)

    def losses(self) -> dict[str, Any]:
        r = self.report
        return {
            "incomplete": r.get("incomplete_records", "missing"),
            "invalid": r.get("invalid_records", "missing"),
            "foreign_clock": r.get("foreign_timebase_records", "missing"),
            "smprof_dropped": self.footer.get("gpu_records_dropped", "missing"),
            "cupti_dropped": self.footer.get("cupti_records_dropped", "missing"),
        }


def loaded_libraries(*names: str) -> dict[str, str]:
    found: dict[str, str] = {}
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            for name in names:
                if f"/{name}" in path and name not in found:
                    found[name] = path
    return found


def libcuda() -> ctypes.CDLL:
    return ctypes.CDLL("libcuda.so.1")


def cu_device_count() -> tuple[int, int]:
    count = ctypes.c_int(-1)
    status = libcuda().cuDeviceGetCount(ctypes.byref(count))
    return status, count.value


def scenario_versions(directory: Path) -> dict[str, Any]:
    import importlib.metadata

    import torch

    info: dict[str, Any] = {
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "python": sys.version.split()[0],
    }
    for package in ("nvidia-cuda-cupti", "nvidia-cuda-cupti-cu13", "nvidia-cuda-cupti-cu12"):
        try:
            info[f"pip {package}"] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    x = torch.ones(1 << 20, device=device())
    sync()
    if not REHEARSAL:
        info["gpu"] = torch.cuda.get_device_name()
        version = ctypes.c_int(0)
        libcuda().cuDriverGetVersion(ctypes.byref(version))
        info["cuDriverGetVersion"] = version.value
    start(directory, "versions")
    import smppy

    with smppy.annotate("versions"):
        launches(x, 5)
    sync()
    stop_s = stop()
    trace = Trace(directory, "versions")
    h = trace.header
    info.update(
        {
            "collector": trace.cuda_collector(),
            "header cupti_version": h.get("cupti_version"),
            "header cuda_driver_version": h.get("cuda_driver_version"),
            "header gpu_timebase": h.get("gpu_timebase"),
            "kernels": len(trace.under("versions")),
            "stop_s": round(stop_s, 3),
            **{
                f"loaded {k}": v
                for k, v in loaded_libraries("libcupti.so", "libcudart.so", "libcuda.so").items()
            },
        }
    )
    ok = trace.cuda_collector() == "active" and len(trace.under("versions")) == 5
    return {"outcome": "INFO" if ok else "FAIL", **info}


def scenario_idle3(directory: Path) -> dict[str, Any]:
    import smppy
    import torch

    idle_s = 0.2 if REHEARSAL else 5.0
    x = torch.ones(1 << 20, device=device())
    launches(x, 5)
    sync()
    sessions = []
    ok = True
    for i in (1, 2, 3):
        name = f"idle{i}"
        start(directory, name)
        time.sleep(idle_s)  # the GPU idles inside the session
        t0 = time.monotonic_ns()  # CLOCK_MONOTONIC, the trace's clock
        with smppy.annotate("launch50"):
            launches(x, 50)
        sync()
        t1 = time.monotonic_ns()
        stop()
        trace = Trace(directory, name)
        kernels = trace.under("launch50")
        outside = [k for k in kernels if k["ts_ns"] < t0 or k["ts_ns"] + k["dur_ns"] > t1]
        early, min_gap = trace.before_launch()
        first = min((k["ts_ns"] for k in kernels), default=None)
        losses = trace.losses()
        session = {
            "session": i,
            "collector": trace.cuda_collector(),
            "kernels": len(kernels),
            "all_kernels": len(trace.kernels),
            **losses,
            "outside_t0_t1": len(outside),
            "before_launch": early,
            "min_kernel_minus_launch_us": min_gap,
            "first_kernel_after_t0_us": round((first - t0) / 1e3, 1) if first is not None else None,
            "zero_ts_in_trace": sum(k["ts_ns"] == 0 for k in kernels),
        }
        sessions.append(session)
        ok &= (
            len(kernels) == 50
            and not outside
            and early == 0
            and all(v == 0 for v in losses.values())
            and trace.cuda_collector() == "active"
        )
    return {"outcome": "PASS" if ok else "FAIL", "sessions": sessions}


def cuinit(directory: Path, with_torch: bool) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if with_torch:
        import torch

        result["torch_cuda_initialized_before"] = torch.cuda.is_initialized()
    import smppy

    try:
        result["before_start"] = cu_device_count()
    except OSError as error:
        return {"outcome": "SKIP", "why": f"libcuda.so.1: {error}"}
    start(directory, "cuinit")
    with smppy.annotate("one"):
        time.sleep(0.05)
    after = cu_device_count()
    result["after_start_and_annotation"] = after
    result["torch_in_sys_modules"] = "torch" in sys.modules
    loaded = loaded_libraries("libcupti.so", "libcudart.so")
    stop()
    result["after_stop"] = cu_device_count()
    trace = Trace(directory, "cuinit")
    result["collector"] = trace.cuda_collector()
    result["header cupti_version"] = trace.header.get("cupti_version")
    result["loaded"] = loaded
    if with_torch:
        result["torch_cuda_initialized_after"] = torch.cuda.is_initialized()
    if result["before_start"][0] != CUDA_ERROR_NOT_INITIALIZED:
        result["outcome"] = "INFO"
        result["why"] = "the driver was initialised before smprof started: nothing to conclude"
    else:
        result["outcome"] = "PASS" if after[0] == CUDA_ERROR_NOT_INITIALIZED else "FAIL"
        result["verdict"] = (
            "smprof left CUDA uninitialised"
            if after[0] == CUDA_ERROR_NOT_INITIALIZED
            else "smprof initialised CUDA (cuDeviceGetCount succeeds after start)"
        )
    return result


def scenario_cuinit(directory: Path) -> dict[str, Any]:
    return cuinit(directory, with_torch=False)


def scenario_cuinit_torch(directory: Path) -> dict[str, Any]:
    return cuinit(directory, with_torch=True)


def scenario_queued(directory: Path) -> dict[str, Any]:
    import smppy
    import torch

    count = 300
    # 1 GiB on the GPU: each multiply reads and writes it (~0.5 ms on an H200),
    # so most of the 300 are still queued at stop.
    x = torch.ones((1 << 28) if not REHEARSAL else (1 << 16), device=device())
    launches(x, 2)
    sync()
    start(directory, "queued")
    with smppy.annotate("queued"):
        launches(x, count)
    pending = None if REHEARSAL else not torch.cuda.current_stream().query()
    stop_s = stop()
    drained = None if REHEARSAL else torch.cuda.current_stream().query()
    sync()
    trace = Trace(directory, "queued")
    kernels = trace.under("queued")
    losses = trace.losses()
    early, _ = trace.before_launch()
    ok = len(kernels) == count and all(v == 0 for v in losses.values()) and early == 0
    return {
        "outcome": "PASS" if ok else "FAIL",
        "launched": count,
        "kernels": len(kernels),
        "queued_at_stop": pending,
        "gpu_idle_after_stop": drained,
        "stop_s": round(stop_s, 3),
        **losses,
        "before_launch": early,
        "contexts_synchronized": trace.report.get("contexts_synchronized", "missing"),
        "synchronize_failure": trace.report.get("synchronize_failure", ""),
        "foreign_client": trace.report.get("foreign_client", ""),
    }


def scenario_graphs(directory: Path) -> dict[str, Any]:
    import smppy
    import torch

    if REHEARSAL:
        return {"outcome": "SKIP", "why": "CUDA graphs need a GPU"}
    x = torch.ones(1 << 20, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        launches(x, 3)
    torch.cuda.current_stream().wait_stream(side)
    sync()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launches(x, 20)
    sync()
    sessions = []
    ok = True
    for i in (1, 2):
        name = f"graph{i}"
        start(directory, name)
        with smppy.annotate("replay"):
            for _ in range(10):
                graph.replay()
        sync()
        stop()
        trace = Trace(directory, name)
        kernels = trace.kernels
        graph_kernels = [k for k in kernels if k.get("graph_id")]
        launch_rows = [a for a in trace.by_type["api"] if "GraphLaunch" in a["name"]]
        launch_ids = {a["correlation_id"] for a in launch_rows}
        linked_any = [k for k in graph_kernels if k["correlation_id"] in trace.api]
        linked_launch = [k for k in graph_kernels if k["correlation_id"] in launch_ids]
        wrong_links = [
            (k["correlation_id"], trace.api[k["correlation_id"]]["name"])
            for k in graph_kernels
            if k["correlation_id"] in trace.api and k["correlation_id"] not in launch_ids
        ]
        attributed = [k for k in graph_kernels if trace.annotation_of.get(k["correlation_id"]) == "replay"]
        early, min_gap = trace.before_launch()
        session = {
            "session": i,
            "collector": trace.cuda_collector(),
            "kernels": len(kernels),
            "graph_kernels": len(graph_kernels),
            "graph_launch_api_rows": len(launch_rows),
            "distinct_kernel_corr_ids": len({k["correlation_id"] for k in graph_kernels}),
            "linked_to_graph_launch": len(linked_launch),
            "linked_to_other_api": len(wrong_links),
            "other_api_names": sorted({n for _, n in wrong_links})[:5],
            "unlinked": len(graph_kernels) - len(linked_any),
            "attributed_to_replay": len(attributed),
            "before_launch": early,
            "min_kernel_minus_launch_us": min_gap,
            **trace.losses(),
        }
        sessions.append(session)
        ok &= len(graph_kernels) == 200 and len(linked_launch) == 200 and len(attributed) == 200
    expected = torch.full_like(x, 1.0001 ** (3 + 20 * 20))
    correct = bool(torch.allclose(x, expected, rtol=1e-3))
    return {"outcome": "PASS" if ok else "FAIL", "replay_result_correct": correct, "sessions": sessions}


def scenario_capture(directory: Path) -> dict[str, Any]:
    import smppy
    import torch

    if REHEARSAL:
        return {"outcome": "SKIP", "why": "CUDA graph capture needs a GPU"}
    x = torch.ones(1 << 20, device="cuda")
    static_in = torch.zeros(1 << 20, device="cuda")
    launches(x, 3)
    sync()
    start(directory, "capture")
    with smppy.annotate("before"):
        launches(x, 20)
    graph = torch.cuda.CUDAGraph()
    capturing, stopped = threading.Event(), threading.Event()
    held: dict[str, Any] = {}

    def capture() -> None:
        try:
            with torch.cuda.graph(graph):  # capture_error_mode "global", as torch.compile's cudagraphs
                y = static_in * 2
                capturing.set()
                held["stop_returned_during_capture"] = stopped.wait(15)
                for _ in range(10):
                    y = y + 1
                held["y"] = y
            held["capture"] = "ok"
        except Exception as error:  # noqa: BLE001 - the finding is which error
            held["capture"] = f"{type(error).__name__}: {error}"[:300]
        capturing.set()

    thread = threading.Thread(target=capture, daemon=True)
    thread.start()
    capturing.wait(30)
    time.sleep(0.1)
    stop_error = ""
    try:
        stop_s = stop()
    except Exception as error:  # noqa: BLE001
        stop_s, stop_error = -1.0, f"{type(error).__name__}: {error}"[:300]
    stopped.set()
    thread.join(30)
    result: dict[str, Any] = {
        "capture": held.get("capture", "thread still running"),
        "stop_returned_during_capture": held.get("stop_returned_during_capture"),
        "stop_s": round(stop_s, 3),
        "stop_error": stop_error,
    }
    replay_ok = False
    if held.get("capture") == "ok":
        try:
            static_in.fill_(3.0)
            graph.replay()
            sync()
            replay_ok = bool(torch.all(held["y"] == 16.0))
            result["replay"] = "correct" if replay_ok else f"wrong: {held['y'][:4].tolist()}"
        except Exception as error:  # noqa: BLE001
            result["replay"] = f"{type(error).__name__}: {error}"[:300]
    try:
        torch.cuda.synchronize()
        result["cuda_ok_after"] = True
    except Exception as error:  # noqa: BLE001
        result["cuda_ok_after"] = f"{type(error).__name__}: {error}"[:200]
    trace = Trace(directory, "capture")
    result.update(
        {
            "kernels_before": len(trace.under("before")),
            "contexts_synchronized": trace.report.get("contexts_synchronized", "missing"),
            "synchronize_failure": trace.report.get("synchronize_failure", ""),
        }
    )
    result["outcome"] = "PASS" if replay_ok and not stop_error else "FAIL"
    return result


def scenario_spin(directory: Path) -> dict[str, Any]:
    import smppy
    import torch

    if REHEARSAL:
        return {"outcome": "SKIP", "why": "torch.cuda._sleep needs a GPU"}
    spin_s = 8.0
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)
    begin.record()
    torch.cuda._sleep(200_000_000)
    end.record()
    sync()
    cycles_per_ms = 200_000_000 / begin.elapsed_time(end)
    start(directory, "spin")
    with smppy.annotate("spin"):
        launched = time.monotonic()
        torch.cuda._sleep(int(cycles_per_ms * spin_s * 1000))
    time.sleep(1.0)
    running = not torch.cuda.current_stream().query()
    at_stop = time.monotonic()
    stop_s = stop()
    finished_at_return = torch.cuda.current_stream().query()
    sync()
    kernel_s = time.monotonic() - launched
    trace = Trace(directory, "spin")
    spins = trace.under("spin")
    bounded = stop_s < 5.0
    return {
        "outcome": "PASS" if bounded else "FAIL",
        "verdict": "stop returned before the kernel ended"
        if bounded
        else "stop waited for the kernel: no deadline",
        "kernel_running_at_stop": running,
        "kernel_left_at_stop_s": round(kernel_s - (at_stop - launched), 2),
        "stop_s": round(stop_s, 2),
        "kernel_finished_when_stop_returned": finished_at_return,
        "spin_kernel_recorded": len(spins),
        "spin_kernel_dur_s": round(spins[0]["dur_ns"] / 1e9, 2) if spins else None,
        "contexts_synchronized": trace.report.get("contexts_synchronized", "missing"),
        "synchronize_failure": trace.report.get("synchronize_failure", ""),
        "incomplete": trace.report.get("incomplete_records", "missing"),
    }


def scenario_sleep_forever(directory: Path) -> dict[str, Any]:
    """Not a probe: tests the parent's HANG path (--only sleep_forever)."""
    time.sleep(3600)
    return {"outcome": "PASS"}


def child(name: str, directory: Path) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    try:
        result = globals()[f"scenario_{name}"](directory)
    except Exception as error:  # noqa: BLE001 - reported as the row
        import traceback

        traceback.print_exc()
        result = {"outcome": "ERROR", "error": f"{type(error).__name__}: {error}"[:400]}
    print(RESULT_PREFIX + json.dumps(result, default=str), flush=True)
    return 0


# ---------------------------------------------------------------- parent side


def gpu_present() -> str | None:
    """The GPU's name and driver from nvidia-smi, or None."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def run_scenario(name: str, limit: float, out: Path) -> dict[str, Any]:
    log = out / f"{name}.log"
    began = time.monotonic()
    with open(log, "w") as sink:
        process = subprocess.Popen(
            [sys.executable, "-u", os.path.abspath(__file__), "--child", name, str(out / name)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            status = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            status = None
    elapsed = round(time.monotonic() - began, 1)
    text = log.read_text(errors="replace")
    print(f"---- {name}: {elapsed} s, exit {status} ----")
    print(text.rstrip()[-6000:])
    lines = [line for line in text.splitlines() if line.startswith(RESULT_PREFIX)]
    if status is None and lines:  # the scenario finished; the process's exit hung
        result = json.loads(lines[-1][len(RESULT_PREFIX) :])
        result["outcome"] = f"{result['outcome']}/EXIT-HANG"
        result["why"] = f"result printed, then the process did not exit: killed after {limit:.0f} s"
        result["elapsed_s"] = elapsed
        return result
    if status is None:
        return {"outcome": "HANG", "why": f"killed after {limit:.0f} s", "elapsed_s": elapsed}
    if not lines:
        tail = " | ".join(text.strip().splitlines()[-3:])[-300:]
        return {"outcome": "CRASH", "why": f"exit {status}, no result: {tail}", "elapsed_s": elapsed}
    result = json.loads(lines[-1][len(RESULT_PREFIX) :])
    result["elapsed_s"] = elapsed
    return result


def numbers(result: dict[str, Any]) -> str:
    skip = {"outcome", "elapsed_s", "sessions"}
    parts = [f"{k}={v}" for k, v in result.items() if k not in skip]
    for session in result.get("sessions", []):
        parts.append("[" + ", ".join(f"{k}={v}" for k, v in session.items()) + "]")
    return "; ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="gpu_probe_out")
    parser.add_argument("--budget", type=float, default=230.0, help="seconds for all scenarios together")
    parser.add_argument("--only", default="", help="comma-separated scenario names")
    parser.add_argument("--cpu-rehearsal", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("NAME", "DIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child[0], Path(args.child[1]))

    if args.cpu_rehearsal:
        os.environ["GPU_PROBE_REHEARSAL"] = "1"
        gpu = "none (CPU rehearsal: rows say nothing about a GPU)"
    else:
        gpu = gpu_present()
        if gpu is None:
            print("gpu_probe: no GPU here (nvidia-smi is missing or lists no GPU): nothing probed")
            return 2
    names = [n for n in args.only.split(",") if n] or list(SCENARIOS)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    print(f"gpu_probe: GPU {gpu}; Python {sys.executable} {sys.version.split()[0]}; out {out}", flush=True)
    deadline = time.monotonic() + args.budget
    results: dict[str, dict[str, Any]] = {}
    for name in names:
        left = deadline - time.monotonic() - 2
        limit = min(SCENARIOS.get(name, 10), left)
        if limit < 8:
            results[name] = {"outcome": "NOT RUN", "why": f"budget: {left:.0f} s left"}
            continue
        results[name] = run_scenario(name, limit, out)
        print(
            f"gpu_probe: {name}: {results[name]['outcome']} ({results[name].get('elapsed_s')} s)", flush=True
        )
    (out / "probe.json").write_text(json.dumps({"gpu": gpu, "results": results}, indent=1, default=str))
    print("\n==== gpu_probe table ====")
    width = max(len(n) for n in results)
    for name, result in results.items():
        print(f"{result['outcome']:<8} {name:<{width}}  {numbers(result)}")
    bad = [
        n
        for n, r in results.items()
        if r["outcome"] in ("HANG", "CRASH", "ERROR", "NOT RUN") or "HANG" in r["outcome"]
    ]
    print(f"gpu_probe: {len(results) - len(bad)} ran, {len(bad)} hung/crashed/not run: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
