"""Lower a `ge.graph` op to its execution-plan entry (docs/execution-plan.md, `ge_graphs`).

    ge.graph @g {
      %x = ge.data 0 "x" : !ge.tensor<[-1, 2], f32>
      %w = ge.const dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
      %y = ge.matmul %x, %w {name = "fc"} : (...) -> !ge.tensor<[-1, 2], f32>
      ge.output %y : !ge.tensor<[-1, 2], f32>
    }

becomes the entry

    {"name": "g",
     "inputs": [{"name": "x", "index": 0, "dtype": "DT_FLOAT", "shape": [-1, 2],
                 "ranges": [[0, -1], [2, 2]], "value": 0}],
     "ops": [{"op": "const", "name": "const_1", "inputs": [], "outputs": [1], "attrs": {"weight": 0}},
             {"op": "matmul", "name": "fc", "inputs": [0, 1], "outputs": [2], "attrs": {}}],
     "outputs": [2]}

and the weights `[array([[1., 2.], [3., 4.]], dtype=float32)]`.

Values are numbered in the order the graph defines them. `ge.data` ops become `inputs` (sorted by
index; `value` is the id they define, `ranges` the [lo, hi] of each dimension, hi -1 when
unbounded), every other op except `ge.output` becomes an entry of `ops`, named by its `name`
attribute or `<op>_<value id>`. An op's `attrs` are its properties as JSON: integer arrays as
lists, integers, floats and strings as themselves, a unit property (a flag) as `true` when set
(absent otherwise), an element type (`ge.cast`'s `to`) as its data type name ("DT_INT32").
`const` ops refer to the returned weight arrays by index; the caller packs them and adds the
entry's `weights` list. A `const` of a weight blob also names the blob (`"blob": "weight_..."`):
an IREE executable reads it as the named parameter of that key (`dfir.lowering.codegen`). A `ge.variable` is a `const` at run time: its entry is a `const` whose
attrs also carry `"variable": <name>`. Same graph, same entry.

A planned graph also carries `arena_bytes`, `output_max_bytes` and, per op, `slots` (see
docs/execution-plan.md). `ge_graph_entry` gives the entry as a `dfir.om.plan.GeGraph` (its
`weights` left empty for the caller to pack), `lower_ge_graph` as the JSON above.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from xdsl.dialects.builtin import (ArrayAttr, DenseArrayBase, DenseResourceAttr, FloatAttr, IntegerAttr, StringAttr,
                                   UnitAttr)
from xdsl.ir import Attribute, Operation, SSAValue

from dfir.core import data_type as dt
from dfir.dialects import ge
from dfir.dialects.blobs import blob_bytes
from dfir.dialects.ge_types import GeTensorType, dtype_of
from dfir.om.plan import VIEW, ArenaSlot, GeGraph, GeInput, GeOp, Slot

__all__ = ["ge_graph_entry", "lower_ge_graph"]


def lower_ge_graph(graph_op: ge.GraphOp) -> tuple[dict, list[np.ndarray]]:
    """The plan entry of a verified graph as JSON, without `weights` (the caller packs the
    arrays and adds it), and its weight arrays; see `ge_graph_entry`."""
    entry, weights = ge_graph_entry(graph_op)
    document = entry.to_json()
    del document["weights"]
    return document, weights


def ge_graph_entry(graph_op: ge.GraphOp) -> tuple[GeGraph, list[np.ndarray]]:
    """The plan entry of a verified graph (no `weights` yet) and its weight arrays, in
    `attrs.weight` order.

    Weight arrays are read-only views of the constants' bytes (little-endian), in the IR or in
    the blob a `dense_resource` names, except booleans, which are normalized to numpy's 0/1 bytes.
    Constants that name the same blob (as the same type) share one weight.
    """
    value_ids: dict[SSAValue, int] = {}
    inputs: list[GeInput] = []
    ops: list[GeOp] = []
    weights = _Weights()
    for op in graph_op.block.ops:
        if isinstance(op, ge.OutputOp):
            continue
        for result in op.results:
            value_ids[result] = len(value_ids)
        if isinstance(op, ge.DataOp):
            inputs.append(_input_entry(op, value_ids[op.result]))
        else:
            ops.append(_op_entry(op, value_ids, weights))
    arena_bytes, output_max_bytes = _memory_fields(graph_op)
    entry = GeGraph(graph_op.sym_name.data, tuple(sorted(inputs, key=lambda i: i.index)), tuple(ops),
                    tuple(value_ids[v] for v in graph_op.output_op.outputs), (), arena_bytes, output_max_bytes)
    return entry, weights


def _memory_fields(graph_op: ge.GraphOp) -> tuple[int | None, tuple[int, ...] | None]:
    """`arena_bytes` (from plan-memory) and `output_max_bytes` (from plan-output-size, else the
    user's ge.outputMaxSize), each None when the graph lacks it."""
    arena = graph_op.attributes.get("arena_bytes")
    max_bytes = graph_op.output_op.attributes.get("max_bytes", graph_op.attributes.get("output_max_size"))
    return (arena.value.data if isinstance(arena, IntegerAttr) else None,
            tuple(max_bytes.get_values()) if isinstance(max_bytes, DenseArrayBase) else None)


def _slots(op: Operation) -> tuple[Slot, ...] | None:
    """`slots` (from plan-memory): per result, its arena slot, `VIEW`, or None; None when unplanned."""
    slots = op.attributes.get("slots")
    if not isinstance(slots, ArrayAttr):
        return None
    return tuple(ArenaSlot(s.offset.data, s.size.data) if s.in_arena else (VIEW if s.kind.data == "view" else None)
                 for s in slots.data)


def _input_entry(op: ge.DataOp, value_id: int) -> GeInput:
    t = op.result.type
    assert isinstance(t, GeTensorType)
    return GeInput(op.data_name.data, op.index.value.data, t.dtype.name, tuple(t.shape),
                   tuple((d.lo, -1 if d.hi is None else d.hi) for d in t.dims), value_id)


def _op_entry(op: Operation, value_ids: dict[SSAValue, int], weights: list[np.ndarray]) -> GeOp:
    kind = "const" if isinstance(op, ge.VariableOp) else op.name.removeprefix("ge.")
    outputs = tuple(value_ids[r] for r in op.results)
    name = ge.op_name_of(op) or f"{kind}_{outputs[0]}"
    attrs = _ATTRS.get(type(op), _property_attrs)(op, weights)
    return GeOp(kind, name, tuple(value_ids[v] for v in op.operands), outputs, attrs, _slots(op))


def _property_attrs(op: Operation, weights: list[np.ndarray]) -> dict[str, Any]:
    """The op's properties as JSON values (see the module docstring)."""
    return {name: _json_value(op.name, name, value) for name, value in op.properties.items()}


def _json_value(op_name: str, name: str, value: Attribute) -> Any:
    if isinstance(value, DenseArrayBase):
        return [int(v) for v in value.get_values()]
    if isinstance(value, (IntegerAttr, FloatAttr)):
        return value.value.data
    if isinstance(value, StringAttr):
        return value.data
    if isinstance(value, UnitAttr):
        return True
    try:
        return dtype_of(value).name
    except KeyError:
        raise AssertionError(f"{op_name}: property {name} = {value} has no plan form") from None


class _Weights(list):
    """A graph's weight arrays in `attrs.weight` order, and the index of each blob's."""

    def __init__(self):
        super().__init__()
        self.of_blob: dict[DenseResourceAttr, int] = {}


def _const_attrs(op: ge.ConstOp, weights: _Weights) -> dict[str, Any]:
    if isinstance(op.value, DenseResourceAttr):
        if op.value not in weights.of_blob:
            weights.of_blob[op.value] = _weight(op, blob_bytes(op.value), weights)
        return {"weight": weights.of_blob[op.value], "blob": op.value.resource_handle.data}
    return {"weight": _weight(op, op.value.data.data, weights)}


def _weight(op: ge.ConstOp, raw: bytes | memoryview, weights: _Weights) -> int:
    """Add the weight of `op`, whose bytes are `raw`; its index."""
    t = op.result.type
    if t.dtype == dt.DT_BOOL:
        # xDSL stores a parsed i1 `true` as the byte 0xFF; numpy's bools are 0 and 1.
        array = (np.frombuffer(raw, dtype=np.uint8) != 0).reshape(t.shape)
        array.flags.writeable = False
    else:
        array = np.frombuffer(raw, dtype=t.numpy_dtype.newbyteorder("<")).reshape(t.shape)
    weights.append(array)
    return len(weights) - 1


def _variable_attrs(op: ge.VariableOp, weights: _Weights) -> dict[str, Any]:
    return _const_attrs(op, weights) | {"variable": op.var_name.data}


_ATTRS: dict[type[Operation], Callable[[Any, list[np.ndarray]], dict[str, Any]]] = {
    ge.ConstOp: _const_attrs,
    ge.VariableOp: _variable_attrs,
}
"""Op class -> the `attrs` of its plan entry (ops not listed: `_property_attrs`)."""
