"""`GeGraphRunner`: runs one `ge_graphs` plan entry (docs/execution-plan.md) with the numpy kernels.

A planned entry (`plan-memory` ran) has `arena_bytes` and per-op `slots`: the runner allocates
the arena once (per thread that runs it). Ops in `OUT_FORMS` compute straight into their slot
(numpy's `out=`), in place where the plan says so and their form allows it; views stay views.
Other kernels allocate their results: a result that fits its slot stays where the kernel put it
(copying it into the arena measured slower than the allocation it saves), unless it looks into the
arena, which later ops overwrite: then it is copied into its slot. Every planned value is checked
against its slot. Outputs never alias the arena (one that would is copied), since the next run
reuses it.
`output_max_bytes` bounds each output: a larger result fails that run with a GeError.
"""
from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.om.plan import VIEW, ArenaSlot, GeGraph, GeInput, GeOp, Slot, Weight
from dfir.runtime.ge.kernels import KERNELS, Kernel

__all__ = ["OUT_FORMS", "GeGraphRunner", "OutForm", "available_cores", "checked_inputs", "checked_output_size"]

ARENA_ALIGNMENT = 64
"""The arena's start address is a multiple of this (slot offsets are planned relative to it)."""


class OutForm(NamedTuple):
    """A kernel's `out=` form: the same numbers as its `KERNELS` entry, written into a given array."""

    result: Callable[[Sequence[np.ndarray]], tuple[tuple[int, ...], np.dtype] | None]
    """args -> the result's (shape, dtype), or None when this form does not apply."""
    compute: Callable[[Sequence[np.ndarray], np.ndarray], None]
    """Compute into `out`."""
    over_operand: bool
    """Whether `out` may be an operand's own memory (element-wise: each element is read before
    the one written at its index). Where the plan put the result over a dying operand, the op's
    `ge` op has the InPlace trait (tests/dialects/test_ge_families.py holds the two together)."""


def _elementwise(ufunc: np.ufunc, floats_only: bool = False) -> OutForm:
    def result(args):
        dtype = np.result_type(*args)
        if floats_only and dtype.kind != "f":
            return None
        shapes = [a.shape for a in args]
        return (shapes[0] if shapes.count(shapes[0]) == len(shapes) else np.broadcast_shapes(*shapes)), dtype
    return OutForm(result, lambda args, out: ufunc(*args, out=out), over_operand=True)


def _matmul_result(args):
    a, b = args
    if a.ndim < 2 or b.ndim < 2:
        return None
    return (*np.broadcast_shapes(a.shape[:-2], b.shape[:-2]), a.shape[-2], b.shape[-1]), np.result_type(a, b)


OUT_FORMS: dict[str, OutForm] = {
    "add": _elementwise(np.add), "sub": _elementwise(np.subtract), "mul": _elementwise(np.multiply),
    "maximum": _elementwise(np.maximum), "minimum": _elementwise(np.minimum),
    "div": _elementwise(np.divide, floats_only=True), "sqrt": _elementwise(np.sqrt, floats_only=True),
    "exp": _elementwise(np.exp, floats_only=True), "log": _elementwise(np.log, floats_only=True),
    "tanh": _elementwise(np.tanh, floats_only=True),
    "relu": OutForm(lambda args: (args[0].shape, args[0].dtype),
                    lambda args, out: np.maximum(args[0], args[0].dtype.type(0), out=out), over_operand=True),
    "matmul": OutForm(_matmul_result, lambda args, out: np.matmul(args[0], args[1], out=out), over_operand=False),
}
"""Plan op name -> its kernel's `out=` form, for the ops that have one."""


@dataclass(frozen=True)
class _Step:
    """One op of the entry as the runner executes it."""

    op: GeOp
    kernel: Kernel
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    slots: tuple[Slot, ...] | None
    """Per result: its arena slot, `VIEW` or None (fresh); None: the op is unplanned."""
    into: OutForm | None
    """The op's `out=` form, when it has one and its one result has an arena slot."""
    donors: tuple[int, ...]
    """Operand positions planned in the result's slot, where its form may write over them: the op
    runs in place over them."""

    @staticmethod
    def of(op: GeOp, slot_of: dict[int, ArenaSlot]) -> _Step:
        slots = op.slots
        single = slots is not None and len(slots) == 1 and isinstance(slots[0], ArenaSlot)
        form = OUT_FORMS.get(op.op) if single else None
        over = form is not None and form.over_operand
        donors = tuple(i for i, v in enumerate(op.inputs) if over and slot_of.get(v) == slots[0])
        return _Step(op, KERNELS[op.op], op.inputs, op.outputs, slots, form, donors)


