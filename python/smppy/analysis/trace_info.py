"""What ``smprof info`` reports about a rank file: metadata, counts, span."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smppy.analysis.gpu_events import GPU_KINDS
from smppy.analysis.session_end import end_of_file
from smppy.analysis.trace import open_trace

# The GPU tables of a frame, counted by what ``smprof info`` calls them.
_GPU_TABLES = {
    "api_calls": "api_calls",
    "external_correlations": "external_correlations",
    "markers": "markers",
    "overheads": "overheads",
}


@dataclass
class NameStats:
    count: int = 0
    total_ns: int = 0
    max_ns: int = 0


@dataclass
class TraceInfo:
    path: Path
    header: dict[str, Any]
    footer: dict[str, Any] | None
    problem: str | None
    frames: int = 0
    annotations: int = 0
    dropped: int = 0
    first_ns: int | None = None
    last_ns: int | None = None
    threads: set[int] = field(default_factory=set)
    counter_samples: int = 0
    counters: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    names: dict[str, NameStats] = field(default_factory=lambda: defaultdict(NameStats))
    # GPU records by kind ("kernel", "memcpy", ..., "api_calls", "markers", ...)
    gpu: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    gpu_devices: list[dict[str, Any]] = field(default_factory=list)
    gpu_dropped: int = 0  # lost in smprof's bounded buffers
    collectives: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # calls by op
    collectives_dropped: int = 0  # refused by smprof's bounded buffer
    cupti_dropped: int = 0  # lost inside CUPTI (footer only)
    gpu_collection: dict[str, Any] | None = None  # the footer's GpuCollectionReport
    # Frames that could not be written (disk full, ...), their annotations, the last error (footer only)
    frames_lost_to_write_errors: int = 0
    annotations_lost_to_write_errors: int = 0
    refused_open_limit: int = 0  # annotation_begin past 4096 open ranges on a thread (footer only)
    names_cut: int = 0  # names cut at 16 KiB (footer only)
    names_refused: int = 0  # names past the name table's limits (footer only)
    last_write_error: str = ""

    @property
    def status(self) -> str:
        if self.footer is None and (self.problem is None or "no footer" in self.problem):
            return "incomplete: no footer (the process did not stop profiling, or is still writing)"
        if self.problem:
            return f"damaged: {self.problem}"
        return "complete"

    @property
    def span_ns(self) -> int:
        """Session length: start to stop, or to the last event without a footer."""
        start = self.header["start"]["monotonic_ns"]
        if self.footer is not None:
            return self.footer["stop"]["monotonic_ns"] - start
        return (self.last_ns - start) if self.last_ns is not None else 0

    def gpu_lines(self) -> list[str]:
        """``smprof info``'s lines about GPU collection; none for a CPU-only file."""
        h = self.header
        if not (self.gpu or self.gpu_devices or self.gpu_dropped or self.cupti_dropped or h["cupti_version"]):
            return []
        order = [
            "kernel",
            "memcpy",
            "memset",
            "sync",
            "api_calls",
            "markers",
            "overheads",
            "external_correlations",
        ]
        counts = ", ".join(f"{self.gpu[k]} {k.replace('_', ' ')}" for k in order if self.gpu.get(k))
        lines = [
            f"  gpu: {counts or 'no records'}; dropped {self.gpu_dropped} (smprof buffers)"
            f" + {self.cupti_dropped} (CUPTI)"
        ]
        if h["cupti_version"]:
            versions = f"  cupti {h['cupti_version']}  driver {h['cuda_driver_version']}"
            lines.append(f"{versions}  timebase: {h['gpu_timebase']}")
            if h["cupti_library"]:
                lines.append(f"  libcupti: {h['cupti_library']}")
        lines.extend(_gpu_collection_lines(self.gpu_collection))
        for d in self.gpu_devices:
            lines.append(
                f"  gpu {d['id']}: {d['name']}  sm {d['compute_capability']}  {d['sm_count']} SMs"
                f"  {d['global_memory_bytes'] / 2**30:.1f} GiB  {d['uuid']}"
            )
        return lines

    @property
    def end(self) -> dict[str, Any] | None:
        """How the session ended (``session_end.end_of_file``); None for a file it continued after."""
        return end_of_file(self.footer)

    def to_json(self) -> dict[str, Any]:
        h = self.header
        return {
            "path": str(self.path),
            "status": self.status,
            "problem": self.problem,
            "host": h["host"],
            "rank": h["rank"],
            "local_rank": h["local_rank"],
            "world_size": h["world_size"],
            "job": h["job"],
            "rank_source": h["rank_source"],
            "pid": h["pid"],
            "argv": h["argv"],
            "library_version": h["library_version"],
            "session_index": h["session_index"],
            "file_index": h["file_index"],
            "previous_file": h["previous_file"],
            "next_file": self.footer["next_file"] if self.footer else "",
            "end": self.end,
            "start_realtime_ns": h["start"]["realtime_ns"],
            "span_ns": self.span_ns,
            "frames": self.frames,
            "annotations": self.annotations,
            "dropped": self.dropped,
            "threads": len(self.threads),
            "counter_samples": self.counter_samples,
            "counters": dict(sorted(self.counters.items())),
            "forked_child": h["forked_child"],
            "parent_trace": h["parent_trace"],
            "perf_events": h["perf_events"],
            "perf_per_cpu_reason": h["perf_per_cpu_reason"],
            "collectors": h["collectors"],
            "gpu": dict(sorted(self.gpu.items())),
            "gpu_dropped": self.gpu_dropped,
            "collectives": dict(sorted(self.collectives.items())),
            "collectives_dropped": self.collectives_dropped,
            "cupti_dropped": self.cupti_dropped,
            "gpu_collection": self.gpu_collection,
            "frames_lost_to_write_errors": self.frames_lost_to_write_errors,
            "annotations_lost_to_write_errors": self.annotations_lost_to_write_errors,
            "refused_open_limit": self.refused_open_limit,
            "annotation_names_cut": self.names_cut,
            "annotation_names_refused": self.names_refused,
            "last_write_error": self.last_write_error,
            "gpu_devices": self.gpu_devices,
            "cupti_version": h["cupti_version"],
            "cuda_driver_version": h["cuda_driver_version"],
            "gpu_timebase": h["gpu_timebase"],
            "cupti_library": h["cupti_library"],
            "config": h["config"],
            "names": {
                name: {"count": s.count, "total_ns": s.total_ns, "max_ns": s.max_ns}
                for name, s in sorted(self.names.items())
            },
        }


