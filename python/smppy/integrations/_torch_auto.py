"""Automatic PyTorch mode (``TorchAutoSteps``, ``TorchModuleDepth``; docs/PYTORCH.md).

Global hooks, installed once per process when a session starts with torch
imported, or as soon as torch finishes importing:

- each ``optimizer.step()`` of the first optimizer that steps ends a step
  (``SMProfiler._auto_step``); a step's annotation opens at its first batch
  fetch, backward or optimizer step;
- ``DataLoader`` iterators' ``__next__`` is annotated ``InputWait``: the time
  the step waits for its next batch;
- the dataset fetch of each batch (in the DataLoader's worker processes, or
  in the main process without workers) is annotated ``DataLoaderFetch``: a
  forked worker's first one starts its trace (``EnableForkFollow``);
- ``Tensor.backward`` is annotated ``Backward``;
- ``torch.distributed.init_process_group`` and ``destroy_process_group`` take
  a clock-alignment round (``SMProfiler._align_clocks``) while a session runs: the
  start and stop rounds of a session that began before the process group;
- every collective and point-to-point call of a process group (the Python
  API, DDP's reducer, FSDP) is recorded with its group and sequence number
  (``_torch_collectives``), under ``TorchAutoSteps=1`` or
  ``TorchCollectives=1`` (the default: the API records them too);
- with ``TorchModuleDepth`` = N > 0, the forward of modules nested at most N
  deep is annotated ``nn.Module: ClassName``.

The hooks are installed when a run starts with either key on. Every hook
does nothing but a flag check unless the armed run has ``TorchAutoSteps=1``
(``SMProfiler._auto_steps``); the collectives' kernel, unless it records
(``SMProfiler._collectives``), and between runs it is out of the dispatcher's
path (``_torch_collectives.quiesce``).
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.util
import sys
import threading
import warnings
from importlib.machinery import ModuleSpec
from typing import TYPE_CHECKING, Any

from smppy import _smppy
from smppy.integrations import _torch_collectives

if TYPE_CHECKING:
    from smppy._profiler import SMProfiler

INPUT_WAIT = "InputWait"
FETCH = "DataLoaderFetch"
BACKWARD = "Backward"
MODULE_PREFIX = "nn.Module: "

_lock = threading.Lock()
_installed = False
_watching = False
_module_depth = 0  # the depth the module hooks honour; 0: they record nothing
_module_hooks_installed = False


def enable(profiler: SMProfiler, module_depth: int) -> None:
    """Install the hooks now if torch is imported, else when it is."""
    global _module_depth, _watching
    with _lock:
        _module_depth = module_depth
        if "torch" in sys.modules and hasattr(sys.modules["torch"], "optim"):
            _install(profiler)
        elif not _installed and not _watching:
            sys.meta_path.insert(0, _TorchImportWatcher(profiler))
            _watching = True


class _TorchImportWatcher(importlib.abc.MetaPathFinder):
    """Installs the hooks right after ``import torch`` completes."""

    def __init__(self, profiler: SMProfiler) -> None:
        self._profiler = profiler

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> ModuleSpec | None:
        if fullname != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader_exec = spec.loader.exec_module
        profiler = self._profiler

        def exec_module(module: Any) -> None:
            loader_exec(module)
            try:
                with _lock:
                    _install(profiler)
            except Exception as e:  # an unexpected torch: the training goes on, without the hooks
                profiler._auto_steps = profiler._collectives = False
                warnings.warn(
                    "TorchAutoSteps/TorchCollectives: the PyTorch hooks could not be installed "
                    f"({type(e).__name__}: {e})",
                    RuntimeWarning,
                    stacklevel=2,
                )

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _install(profiler: SMProfiler) -> None:
    global _installed, _module_hooks_installed
    import torch

    if not _installed:
        _installed = True
        _install_step_hooks(torch, profiler)
        _wrap_dataloader_next(torch, profiler)
        _wrap_dataset_fetch(profiler)
        _wrap_backward(torch, profiler)
        _wrap_process_group(torch, profiler)
        _torch_collectives.install(torch, profiler)
    if _module_depth > 0 and not _module_hooks_installed:
        _module_hooks_installed = True
        _install_module_hooks(torch, profiler)


def _install_step_hooks(torch: Any, profiler: SMProfiler) -> None:
    step_optimizer: list[int] = []  # id() of the optimizer whose steps end steps

    def pre_hook(optimizer: Any, args: Any, kwargs: Any) -> None:
        if profiler._auto_steps:
            profiler._ensure_step()

    def post_hook(optimizer: Any, args: Any, kwargs: Any) -> None:
        if not profiler._auto_steps:
            return
        if not step_optimizer:
            step_optimizer.append(id(optimizer))
        if step_optimizer[0] == id(optimizer):
            profiler._auto_step()

    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    register_optimizer_step_pre_hook(pre_hook)
    register_optimizer_step_post_hook(post_hook)


def _wrap_dataloader_next(torch: Any, profiler: SMProfiler) -> None:
    from torch.utils.data.dataloader import _BaseDataLoaderIter as iterator_class

    original = iterator_class.__next__
    annotate = _smppy.annotate

    @functools.wraps(original)
    def __next__(self: Any) -> Any:
        if not profiler._auto_steps:
            return original(self)
        profiler._ensure_step()
        with annotate(INPUT_WAIT):
            return original(self)

    iterator_class.__next__ = __next__


def _wrap_dataset_fetch(profiler: SMProfiler) -> None:
    from torch.utils.data._utils.fetch import _IterableDatasetFetcher, _MapDatasetFetcher

    annotate = _smppy.annotate
    for fetcher_class in (_MapDatasetFetcher, _IterableDatasetFetcher):
        original = fetcher_class.fetch

        def fetch(self: Any, index: Any, _original: Any = original) -> Any:
            if not profiler._auto_steps:
                return _original(self, index)
            with annotate(FETCH):
                return _original(self, index)

        fetcher_class.fetch = functools.wraps(original)(fetch)


def _wrap_backward(torch: Any, profiler: SMProfiler) -> None:
    original = torch.Tensor.backward
    annotate = _smppy.annotate

    @functools.wraps(original)
    def backward(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not profiler._auto_steps:
            return original(self, *args, **kwargs)
        profiler._ensure_step()
        with annotate(BACKWARD):
            return original(self, *args, **kwargs)

    torch.Tensor.backward = backward


def _wrap_process_group(torch: Any, profiler: SMProfiler) -> None:
    """A clock-alignment round when a running session sees the process group begin or end."""
    dist = torch.distributed
    if not dist.is_available():
        return
    from torch.distributed import distributed_c10d

    original_init = distributed_c10d.init_process_group
    original_destroy = distributed_c10d.destroy_process_group

    @functools.wraps(original_init)
    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        result = original_init(*args, **kwargs)
        if _smppy.is_profiling():
            profiler._align_clocks("start")
        return result

    @functools.wraps(original_destroy)
    def destroy_process_group(*args: Any, **kwargs: Any) -> Any:
        if _smppy.is_profiling() and not args and kwargs.get("group") is None:
            profiler._align_clocks("stop")
        return original_destroy(*args, **kwargs)

    for module in (dist, distributed_c10d):
        module.init_process_group = init_process_group
        module.destroy_process_group = destroy_process_group


class _ModuleStack(threading.local):
    def __init__(self) -> None:
        self.handles: list[int] = []


def _install_module_hooks(torch: Any, profiler: SMProfiler) -> None:
    stack = _ModuleStack()

    def pre_hook(module: Any, args: Any) -> None:
        handles = stack.handles
        if profiler._auto_steps and len(handles) < _module_depth:
            handles.append(_smppy.annotation_begin(MODULE_PREFIX + type(module).__name__))
        else:
            handles.append(0)

    def post_hook(module: Any, args: Any, output: Any) -> None:
        handles = stack.handles
        if handles:
            handle = handles.pop()
            if handle:
                _smppy.annotation_end(handle)

    from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

    register_module_forward_pre_hook(pre_hook)
    register_module_forward_hook(post_hook, always_call=True)
