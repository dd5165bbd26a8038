"""The `ge` dialect: GE graphs of tensor ops over `!ge.tensor` values (see `ge_types`).

A graph is a module-level symbol holding one block: `ge.data` ops for its inputs, tensor ops, and
a final `ge.output` listing its results.

    ge.graph @mlp {
      %x = ge.data 0 "x" : !ge.tensor<[-1, 2], f32>
      %w = ge.const dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
      %h = ge.matmul %x, %w : (!ge.tensor<[-1, 2], f32>, !ge.tensor<[2, 2], f32>) -> !ge.tensor<[-1, 2], f32>
      %y = ge.relu %h : !ge.tensor<[-1, 2], f32>
      ge.output %y : !ge.tensor<[-1, 2], f32>
    }

Every tensor op derives from `ShapedOp` and owns a *shape function*, `infer_types(operand_types,
properties)`, that returns its result types or raises a VerifyException naming the op and the
shapes. The op's verifier checks that each declared result type is compatible with the inferred
one; the graph builder (`dfir.ge.graph`) uses the same function to type the ops it creates, and
a new op plugs in by declaring itself and its shape function, nothing else.
"""
from __future__ import annotations

import math
from collections import Counter
from functools import reduce
from typing import ClassVar, Mapping, Sequence

from xdsl.dialects.builtin import (I64, AnyFloat, DenseArrayBase, DenseIntOrFPElementsAttr, IntegerAttr,
                                   StringAttr, SymbolNameConstraint, TensorType, i64)
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue
from xdsl.irdl import (IRDLOperation, VarConstraint, base, irdl_op_definition, opt_attr_def,
                       operand_def, prop_def, region_def, result_def, traits_def, var_operand_def)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, Pure, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from dfir.dialects.ge_types import DimRange, GeTensorType, dtype_of, format_dims

__all__ = ["GE", "GraphOp", "OutputOp", "DataOp", "ConstOp", "AddOp", "SubOp", "MulOp", "ReluOp",
           "MatMulOp", "ReshapeOp", "ShapedOp", "const_type", "op_name_of"]


# --- shape functions' helpers -----------------------------------------------------------------

def _shape(t: GeTensorType) -> str:
    return format_dims(t.dims)


def _broadcast_dim(a: DimRange, b: DimRange) -> DimRange | None:
    """The sizes a broadcast result dimension may take, or None when `a` and `b` never match.

    At run time the result is `b` when `a` is 1, `a` when `b` is 1, and otherwise both must be
    equal; the result range is the hull of the cases the ranges allow.
    """
    cases = [r for r in (b if a.contains(1) else None, a if b.contains(1) else None, a.intersect(b))
             if r is not None]
    return reduce(DimRange.hull, cases) if cases else None


def _broadcast_dims(what: str, lhs: Sequence[DimRange], rhs: Sequence[DimRange]) -> list[DimRange]:
    """numpy broadcasting over ranges; `what` opens the error message."""
    rank = max(len(lhs), len(rhs))
    one = DimRange.fixed(1)
    lhs_padded = [one] * (rank - len(lhs)) + list(lhs)
    rhs_padded = [one] * (rank - len(rhs)) + list(rhs)
    dims = []
    for i, (a, b) in enumerate(zip(lhs_padded, rhs_padded)):
        dim = _broadcast_dim(a, b)
        if dim is None:
            raise VerifyException(f"{what} {format_dims(lhs)} and {format_dims(rhs)} do not broadcast: "
                                  f"dimension {i} is {a} vs {b}")
        dims.append(dim)
    return dims


def _same_element_type(op_name: str, lhs: GeTensorType, rhs: GeTensorType) -> None:
    if lhs.element_type != rhs.element_type:
        raise VerifyException(f"{op_name}: element types differ: lhs {lhs.element_type}, "
                              f"rhs {rhs.element_type}")


def _element_count(dims: Sequence[DimRange]) -> DimRange:
    """How many elements a tensor with these dimensions may hold."""
    his = [d.hi for d in dims]
    return DimRange(math.prod(d.lo for d in dims), None if None in his else math.prod(his))


def _compatible(declared: Attribute, inferred: GeTensorType) -> bool:
    """Whether a declared result type can hold what the shape function inferred.

    As MLIR's compatible shapes: same element type, format and rank, and every pair of dimension
    ranges shares a size. A declared type may be narrower than the inferred one (the shape
    function's ranges are sound but not always tight, e.g. after a reshape with -1).
    """
    return (isinstance(declared, GeTensorType) and declared.element_type == inferred.element_type
            and declared.format == inferred.format and declared.rank == inferred.rank
            and all(d.intersect(i) is not None for d, i in zip(declared.dims, inferred.dims)))


# --- the graph container -----------------------------------------------------------------------

