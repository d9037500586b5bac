"""Residual clock error after alignment: two gloo ranks on one host, rank 1's
realtime clock shifted on purpose (bench/shifted_clock_job.py), the shift
recovered by the analysis (docs/ANALYSIS.md, "One clock across hosts").

    python3 bench/clock_alignment_benchmark.py [--runs 5]

Per run: the injected shift, the correction the summary applies to rank 1,
the residual error (correction + shift: the true offset between the ranks'
clocks is the shift), the measured uncertainty, the residual as a share of
it, and the error left without correction (the baseline: the shift itself)
as a ratio to the residual. Also the wall time of a round (first send to
last answer of rank 1's start round, from its samples).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from smppy import analysis
from smppy.analysis.trace import find_trace_files, open_trace

REPO = Path(__file__).resolve().parents[1]
SHIFTS_NS = (-(3600 * 10**9 + 123_456_789), 250_000, -1_500_000, 7 * 10**9 + 1, 0)


def run_job(traces: Path, shift_ns: int) -> None:
    subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         str(REPO / "bench" / "shifted_clock_job.py"), str(traces), str(shift_ns)],
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        check=True,
        capture_output=True,
        timeout=600,
    )  # fmt: skip


def round_duration_ns(traces: Path) -> int:
    for file in find_trace_files(traces):
        trace = open_trace(file)
        for _ in trace.frames():
            pass
        if trace.header["rank"] == 1:
            samples = trace.footer["clock_alignments"][0]["samples"]
            return samples[-1]["local_receive_ns"] - samples[0]["local_send_ns"]
    raise RuntimeError("no rank 1 trace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=len(SHIFTS_NS))
    args = parser.parse_args()
    print(f"{'shift ns':>16} {'correction ns':>16} {'residual ns':>12} {'uncertainty ns':>15} "
          f"{'resid/unc':>9} {'uncorrected/residual':>21} {'round us':>9}")  # fmt: skip
    residuals, uncertainties = [], []
    for i in range(args.runs):
        shift = SHIFTS_NS[i % len(SHIFTS_NS)]
        with tempfile.TemporaryDirectory() as tmp:
            traces = Path(tmp)
            run_job(traces, shift)
            rank1 = next(p for p in analysis.summarize(traces)["job"]["processes"] if p["rank"] == 1)
            duration = round_duration_ns(traces)
        residual = rank1["clock_correction_ns"] + shift
        uncertainty = rank1["clock_correction_uncertainty_ns"]
        residuals.append(abs(residual))
        uncertainties.append(uncertainty)
        ratio = f"{abs(shift) / max(abs(residual), 1):.0f}x" if shift else "-"
        print(f"{shift:>16} {rank1['clock_correction_ns']:>16} {residual:>12} {uncertainty:>15} "
              f"{abs(residual) / max(uncertainty, 1):>9.2f} {ratio:>21} {duration / 1000:>9.0f}")  # fmt: skip
    print(
        f"median |residual| {statistics.median(residuals):.0f} ns, max {max(residuals)} ns; "
        f"median uncertainty {statistics.median(uncertainties):.0f} ns; "
        f"every residual within its uncertainty: {all(r <= u for r, u in zip(residuals, uncertainties))}"
    )


if __name__ == "__main__":
    main()
