"""smppy: an in-process profiler for deep-learning training.

A drop-in for SageMaker Profiler scripts::

    import smppy

    config = smppy.Config()
    config.profiler = {"EnableCuda": "1"}
    profiler = smppy.SMProfiler.instance()
    profiler.configure(config)
    profiler.start_profiling()
    for step in range(steps):
        with smppy.annotate("step"):
            ...
    profiler.stop_profiling()

Steps and a schedule as torch.profiler's: ``profiler.configure(config,
schedule=smppy.schedule(wait=1, warmup=1, active=3))`` and ``profiler.step()``
at the end of each step; PyTorch optimizer steps are counted by themselves.

``import smprof`` gives the same module. Set ``SMP_DISABLE=1`` to turn every
call into a no-op without changing the script.
"""

from smppy import _annotations, _smppy  # noqa: F401  (_annotations registers the decorator)
from smppy._clock_alignment import Exchange, TorchStoreExchange, align_clocks
from smppy._profiler import Config, SMProfiler
from smppy._schedule import ProfilerAction, Schedule, schedule

annotate = _smppy.annotate
annotation_begin = _smppy.annotation_begin
annotation_end = _smppy.annotation_end
__version__: str = _smppy.version()

__all__ = [
    "Config",
    "Exchange",
    "ProfilerAction",
    "SMProfiler",
    "Schedule",
    "TorchStoreExchange",
    "align_clocks",
    "annotate",
    "annotation_begin",
    "annotation_end",
    "schedule",
    "__version__",
]
