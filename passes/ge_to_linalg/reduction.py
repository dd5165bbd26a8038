"""Reductions and normalizations: a `linalg.generic` with reduction loops into a filled
accumulator per reduction, reduced dimensions kept as size 1 (`tensor.expand_shape`) where the
result or a later broadcast needs them, and element-wise `linalg.generic`s around them.

    %y = ge.reduce_sum %x axes [1] keep_dims : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1, 1], f32>
  ==>
    %zero = linalg.fill ins(%c0 : f32) outs(%empty : tensor<?xf32>) -> tensor<?xf32>
    %sum = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0)],
                           iterator_types = ["parallel", "reduction"]} ins(%x) outs(%zero) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    }
    %y = tensor.expand_shape %sum [[0, 1]] output_shape [%d0, 1] : tensor<?xf32> into tensor<?x1xf32>

As the reference kernels: a sum accumulates in the input type; a mean accumulates floats in their
type (float16 in float32) and integers in float64, then converts back (truncating toward zero);
a maximum propagates NaN; softmax subtracts the maximum along its axis first. Boolean reductions
have no lowering.
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as m
from xdsl.dialects.builtin import Float16Type, IntegerType, f32, f64, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from dfir.dialects import ge
from dfir.passes.ge_to_linalg.builder import Body, FuncBuilder, Unsupported, is_float, is_unsigned, signless
from dfir.passes.ge_to_linalg.elementwise import convert
from dfir.passes.ge_to_linalg.movement import reshape

__all__ = ["LOWERINGS"]

Combine = Callable[[Body, SSAValue, SSAValue], SSAValue]
"""(body, element, accumulator) -> new accumulator."""


def reduce(builder: FuncBuilder, x: SSAValue, axes: Sequence[int], element_type: Attribute,
           init: float | int, combine: Combine) -> SSAValue:
    """`x` reduced over `axes` (dropped from the result) by `combine`, from `init`."""
    sizes = builder.sizes(x)
    rank = len(sizes)
    kept = [a for a in range(rank) if a not in axes]
    accumulator = builder.full([sizes[a] for a in kept], element_type, init)
    output_map = AffineMap(rank, 0, tuple(AffineExpr.dimension(a) for a in kept))
    iterators = ["reduction" if a in axes else "parallel" for a in range(rank)]
    result = builder.generic([(x, AffineMap.identity(rank))], accumulator, iterators, combine, output_map)
    for axis, a in enumerate(kept):
        if not isinstance(sizes[a], int):
            builder.set_dim(result, axis, sizes[a])
    return result


def keep_dims(builder: FuncBuilder, reduced: SSAValue, axes: Sequence[int], rank: int) -> SSAValue:
    """`reduced` with its reduced `axes` back as size-1 dimensions."""
    rest = iter(builder.sizes(reduced))
    return reshape(builder, reduced, [1 if a in axes else next(rest) for a in range(rank)])


def _axes(op: Operation, rank: int) -> list[int]:
    return sorted({a % rank for a in op.axes.get_values()})


def _reducible_type(value: SSAValue) -> Attribute:
    t = value.type.element_type
    if t == IntegerType(1):
        raise Unsupported("boolean reductions have no lowering")
    return t


def _add(t: Attribute) -> Combine:
    return lambda b, x, acc: b.add(arith.AddfOp(acc, x) if is_float(t) else arith.AddiOp(acc, x))


def _maximum(t: Attribute) -> Combine:
    op = arith.MaximumfOp if is_float(t) else arith.MaxUIOp if is_unsigned(t) else arith.MaxSIOp
    return lambda b, x, acc: b.add(op(acc, x))


def _lowest(t: Attribute) -> float | int:
    if is_float(t):
        return -math.inf
    return 0 if is_unsigned(t) else -(1 << (t.width.data - 1))


def _count(builder: FuncBuilder, x: SSAValue, axes: Sequence[int], element_type: Attribute) -> SSAValue:
    """How many elements of `x` each reduction over `axes` takes, as a scalar of `element_type`."""
    sizes = [builder.dim(x, a) for a in axes]
    static = math.prod(s for s in sizes if isinstance(s, int))
    dynamic = [s for s in sizes if not isinstance(s, int)]
    if not dynamic:
        return builder.scalar(static, element_type)
    count = builder.as_index(static)
    for size in dynamic:
        count = builder.add(arith.MuliOp(count, size)).result
    as_int = builder.add(arith.IndexCastOp(count, i64)).result
    return builder.add(arith.SIToFPOp(as_int, element_type)).result


def _reduce_sum(builder: FuncBuilder, op: ge.ReduceSumOp) -> list[SSAValue]:
    return _reduction(builder, op, lambda x, axes, t: reduce(builder, x, axes, t, 0, _add(t)))


def _reduce_max(builder: FuncBuilder, op: ge.ReduceMaxOp) -> list[SSAValue]:
    return _reduction(builder, op, lambda x, axes, t: reduce(builder, x, axes, t, _lowest(t), _maximum(t)))


def _reduce_mean(builder: FuncBuilder, op: ge.ReduceMeanOp) -> list[SSAValue]:
    return _reduction(builder, op, lambda x, axes, t: mean(builder, x, axes, op.input.type.element_type))


def _reduction(builder: FuncBuilder, op: Operation,
               reduced: Callable[[SSAValue, list[int], Attribute], SSAValue]) -> list[SSAValue]:
    x = builder.value(op.input)
    rank = len(x.type.get_shape())
    axes = _axes(op, rank)
    result = reduced(x, axes, signless(_reducible_type(x)))
    return [keep_dims(builder, result, axes, rank) if op.keep_dims is not None else result]


def _accumulator_type(t: Attribute) -> Attribute:
    if isinstance(t, Float16Type):
        return f32
    return t if is_float(t) else f64


def mean(builder: FuncBuilder, x: SSAValue, axes: Sequence[int], element_type: Attribute) -> SSAValue:
    """numpy's mean of `x` (of ge element type `element_type`) over `axes`, in that type."""
    wide = _accumulator_type(element_type)
    add = _add(wide)
    total = reduce(builder, x, axes, wide, 0, lambda b, v, acc: add(b, convert(b, element_type, wide, v), acc))
    count = _count(builder, x, axes, wide)
    sizes = builder.sizes(total)
    return builder.generic([(total, AffineMap.identity(len(sizes)))], (sizes, signless(element_type)),
                           ["parallel"] * len(sizes),
                           lambda b, s, out: convert(b, wide, element_type, b.add(arith.DivfOp(s, count))))


