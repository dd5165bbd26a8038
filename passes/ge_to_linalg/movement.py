"""Data movement: reshapes as `tensor.collapse_shape` / `tensor.expand_shape`, `linalg.transpose`,
slices as `tensor.extract_slice` / `tensor.insert_slice`, concatenation as `tensor.concat` (as
IREE's importer emits it), `tensor.pad`, and
`linalg.generic`s that read their input with `tensor.extract` (gather, mirrored padding, slices
with a negative step).

    %y = ge.reshape %x to [0, -1] : !ge.tensor<[-1, 3, 4], f32> -> !ge.tensor<[-1, 12], f32>
  ==>
    %y = tensor.collapse_shape %x [[0], [1, 2]] : tensor<?x3x4xf32> into tensor<?x12xf32>

A reshape is a regrouping when the sizes of the two shapes, as products of static factors and
dynamic sizes, split into groups of equal products; otherwise it collapses the input to one
dimension and expands that into the target (an inferred dynamic -1 divided out at run time).

Slice bounds follow `slice_bounds` (negative indices count from the end, then clamp); along a
dynamic dimension they are computed at run time. Gather wraps negative indices; an index still
out of range, which the reference kernel reports as an error at run time, is clamped into the
dimension (compiled code cannot raise). Likewise a dynamic dimension that squeeze removes is taken
to be 1 (`tensor.cast` to a static 1), as the reference requires at run time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (DYNAMIC_INDEX, ArrayAttr, DenseArrayBase, DenseIntOrFPElementsAttr, IndexType,
                                   IntegerAttr, TensorType, i64)
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.utils.dynamic_index_list import split_dynamic_index_list
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from dfir.core.shape_arith import slice_bounds, slice_length
from dfir.dialects import ge
from dfir.passes.ge_to_linalg.builder import Body, FuncBuilder, Size, Unsupported

__all__ = ["LOWERINGS", "constant_pad", "extract_slice", "gather_positions", "insert_slice", "reshape"]


# --- reshapes --------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Product:
    """A size as a static factor times dynamic sizes (`index` values, compared by identity)."""
    factor: int
    atoms: tuple[SSAValue, ...] = ()

    @staticmethod
    def of(size: Size | _Product) -> _Product:
        if isinstance(size, _Product):
            return size
        return _Product(size) if isinstance(size, int) else _Product(1, (size,))

    def __mul__(self, other: _Product) -> _Product:
        return _Product(self.factor * other.factor, tuple(sorted(self.atoms + other.atoms, key=id)))

    def divide(self, other: _Product) -> _Product | None:
        """self / other when it is a product too, else None."""
        atoms = list(self.atoms)
        for atom in other.atoms:
            if atom not in atoms:
                return None
            atoms.remove(atom)
        if other.factor == 0 or self.factor % other.factor:
            return None
        return _Product(self.factor // other.factor, tuple(atoms))


def _product(sizes: Sequence[_Product | Size]) -> _Product:
    total = _Product(1)
    for size in sizes:
        total = total * _Product.of(size)
    return total


def _materialize(builder: FuncBuilder, size: _Product) -> Size:
    if not size.atoms:
        return size.factor
    value = size.atoms[0]
    for atom in size.atoms[1:]:
        value = builder.add(arith.MuliOp(value, atom)).result
    if size.factor != 1:
        value = builder.add(arith.MuliOp(value, builder.index(size.factor))).result
    return value


def _regrouping(source: Sequence[_Product],
                target: Sequence[_Product]) -> tuple[list[list[int]], list[list[int]]] | None:
    """Groups of consecutive source and target dimensions with equal products, or None."""
    source_groups, target_groups = [], []
    i = j = 0
    while i < len(source) and j < len(target):
        group_s, group_t = [i], [j]
        ps, pt = source[i], target[j]
        i, j = i + 1, j + 1
        while ps != pt:
            if pt.factor and ps.divide(pt) is not None and j < len(target):
                group_t.append(j)
                pt, j = pt * target[j], j + 1
            elif ps.factor and pt.divide(ps) is not None and i < len(source):
                group_s.append(i)
                ps, i = ps * source[i], i + 1
            else:
                return None
        source_groups.append(group_s)
        target_groups.append(group_t)
    if any(s != _Product(1) for s in source[i:]) or any(t != _Product(1) for t in target[j:]):
        return None
    source_groups[-1].extend(range(i, len(source)))
    target_groups[-1].extend(range(j, len(target)))
    return source_groups, target_groups


def _reassociation(groups: Sequence[Sequence[int]]) -> ArrayAttr:
    return ArrayAttr([ArrayAttr([IntegerAttr(d, i64) for d in g]) for g in groups])


def _collapse(builder: FuncBuilder, x: SSAValue, groups: Sequence[Sequence[int]]) -> SSAValue:
    shape = x.type.get_shape()
    sizes = [DYNAMIC_INDEX if any(shape[d] == DYNAMIC_INDEX for d in g) else math.prod(shape[d] for d in g)
             for g in groups]
    result_type = TensorType(x.type.element_type, sizes)
    op = tensor.CollapseShapeOp.build(operands=[x], result_types=[result_type],
                                      properties={"reassociation": _reassociation(groups)})
    return builder.add(op).result


def _expand(builder: FuncBuilder, x: SSAValue, groups: Sequence[Sequence[int]], sizes: Sequence[Size]) -> SSAValue:
    static, dynamic = split_dynamic_index_list(sizes, DYNAMIC_INDEX)
    result_type = TensorType(x.type.element_type, static)
    return builder.add(tensor.ExpandShapeOp(x, dynamic, _reassociation(groups), static, result_type)).result


def reshape(builder: FuncBuilder, x: SSAValue, target: Sequence[Size | _Product]) -> SSAValue:
    """`x` (row-major) in the shape `target`, whose element count is `x`'s."""
    source = [_Product.of(s) for s in builder.sizes(x)]
    target = [_Product.of(t) for t in target]
    if source == target:
        return x
    if not target:
        return _collapse(builder, x, [])
    if not source:
        return _from_scalar(builder, x, len(target))
    grouping = _regrouping(source, target)
    source_groups, target_groups = grouping or ([list(range(len(source)))], [list(range(len(target)))])
    collapsed = x if all(len(g) == 1 for g in source_groups) else _collapse(builder, x, source_groups)
    if all(len(g) == 1 for g in target_groups):
        return collapsed
    sizes = [_materialize(builder, t) for t in target]
    result = _expand(builder, collapsed, target_groups, sizes)
    for axis, size in enumerate(sizes):
        if not isinstance(size, int):
            builder.set_dim(result, axis, size)
    return result


