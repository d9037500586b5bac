"""Writes the seed corpus of the trace reader fuzzer: small, valid trace files, written by
libsmprof's own TraceWriter (bench/synthetic_trace.py), that between them fill every table
a frame has, with and without compression and footer.

    python3 tests/fuzz/make_seed_corpus.py OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import synthetic_trace as st  # noqa: E402


def annotation_frame(sequence: int):
    frame = st.pb().Frame(sequence=sequence, dropped_total=sequence)
    st.add_annotations(frame, [(1000 + 100 * i, 50, f"step{i % 3}", 7 + i % 2, i % 2) for i in range(12)])
    st.add_counter(frame, "process.cpu", "percent", [(1000, 12.5), (2000, 50.0), (3000, 0.25)], 0.01)
    return frame


def gpu_frame(sequence: int):
    frame = st.pb().Frame(sequence=sequence)
    st.add_device(frame, id=0, name="H100", uuid="GPU-0", sm_count=132)
    st.add_context(frame, 1, 0)
    st.add_gpu_activities(
        frame,
        [
            {"start": 5000, "dur": 300, "name": "gemm", "correlation_id": 1, "grid": (4, 1, 1)},
            {"start": 5400, "dur": 40, "name": "Memcpy HtoD", "kind": 2, "bytes": 4096, "copy_kind": 1},
        ],
    )
    st.add_api_calls(frame, [(4900, 50, "cudaLaunchKernel", 7, 1), (5300, 60, "cudaMemcpyAsync", 7, 2)])
    st.add_markers(frame, [(4800, 700, "nvtx range", 7)])
    st.add_external_correlations(frame, [(1, 11, 5, "step0")])
    st.add_overheads(frame, [(6000, 20, "buffer flush", 0)])
    return frame


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    header = st.header(argv=["train.py", "--epochs", "1"], session_index=1)
    frames = [annotation_frame(0), gpu_frame(1), annotation_frame(2)]
    footer = st.pb().Footer(annotations_written=24, frames_written=3, next_file="rank0.0001.smprof")
    for level in (0, 3):
        st.write_trace(out / f"complete_level{level}.smprof", header, frames, footer, compression_level=level)
    st.write_trace(out / "no_footer.smprof", header, frames[:2], None, compression_level=3)
    st.write_trace(out / "header_only.smprof", header, [], st.pb().Footer(), compression_level=0)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
