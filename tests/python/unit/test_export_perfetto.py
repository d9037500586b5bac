"""`smprof export --format perfetto`: the protobuf trace decoded back with the protobuf library (through
a test-only subset of Perfetto's protos, perfetto_trace_subset.proto) and replayed the way a trace
processor reads it: interned names per sequence, slices from begin/end events in time order."""

from __future__ import annotations

import functools
import gzip
import importlib
import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import export_job as job
import pytest
import synthetic_trace as st
from smppy import cli

HERE = Path(__file__).resolve().parents[1] / "support"  # perfetto_trace_subset.proto
SEQUENCE_CLEARED, SEQUENCE_NEEDS_STATE = 1, 2
BEGIN, END, COUNTER = 1, 2, 4


@functools.cache
def perfetto_pb2():
    out = Path(tempfile.mkdtemp(prefix="smprof-perfetto-pb2-"))
    proto = "perfetto_trace_subset.proto"
    subprocess.run(["protoc", f"-I{HERE}", f"--python_out={out}", str(HERE / proto)], check=True)
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module("perfetto_trace_subset_pb2")
    finally:
        sys.path.remove(str(out))


@dataclass
class Decoded:
    packets: list = field(default_factory=list)
    tracks: dict = field(default_factory=dict)  # uuid -> TrackDescriptor
    slices: dict = field(default_factory=lambda: defaultdict(list))  # uuid -> [(name, start, end, args)]
    counters: dict = field(default_factory=lambda: defaultdict(list))  # uuid -> [(ts, value)]
    flows_out: dict = field(default_factory=dict)  # flow id -> (uuid, name)
    flows_in: dict = field(default_factory=dict)


def decode(path: Path) -> Decoded:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    trace = perfetto_pb2().Trace()
    trace.ParseFromString(data)
    d = Decoded(packets=list(trace.packet))
    # Interned names belong to a packet sequence (each rank process writes its own, so that workers
    # can write them apart): iid -> name per trusted_packet_sequence_id.
    names: dict[int, dict[int, str]] = defaultdict(dict)
    arg_names: dict[int, dict[int, str]] = defaultdict(dict)
    events = []
    for order, p in enumerate(d.packets):
        if p.HasField("track_descriptor"):
            d.tracks[p.track_descriptor.uuid] = p.track_descriptor
            continue
        sequence = p.trusted_packet_sequence_id
        if p.sequence_flags & SEQUENCE_CLEARED:
            names[sequence].clear()
            arg_names[sequence].clear()
        if p.track_event.HasField("name_iid"):  # uses interned state, so says so
            assert p.sequence_flags in (SEQUENCE_CLEARED, SEQUENCE_NEEDS_STATE)
        names[sequence].update((n.iid, n.name) for n in p.interned_data.event_names)
        arg_names[sequence].update((n.iid, n.name) for n in p.interned_data.debug_annotation_names)
        e = p.track_event
        assert e.track_uuid in d.tracks, "an event before its track's descriptor"
        name = names[sequence][e.name_iid] if e.type == BEGIN else None
        args = {
            arg_names[sequence][a.name_iid]: a.string_value if a.HasField("string_value") else a.int_value
            for a in e.debug_annotations
        }
        events.append((p.timestamp, order, e, name, args))
    stacks = defaultdict(list)
    for ts, _, e, name, args in sorted(events, key=lambda x: (x[0], x[1])):
        if e.type == BEGIN:
            stacks[e.track_uuid].append((name, ts, args))
            for flow in e.flow_ids:
                d.flows_out[flow] = (e.track_uuid, name)
            for flow in e.terminating_flow_ids:
                d.flows_in[flow] = (e.track_uuid, name)
        elif e.type == END:
            name, start, args = stacks[e.track_uuid].pop()
            d.slices[e.track_uuid].append((name, start, ts, args))
        else:
            assert e.type == COUNTER
            d.counters[e.track_uuid].append((ts, e.double_counter_value))
    assert not any(stacks.values()), "slices left open"
    return d


def export(tmp_path: Path, *args: str, name: str = "trace.perfetto-trace") -> Decoded:
    out = tmp_path / name
    assert cli.main(["export", str(tmp_path / "job"), "--format", "perfetto", "-o", str(out), *args]) == 0
    return decode(out)


@pytest.fixture
def decoded(tmp_path: Path) -> Decoded:
    job.write_job(tmp_path / "job")
    return export(tmp_path)


def by_name(d: Decoded) -> dict[str, int]:
    out = {}
    for uuid, t in d.tracks.items():
        label = t.process.process_name if t.HasField("process") else t.thread.thread_name or t.name
        out.setdefault(label, uuid)
    return out


