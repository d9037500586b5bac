"""``collective_imbalance`` on summaries of two-rank jobs (real summaries of synthetic traces: a
desynchronised gloo job aborts before its traces are written): different input bytes in one
instance, another op at the same sequence number and different call counts are each found and
named with their ranks; the same bytes, all-to-all's uneven splits and counts a profiled window's
end apart are not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import synthetic_trace as st
from smppy import analysis
from smppy.diagnose import collective_imbalance, diagnose


def _job(
    directory: Path, op: str, rank1_bytes_at_2: int = 4096, calls=(3, 3), rank1_op_at_2=None
) -> dict[str, Any]:
    pb = st.pb()
    for rank in (0, 1):
        frame = pb.Frame(sequence=0)
        rows = []
        for k in range(1, calls[rank] + 1):
            nbytes = rank1_bytes_at_2 if (rank, k) == (1, 2) else 4096
            name = rank1_op_at_2 if (rank, k) == (1, 2) and rank1_op_at_2 else op
            rows.append((k * 10_000_000 + rank * 1_000_000, 50_000, name, "0", 2, rank, k, nbytes, 7))
        st.add_collectives(frame, rows)
        header = st.header(host="host-a", rank=rank, world_size=2, realtime_ns=1_700_000_000_000_000_000)
        header.pid = 10 + rank
        st.write_trace(directory / f"rank{rank}.smprof", header, [frame], pb.Footer(frames_written=1))
    return analysis.summarize(directory)


def test_different_bytes_in_one_instance_are_named_with_their_ranks(tmp_path: Path) -> None:
    summary = _job(tmp_path, "allreduce_", 8192)
    (finding,) = collective_imbalance.detect(summary)
    assert finding.id == "collective_imbalance" and finding.severity == "high"
    assert finding.evidence["kind"] == "bytes"
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


def test_another_op_at_the_same_sequence_number_is_named_with_both_ranks(tmp_path: Path) -> None:
    summary = _job(tmp_path, "allreduce_", rank1_op_at_2="broadcast_")
    assert summary["collectives"]["instances_op_differ"] == 1
    (finding,) = collective_imbalance.detect(summary)
    assert finding.evidence["kind"] == "op"
    assert finding.evidence["examples"] == [
        {
            "group": "0",
            "sequence": 2,
            "rank": 0,
            "op": "allreduce_",
            "other_rank": 1,
            "other_op": "broadcast_",
        }
    ]
    assert "#2 of group 0: rank 0 called allreduce_, rank 1 broadcast_" in finding.title


def test_call_counts_that_differ_are_found_and_a_window_end_apart_is_not(tmp_path: Path) -> None:
    (finding,) = collective_imbalance.detect(_job(tmp_path / "twice", "allreduce_", calls=(10, 20)))
    assert finding.evidence["kind"] == "calls"
    assert finding.evidence["ops"] == [
        {"op": "allreduce_", "group": "0", "calls_min": 10, "rank_min": 0, "calls_max": 20, "rank_max": 1}
    ]
    assert "rank 0 10 times, rank 1 20 times" in finding.title
    assert collective_imbalance.detect(_job(tmp_path / "window", "allreduce_", calls=(10, 12))) == []
