"""`FuncBuilder`: what every op lowering of `convert-ge-to-linalg` builds with.

A lowering appends upstream ops (func, arith, math, tensor, linalg) to the body of the graph's
`func.func @main` through a `FuncBuilder`: it reads the upstream value of a `ge` operand with
`value`, sizes with `dim` / `sizes` (a static size is an `int`, a dynamic one an `index` SSA
value), makes tensors with `empty` / `full`, and computes with `generic` (a `linalg.generic`
whose body a Python function builds through a `Body`). `elementwise` applies a scalar function
under numpy broadcasting; `IndexMath` does `index` arithmetic on sizes, in the function or in a
body. A lowering that cannot express an op raises `Unsupported` saying why.

Types: a `ge` tensor type becomes a ranked `tensor` whose ranged dimensions are dynamic (`?`);
unsigned integers become the signless integer of the same width (MLIR's arith is signless; the
lowerings pick the unsigned arith op where it matters, see `is_unsigned`).

Broadcasting follows the rule torch-mlir and onnx-mlir use for dynamic shapes: an operand
dimension broadcasts when its size is statically 1 and the result's is not; a dynamic operand
dimension has the result's size. (A dynamic dimension that is 1 at run time against a larger one
is outside the shape ranges the graph declares in the cases `infer-shape-ranges` accepts.)
"""
from __future__ import annotations

from typing import Callable, Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (DYNAMIC_INDEX, AffineMapAttr, AnyFloat, FloatAttr, IndexType, IntegerAttr,
                                   IntegerType, Signedness, TensorType)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from dfir.dialects.ge_types import GeTensorType

__all__ = ["Body", "FuncBuilder", "IndexMath", "Size", "Unsupported", "is_float", "is_unsigned",
           "signless", "tensor_type"]

Size = int | SSAValue
"""A dimension size: static (an int) or dynamic (an `index` value)."""


class Unsupported(Exception):
    """The op has no lowering in this form; the message says what is missing."""


def signless(element_type: Attribute) -> Attribute:
    """The element type upstream arith computes in: unsigned integers as signless of their width."""
    if isinstance(element_type, IntegerType) and element_type.signedness.data != Signedness.SIGNLESS:
        return IntegerType(element_type.width.data)
    return element_type


def is_unsigned(element_type: Attribute) -> bool:
    return isinstance(element_type, IntegerType) and element_type.signedness.data == Signedness.UNSIGNED


def is_float(element_type: Attribute) -> bool:
    return isinstance(element_type, AnyFloat)


def tensor_type(t: GeTensorType) -> TensorType:
    """The upstream tensor type of a `ge` tensor type: ranged dimensions dynamic."""
    return TensorType(signless(t.element_type), [d.lo if d.is_fixed else DYNAMIC_INDEX for d in t.dims])


class Body:
    """The block of a `linalg.generic` being built: `add` appends an op and returns its result."""

    def __init__(self, block: Block):
        self.block = block

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def constant(self, value: float | int, element_type: Attribute) -> SSAValue:
        return self.add(_scalar_constant(value, element_type))

    def index(self, dim: int) -> SSAValue:
        """The iteration index along loop dimension `dim`."""
        return self.add(linalg.IndexOp(dim))


def _scalar_constant(value: float | int, element_type: Attribute) -> arith.ConstantOp:
    if isinstance(element_type, IndexType):
        return arith.ConstantOp(IntegerAttr(int(value), element_type))
    if is_float(element_type):
        return arith.ConstantOp(FloatAttr(float(value), element_type))
    return arith.ConstantOp(IntegerAttr(int(value), signless(element_type), truncate_bits=True))


