"""A frame's GPU tables as event dicts (what ``smprof dump --json`` prints).

The trace stores enums as integers (proto/smprof/trace.proto); events carry
their names: ``"kernel"``, ``"HtoD"``, ``"bf16"``, ``"communication"``.
docs/TRACE_FORMAT.md lists the fields of each event type.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# trace.GpuKind -> the event's "type".
GPU_KINDS = {1: "kernel", 2: "memcpy", 3: "memset", 4: "sync"}
# trace.KernelClass
KERNEL_CLASSES = {0: "unspecified", 1: "compute", 2: "communication", 3: "memory"}
# trace.Precision
PRECISIONS = {
    0: "unknown",
    1: "fp64",
    2: "fp32",
    3: "tf32",
    4: "fp16",
    5: "bf16",
    6: "fp8",
    7: "int8",
    8: "fp4",
    9: "int4",
}
# trace.CopyKind
MEMORY_KINDS = {
    0: "unknown",
    1: "pageable",
    2: "pinned",
    3: "device",
    4: "array",
    5: "managed",
    6: "device_static",
    7: "managed_static",
}
COPY_KINDS = {
    0: "unknown",
    1: "HtoD",
    2: "DtoH",
    3: "HtoA",
    4: "AtoH",
    5: "AtoA",
    6: "AtoD",
    7: "DtoA",
    8: "DtoD",
    9: "HtoH",
    10: "PtoP",
}
# ApiCalls.domain
API_DOMAINS = {1: "runtime", 2: "driver"}


def _rows(columns: dict[str, list[Any]]) -> Iterator[dict[str, Any]]:
    """The rows of a column dict, each as a dict of its fields."""
    keys = list(columns)
    for values in zip(*columns.values()):
        yield dict(zip(keys, values))


def _activity_event(row: dict[str, Any]) -> dict[str, Any]:
    kind = GPU_KINDS.get(row["kind"], "gpu")
    event: dict[str, Any] = {
        "type": kind,
        "name": row["name"],
        "ts_ns": row["start_ns"],
        "dur_ns": row["dur_ns"],
        "device": row["device"],
        "context": row["context"],
        "stream": row["stream"],
        "correlation_id": row["correlation_id"],
    }
    if kind == "kernel":
        event["kernel_class"] = KERNEL_CLASSES.get(row["kernel_class"], "unspecified")
        event["precision"] = PRECISIONS.get(row["precision"], "unknown")
        event["grid"] = list(row["grid"])
        event["block"] = list(row["block"])
        event["shared_memory_bytes"] = row["shared_memory_bytes"]
        event["registers_per_thread"] = row["registers_per_thread"]
    if kind in ("memcpy", "memset"):
        event["bytes"] = row["bytes"]
    if kind == "memcpy":
        event["copy_kind"] = COPY_KINDS.get(row["copy_kind"], "unknown")
        if row["copy_kind"] == 10:
            event["peer_device"] = row["peer_device"]
        event["src_memory"] = MEMORY_KINDS.get(row["src_memory_kind"], "unknown")
        event["dst_memory"] = MEMORY_KINDS.get(row["dst_memory_kind"], "unknown")
    if kind != "sync":
        event["graph_id"] = row["graph_id"]
        event["graph_node_id"] = row["graph_node_id"]
    return event


def frame_gpu_events(frame: dict[str, Any], origin: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The GPU events of one frame (from ``_smppy.TraceFile.next_frame``):
    devices and contexts first, then activities, API calls, external
    correlations, markers and overheads. ``origin`` (rank, host, pid) is
    added to each."""
    threads = frame["threads"]
    for device in frame["devices"]:
        major, minor = device["compute_capability"]
        yield {
            "type": "device",
            **{k: v for k, v in device.items() if k != "compute_capability"},
            "compute_capability": f"{major}.{minor}",
            **origin,
        }
    for context in frame["contexts"]:
        yield {"type": "context", **context, **origin}
    for row in _rows(frame["gpu"]):
        yield {**_activity_event(row), **origin}
    for row in _rows(frame["api_calls"]):
        yield {
            "type": "api",
            "name": row["name"],
            "ts_ns": row["start_ns"],
            "dur_ns": row["dur_ns"],
            "tid": row["tid"],
            "thread": threads.get(row["tid"], ""),
            "correlation_id": row["correlation_id"],
            "domain": API_DOMAINS.get(row["domain"], "unknown"),
            **origin,
        }
    for row in _rows(frame["external_correlations"]):
        yield {"type": "external_correlation", **row, **origin}
    for row in _rows(frame["markers"]):
        yield {
            "type": "marker",
            "name": row["name"],
            "domain": row["domain"],
            "ts_ns": row["start_ns"],
            "dur_ns": row["dur_ns"],
            "tid": row["tid"],
            "thread": threads.get(row["tid"], ""),
            **origin,
        }
    for row in _rows(frame["overheads"]):
        yield {
            "type": "overhead",
            "name": row["name"],
            "ts_ns": row["start_ns"],
            "dur_ns": row["dur_ns"],
            "tid": row["tid"],
            **origin,
        }
