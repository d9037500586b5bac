"""Collective calls of ``torch.distributed`` recorded (``TorchCollectives``, ``TorchAutoSteps``;
docs/PYTORCH.md "Collectives").

Since PyTorch 2.0 every process-group operation goes through the dispatcher
as a ``c10d`` op (``torch/csrc/distributed/c10d/Ops.cpp``): the Python API,
DDP's reducer buckets (C++, never through the Python functions) and FSDP's
all-gathers and reduce-scatters alike. A Python kernel registered for those
ops at the Autograd dispatch keys sees each call, times it, and passes it on
with ``redispatch`` below Autograd: the ops have no Autograd kernel of their
own (only CPU, CUDA, PrivateUse1, Meta and the sparse keys), so nothing is
displaced and the call runs exactly as before.

Each call is one row (``_smppy.record_collective``): op, process group (name,
size, this rank's index), the group's sequence number after the call (the
same on every rank for the same instance), bytes and dtype of the input,
whether the caller asked for ``async_op``, the call's start and end, and the
caller's ``Work.wait()`` on its result where Python calls it (``_Pending``):
the synchronous Python API's own wait, FSDP's, a script's. A call whose Work
Python never waits for (DDP's reducer waits in C++) is recorded once its Work
has completed, or at the run's end.

What it does not see: tensors made under ``torch.inference_mode`` (they
carry no Autograd key), and calls traced by ``torch.compile`` (fake tensors:
not recorded).

Between runs (``stop_profiling()`` to the next start) a fallthrough kernel
is registered over each of ours (``quiesce``): the dispatcher skips the
Autograd key again, and a collective costs what it did before smprof. A run's
start takes the fallthroughs away (``resume``). Both change the dispatch
table as the first registration does, from the thread that starts or stops
the run, between a training's steps.
"""

from __future__ import annotations

import threading
import time
import warnings
from typing import Any

from smppy import _smppy

# The c10d ops of a process group. Point-to-point calls are recorded too; the
# readers match only the collectives across ranks.
OPS = (
    "allreduce_",
    "allreduce_coalesced_",
    "allgather_",
    "_allgather_base_",
    "allgather_coalesced_",
    "allgather_into_tensor_coalesced_",
    "reduce_scatter_",
    "_reduce_scatter_base_",
    "reduce_scatter_tensor_coalesced_",
    "broadcast_",
    "reduce_",
    "gather_",
    "scatter_",
    "alltoall_",
    "alltoall_base_",
    "barrier",
    "monitored_barrier_",
    "send",
    "recv_",
    "recv_any_source_",
)
_PROCESS_GROUP_TYPE = "__torch__.torch.classes.c10d.ProcessGroup"


class _OpShape:
    """Where an op's process group, input tensors and ``async_op`` flag are among its arguments."""

    def __init__(self, schema: Any) -> None:
        names = [a.name for a in schema.arguments]
        types = [str(a.type) for a in schema.arguments]
        self.group = types.index(_PROCESS_GROUP_TYPE)
        tensors = [
            i for i, t in enumerate(types) if "Tensor" in t
        ]  # Tensor, List[Tensor], Optional[Tensor], ...
        inputs = [i for i in tensors if names[i].startswith("input")]
        self.input = inputs[0] if inputs else tensors[0]
        self.input_name = names[self.input]
        self.async_op = names.index("async_op") if "async_op" in names else -1


class _Pending:
    """Calls whose Work was returned, until Python waits for it (recorded with the wait), it
    completes or the run ends (recorded without one). Each holds its Work's Python object, so that
    the object the caller gets is the same one (pybind11 finds it registered), whose ``wait`` the
    patched ``Work.wait`` looks up; at most ``LIMIT``, so a Work nobody waits for is held only until
    it completes or ``LIMIT`` newer calls."""

    LIMIT = 64

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # id(work) -> (work, the row's fields up to its end, the calling thread's native id)
        self._calls: dict[int, tuple[Any, tuple[Any, ...], int]] = {}

    def add(self, work: Any, row: tuple[Any, ...], tid: int) -> None:
        done = []
        with self._lock:
            while self._calls:  # the oldest that completed, or past the limit, are recorded now
                key = next(iter(self._calls))
                oldest = self._calls.get(key)
                if oldest is not None and len(self._calls) < self.LIMIT and not oldest[0].is_completed():
                    break
                if self._calls.pop(key, None) is not None:  # not taken by a wait meanwhile
                    done.append(oldest)
            self._calls[id(work)] = (work, row, tid)
        for _, fields, caller in done:
            _record(fields, 0, 0, caller)

    def take(self, work: Any) -> tuple[tuple[Any, ...], int] | None:
        """The row and thread of the call ``work`` came from, if it waits to be recorded."""
        entry = self._calls.pop(id(work), None)  # atomic: no lock on the wait's path
        return (entry[1], entry[2]) if entry is not None else None

    def flush(self) -> None:
        """Records every call still pending, without a wait (the run ends)."""
        with self._lock:
            entries = list(self._calls.values())
            self._calls.clear()
        for _, fields, caller in entries:
            _record(fields, 0, 0, caller)