class FuncBuilder:
    """The body of the graph's `func.func @main` under construction."""

    def __init__(self, block: Block):
        self.block = block
        self.values: dict[SSAValue, SSAValue] = {}
        """`ge` value -> the upstream tensor that holds it."""
        self._dims: dict[tuple[SSAValue, int], SSAValue] = {}
        self._indexes: dict[int, SSAValue] = {}

    def add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def value(self, ge_value: SSAValue) -> SSAValue:
        return self.values[ge_value]

    # --- sizes ----------------------------------------------------------------------------------

    def index(self, n: int) -> SSAValue:
        """The `index` constant `n` (one per function)."""
        if n not in self._indexes:
            self._indexes[n] = self.add(arith.ConstantOp(IntegerAttr(n, IndexType()))).result
        return self._indexes[n]

    def dim(self, value: SSAValue, axis: int) -> Size:
        """The size of `value` along `axis`: an int when static, else its `tensor.dim` (one per
        value and axis; `set_dim` may have recorded a better one, e.g. with assumed bounds)."""
        size = _type_of(value).get_shape()[axis]
        if size != DYNAMIC_INDEX:
            return size
        key = (value, axis)
        if key not in self._dims:
            self._dims[key] = self.add(tensor.DimOp(value, self.index(axis))).result
        return self._dims[key]

    def set_dim(self, value: SSAValue, axis: int, size: SSAValue) -> None:
        self._dims[(value, axis)] = size

    def sizes(self, value: SSAValue) -> list[Size]:
        return [self.dim(value, axis) for axis in range(len(_type_of(value).get_shape()))]

    def as_index(self, size: Size) -> SSAValue:
        return self.index(size) if isinstance(size, int) else size

    # --- tensors --------------------------------------------------------------------------------

    def empty(self, sizes: Sequence[Size], element_type: Attribute) -> SSAValue:
        """An uninitialized tensor of these sizes."""
        result_type = TensorType(element_type, [s if isinstance(s, int) else DYNAMIC_INDEX for s in sizes])
        return self.add(tensor.EmptyOp([s for s in sizes if not isinstance(s, int)], result_type)).tensor

    def scalar(self, value: float | int, element_type: Attribute) -> SSAValue:
        return self.add(_scalar_constant(value, element_type)).result

    def full(self, sizes: Sequence[Size], element_type: Attribute, value: float | int | SSAValue) -> SSAValue:
        """A tensor of these sizes filled with `value` (a number, or a scalar SSA value)."""
        scalar = value if isinstance(value, SSAValue) else self.scalar(value, element_type)
        empty = self.empty(sizes, element_type)
        return self.add(linalg.FillOp([scalar], [empty], [empty.type])).results[0]

    def generic(self, inputs: Sequence[tuple[SSAValue, AffineMap]], output: SSAValue | tuple[Sequence[Size], Attribute],
                iterators: Sequence[str], body: Callable[..., SSAValue], output_map: AffineMap | None = None) -> SSAValue:
        """A `linalg.generic` over loops `iterators` ("parallel" / "reduction"): `inputs` with
        their indexing maps, one output (an initial tensor, or the sizes and element type of a new
        one) indexed by `output_map` (identity by default); `body(b, *elements, accumulator)`
        returns the value to yield."""
        init = output if isinstance(output, SSAValue) else self.empty(*output)
        out_type = _type_of(init)
        rank = len(iterators)
        maps = [m for _, m in inputs] + [output_map or AffineMap.identity(rank)]
        block = Block(arg_types=[_type_of(v).element_type for v, _ in inputs] + [out_type.element_type])
        b = Body(block)
        result = body(b, *block.args)
        block.add_op(linalg.YieldOp(result))
        op = linalg.GenericOp([v for v, _ in inputs], [init], Region(block), [AffineMapAttr(m) for m in maps],
                              [linalg.IteratorTypeAttr(linalg.IteratorType(it)) for it in iterators], [out_type])
        return self.add(op).results[0]

    def elementwise(self, operands: Sequence[SSAValue], result: GeTensorType,
                    body: Callable[..., SSAValue]) -> SSAValue:
        """`body(b, *elements)` at every position of `result`'s shape, the operands broadcast to
        it (numpy's rules, see the module docstring)."""
        rank = result.rank
        sizes = self._broadcast_sizes(operands, result)
        inputs = [(v, broadcast_map(_type_of(v).get_shape(), rank, result)) for v in operands]
        return self.generic(inputs, (sizes, signless(result.element_type)), ["parallel"] * rank,
                            lambda b, *args: body(b, *args[:-1]))

    def _broadcast_sizes(self, operands: Sequence[SSAValue], result: GeTensorType) -> list[Size]:
        sizes: list[Size] = []
        for axis, dim in enumerate(result.dims):
            if dim.is_fixed:
                sizes.append(dim.lo)
                continue
            # A dynamic result dimension comes from a dynamic operand dimension (shape inference).
            source = next(v for v in operands
                          if _aligned_dim(_type_of(v).get_shape(), axis, result.rank) == DYNAMIC_INDEX)
            sizes.append(self.dim(source, axis - result.rank + len(_type_of(source).get_shape())))
        return sizes


class IndexMath:
    """`index` arithmetic appended to a block (the function's, or a generic's body); an operand
    is an `index` value or an int."""

    def __init__(self, target: FuncBuilder | Body):
        self.target = target

    def value(self, v: Size) -> SSAValue:
        if isinstance(v, SSAValue):
            return v
        if isinstance(self.target, FuncBuilder):
            return self.target.index(v)
        return self.target.constant(v, IndexType())

    def binary(self, op_type: type[Operation], x: Size, y: Size) -> SSAValue:
        op = op_type(self.value(x), self.value(y))
        self.target.add(op)
        return op.results[0]

    def add(self, x: Size, y: Size) -> SSAValue:
        return self.binary(arith.AddiOp, x, y)

    def sub(self, x: Size, y: Size) -> SSAValue:
        return self.binary(arith.SubiOp, x, y)

    def mul(self, x: Size, y: Size) -> SSAValue:
        return self.binary(arith.MuliOp, x, y)

    def max(self, x: Size, y: Size) -> SSAValue:
        return self.binary(arith.MaxSIOp, x, y)

    def min(self, x: Size, y: Size) -> SSAValue:
        return self.binary(arith.MinSIOp, x, y)


def broadcast_map(shape: Sequence[int], rank: int, result: GeTensorType) -> AffineMap:
    """The map from the result's loops to an operand of `shape` broadcast to `rank` dimensions:
    trailing dimensions align; a static 1 against a result dimension that is not 1 reads index 0."""
    offset = rank - len(shape)
    exprs = []
    for axis, size in enumerate(shape):
        loop = axis + offset
        result_dim = result.dims[loop]
        broadcast = size == 1 and not (result_dim.is_fixed and result_dim.lo == 1)
        exprs.append(AffineExpr.constant(0) if broadcast else AffineExpr.dimension(loop))
    return AffineMap(rank, 0, tuple(exprs))


def _aligned_dim(shape: Sequence[int], axis: int, rank: int) -> int | None:
    position = axis - (rank - len(shape))
    return shape[position] if position >= 0 else None


def _type_of(value: SSAValue) -> TensorType:
    assert isinstance(value.type, TensorType), value.type
    return value.type