def _from_scalar(builder: FuncBuilder, x: SSAValue, rank: int) -> SSAValue:
    """Rank-0 `x` as a tensor of `rank` size-1 dimensions (xDSL's `tensor.expand_shape` verifier
    refuses the empty reassociation that MLIR takes for this)."""
    element = builder.add(tensor.ExtractOp(x, [], x.type.element_type)).result
    return builder.add(tensor.FromElementsOp(element, result_type=TensorType(x.type.element_type, [1] * rank))).result


def _fixed_or(result: ge.GeTensorType, sizes: Sequence[_Product | Size]) -> list[_Product | Size]:
    """`sizes`, static where the result's type fixes them (shape inference may know better)."""
    return [d.lo if d.is_fixed else s for d, s in zip(result.dims, sizes)]


def _reshape(builder: FuncBuilder, op: ge.ReshapeOp) -> list[SSAValue]:
    x = builder.value(op.input)
    source = [_Product.of(s) for s in builder.sizes(x)]
    shape = list(op.shape.get_values())
    target = _fixed_or(op.result.type, [source[i] if s == 0 else _Product(s) for i, s in enumerate(shape)])
    if -1 in shape and not op.result.type.dims[shape.index(-1)].is_fixed:
        axis = shape.index(-1)
        target[axis] = _inferred(builder, source, [t for i, t in enumerate(target) if i != axis])
    return [reshape(builder, x, target)]


def _inferred(builder: FuncBuilder, source: Sequence[_Product], others: Sequence[_Product]) -> _Product:
    """The size of a -1 entry: the source's element count over the other entries' product."""
    total, known = _product(source), _product(others)
    quotient = total.divide(known)
    if quotient is not None:
        return quotient
    total_size, known_size = (builder.as_index(_materialize(builder, p)) for p in (total, known))
    return _Product.of(builder.add(arith.DivUIOp(total_size, known_size)).result)


