"""A synthetic GPU training job whose traces exercise every aggregate of the summary: several
ranks on two hosts, rotated files, a second session, a truncated file and one whose header does not
read (written with bench/synthetic_trace.py)."""

from __future__ import annotations

import random
from pathlib import Path

import synthetic_trace as st

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000  # the wall clock of the job's start


def gpu_frame(rng: random.Random, sequence: int, start: int, device: int):
    """One frame of a training rank: steps with nested annotations, launches, their
    kernels and copies (some out of start order), external correlations, CPU counters."""
    frame = st.pb().Frame(sequence=sequence)
    frame.strings.append(b"")
    annotations, calls, work, correlations = [], [], [], []
    for step in range(4):
        t = start + step * 20 * MS
        annotations += [
            (t, 18 * MS, f"ProfilerStep#{sequence * 4 + step}", 1, 0),
            (t + MS, 8 * MS, "forward", 1, 1),
        ]
        for k in range(6):
            cid = sequence * 1000 + step * 10 + k + 1
            launch = t + MS + k * MS + rng.randrange(MS // 2)
            tid = 1 if k < 3 else 2  # the second thread launches outside every annotation: inferred
            calls.append((launch, 20_000, "cudaLaunchKernel", tid, cid))
            if k == 0:
                correlations.append((cid, cid, 5, "forward"))
            kind = 2 if k == 5 else 1
            work.append(
                {
                    "start": launch + rng.randrange(10_000, 3 * MS),
                    "dur": rng.randrange(1_000, 2 * MS),
                    "name": f"kernel_{rng.randrange(20)}" if kind == 1 else "copy",
                    "kind": kind,
                    "device": device,
                    "correlation_id": cid,
                    "precision": rng.randrange(10),
                    "bytes": 4096 if kind == 2 else 0,
                    "copy_kind": 1 if kind == 2 else 0,
                }
            )
    st.add_annotations(frame, annotations)
    st.add_api_calls(frame, calls)
    st.add_external_correlations(frame, correlations)
    st.add_gpu_activities(frame, work)
    st.add_device(frame, id=device, name="Synthetic GPU", uuid=f"GPU-{device}", sm_count=132)
    samples = [(start + i * 10 * MS, rng.randrange(101)) for i in range(1, 9)]
    st.add_counter(frame, "cpu.utilization", "percent", samples)
    st.add_counter(frame, "cpu0.utilization", "percent", samples[::2])
    return frame


def synthetic_gpu_job(root: Path, ranks: int = 5) -> Path:
    """``ranks`` ranks on two hosts, one session rotated over two files, a second
    session of one process, a truncated file and a file whose header does not read."""
    rng = random.Random(15)
    for rank in range(ranks):
        host = f"host-{rank % 2}"
        for session in (0, 1) if rank == 1 else (0,):
            files = 2 if rank == 2 else 1
            for index in range(files):
                start = T0 + rank * 3 * MS + session * 500 * MS + index * 200 * MS
                header = st.header(
                    host=host,
                    rank=rank,
                    world_size=ranks,
                    monotonic_ns=start - T0,
                    realtime_ns=start,
                    pid=100 + rank,
                    session_index=session,
                    file_index=index,
                )
                header.collectors.add(name="cuda", active=True)
                frames = [gpu_frame(rng, i, start - T0 + i * 90 * MS, rank % 2) for i in range(2)]
                footer = st.pb().Footer()
                footer.stop.monotonic_ns = start - T0 + 190 * MS
                footer.stop.realtime_ns = start + 190 * MS
                footer.annotations_dropped = rank
                footer.gpu_collection.incomplete_records = 1
                name = f"rank{rank}_s{session}" + (f".{index:04d}" if index else "") + ".smprof"
                st.write_trace(root / host / name, header, frames, footer)
    damaged = root / "host-1" / "rank3_s0.smprof"
    damaged.write_bytes(damaged.read_bytes()[:-300])
    (root / "host-0" / "not-a-trace.smprof").write_bytes(b"SMPROF\x00\x09 garbage")
    return root