@irdl_op_definition
class GraphOp(IRDLOperation):
    """A GE graph: a symbol whose single block computes tensors from `ge.data` inputs.

    The block holds no terminator in the MLIR sense; instead the graph checks that it ends with
    exactly one `ge.output` (so a graph without one, or with two, gets a message from this op).
    `ge.data` indexes are 0..n-1, each used once, and op names (the `ge.data` names and the
    optional `name` of other ops) are unique.

        ge.graph @g {
          %x = ge.data 0 "x" : !ge.tensor<[2], f32>
          ge.output %x : !ge.tensor<[2], f32>
        }
    """

    name = "ge.graph"

    sym_name = prop_def(SymbolNameConstraint())
    body = region_def("single_block")

    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    assembly_format = "$sym_name attr-dict-with-keyword $body"

    def __init__(self, sym_name: str, body: Region | None = None):
        super().__init__(properties={"sym_name": StringAttr(sym_name)},
                         regions=[body if body is not None else Region(Block())])

    @property
    def block(self) -> Block:
        return self.body.block

    @property
    def data_ops(self) -> list[DataOp]:
        """The graph's inputs in index order."""
        data = [op for op in self.block.ops if isinstance(op, DataOp)]
        return sorted(data, key=lambda d: d.index.value.data)

    @property
    def output_op(self) -> OutputOp:
        last = self.block.last_op
        assert isinstance(last, OutputOp), "a verified ge.graph ends with ge.output"
        return last

    def verify_(self) -> None:
        where = f"ge.graph @{self.sym_name.data}"
        outputs = [op for op in self.block.ops if isinstance(op, OutputOp)]
        if len(outputs) != 1:
            raise VerifyException(f"{where}: expected exactly one ge.output, found {len(outputs)}")
        if self.block.last_op is not outputs[0]:
            raise VerifyException(f"{where}: ge.output must be the last op of the graph")
        self._verify_data_indexes(where)
        self._verify_unique_names(where)

    def _verify_data_indexes(self, where: str) -> None:
        indexes = [d.index.value.data for d in self.data_ops]
        repeated = [i for i, n in Counter(indexes).items() if n > 1]
        if repeated:
            raise VerifyException(f"{where}: data index {repeated[0]} is used by more than one ge.data")
        if indexes != list(range(len(indexes))):
            raise VerifyException(f"{where}: data indexes must be 0..{len(indexes) - 1}, got {indexes}")

    def _verify_unique_names(self, where: str) -> None:
        names = [n for n in (op_name_of(op) for op in self.block.ops) if n is not None]
        repeated = [n for n, count in Counter(names).items() if count > 1]
        if repeated:
            raise VerifyException(f"{where}: op name \"{repeated[0]}\" is used more than once")


@irdl_op_definition
class OutputOp(IRDLOperation):
    """The graph's results, in order; the last op of its `ge.graph`.

        ge.output %y, %z : !ge.tensor<[2], f32>, !ge.tensor<[], i32>
    """

    name = "ge.output"

    outputs = var_operand_def(GeTensorType)

    traits = traits_def(HasParent(GraphOp))

    assembly_format = "$outputs attr-dict `:` type($outputs)"

    def __init__(self, outputs: Sequence[SSAValue]):
        super().__init__(operands=[outputs])

    def verify_(self) -> None:
        if not self.outputs:
            raise VerifyException("ge.output: a graph needs at least one output")


# --- tensor ops ----------------------------------------------------------------------------------

class ShapedOp(IRDLOperation):
    """Base of the tensor ops: a shape function, an optional node name, and the check tying them.

    `infer_types` is a pure function of operand types and properties (no op needed), so the
    builder and shape-range inference can call it before an op exists.
    """

    node_name = opt_attr_def(StringAttr, attr_name="name")

    @classmethod
    def infer_types(cls, operand_types: Sequence[GeTensorType],
                    properties: Mapping[str, Attribute]) -> list[GeTensorType]:
        """The result types these operands and properties give; VerifyException when invalid."""
        raise NotImplementedError(f"{cls.name} has no shape function")

    def verify_(self) -> None:
        inferred = self.infer_types([o.type for o in self.operands], self.properties)
        for result, expected in zip(self.results, inferred, strict=True):
            if not _compatible(result.type, expected):
                raise VerifyException(f"{self.name}: result type {result.type} is incompatible with "
                                      f"the inferred type {expected}")


def op_name_of(op: IRDLOperation) -> str | None:
    """The name an op carries in the graph (a `ge.data` name or a tensor op's `name`), if any."""
    if isinstance(op, DataOp):
        return op.data_name.data
    if isinstance(op, ShapedOp) and op.node_name is not None:
        return op.node_name.data
    return None