def _flatten(builder: FuncBuilder, op: ge.FlattenOp) -> list[SSAValue]:
    x = builder.value(op.input)
    sizes = [_Product.of(s) for s in builder.sizes(x)]
    axis = op.axis.value.data + len(sizes) if op.axis.value.data < 0 else op.axis.value.data
    return [reshape(builder, x, _fixed_or(op.result.type, [_product(sizes[:axis]), _product(sizes[axis:])]))]


def _squeeze(builder: FuncBuilder, op: ge.SqueezeOp) -> list[SSAValue]:
    x = builder.value(op.input)
    rank = len(x.type.get_shape())
    axes = {a % rank for a in op.axes.get_values()}
    shape = x.type.get_shape()
    if any(shape[a] == DYNAMIC_INDEX for a in axes):
        ones = TensorType(x.type.element_type, [1 if a in axes else s for a, s in enumerate(shape)])
        x = builder.add(tensor.CastOp(x, ones)).dest
    return [reshape(builder, x, [s for a, s in enumerate(builder.sizes(x)) if a not in axes])]


def _unsqueeze(builder: FuncBuilder, op: ge.UnsqueezeOp) -> list[SSAValue]:
    x = builder.value(op.input)
    rank = op.result.type.rank
    axes = {a % rank for a in op.axes.get_values()}
    rest = iter(builder.sizes(x))
    return [reshape(builder, x, [1 if a in axes else next(rest) for a in range(rank)])]


# --- permutation, joining, cutting -----------------------------------------------------------

def _transpose(builder: FuncBuilder, op: ge.TransposeOp) -> list[SSAValue]:
    x = builder.value(op.input)
    perm = list(op.perm.get_values())
    sizes = builder.sizes(x)
    init = builder.empty([sizes[p] for p in perm], x.type.element_type)
    return [builder.add(linalg.TransposeOp(x, init, DenseArrayBase.from_list(i64, perm))).results[0]]


def _add_sizes(builder: FuncBuilder, a: Size, b: Size) -> Size:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return builder.add(arith.AddiOp(builder.as_index(a), builder.as_index(b))).result


def _sub_sizes(builder: FuncBuilder, a: Size, b: Size) -> Size:
    if isinstance(a, int) and isinstance(b, int):
        return a - b
    return builder.add(arith.SubiOp(builder.as_index(a), builder.as_index(b))).result


def _slice_properties(offsets: Sequence[Size], sizes: Sequence[Size], strides: Sequence[Size]):
    lists = [split_dynamic_index_list(v, DYNAMIC_INDEX) for v in (offsets, sizes, strides)]
    properties = {name: DenseArrayBase.from_list(i64, static)
                  for name, (static, _) in zip(("static_offsets", "static_sizes", "static_strides"), lists)}
    return [dynamic for _, dynamic in lists], properties


def extract_slice(builder: FuncBuilder, x: SSAValue, offsets: Sequence[Size], sizes: Sequence[Size],
                  strides: Sequence[Size] | None = None) -> SSAValue:
    strides = [1] * len(sizes) if strides is None else strides
    dynamic, properties = _slice_properties(offsets, sizes, strides)
    result_type = TensorType(x.type.element_type, properties["static_sizes"].get_values())
    return builder.add(tensor.ExtractSliceOp.build(operands=[x, *dynamic], result_types=[result_type],
                                                   properties=properties)).result


def insert_slice(builder: FuncBuilder, source: SSAValue, dest: SSAValue, offsets: Sequence[Size],
                 strides: Sequence[int] | None = None) -> SSAValue:
    """`dest` with `source` written at `offsets`, its elements `strides` apart (default 1)."""
    strides = [1] * len(offsets) if strides is None else strides
    dynamic, properties = _slice_properties(offsets, builder.sizes(source), strides)
    return builder.add(tensor.InsertSliceOp.build(operands=[source, dest, *dynamic], result_types=[dest.type],
                                                  properties=properties)).result


