"""``collective_imbalance`` on summaries of two-rank jobs (real summaries of synthetic traces: a
desynchronised gloo job aborts before its traces are written): different input bytes in one
instance are found and named with their ranks, the same bytes and all-to-all's uneven splits are
not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import synthetic_trace as st
from smppy import analysis
from smppy.diagnose import collective_imbalance, diagnose


def _job(directory: Path, op: str, rank1_bytes_at_2: int) -> dict[str, Any]:
    pb = st.pb()
    for rank in (0, 1):
        frame = pb.Frame(sequence=0)
        rows = []
        for k in (1, 2, 3):
            nbytes = rank1_bytes_at_2 if (rank, k) == (1, 2) else 4096
            rows.append((k * 10_000_000 + rank * 1_000_000, 50_000, op, "0", 2, rank, k, nbytes, 7))
        st.add_collectives(frame, rows)
        header = st.header(host="host-a", rank=rank, world_size=2, realtime_ns=1_700_000_000_000_000_000)
        header.pid = 10 + rank
        st.write_trace(directory / f"rank{rank}.smprof", header, [frame], pb.Footer(frames_written=1))
    return analysis.summarize(directory)


def test_different_bytes_in_one_instance_are_named_with_their_ranks(tmp_path: Path) -> None:
    summary = _job(tmp_path, "allreduce_", 8192)
    (finding,) = collective_imbalance.detect(summary)
    assert finding.id == "collective_imbalance" and finding.severity == "high"
    assert finding.evidence["instances_bytes_differ"] == 1 and finding.evidence["ops"] == ["allreduce_"]
    (example,) = finding.evidence["examples"]
    assert example == {
        "op": "allreduce_",
        "group": "0",
        "sequence": 2,
        "bytes_min": 4096,
        "rank_min": 0,
        "bytes_max": 8192,
        "rank_max": 1,
    }
    assert "allreduce_ #2 of group 0: rank 0 passed 4096 B, rank 1 8192 B" in finding.title
    assert "TORCH_DISTRIBUTED_DEBUG=DETAIL" in finding.recommendation
    assert any(f.id == "collective_imbalance" for f in diagnose(summary))


def test_the_same_bytes_and_uneven_all_to_all_are_not_imbalance(tmp_path: Path) -> None:
    assert collective_imbalance.detect(_job(tmp_path / "same", "allreduce_", 4096)) == []
    uneven = _job(tmp_path / "alltoall", "alltoall_base_", 8192)
    assert uneven["collectives"]["instances_matched"] == 3
    assert collective_imbalance.detect(uneven) == []