class GeGraphRunner:
    """Runs a GE graph plan entry with the reference kernels.

    `entry` is a `GeGraph`, or its JSON (validated with `GeGraph.from_json`, which also checks
    that values, weights and slots are consistent). `weights` is the model's WEIGHTS_DATA
    partition; each `const` op's array is a read-only view into it (no copy), located by the
    entry's `weights[attrs.weight]`. Building the runner checks that every op has a kernel and
    every weight lies inside the buffer; `run` checks the inputs against their declared dtype
    and dimension ranges, every planned value against its slot and every output against its
    `output_max_bytes`.
    """

    def __init__(self, entry: GeGraph | dict, weights: memoryview | bytes | None):
        entry = entry if isinstance(entry, GeGraph) else GeGraph.from_json(entry)
        self._name = entry.name
        self._inputs = entry.inputs
        self._outputs = entry.outputs
        for op in entry.ops:
            if op.op != "const" and op.op not in KERNELS:
                raise self._error(f"op '{op.name}' is a '{op.op}', which has no kernel")
        self._ops = entry.ops
        self._bound = self._bind_weights(entry.weights, weights)
        self._num_values = len(entry.inputs) + sum(len(op.outputs) for op in entry.ops)
        self._arena_bytes = entry.arena_bytes or 0
        slot_of = {v: s for op in entry.ops for v, s in zip(op.outputs, op.slots or ()) if isinstance(s, ArenaSlot)}
        self._steps = [_Step.of(op, slot_of) for op in entry.ops if op.op != "const"]
        self._max_bytes = entry.output_max_bytes or (-1,) * len(self._outputs)
        self._local = threading.local()

    @property
    def name(self) -> str:
        return self._name

    def run(self, inputs: Sequence[Any]) -> list[np.ndarray]:
        """The graph's outputs for `inputs` (arrays in input-index order); fresh arrays."""
        values: list[np.ndarray | None] = [None] * self._num_values
        for desc, array in zip(self._inputs, checked_inputs(self._name, self._inputs, inputs)):
            values[desc.value] = array
        for value_id, array in self._bound.items():
            values[value_id] = array
        arena = self._arena()
        owned: set[int] = set()  # values whose memory this run may overwrite once they die
        for step in self._steps:
            args = [values[i] for i in step.inputs]
            if step.slots is None:
                results = step.kernel(args, step.op.attrs)
            else:
                results = self._run_planned(step, args, owned, arena)
            for value_id, array in zip(step.outputs, results, strict=True):
                values[value_id] = array
        return [self._output(i, values[v], arena) for i, v in enumerate(self._outputs)]

    # --- arena ---

    def _arena(self) -> np.ndarray:
        """This thread's arena: allocated on its first run, 64-byte aligned, reused after."""
        arena = getattr(self._local, "arena", None)
        if arena is None:
            raw = np.empty(self._arena_bytes + ARENA_ALIGNMENT, dtype=np.uint8)
            start = -raw.ctypes.data % ARENA_ALIGNMENT
            arena = self._local.arena = raw[start:start + self._arena_bytes]
        return arena

    def _run_planned(self, step: _Step, args: list[np.ndarray], owned: set[int],
                     arena: np.ndarray) -> Sequence[np.ndarray]:
        form = step.into.result(args) if step.into is not None else None
        if form is not None:
            out = self._donor(step, args, owned, *form) if step.donors else None
            if out is None:
                out = self._slot_view(step, 0, *form, arena)
            step.into.compute(args, out)
            owned.add(step.outputs[0])
            return (out,)
        results = step.kernel(args, step.op.attrs)
        return [self._kept(step, i, array, args, owned, arena) for i, array in enumerate(results)]

    def _donor(self, step: _Step, args: list[np.ndarray], owned: set[int], shape: tuple[int, ...],
               dtype: np.dtype) -> np.ndarray | None:
        """An operand dying here, in the result's slot, that can hold the result: computing into
        it runs the op in place wherever the operand's memory is. A numpy scalar (what some ufuncs
        return for a 0-d operand) holds no memory to write into."""
        for position in step.donors:
            array = args[position]
            if (step.inputs[position] in owned and isinstance(array, np.ndarray) and array.shape == shape
                    and array.dtype == dtype and array.flags.c_contiguous):
                return array
        return None

    def _kept(self, step: _Step, index: int, array: np.ndarray, args: list[np.ndarray], owned: set[int],
              arena: np.ndarray) -> np.ndarray:
        """A kernel's result made safe to keep. A planned view stays as it is. A result with a slot
        is checked against it and stays where the kernel allocated it (copying it into the arena
        measured slower than the allocation it saves), unless it shares memory with the arena or
        an operand: then it is copied into its slot, so that memory this run overwrites is never
        seen through another value. A fresh result is copied only out of the arena."""
        slot = step.slots[index]
        if slot == VIEW:
            return array
        if slot is None:
            return np.array(array) if np.may_share_memory(array, arena) else array
        view = self._slot_view(step, index, array.shape, array.dtype, arena)
        owned.add(step.outputs[index])
        if np.may_share_memory(array, arena) or any(np.may_share_memory(array, a) for a in args):
            if not _same_memory(view, array):
                np.copyto(view, array)
            return view
        return array

    def _slot_view(self, step: _Step, index: int, shape: tuple[int, ...], dtype: np.dtype,
                   arena: np.ndarray) -> np.ndarray:
        slot = step.slots[index]
        nbytes = math.prod(shape) * np.dtype(dtype).itemsize
        if nbytes > slot.size:
            raise self._error(f"op '{step.op.name}' result {index} ({list(shape)} {np.dtype(dtype)}) "
                              f"takes {nbytes} bytes, more than its planned slot of {slot.size} bytes")
        return np.ndarray(shape, dtype, arena, slot.offset)

    def _output(self, index: int, array: np.ndarray, arena: np.ndarray) -> np.ndarray:
        checked_output_size(self._name, index, array, self._max_bytes[index])
        return np.array(array) if np.may_share_memory(array, arena) else array

    # --- weights and inputs ---

    def _bind_weights(self, descs: Sequence[Weight], buffer: memoryview | bytes | None) -> dict[int, np.ndarray]:
        """Value id -> read-only view of its weight, for every const op."""
        return {op.outputs[0]: weight_view(self._name, op.weight, descs[op.weight], buffer)
                for op in self._ops if op.op == "const"}

    def _error(self, message: str) -> GeError:
        return _graph_error(self._name, message)