def process_of(d: Decoded, uuid: int) -> str:
    t = d.tracks[uuid]
    pid = t.thread.pid if t.HasField("thread") else d.tracks[t.parent_uuid].process.pid
    (name,) = [
        x.process.process_name for x in d.tracks.values() if x.HasField("process") and x.process.pid == pid
    ]
    return name


def test_processes_and_tracks_are_described(decoded: Decoded) -> None:
    processes = {t.process.process_name for t in decoded.tracks.values() if t.HasField("process")}
    assert processes == {
        "host-a",
        "host-a / rank 0 (pid 100)",
        "host-a / rank 1 (pid 101)",
        "host-b",
        "host-b / rank 2 (pid 200)",
    }
    threads = [t for t in decoded.tracks.values() if t.HasField("thread")]
    assert sorted(t.thread.tid for t in threads) == [1001, 1101, 2001]
    assert {t.thread.thread_name for t in threads} == {"python"}
    named = by_name(decoded)
    assert process_of(decoded, named["GPU 0 stream 7"]) == "host-a / rank 0 (pid 100)"
    assert decoded.tracks[named["cpu0.utilization"]].counter.unit_name == "percent"


def test_slices_nest_on_one_wall_clock_with_interned_names(decoded: Decoded) -> None:
    annotations = [
        s
        for uuid, slices in decoded.slices.items()
        if decoded.tracks[uuid].HasField("thread")
        for s in slices
    ]
    assert Counter(s[0] for s in annotations) == {
        **{f"step_{k}": 3 for k in range(job.STEPS)},
        "Forward": 3 * job.STEPS,
        "inner": 3 * job.STEPS,
    }
    for name, start, end, _ in annotations:
        if name.startswith("step_"):
            assert start == job.JOB_START_NS + job.STEP_MS * int(name[5:]) * job.MS
            assert end - start == 8 * job.MS
    # Each name is interned once per rank process's packet sequence: sent with its first use there.
    sent = Counter(
        (p.trusted_packet_sequence_id, n.name) for p in decoded.packets for n in p.interned_data.event_names
    )
    sequences = {sequence for sequence, _ in sent}
    assert len(sequences) == len(job.RANKS)
    assert all(sent[sequence, "Forward"] == 1 for sequence in sequences)
    assert sum(sent[sequence, job.KERNEL] for sequence in sequences) == 1
    flags = defaultdict(list)
    for p in decoded.packets:
        if p.track_event.HasField("name_iid"):
            flags[p.trusted_packet_sequence_id].append(p.sequence_flags)
    for sequence_flags in flags.values():
        assert sequence_flags[0] == SEQUENCE_CLEARED and set(sequence_flags[1:]) == {SEQUENCE_NEEDS_STATE}


def test_kernels_args_and_flows(decoded: Decoded) -> None:
    named = by_name(decoded)
    kernels = decoded.slices[named["GPU 0 stream 7"]]
    assert len(kernels) == job.STEPS
    name, start, end, args = kernels[0]
    assert name == job.KERNEL and end - start == job.MS
    assert args["grid"] == "128x2x1" and args["precision"] == "bf16" and args["correlation_id"] == 10
    launches = decoded.slices[named["CUDA API python (1001)"]]
    assert [s[0] for s in launches] == ["cudaLaunchKernel"] * job.STEPS
    assert len(decoded.flows_out) == job.STEPS
    assert decoded.flows_out.keys() == decoded.flows_in.keys()
    for flow in decoded.flows_out:
        assert decoded.flows_out[flow] == (named["CUDA API python (1001)"], "cudaLaunchKernel")
        assert decoded.flows_in[flow] == (named["GPU 0 stream 7"], job.KERNEL)


def test_counters(decoded: Decoded) -> None:
    named = by_name(decoded)
    cpu = decoded.counters[named["cpu0.utilization"]]
    assert cpu == [(job.JOB_START_NS + ms * job.MS, v) for ms, v in job.CPU0_UTILIZATION]
    assert process_of(decoded, named["cpu0.utilization"]) == "host-a"
    cpu_tracks = [u for u, t in decoded.tracks.items() if t.name == "cpu0.utilization"]
    assert len(cpu_tracks) == 1  # once per host
    gpu = decoded.counters[named["gpu0.utilization"]]
    assert [(round((ts - job.JOB_START_NS) / job.MS), v) for ts, v in gpu][:3] == [
        (0, 0.0),
        (2, 100.0),
        (3, 0.0),
    ]