def _concat(builder: FuncBuilder, op: ge.ConcatOp) -> list[SSAValue]:
    inputs = [builder.value(v) for v in op.inputs]
    rank = op.result.type.rank
    axis = op.axis.value.data % rank
    shapes = [x.type.get_shape() for x in inputs]
    along = [shape[axis] for shape in shapes]
    result_shape = [DYNAMIC_INDEX if DYNAMIC_INDEX in along else sum(along) if a == axis else
                    next((shape[a] for shape in shapes if shape[a] != DYNAMIC_INDEX), DYNAMIC_INDEX)
                    for a in range(rank)]
    result_type = TensorType(inputs[0].type.element_type, result_shape)
    return [builder.add(tensor.ConcatOp(inputs, axis, result_type)).result]


def _split(builder: FuncBuilder, op: ge.SplitOp) -> list[SSAValue]:
    x = builder.value(op.input)
    sizes = builder.sizes(x)
    axis = op.axis.value.data % len(sizes)
    pieces: list[Size] = list(op.sizes.get_values())
    if -1 in pieces:
        pieces[pieces.index(-1)] = _sub_sizes(builder, sizes[axis], sum(p for p in pieces if p != -1))
    results, offset = [], 0
    for piece, result in zip(pieces, op.outputs):
        piece_sizes = _fixed_or(result.type, [piece if a == axis else s for a, s in enumerate(sizes)])
        results.append(extract_slice(builder, x, [offset if a == axis else 0 for a in range(len(sizes))],
                                     piece_sizes))
        offset = _add_sizes(builder, offset, piece_sizes[axis])
    return results


# --- slice -----------------------------------------------------------------------------------

def _index_op(builder: FuncBuilder, op_class, *operands: Size) -> SSAValue:
    return builder.add(op_class(*(builder.as_index(v) for v in operands))).result


def _dynamic_bounds(builder: FuncBuilder, size: SSAValue, start: int, end: int, step: int) -> tuple[SSAValue, SSAValue]:
    """(first index, length) of `slice_bounds(size, start, end, step)` computed at run time."""
    def normalized(bound: int) -> SSAValue:
        return _index_op(builder, arith.AddiOp, size, bound) if bound < 0 else builder.index(bound)

    def clamp(value: SSAValue, lo: Size, hi: Size) -> SSAValue:
        return _index_op(builder, arith.MinSIOp, _index_op(builder, arith.MaxSIOp, value, lo), hi)

    if step > 0:
        first, stop = clamp(normalized(start), 0, size), clamp(normalized(end), 0, size)
    else:
        last = _index_op(builder, arith.SubiOp, size, 1)
        first = clamp(normalized(start), 0, last)
        stop = clamp(normalized(end), builder.index(-1), last)
    length = _index_op(builder, arith.CeilDivSIOp, _index_op(builder, arith.SubiOp, stop, first), step)
    return first, _index_op(builder, arith.MaxSIOp, length, 0)


def _slice(builder: FuncBuilder, op: ge.SliceOp) -> list[SSAValue]:
    x = builder.value(op.input)
    sizes = builder.sizes(x)
    rank = len(sizes)
    offsets: list[Size] = [0] * rank
    lengths: list[Size] = list(sizes)
    steps = [1] * rank
    for axis, start, end, step in zip(op.axes.get_values(), op.starts.get_values(), op.ends.get_values(),
                                      op.steps.get_values()):
        axis %= rank
        steps[axis] = step
        size = sizes[axis]
        if isinstance(size, int):
            offsets[axis] = slice_bounds(size, start, end, step).start if size else 0
            lengths[axis] = slice_length(size, start, end, step)
        else:
            offsets[axis], lengths[axis] = _dynamic_bounds(builder, size, start, end, step)
    lengths = _fixed_or(op.result.type, lengths)
    if all(s > 0 for s in steps):
        return [extract_slice(builder, x, offsets, lengths, steps)]
    return [gather_positions(builder, x, lengths,
                              lambda b, axis: _strided_index(b, offsets[axis], steps[axis]))]


def _strided_index(b: Body, offset: Size, step: int) -> Callable[[SSAValue], SSAValue]:
    def position(i: SSAValue) -> SSAValue:
        scaled = b.add(arith.MuliOp(i, b.constant(step, IndexType()))) if step != 1 else i
        return b.add(arith.AddiOp(b.constant(offset, IndexType()) if isinstance(offset, int) else offset, scaled))
    return position


