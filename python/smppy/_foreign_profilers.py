"""Other profilers already recording in this process when a session starts.

torch.profiler (Kineto) and smprof share CUPTI: Kineto registers its own
buffer and timestamp callbacks at each start and disables the activity kinds
it enabled at its stop, so either profiler may lose GPU records
(docs/GPU.md, "Collection: other CUPTI users"). Only looked for when torch is
already imported: smppy never imports it.
"""

from __future__ import annotations

import sys


def torch_profiler_active() -> bool:
    """Whether torch's autograd profiler (torch.profiler.profile, Kineto) is recording now."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    try:
        return bool(torch._C._autograd._profiler_enabled())
    except (AttributeError, RuntimeError):  # a torch without it, or half imported
        return False


def foreign_profiler_warning() -> str | None:
    """The warning start_profiling gives when another profiler records, else None."""
    if not torch_profiler_active():
        return None
    return (
        "torch.profiler is recording in this process; it shares CUPTI with smprof, so GPU records of "
        "either may be missing (the trace's footer counts what smprof saw: gpu_collection). Stop "
        "torch.profiler before start_profiling(), or set EnableCuda=0 for this run"
    )