def _record(row: tuple[Any, ...], wait_start_ns: int, wait_end_ns: int, tid: int) -> None:
    _smppy.record_collective(*row, wait_start_ns, wait_end_ns, tid)


_pending = _Pending()


def flush() -> None:
    """Records the calls still waiting for their Work (before a session stops)."""
    _pending.flush()


def _work_of(result: Any, unbox: Any, script_object: type) -> Any:
    """The Work among an op's results (its last one, or the result itself), or None."""
    last = result[-1] if isinstance(result, tuple) and result else result
    if type(last) is not script_object:
        return None
    try:
        return unbox(last)
    except Exception:  # not a Work
        return None


def _patch_wait(work_type: Any) -> None:
    """``Work.wait`` timed for the calls in ``_pending``: one dict lookup for any other Work."""
    original = work_type.wait

    def wait(self: Any, *args: Any, **kwargs: Any) -> Any:
        call = _pending.take(self)
        if call is None:
            return original(self, *args, **kwargs)
        start = time.monotonic_ns()
        try:
            return original(self, *args, **kwargs)
        finally:
            _record(call[0], start, time.monotonic_ns(), call[1])

    wait.__doc__ = original.__doc__
    work_type.wait = wait


def _tensors(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return [value]


def install(torch: Any, profiler: Any) -> None:
    """Registers the recording kernel for every c10d op this torch has (once per process)."""
    if not torch.distributed.is_available():
        return
    library = torch.library.Library("c10d", "IMPL")
    after_autograd = torch._C._after_autograd_keyset
    unbox = torch._C._distributed_c10d.ProcessGroup.unbox
    work_type = torch._C._distributed_c10d.Work
    unbox_work = work_type.unbox
    script_object = torch.ScriptObject
    is_compiling = torch.compiler.is_compiling
    tensor_type = torch.Tensor
    native_id = threading.get_native_id
    for name in OPS:
        packet = getattr(torch.ops.c10d, name, None)
        if packet is None:
            continue
        op = packet.default
        shape = _OpShape(op._schema)

        def kernel(
            keyset: Any, *args: Any, _op: Any = op, _name: str = name, _shape: _OpShape = shape, **kwargs: Any
        ):
            if not profiler._collectives or is_compiling():
                return _op.redispatch(keyset & after_autograd, *args, **kwargs)
            tid = native_id()
            start = time.monotonic_ns()
            result = _op.redispatch(keyset & after_autograd, *args, **kwargs)
            end = time.monotonic_ns()
            try:
                inputs = _tensors(
                    args[_shape.input] if _shape.input < len(args) else kwargs[_shape.input_name]
                )
                if all(type(t) is tensor_type for t in inputs):
                    group = unbox(args[_shape.group] if _shape.group < len(args) else kwargs["process_group"])
                    async_op = True
                    if 0 <= _shape.async_op < len(args):
                        async_op = bool(args[_shape.async_op])
                    elif "async_op" in kwargs:
                        async_op = bool(kwargs["async_op"])
                    row = (
                        _name,
                        group.group_name,
                        group.size(),
                        group.rank(),
                        group._get_sequence_number_for_group(),
                        sum(t.numel() * t.element_size() for t in inputs),
                        str(inputs[0].dtype).removeprefix("torch.") if inputs else "",
                        async_op,
                        start,
                        end,
                    )
                    work = _work_of(result, unbox_work, script_object)
                    if work is None:
                        _record(row, 0, 0, tid)
                    else:  # recorded at its wait, its completion or the run's end
                        _pending.add(work, row, tid)
            except Exception:  # a group or tensor this torch shapes differently: the call is not recorded
                pass
            return result

        for key in KEYS:
            library.impl(name, kernel, key, with_keyset=True)
        _registered.append(name)
    # Kept alive for the process: the registrations last as long as the Library object.
    _patch_wait(work_type)
    global _library, _torch
    _library, _torch = library, torch


def quiesce() -> None:
    """Puts a fallthrough over each of our kernels (a run ended): none of ours runs until ``resume``."""
    global _quiet
    if _library is None or _quiet is not None:
        return
    quiet = _torch.library.Library("c10d", "IMPL")
    with warnings.catch_warnings():  # torch's "Overriding a previously registered kernel"
        warnings.simplefilter("ignore")
        for name in _registered:
            for key in KEYS:
                quiet.impl(name, _torch.library.fallthrough_kernel, key)
    _quiet = quiet


def resume() -> None:
    """Takes the fallthroughs away (a run starts): our kernels are back in the dispatcher's path."""
    global _quiet
    if _quiet is not None:
        _quiet._destroy()
        _quiet = None


KEYS = ("AutogradCPU", "AutogradCUDA")
_library: Any = None  # our kernels, for the process
_torch: Any = None
_registered: list[str] = []  # the ops they are registered for
_quiet: Any = None  # the fallthroughs over them between runs