def gather_positions(builder: FuncBuilder, x: SSAValue, sizes: Sequence[Size],
                      positions: Callable[[Body, int], Callable[[SSAValue], SSAValue] | None]) -> SSAValue:
    """A tensor of `sizes` whose element at `i` is `x[p_0(i_0), p_1(i_1), ...]`, `p_a` given by
    `positions(body, a)` (None: the identity)."""
    rank = len(sizes)

    def body(b: Body, out: SSAValue) -> SSAValue:
        indices = []
        for axis in range(rank):
            i = b.index(axis)
            position = positions(b, axis)
            indices.append(i if position is None else position(i))
        return b.add(tensor.ExtractOp(x, indices, x.type.element_type))

    return builder.generic([], (sizes, x.type.element_type), ["parallel"] * rank, body)


# --- gather ----------------------------------------------------------------------------------

def _gather(builder: FuncBuilder, op: ge.GatherOp) -> list[SSAValue]:
    x, indices = builder.value(op.input), builder.value(op.indices)
    sizes = builder.sizes(x)
    axis = op.axis.value.data % len(sizes)
    index_rank = len(indices.type.get_shape())
    result_sizes = [*sizes[:axis], *builder.sizes(indices), *sizes[axis + 1:]]
    rank = len(result_sizes)
    index_map = AffineMap(rank, 0, tuple(AffineExpr.dimension(axis + k) for k in range(index_rank)))
    size = builder.as_index(sizes[axis])

    def body(b: Body, raw: SSAValue, out: SSAValue) -> SSAValue:
        i = b.add(arith.IndexCastOp(raw, IndexType()))
        zero = b.constant(0, IndexType())
        wrapped = b.add(arith.SelectOp(b.add(arith.CmpiOp(i, zero, "slt")), b.add(arith.AddiOp(i, size)), i))
        last = b.add(arith.SubiOp(size, b.constant(1, IndexType())))
        clamped = b.add(arith.MinSIOp(b.add(arith.MaxSIOp(wrapped, zero)), last))
        position = ([b.index(d) for d in range(axis)] + [clamped]
                    + [b.index(axis + index_rank + k) for k in range(len(sizes) - axis - 1)])
        return b.add(tensor.ExtractOp(x, position, x.type.element_type))

    return [builder.generic([(indices, index_map)], (result_sizes, x.type.element_type), ["parallel"] * rank, body)]


# --- pad -------------------------------------------------------------------------------------

def _pad(builder: FuncBuilder, op: ge.PadOp) -> list[SSAValue]:
    x = builder.value(op.input)
    sizes = builder.sizes(x)
    rank = len(sizes)
    pads = list(op.pads.get_values())
    begins, ends = pads[:rank], pads[rank:]
    if any(p < 0 for p in pads):
        crop = [_sub_sizes(builder, _sub_sizes(builder, s, max(0, -b)), max(0, -e))
                for s, b, e in zip(sizes, begins, ends)]
        x = extract_slice(builder, x, [max(0, -b) for b in begins], crop)
    low, high = [max(0, b) for b in begins], [max(0, e) for e in ends]
    if not any(low + high):
        return [x]
    mode = op.mode.data
    if mode == "constant":
        return [constant_pad(builder, x, low, high, op.value.value.data)]
    if mode not in ("edge", "reflect"):
        raise Unsupported(f"pad mode {mode!r}")
    cropped = builder.sizes(x)
    out_sizes = [_add_sizes(builder, s, lo + hi) for s, lo, hi in zip(cropped, low, high)]
    mirror = _edge_index if mode == "edge" else _reflect_index

    def position(b: Body, axis: int) -> Callable[[SSAValue], SSAValue] | None:
        if not (low[axis] or high[axis]):
            return None
        size = builder.as_index(cropped[axis])
        return lambda i: mirror(b, b.add(arith.SubiOp(i, b.constant(low[axis], IndexType()))), size)

    return [gather_positions(builder, x, out_sizes, position)]


def constant_pad(builder: FuncBuilder, x: SSAValue, low: list[int], high: list[int], value: float) -> SSAValue:
    """`x` padded with `value`: `low[i]` elements before dimension i, `high[i]` after."""
    element_type = x.type.element_type
    shape = x.type.get_shape()
    result_type = TensorType(element_type, [s if s == DYNAMIC_INDEX else s + lo + hi
                                            for s, lo, hi in zip(shape, low, high)])
    block = Block(arg_types=[IndexType()] * len(shape))
    fill = Body(block).constant(value, element_type)
    block.add_op(tensor.YieldOp(fill))
    return builder.add(tensor.PadOp(x, [], [], Region(block), low, high, result_type)).result


