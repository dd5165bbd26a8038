"""`Graph`: build a GE graph in Python, op by op, and turn it into a `ge.graph` op.

    g = Graph("mlp")
    x = g.data(0, shape=[-1, 784], dtype=dt.DT_FLOAT, name="x")
    h = g.relu(g.add(g.matmul(x, g.const(w1)), g.const(b1)))
    g.set_outputs([h])
    op = g.to_ir()                     # a fresh, verified `ge.graph @mlp` each call

Every op is typed when it is added, by the same shape function its IR verifier uses, so a shape
error surfaces at the call that caused it as a `GeError` naming the graph, the node, the op and
the shapes. The builder only records; execution belongs to the runtime.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

import numpy as np
from xdsl.dialects.builtin import (BytesAttr, DenseArrayBase, DenseIntOrFPElementsAttr, IntegerAttr,
                                   StringAttr, TensorType, i64)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException

from dfir import data_type as dt
from dfir.dialects import ge
from dfir.dialects.ge_types import FORMATS, GeTensorType, element_type_of
from dfir.ge.error import GeError

__all__ = ["Graph", "GraphInput", "Value"]


class GraphInput(NamedTuple):
    """A graph input as callers feed it: name, position, data type and shape (-1 = unknown)."""

    name: str
    index: int
    dtype: dt.DType
    shape: list[int]


@dataclass(frozen=True, eq=False)
class Value:
    """A tensor produced by an op of a `Graph`; pass it to further ops of the same graph."""

    graph: Graph
    id: int
    type: GeTensorType

    @property
    def shape(self) -> list[int]:
        """Fixed dimensions as their size, others as -1."""
        return self.type.shape

    @property
    def dtype(self) -> dt.DType:
        return self.type.dtype

    def __repr__(self) -> str:
        return f"Value(graph={self.graph.name!r}, id={self.id}, type={self.type})"


@dataclass(frozen=True)
class _Node:
    """One recorded op: enough to build it again for every `to_ir()` call."""

    op_class: type[IRDLOperation]
    name: str
    operands: tuple[int, ...]
    properties: dict[str, Attribute]
    result: GeTensorType
    attributes: dict[str, Attribute] = field(default_factory=dict)


class Graph:
    """A GE graph under construction; see the module docstring."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise GeError(f"Graph name must be a non-empty str, got {name!r}")
        self._name = name
        self._nodes: list[_Node] = []
        self._names: set[str] = set()
        self._data: dict[int, GraphInput] = {}
        self._outputs: list[int] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def inputs(self) -> list[GraphInput]:
        """The `data` inputs in index order."""
        return [self._data[i] for i in sorted(self._data)]

    @property
    def num_outputs(self) -> int:
        return len(self._outputs)

    # --- inputs and constants ---

    def data(self, index: int, shape: Sequence[int], dtype: dt.DType, name: str | None = None,
             format: str = "ND") -> Value:
        """Graph input number `index` with a shape (-1 marks an unknown dimension)."""
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise self._error(f"data index must be an int >= 0, got {index!r}")
        if index in self._data:
            raise self._error(f"data index {index} is already used by data '{self._data[index].name}'")
        if not isinstance(shape, (list, tuple)) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= -1 for d in shape):
            raise self._error(f"data shape must be a list of ints >= -1 (-1 = unknown), got {shape!r}")
        if format not in FORMATS:
            raise self._error(f"unknown tensor format '{format}', expected one of {', '.join(FORMATS)}")
        result = GeTensorType.from_shape(shape, self._element_dtype(dtype), format)
        name = self._claim_name(name, "data")
        self._data[index] = GraphInput(name, index, dtype, list(shape))
        properties = {"index": IntegerAttr(index, i64), "name": StringAttr(name)}
        return self._record(_Node(ge.DataOp, name, (), properties, result))

    def const(self, array, name: str | None = None) -> Value:
        """A constant tensor holding a copy of `array` (anything `np.asarray` accepts)."""
        array = np.asarray(array)
        element_type = element_type_of(self._element_dtype(dt.from_numpy(array.dtype)))
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
        value = DenseIntOrFPElementsAttr(TensorType(element_type, array.shape), BytesAttr(data))
        return self._add_op(ge.ConstOp, name, "const", (), {"value": value})

    # --- tensor ops ---

    def add(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x + y` with numpy broadcasting."""
        return self._add_op(ge.AddOp, name, "add", (x, y))

    def sub(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x - y` with numpy broadcasting."""
        return self._add_op(ge.SubOp, name, "sub", (x, y))

    def mul(self, x: Value, y: Value, name: str | None = None) -> Value:
        """`x * y` with numpy broadcasting."""
        return self._add_op(ge.MulOp, name, "mul", (x, y))

    def relu(self, x: Value, name: str | None = None) -> Value:
        """`max(x, 0)` element by element."""
        return self._add_op(ge.ReluOp, name, "relu", (x,))

    def matmul(self, x: Value, y: Value, name: str | None = None) -> Value:
        """Matrix product over the last two dimensions; batch dimensions broadcast."""
        return self._add_op(ge.MatMulOp, name, "matmul", (x, y))

    def reshape(self, x: Value, shape: Sequence[int], name: str | None = None) -> Value:
        """`x` in a new shape; 0 copies the input dimension, one -1 is inferred (as ONNX)."""
        if not isinstance(shape, (list, tuple)) or not all(
                isinstance(d, int) and not isinstance(d, bool) for d in shape):
            raise self._error(f"reshape shape must be a list of ints, got {shape!r}")
        return self._add_op(ge.ReshapeOp, name, "reshape", (x,),
                            {"shape": DenseArrayBase.from_list(i64, list(shape))})

    def set_outputs(self, outputs: Sequence[Value]) -> None:
        """The graph's results, in order (replaces any earlier choice)."""
        if not isinstance(outputs, (list, tuple)) or not outputs:
            raise self._error(f"set_outputs needs a non-empty list of values, got {outputs!r}")
        self._outputs = [self._value_id(v, f"set_outputs: output {i}") for i, v in enumerate(outputs)]

    # --- IR ---

    def to_ir(self) -> ge.GraphOp:
        """A new, verified `ge.graph` op named after the graph; a GeError if it is incomplete."""
        if not self._outputs:
            raise self._error("the graph has no outputs; call set_outputs first")
        block = Block()
        values: list[SSAValue] = []
        for node in self._nodes:
            op = node.op_class.build(operands=[values[i] for i in node.operands], properties=node.properties,
                                     attributes=node.attributes, result_types=[node.result])
            op.results[0].name_hint = _name_hint(node.name)
            block.add_op(op)
            values.append(op.results[0])
        block.add_op(ge.OutputOp([values[i] for i in self._outputs]))
        graph = ge.GraphOp(self._name, Region(block))
        try:
            graph.verify()
        except VerifyException as e:
            raise self._error(str(e)) from None
        return graph

    # --- helpers ---

    def _add_op(self, op_class: type[ge.ShapedOp], name: str | None, kind: str, operands: Sequence[Value],
                properties: dict[str, Attribute] | None = None) -> Value:
        properties = properties or {}
        ids = tuple(self._value_id(v, f"{kind}: operand {i}") for i, v in enumerate(operands))
        name = self._claim_name(name, kind)
        try:
            (result,) = op_class.infer_types([v.type for v in operands], properties)
        except VerifyException as e:
            self._names.discard(name)
            raise self._error(str(e), node=name) from None
        return self._record(_Node(op_class, name, ids, properties, result, {"name": StringAttr(name)}))

    def _record(self, node: _Node) -> Value:
        self._nodes.append(node)
        return Value(self, len(self._nodes) - 1, node.result)

    def _value_id(self, value: object, what: str) -> int:
        """The id of a Value of this graph; `what` names the argument in the error."""
        if not isinstance(value, Value):
            raise self._error(f"{what} must be a Value of this graph, got {type(value).__name__}")
        if value.graph is not self:
            raise self._error(f"{what} belongs to graph '{value.graph.name}'")
        return value.id

    def _claim_name(self, name: str | None, kind: str) -> str:
        """Reserve `name`, or the first free `<kind>_<n>` when it is None."""
        if name is None:
            candidates = (f"{kind}_{n}" for n in range(len(self._names) + 1))
            name = next(c for c in candidates if c not in self._names)
        elif not isinstance(name, str) or not name:
            raise self._error(f"node name must be a non-empty str, got {name!r}")
        elif name in self._names:
            raise self._error(f"node name '{name}' is already used")
        self._names.add(name)
        return name

    def _element_dtype(self, dtype: object) -> dt.DType:
        if not isinstance(dtype, dt.DType):
            raise self._error(f"dtype must be a DType such as DT_FLOAT, got {dtype!r}")
        try:
            element_type_of(dtype)
        except ValueError as e:
            raise self._error(str(e)) from None
        return dtype

    def _error(self, message: str, node: str | None = None) -> GeError:
        context = {"graph": self._name} | ({"node": node} if node else {})
        return GeError(message, context=context)


def _name_hint(name: str) -> str | None:
    """An SSA name for readable IR: the node name when xDSL accepts it as one."""
    return name if SSAValue.is_valid_name(name) else None
