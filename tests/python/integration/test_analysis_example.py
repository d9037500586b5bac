"""The summary of the real example training run (2 ranks under torchrun) counts the steps
and annotations the script made."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLE_STEPS
from smppy import analysis

pytestmark = [pytest.mark.slow, pytest.mark.torch]


def test_example_run_summary_matches_what_the_script_did(example_job: Path) -> None:
    s = analysis.summarize(example_job)
    assert s["job"]["ranks"] == [0, 1]
    assert s["steps"]["stats"]["count"] == 2 * EXAMPLE_STEPS
    assert [p["stats"]["count"] for p in s["steps"]["per_rank"]] == [EXAMPLE_STEPS, EXAMPLE_STEPS]
    counts = {a["name"]: a["stats"]["count"] for a in s["annotations"]}
    for name in ("step", "Forward", "Loss", "Backward", "Optimizer"):
        assert counts[name] == 2 * EXAMPLE_STEPS, name
    assert all(f["complete"] for f in s["job"]["files"])
    steps = analysis.load(example_job).steps
    assert sorted(steps["step"]) == sorted(list(range(EXAMPLE_STEPS)) * 2)