def _edge_index(b: Body, i: SSAValue, size: SSAValue) -> SSAValue:
    last = b.add(arith.SubiOp(size, b.constant(1, IndexType())))
    return b.add(arith.MinSIOp(b.add(arith.MaxSIOp(i, b.constant(0, IndexType()))), last))


def _reflect_index(b: Body, i: SSAValue, size: SSAValue) -> SSAValue:
    """numpy's "reflect": periodic with period 2 (size - 1), mirrored without repeating the edge."""
    one = b.constant(1, IndexType())
    period = b.add(arith.MaxSIOp(b.add(arith.MuliOp(b.add(arith.SubiOp(size, one)), b.constant(2, IndexType()))), one))
    distance = b.add(arith.MaxSIOp(i, b.add(arith.SubiOp(b.constant(0, IndexType()), i))))
    j = b.add(arith.RemSIOp(distance, period))
    return b.add(arith.SelectOp(b.add(arith.CmpiOp(j, size, "sge")), b.add(arith.SubiOp(period, j)), j))


# --- shape -----------------------------------------------------------------------------------

def _shape(builder: FuncBuilder, op: ge.ShapeOp) -> list[SSAValue]:
    sizes = builder.sizes(builder.value(op.input))
    if all(isinstance(s, int) for s in sizes):
        value = DenseIntOrFPElementsAttr.from_list(TensorType(i64, [len(sizes)]), sizes)
        return [builder.add(arith.ConstantOp(value)).result]
    elements = [builder.add(arith.IndexCastOp(builder.as_index(s), i64)).result for s in sizes]
    return [builder.add(tensor.FromElementsOp(*elements, result_type=TensorType(i64, [len(sizes)]))).result]


# --- expand and tile ---------------------------------------------------------------------

def _expand_op(builder: FuncBuilder, op: ge.ExpandOp) -> list[SSAValue]:
    return [builder.elementwise([builder.value(op.input)], op.result.type, lambda b, v: v)]


def _tile(builder: FuncBuilder, op: ge.TileOp) -> list[SSAValue]:
    """A generic over (repeat, position) loop pairs reading the input at the positions, collapsed
    pair by pair into the result."""
    x = builder.value(op.input)
    sizes = builder.sizes(x)
    repeats = list(op.repeats.get_values())
    rank = len(sizes)
    pairs = [s for r, size in zip(repeats, sizes) for s in (r, size)]
    reading = AffineMap(2 * rank, 0, tuple(AffineExpr.dimension(2 * a + 1) for a in range(rank)))
    copies = builder.generic([(x, reading)], (pairs, x.type.element_type), ["parallel"] * (2 * rank),
                             lambda b, v, out: v)
    return [_collapse(builder, copies, [[2 * a, 2 * a + 1] for a in range(rank)])]


def _trilu(builder: FuncBuilder, op: ge.TriluOp) -> list[SSAValue]:
    """`select(j - i >= k, x, 0)` (upper; `<=` lower) over the last two loop indices."""
    rank = op.result.type.rank
    k, t = op.k.value.data, op.result.type.element_type

    def keep(b: Body, v: SSAValue) -> SSAValue:
        offset = b.add(arith.SubiOp(b.index(rank - 1), b.index(rank - 2)))
        kept = b.add(arith.CmpiOp(offset, b.constant(k, IndexType()), "sge" if op.upper is not None else "sle"))
        return b.add(arith.SelectOp(kept, v, b.constant(0, t)))

    return [builder.elementwise([builder.value(op.input)], op.result.type, keep)]


LOWERINGS: dict[type[Operation], Callable] = {
    ge.ReshapeOp: _reshape, ge.FlattenOp: _flatten, ge.SqueezeOp: _squeeze, ge.UnsqueezeOp: _unsqueeze,
    ge.TransposeOp: _transpose, ge.ConcatOp: _concat, ge.SplitOp: _split, ge.SliceOp: _slice,
    ge.GatherOp: _gather, ge.PadOp: _pad, ge.ShapeOp: _shape,
    ge.ExpandOp: _expand_op, ge.TileOp: _tile, ge.TriluOp: _trilu,
}
