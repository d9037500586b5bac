"""The example training script on 2 ranks under torchrun: one file per rank."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import EXAMPLE_JOB, EXAMPLE_STEPS, read_annotations
from smppy.analysis.trace import find_trace_files, open_trace

pytestmark = [pytest.mark.slow, pytest.mark.torch]


def test_two_rank_torchrun_writes_one_file_per_rank(example_job: Path) -> None:
    files = find_trace_files(example_job)
    assert len(files) == 2
    headers = [open_trace(f).header for f in files]
    assert sorted(h["rank"] for h in headers) == [0, 1]
    assert {h["world_size"] for h in headers} == {2}
    assert {h["rank_source"] for h in headers} == {"torchrun"}
    assert {h["job"] for h in headers} == {EXAMPLE_JOB}
    assert len({h["pid"] for h in headers}) == 2
    for f in files:
        counts = Counter(e["name"] for e in read_annotations(f))
        assert counts == {
            name: EXAMPLE_STEPS for name in ("step", "Forward", "Loss", "Backward", "Optimizer")
        }
