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
whether the caller asked for ``async_op``, and the call's start and end.

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
    is_compiling = torch.compiler.is_compiling
    tensor_type = torch.Tensor
    record = _smppy.record_collective
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
                    record(
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
            except Exception:  # a group or tensor this torch shapes differently: the call is not recorded
                pass
            return result

        for key in KEYS:
            library.impl(name, kernel, key, with_keyset=True)
        _registered.append(name)
    # Kept alive for the process: the registrations last as long as the Library object.
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