@irdl_op_definition
class DataOp(IRDLOperation):
    """Graph input number `index`, called `name`; its result type is the declared input type.

        %x = ge.data 0 "x" : !ge.tensor<[-1, 784], f32>
    """

    name = "ge.data"

    index = prop_def(IntegerAttr[I64])
    data_name = prop_def(StringAttr, prop_name="name")
    result = result_def(GeTensorType)

    traits = traits_def(Pure(), HasParent(GraphOp))

    assembly_format = "$index $name attr-dict `:` type($result)"

    def __init__(self, index: int, data_name: str, result_type: GeTensorType):
        super().__init__(properties={"index": IntegerAttr(index, i64), "name": StringAttr(data_name)},
                         result_types=[result_type])

    def verify_(self) -> None:
        if self.index.value.data < 0:
            raise VerifyException(f"ge.data: index must be >= 0, got {self.index.value.data}")


def const_type(value: DenseIntOrFPElementsAttr) -> GeTensorType:
    """The result type of a `ge.const` holding `value`: its static shape and element type, ND."""
    return GeTensorType([DimRange.fixed(s) for s in value.get_shape()], value.get_element_type())


@irdl_op_definition
class ConstOp(ShapedOp):
    """A constant tensor; its result type is the value's static shape and element type (ND).

    The value is a builtin `dense` attribute. xDSL prints one with more than 100 elements as a
    hex string of its raw little-endian bytes (`dense<"0x0000803F...">`) and parses that back
    with a single `bytes.fromhex`, so weights of millions of elements print and parse in a
    fraction of a second; small constants stay readable lists. xDSL 0.74 prints a NaN or an
    infinity inside a list as a bit pattern that its parser reads back as an integer value, so
    the custom form prints floats with such values in hex too (the generic form cannot help it).

        %b = ge.const dense<[0.5, -1.0]> : tensor<2xf32>
    """

    name = "ge.const"

    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[const_type(value)])

    @classmethod
    def infer_types(cls, operand_types, properties):
        value = properties["value"]
        if not isinstance(value.type, TensorType):
            raise VerifyException(f"ge.const: value must have a tensor type, got {value.type}")
        try:
            dtype_of(value.get_element_type())
        except KeyError:
            raise VerifyException(f"ge.const: element type {value.get_element_type()} is not a GE "
                                  "data type") from None
        return [const_type(value)]

    def verify_(self) -> None:
        (expected,) = self.infer_types([], self.properties)
        if self.result.type != expected:
            raise VerifyException(f"ge.const: result type {self.result.type} must be {expected}, "
                                  "the type of its value")

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        start = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error(f"ge.const expects a dense attribute, got {value}", start)
        attributes = parser.parse_optional_attr_dict()
        op = cls(value)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        if _has_non_finite_floats(self.value):
            printer.print_string(f'dense<"0x{self.value.data.data.hex().upper()}"> : ')
            printer.print_attribute(self.value.type)
        else:
            printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)


def _has_non_finite_floats(value: DenseIntOrFPElementsAttr) -> bool:
    element_type = value.get_element_type()
    if not isinstance(element_type, AnyFloat):
        return False
    return not all(math.isfinite(v) for v in value.get_values())


class _ElementwiseBinaryOp(ShapedOp):
    """`lhs <op> rhs` element by element, with numpy broadcasting; same element types."""

    lhs = operand_def(GeTensorType)
    rhs = operand_def(GeTensorType)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: GeTensorType):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    @classmethod
    def infer_types(cls, operand_types, properties):
        lhs, rhs = operand_types
        _same_element_type(cls.name, lhs, rhs)
        dims = _broadcast_dims(f"{cls.name}: shapes", lhs.dims, rhs.dims)
        wider = lhs if lhs.rank >= rhs.rank else rhs
        return [wider.with_dims(dims)]


@irdl_op_definition
class AddOp(_ElementwiseBinaryOp):
    """Element-wise sum with numpy broadcasting; the result takes the format of the wider operand.

        %z = ge.add %x, %b : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
    """

    name = "ge.add"