def weight_view(graph: str, index: int, desc: Weight, buffer: memoryview | bytes | None) -> np.ndarray:
    """A read-only view of weight `index` of graph `graph` (`desc`) in `buffer` (the model's
    WEIGHTS_DATA); a GeError naming the graph when it does not fit."""
    dtype = dt.to_numpy(dt.from_name(desc.dtype)).newbyteorder("<")
    count = math.prod(desc.shape)
    available = 0 if buffer is None else len(memoryview(buffer).cast("B"))
    if desc.offset + desc.size > available:
        raise _graph_error(graph, f"weight {index} ({desc.dtype} {list(desc.shape)}, {desc.size} bytes "
                                  f"at offset {desc.offset}) does not fit a weights buffer of {available} bytes")
    if count == 0:  # an empty weight, in a model that may have no weights buffer at all
        view = np.empty(desc.shape, dtype)
    else:
        view = np.frombuffer(buffer, dtype=dtype, count=count, offset=desc.offset).reshape(desc.shape)
    view.flags.writeable = False
    return view


def available_cores() -> int:
    """The cores this process may run on: what a compiled graph's `threads` default to."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1


def checked_inputs(graph: str, descs: Sequence[GeInput], inputs: Sequence[Any]) -> list[np.ndarray]:
    """`inputs` as arrays, one per input of graph `graph`, each of its declared dtype and within
    its dimension ranges; a GeError naming the graph and the input otherwise."""
    if len(inputs) != len(descs):
        raise _graph_error(graph, f"expected {len(descs)} inputs, got {len(inputs)}")
    return [_checked_input(graph, desc, np.asarray(given)) for desc, given in zip(descs, inputs)]


def checked_output_size(graph: str, index: int, array: np.ndarray, limit: int) -> None:
    """GeError naming graph `graph` when output `index` takes more than `limit` bytes (-1: no bound)."""
    if 0 <= limit < array.nbytes:
        raise _graph_error(graph, f"output {index} ({list(array.shape)} {array.dtype}) is {array.nbytes} "
                                  f"bytes, above its outputMaxSize of {limit} bytes")


def _checked_input(graph: str, desc: GeInput, array: np.ndarray) -> np.ndarray:
    expected_dtype = dt.to_numpy(dt.from_name(desc.dtype))
    shape = list(array.shape)
    what = f"input '{desc.name}' (index {desc.index})"
    if array.dtype != expected_dtype:
        raise _graph_error(graph, f"{what}: expected dtype {desc.dtype} ({expected_dtype}), got {array.dtype}")
    in_range = len(shape) == len(desc.ranges) and all(
        lo <= size and (hi == -1 or size <= hi) for size, (lo, hi) in zip(shape, desc.ranges))
    if not in_range:
        raise _graph_error(graph, f"{what}: expected shape {_spell_ranges(desc.ranges)}, got {shape}")
    return array


def _graph_error(graph: str, message: str) -> GeError:
    return GeError(message, context={"graph": graph})


def _same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether `a` and `b` are the same elements at the same addresses (a copy would be a no-op)."""
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
            and a.strides == b.strides and a.shape == b.shape)


def _spell_ranges(ranges: Sequence[tuple[int, int]]) -> str:
    """`[[2, 2], [0, -1], [1, 8]]` -> `[2, -1, 1:8]`, the IR's spelling.

    (The runtime does not import xDSL, hence not `ge_types.DimRange`.)
    """
    def one(lo: int, hi: int) -> str:
        if lo == hi:
            return str(lo)
        return "-1" if (lo, hi) == (0, -1) else f"{lo}:{hi}"
    return "[" + ", ".join(one(lo, hi) for lo, hi in ranges) + "]"
