"""A job of three ranks whose traces each say the CUDA collector was off for the same reason: the
summary lists that warning once per process (tests of warning_groups.py: the CLI and the report)."""

from __future__ import annotations

from pathlib import Path

import synthetic_trace as st

NO_DRIVER = "no CUDA driver: libcuda.so.1 is not installed"
GROUPED = f"collector cuda off: {NO_DRIVER} (3 processes: ranks 0-2 on host host-a)"


def write_driverless_job(directory: Path) -> Path:
    for rank in range(3):
        header = st.header(rank=rank, world_size=3, pid=100 + rank)
        header.collectors.add(name="cuda", active=False, reason=NO_DRIVER)
        frame = st.pb().Frame(sequence=0)
        st.add_annotations(frame, [(1_000, 500, "step", 7, 0)])
        footer = st.pb().Footer(annotations_written=1, frames_written=1)
        footer.stop.monotonic_ns = 10_000
        st.write_trace(directory / f"rank{rank}.smprof", header, [frame], footer)
    return directory