@irdl_op_definition
class SubOp(_ElementwiseBinaryOp):
    """Element-wise difference `lhs - rhs` with numpy broadcasting.

        %z = ge.sub %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[1, 3], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.sub"


@irdl_op_definition
class MulOp(_ElementwiseBinaryOp):
    """Element-wise product with numpy broadcasting.

        %z = ge.mul %x, %s : (!ge.tensor<[2, 3], f32>, !ge.tensor<[], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.mul"


@irdl_op_definition
class ReluOp(ShapedOp):
    """`max(x, 0)` element by element; the result has the operand's type.

        %y = ge.relu %x : !ge.tensor<[-1, 3], f32>
    """

    name = "ge.relu"

    T: ClassVar = VarConstraint("T", base(GeTensorType))
    input = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($result)"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[input.type])

    @classmethod
    def infer_types(cls, operand_types, properties):
        return [operand_types[0]]


@irdl_op_definition
class MatMulOp(ShapedOp):
    """Matrix product over the last two dimensions; leading (batch) dimensions broadcast.

    `lhs [..., M, K] x rhs [..., K, N] -> [..., M, N]`; both operands have rank >= 2.

        %y = ge.matmul %x, %w : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
    """

    name = "ge.matmul"

    lhs = operand_def(GeTensorType)
    rhs = operand_def(GeTensorType)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: GeTensorType):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    @classmethod
    def infer_types(cls, operand_types, properties):
        lhs, rhs = operand_types
        _same_element_type("ge.matmul", lhs, rhs)
        for side, t in (("lhs", lhs), ("rhs", rhs)):
            if t.rank < 2:
                raise VerifyException(f"ge.matmul: {side} must have rank >= 2, got {_shape(t)}")
        (*lhs_batch, m, lhs_k), (*rhs_batch, rhs_k, n) = lhs.dims, rhs.dims
        if lhs_k.intersect(rhs_k) is None:
            raise VerifyException(f"ge.matmul: inner dimensions differ: lhs {_shape(lhs)} has {lhs_k} "
                                  f"columns, rhs {_shape(rhs)} has {rhs_k} rows")
        batch = _broadcast_dims("ge.matmul: batch dimensions", lhs_batch, rhs_batch)
        return [lhs.with_dims([*batch, m, n])]


@irdl_op_definition
class ReshapeOp(ShapedOp):
    """The input's elements in a new shape, as ONNX Reshape (allowzero = 0) defines it.

    In the target `shape`, 0 copies the input dimension at the same index and one -1 takes
    whatever size keeps the element count; when the counts are static they must agree.

        %y = ge.reshape %x to [0, -1] : !ge.tensor<[2, 3, 4], f32> -> !ge.tensor<[2, 12], f32>
    """

    name = "ge.reshape"

    input = operand_def(GeTensorType)
    shape = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `to` $shape attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, shape: Sequence[int], result_type: GeTensorType):
        super().__init__(operands=[input], properties={"shape": DenseArrayBase.from_list(i64, shape)},
                         result_types=[result_type])

    @classmethod
    def infer_types(cls, operand_types, properties):
        (source,) = operand_types
        target = list(properties["shape"].get_values())
        _check_reshape_target(source, target)
        dims = [source.dims[i] if s == 0 else DimRange.fixed(s) for i, s in enumerate(target) if s != -1]
        if -1 in target:
            dims.insert(target.index(-1), _inferred_reshape_dim(source, target, _element_count(dims)))
        elif _element_count(dims).intersect(_element_count(source.dims)) is None:
            raise VerifyException(f"ge.reshape: cannot reshape {_shape(source)} "
                                  f"({_element_count(source.dims)} elements) to {target} "
                                  f"({_element_count(dims)} elements)")
        return [source.with_dims(dims)]


def _check_reshape_target(source: GeTensorType, target: list[int]) -> None:
    if any(s < -1 for s in target):
        raise VerifyException(f"ge.reshape: target shape entries must be >= -1, got {target}")
    if target.count(-1) > 1:
        raise VerifyException(f"ge.reshape: target shape {target} has more than one -1")
    copies = [i for i, s in enumerate(target) if s == 0 and i >= source.rank]
    if copies:
        raise VerifyException(f"ge.reshape: target shape {target} copies dimension {copies[0]} "
                              f"(a 0 at index {copies[0]}) but the input {_shape(source)} has "
                              f"rank {source.rank}")


def _inferred_reshape_dim(source: GeTensorType, target: list[int], known: DimRange) -> DimRange:
    """The range of the -1 dimension: the source count divided by the other dimensions' count."""
    total = _element_count(source.dims)
    if total.is_fixed and known.is_fixed:
        if known.lo == 0:
            raise VerifyException(f"ge.reshape: cannot reshape {_shape(source)} to {target}: the size "
                                  "of -1 is ambiguous when the other dimensions hold 0 elements")
        if total.lo % known.lo:
            raise VerifyException(f"ge.reshape: cannot reshape {_shape(source)} ({total} elements) "
                                  f"to {target}: {total} is not a multiple of {known}")
        return DimRange.fixed(total.lo // known.lo)
    lo = -(-total.lo // known.hi) if known.hi else 0
    hi = total.hi // known.lo if total.hi is not None and known.lo else None
    return DimRange(lo, hi)


GE = Dialect("ge", [GraphOp, OutputOp, DataOp, ConstOp, AddOp, SubOp, MulOp, ReluOp, MatMulOp,
                    ReshapeOp], [GeTensorType])