def _global_avg_pool(builder: FuncBuilder, op: ge.GlobalAvgPoolOp) -> list[SSAValue]:
    x = builder.value(op.input)
    rank = len(x.type.get_shape())
    axes = list(range(2, rank))
    return [keep_dims(builder, mean(builder, x, axes, op.input.type.element_type), axes, rank)]


# --- normalization -------------------------------------------------------------------------

def _softmax(builder: FuncBuilder, op: ge.SoftmaxOp) -> list[SSAValue]:
    x = builder.value(op.input)
    t = x.type.element_type
    rank = len(x.type.get_shape())
    axes = [op.axis.value.data % rank]
    peak = keep_dims(builder, reduce(builder, x, axes, t, -math.inf, _maximum(t)), axes, rank)
    exps = builder.elementwise([x, peak], op.result.type, lambda b, v, p: b.add(m.ExpOp(b.add(arith.SubfOp(v, p)))))
    total = keep_dims(builder, reduce(builder, exps, axes, t, 0, _add(t)), axes, rank)
    return [builder.elementwise([exps, total], op.result.type, lambda b, e, s: b.add(arith.DivfOp(e, s)))]


def _layer_norm(builder: FuncBuilder, op: ge.LayerNormOp) -> list[SSAValue]:
    x = builder.value(op.input)
    t = x.type.element_type
    rank = len(x.type.get_shape())
    axes = list(range(op.axis.value.data % rank, rank))
    count = _count(builder, x, axes, t)
    average = keep_dims(builder, mean(builder, x, axes, t), axes, rank)
    centered = builder.elementwise([x, average], op.result.type, lambda b, v, a: b.add(arith.SubfOp(v, a)))

    def square_add(b: Body, c: SSAValue, acc: SSAValue) -> SSAValue:
        return b.add(arith.AddfOp(acc, b.add(arith.MulfOp(c, c))))

    squares = keep_dims(builder, reduce(builder, centered, axes, t, 0, square_add), axes, rank)
    parameters = [builder.value(v) for v in (op.scale, op.bias) if v is not None]
    epsilon = builder.scalar(op.epsilon.value.data, t)

    def normalize(b: Body, c: SSAValue, s: SSAValue, scale: SSAValue, *bias: SSAValue) -> SSAValue:
        variance = b.add(arith.DivfOp(s, count))
        y = b.add(arith.MulfOp(b.add(arith.DivfOp(c, b.add(m.SqrtOp(b.add(arith.AddfOp(variance, epsilon)))))), scale))
        return b.add(arith.AddfOp(y, bias[0])) if bias else y

    return [builder.elementwise([centered, squares, *parameters], op.result.type, normalize)]


def _batch_norm(builder: FuncBuilder, op: ge.BatchNormOp) -> list[SSAValue]:
    x = builder.value(op.input)
    t = x.type.element_type
    sizes = builder.sizes(x)
    rank = len(sizes)
    channel = AffineMap(rank, 0, (AffineExpr.dimension(1),))
    parameters = [(builder.value(v), channel) for v in (op.scale, op.offset, op.mean, op.variance)]
    epsilon = builder.scalar(op.epsilon.value.data, t)

    def normalize(b: Body, v: SSAValue, scale: SSAValue, offset: SSAValue, average: SSAValue,
                  variance: SSAValue, out: SSAValue) -> SSAValue:
        factor = b.add(arith.DivfOp(scale, b.add(m.SqrtOp(b.add(arith.AddfOp(variance, epsilon))))))
        return b.add(arith.AddfOp(b.add(arith.MulfOp(b.add(arith.SubfOp(v, average)), factor)), offset))

    return [builder.generic([(x, AffineMap.identity(rank)), *parameters], (sizes, t), ["parallel"] * rank,
                            normalize)]


LOWERINGS = {ge.ReduceSumOp: _reduce_sum, ge.ReduceMaxOp: _reduce_max, ge.ReduceMeanOp: _reduce_mean,
             ge.GlobalAvgPoolOp: _global_avg_pool, ge.SoftmaxOp: _softmax, ge.LayerNormOp: _layer_norm,
             ge.BatchNormOp: _batch_norm}