def test_ranks_and_gzip(tmp_path: Path) -> None:
    job.write_job(tmp_path / "job")
    d = export(tmp_path, "--ranks", "2", name="trace.perfetto-trace.gz")
    processes = {t.process.process_name for t in d.tracks.values() if t.HasField("process")}
    assert processes == {"host-b", "host-b / rank 2 (pid 200)"}


def _collective_job(directory: Path) -> Path:
    """Two ranks, three all-reduces each (sequences 1-3) at 10, 20 and 30 ms; rank 1 arrives 2 ms
    after rank 0 at each."""
    pb = st.pb()
    for rank in (0, 1):
        frame = pb.Frame(sequence=0)
        tid = 100 + rank
        st.add_annotations(frame, [(k * 10 * job.MS, 5 * job.MS, f"step_{k}", tid, 0) for k in range(1, 4)])
        st.add_collectives(
            frame,
            [
                ((k * 10 + 2 * rank) * job.MS, 50_000, "allreduce_", "0", 2, rank, k, 4096, tid)
                for k in range(1, 4)
            ],
        )
        header = st.header(host="host-a", rank=rank, world_size=2, realtime_ns=job.JOB_START_NS)
        header.pid = 4000 + rank
        st.write_trace(directory / f"rank{rank}.smprof", header, [frame], pb.Footer(frames_written=1))
    return directory


def test_collectives_are_slices_chained_across_ranks_by_their_instance(tmp_path: Path) -> None:
    """Each rank's collective call is a slice on its thread with its group and sequence; every rank
    gives an instance the same flow id, which Perfetto chains in time order (first arriver to
    last): one flow per instance, through one slice of each rank."""
    _collective_job(tmp_path / "job")
    decoded = export(tmp_path)
    calls = []
    flows = defaultdict(list)  # flow id -> (timestamp, track)
    for p in decoded.packets:
        e = p.track_event
        if e.type == BEGIN and e.flow_ids and e.track_uuid in decoded.tracks:
            for flow in e.flow_ids:
                flows[flow].append((p.timestamp, e.track_uuid))
    for uuid, slices in decoded.slices.items():
        calls += [(uuid, s) for s in slices if s[0] == "c10d::allreduce_"]
    assert len(calls) == 6
    assert sorted(args["sequence"] for _, (_, _, _, args) in calls) == [1, 1, 2, 2, 3, 3]
    assert {args["group"] for _, (_, _, _, args) in calls} == {"0"}
    assert {(args["group_size"], args["bytes"], args["dtype"]) for _, (*_, args) in calls} == {
        (2, 4096, "float32")
    }
    assert len(flows) == 3
    rank_tracks = {uuid for uuid, _ in calls}
    assert len(rank_tracks) == 2
    for chain in flows.values():
        assert {track for _, track in chain} == rank_tracks
        (first, _), (last, _) = sorted(chain)
        assert last - first == 2 * job.MS  # rank 1 arrives 2 ms later

    out = tmp_path / "trace.json"
    assert cli.main(["export", str(tmp_path / "job"), "--format", "chrome", "-o", str(out)]) == 0
    events = json.loads(out.read_text())["traceEvents"]
    chrome_calls = [e for e in events if e.get("cat") == "collective"]
    assert len(chrome_calls) == 6 and {e["name"] for e in chrome_calls} == {"c10d::allreduce_"}
    assert sorted(e["args"]["sequence"] for e in chrome_calls) == [1, 1, 2, 2, 3, 3]
    # Kineto's names of record_param_comms, which HTA reads: 4096 B of float32 are 1024 elements.
    kineto = ("Collective name", "Process Group Name", "Group size", "In msg nelems")
    assert {tuple(e["args"][k] for k in kineto) for e in chrome_calls} == {("allreduce", "0", 2, 1024)}
    # One flow per instance (flow v2 on the slices): begun by rank 0's call, the first to arrive,
    # ended by rank 1's; the id is the Perfetto export's, as hex text.
    pid_rank = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    by_id = defaultdict(dict)
    for e in chrome_calls:
        by_id[e["bind_id"]]["rank 1" if "rank 1" in pid_rank[e["pid"]] else "rank 0"] = e
    assert {int(i, 16) for i in by_id} == set(flows)
    for chain in by_id.values():
        first, last = chain["rank 0"], chain["rank 1"]
        assert (first.get("flow_out"), first.get("flow_in")) == (True, None)
        assert (last.get("flow_out"), last.get("flow_in")) == (None, True)
    # An export of one rank has no flow to draw: no rank to link to.
    one = tmp_path / "rank0.json"
    assert (
        cli.main(["export", str(tmp_path / "job"), "--format", "chrome", "--ranks", "0", "-o", str(one)]) == 0
    )
    assert not [e for e in json.loads(one.read_text())["traceEvents"] if "bind_id" in e]