def read_info(path: Path) -> TraceInfo:
    """Read a whole rank file (frame by frame) and summarise it."""
    trace = open_trace(path)
    info = TraceInfo(path=path, header=trace.header, footer=None, problem=None)
    for frame in trace.frames():
        info.frames += 1
        info.dropped = max(info.dropped, frame["dropped_total"])
        a = frame["annotations"]
        info.annotations += len(a["start_ns"])
        info.threads.update(a["tid"])
        for start, dur, name in zip(a["start_ns"], a["dur_ns"], a["name"]):
            s = info.names[name]
            s.count += 1
            s.total_ns += dur
            s.max_ns = max(s.max_ns, dur)
            info.first_ns = start if info.first_ns is None else min(info.first_ns, start)
            info.last_ns = start + dur if info.last_ns is None else max(info.last_ns, start + dur)
        counters = frame["counters"]
        info.counter_samples += len(counters["name"])
        for name in counters["name"]:
            info.counters[name] += 1
        _count_gpu(info, frame)
        for op in frame["collectives"]["op"]:
            info.collectives[op] += 1
        info.collectives_dropped = max(info.collectives_dropped, frame["collectives_dropped_total"])
    info.footer = trace.footer
    info.problem = trace.problem
    if info.footer is not None:
        info.dropped = info.footer["annotations_dropped"]
        info.gpu_dropped = info.footer["gpu_records_dropped"]
        info.collectives_dropped = info.footer["collectives_dropped"]
        info.cupti_dropped = info.footer["cupti_records_dropped"]
        info.gpu_collection = info.footer["gpu_collection"]
        info.frames_lost_to_write_errors = info.footer["frames_lost_to_write_errors"]
        info.annotations_lost_to_write_errors = info.footer["annotations_lost_to_write_errors"]
        info.refused_open_limit = info.footer["annotations_refused_open_limit"]
        info.names_cut = info.footer["annotation_names_cut"]
        info.names_refused = info.footer["annotation_names_refused"]
        info.last_write_error = info.footer["last_write_error"]
    return info


# The footer's GpuCollectionReport counts, as smprof info words them.
_GPU_COLLECTION_COUNTS = [
    ("incomplete_records", "unfinished at stop"),
    ("zero_timestamp_records", "finished but stamped 0 by CUPTI"),
    ("invalid_records", "end before start"),
    ("foreign_timebase_records", "on another clock"),
    ("unknown_kind_records", "of kinds not decoded"),
    ("unreadable_buffers", "buffers cut short"),
    ("truncated_buffers", "buffers truncated"),
    ("marker_overflow", "NVTX starts over the bound"),
    ("marker_unmatched_end", "NVTX ends unpaired"),
    ("buffers_not_returned", "buffers never returned"),
    ("foreign_buffers", "buffers of another client"),
]


def _gpu_collection_lines(report: dict[str, Any] | None) -> list[str]:
    if report is None:
        return []
    counts = ", ".join(f"{report[key]} {words}" for key, words in _GPU_COLLECTION_COUNTS if report[key])
    lines = [
        f"  gpu collection: waited for {report['contexts_synchronized']} contexts at stop;"
        f" records dropped: {counts or 'none'}"
    ]
    if report["synchronize_failure"]:
        lines.append(f"  gpu wait at stop failed: {report['synchronize_failure']}")
    if report["synchronize_skipped"]:
        lines.append(f"  gpu wait at stop skipped: {report['synchronize_skipped']}")
    if report["foreign_timebase_records"]:
        lines.append("  gpu timebase: records stamped on another clock were dropped (another CUPTI client?)")
    if report["foreign_client"]:
        lines.append(f"  another CUDA profiler in the process: {report['foreign_client']}")
    return lines


def _count_gpu(info: TraceInfo, frame: dict[str, Any]) -> None:
    info.gpu_dropped = max(info.gpu_dropped, frame["gpu_dropped_total"])
    for kind in frame["gpu"]["kind"]:
        info.gpu[GPU_KINDS.get(kind, "other")] += 1
    for table, label in _GPU_TABLES.items():
        if rows := len(next(iter(frame[table].values()))):
            info.gpu[label] += rows
    for device in frame["devices"]:
        if all(d["id"] != device["id"] for d in info.gpu_devices):
            major, minor = device["compute_capability"]
            info.gpu_devices.append({**device, "compute_capability": f"{major}.{minor}"})
