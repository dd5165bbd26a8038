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
have no lowering. The other reductions fold an element function into the accumulation (|x| for
L1, x² for L2 and the sum of squares) and apply a final one (sqrt, log); log-sum-exp and
log-softmax shift by the maximum (log-sum-exp by 0 where the maximum is not finite). An arg-reduction finds the extreme
value first, then the least (or, with `select_last_index`, the greatest) position holding it (or
holding a NaN, which the extreme is when there is one). `ge.top_k` sorts, which upstream linalg has
no form for: it stays on the reference backend. A scatter reduces the updates into the data: a
generic over the data's positions and the updates' positions that combines each update with the
element it lands on; an index out of range, which the reference kernel refuses at run time, lands
nowhere (compiled code cannot raise).
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as m
from xdsl.dialects.builtin import DYNAMIC_INDEX, Float16Type, IndexType, IntegerType, f32, f64, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from dfir.dialects import ge
from dfir.dialects.ge_types import DimRange, GeTensorType
from dfir.passes.ge_to_linalg.builder import Body, FuncBuilder, Unsupported, is_float, is_unsigned, signless
from dfir.passes.ge_to_linalg.elementwise import convert
from dfir.passes.ge_to_linalg.movement import constant_pad, reshape

__all__ = ["LOWERINGS"]

Combine = Callable[[Body, SSAValue, SSAValue], SSAValue]
"""(body, element, accumulator) -> new accumulator."""


def reduce(builder: FuncBuilder, x: SSAValue, axes: Sequence[int], element_type: Attribute,
           init: float | int, combine: Combine) -> SSAValue:
    """`x` reduced over `axes` (dropped from the result) by `combine`, from `init`;
    `element_type` is the ge type of the accumulator (unsigned integers accumulate signless)."""
    sizes = builder.sizes(x)
    rank = len(sizes)
    kept = [a for a in range(rank) if a not in axes]
    accumulator = builder.full([sizes[a] for a in kept], signless(element_type), init)
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
    """The ge element type of a reduction's input (unsigned kept: it picks the unsigned ops)."""
    t = value.type.element_type
    if t == IntegerType(1):
        raise Unsupported("boolean reductions have no lowering")
    return t


def _add(t: Attribute) -> Combine:
    return lambda b, x, acc: b.add(arith.AddfOp(acc, x) if is_float(t) else arith.AddiOp(acc, x))


def _maximum(t: Attribute) -> Combine:
    op = arith.MaximumfOp if is_float(t) else arith.MaxUIOp if is_unsigned(t) else arith.MaxSIOp
    return lambda b, x, acc: b.add(op(acc, x))


def _minimum(t: Attribute) -> Combine:
    op = arith.MinimumfOp if is_float(t) else arith.MinUIOp if is_unsigned(t) else arith.MinSIOp
    return lambda b, x, acc: b.add(op(acc, x))


def _multiply(t: Attribute) -> Combine:
    return lambda b, x, acc: b.add(arith.MulfOp(acc, x) if is_float(t) else arith.MuliOp(acc, x))


def _lowest(t: Attribute) -> float | int:
    if is_float(t):
        return -math.inf
    return 0 if is_unsigned(t) else -(1 << (t.width.data - 1))


def _highest(t: Attribute) -> float | int:
    if is_float(t):
        return math.inf
    return (1 << t.width.data) - 1 if is_unsigned(t) else (1 << (t.width.data - 1)) - 1


def _square(b: Body, t: Attribute, x: SSAValue) -> SSAValue:
    return b.add(arith.MulfOp(x, x) if is_float(t) else arith.MuliOp(x, x))


def _absolute(b: Body, t: Attribute, x: SSAValue) -> SSAValue:
    if is_unsigned(t):
        return x
    return b.add(m.AbsFOp(x) if is_float(t) else m.AbsIOp(x))


def _mapped(element: Callable[[Body, Attribute, SSAValue], SSAValue], t: Attribute) -> Combine:
    """Accumulate `element(x)` by addition."""
    add = _add(t)
    return lambda b, x, acc: add(b, element(b, t, x), acc)


def _then(builder: FuncBuilder, reduced: SSAValue, element_type: Attribute,
          final: Callable[[Body, SSAValue], SSAValue]) -> SSAValue:
    """`final` applied to every element of `reduced`."""
    sizes = builder.sizes(reduced)
    return builder.generic([(reduced, AffineMap.identity(len(sizes)))], (sizes, signless(element_type)),
                           ["parallel"] * len(sizes), lambda b, v, out: final(b, v))


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


def _reduce_prod(builder: FuncBuilder, op: ge.ReduceProdOp) -> list[SSAValue]:
    return _reduction(builder, op, lambda x, axes, t: reduce(builder, x, axes, t, 1, _multiply(t)))


def _reduce_min(builder: FuncBuilder, op: ge.ReduceMinOp) -> list[SSAValue]:
    return _reduction(builder, op, lambda x, axes, t: reduce(builder, x, axes, t, _highest(t), _minimum(t)))


def _reduce_l1(builder: FuncBuilder, op: ge.ReduceL1Op) -> list[SSAValue]:
    return _reduction(builder, op, lambda x, axes, t: reduce(builder, x, axes, t, 0, _mapped(_absolute, t)))


def _reduce_sum_square(builder: FuncBuilder, op: ge.ReduceSumSquareOp) -> list[SSAValue]:
    return _reduction(builder, op, lambda x, axes, t: reduce(builder, x, axes, t, 0, _mapped(_square, t)))


def _reduce_l2(builder: FuncBuilder, op: ge.ReduceL2Op) -> list[SSAValue]:
    ge_type = op.input.type.element_type

    def root(b: Body, v: SSAValue) -> SSAValue:
        if is_float(ge_type):
            return b.add(m.SqrtOp(v))
        return convert(b, f64, ge_type, b.add(m.SqrtOp(convert(b, ge_type, f64, v))))

    return _reduction(builder, op, lambda x, axes, t: _then(
        builder, reduce(builder, x, axes, t, 0, _mapped(_square, t)), t, root))


def _reduce_log_sum(builder: FuncBuilder, op: ge.ReduceLogSumOp) -> list[SSAValue]:
    return _reduction(builder, op, lambda x, axes, t: _then(
        builder, reduce(builder, x, axes, t, 0, _add(t)), t, lambda b, v: b.add(m.LogOp(v))))


def _finite_or_zero(b: Body, v: SSAValue, t: Attribute) -> SSAValue:
    finite = b.add(arith.CmpfOp(b.add(m.AbsFOp(v)), b.constant(math.inf, t), "olt"))
    return b.add(arith.SelectOp(finite, v, b.constant(0, t)))


def _reduce_log_sum_exp(builder: FuncBuilder, op: ge.ReduceLogSumExpOp) -> list[SSAValue]:
    def log_sum_exp(x: SSAValue, axes: list[int], t: Attribute) -> SSAValue:
        rank = len(x.type.get_shape())
        peak = reduce(builder, x, axes, t, -math.inf, _maximum(t))
        shift = _then(builder, peak, t, lambda b, v: _finite_or_zero(b, v, t))
        kept = keep_dims(builder, shift, axes, rank)
        shape = GeTensorType([DimRange.unknown() if s == DYNAMIC_INDEX else DimRange.fixed(s)
                              for s in x.type.get_shape()], t)
        exps = builder.elementwise([x, kept], shape, lambda b, v, p: b.add(m.ExpOp(b.add(arith.SubfOp(v, p)))))
        total = reduce(builder, exps, axes, t, 0, _add(t))
        sizes = builder.sizes(total)
        identity = AffineMap.identity(len(sizes))
        return builder.generic([(total, identity), (shift, identity)], (sizes, t), ["parallel"] * len(sizes),
                               lambda b, s, p, out: b.add(arith.AddfOp(b.add(m.LogOp(s)), p)))

    return _reduction(builder, op, log_sum_exp)


def _reduction(builder: FuncBuilder, op: Operation,
               reduced: Callable[[SSAValue, list[int], Attribute], SSAValue]) -> list[SSAValue]:
    x = builder.value(op.input)
    rank = len(x.type.get_shape())
    axes = _axes(op, rank)
    result = reduced(x, axes, _reducible_type(op.input))
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


# --- arg-reductions ------------------------------------------------------------------------

def _arg_reduction(builder: FuncBuilder, op: ge.ArgMaxOp | ge.ArgMinOp, largest: bool) -> list[SSAValue]:
    x = builder.value(op.input)
    t = _reducible_type(op.input)
    rank = len(x.type.get_shape())
    axis = op.axis.value.data % rank
    peak = reduce(builder, x, [axis], t, _lowest(t) if largest else _highest(t), (_maximum if largest else _minimum)(t))
    last = op.select_last_index is not None
    peak_map = AffineMap(rank, 0, tuple(AffineExpr.dimension(a) for a in range(rank) if a != axis))

    def position(b: Body, v: SSAValue, p: SSAValue, acc: SSAValue) -> SSAValue:
        here = b.add(arith.IndexCastOp(b.index(axis), i64))
        if is_float(t):
            hit = b.add(arith.OrIOp(b.add(arith.CmpfOp(v, p, "oeq")), b.add(arith.CmpfOp(v, v, "uno"))))
        else:
            hit = b.add(arith.CmpiOp(v, p, "eq"))
        candidate = b.add(arith.SelectOp(hit, here, acc))
        return b.add((arith.MaxSIOp if last else arith.MinSIOp)(acc, candidate))

    sizes = builder.sizes(x)
    kept = [sizes[a] for a in range(rank) if a != axis]
    start = builder.full(kept, i64, -1 if last else (1 << 63) - 1)
    iterators = ["reduction" if a == axis else "parallel" for a in range(rank)]
    result = builder.generic([(x, AffineMap.identity(rank)), (peak, peak_map)], start, iterators, position, peak_map)
    return [keep_dims(builder, result, [axis], rank) if op.keep_dims is not None else result]


def _top_k(builder: FuncBuilder, op: ge.TopKOp) -> list[SSAValue]:
    raise Unsupported("top-k sorts, and upstream linalg has no sort")


def _cumulative(builder: FuncBuilder, op: ge.CumSumOp | ge.CumProdOp, combine: Callable[[Attribute], Combine],
                identity: int) -> list[SSAValue]:
    """A generic over the result's positions and a reduction loop j along the axis reading the
    input at j, combining it where j precedes the position (`<=`; `<` exclusive; `>=` / `>`
    reverse) and the identity elsewhere."""
    x = builder.value(op.input)
    t = _reducible_type(op.input)
    rank = len(x.type.get_shape())
    axis = op.axis.value.data % rank
    dims = [AffineExpr.dimension(a) for a in range(rank + 1)]
    reading = AffineMap(rank + 1, 0, tuple(dims[rank] if a == axis else dims[a] for a in range(rank)))
    predicate = {(False, False): "sle", (True, False): "slt", (False, True): "sge", (True, True): "sgt"}[
        (op.exclusive is not None, op.reverse is not None)]
    step = combine(t)

    def accumulate(b: Body, v: SSAValue, acc: SSAValue) -> SSAValue:
        counted = b.add(arith.CmpiOp(b.index(rank), b.index(axis), predicate))
        return step(b, b.add(arith.SelectOp(counted, v, b.constant(identity, t))), acc)

    start = builder.full(builder.sizes(x), signless(t), identity)
    return [builder.generic([(x, reading)], start, ["parallel"] * rank + ["reduction"], accumulate,
                            AffineMap(rank + 1, 0, tuple(dims[:rank])))]


_SCATTER_COMBINES: dict[str, Callable[[Attribute], Combine]] = {
    "none": lambda t: lambda b, x, acc: x, "add": _add, "mul": _multiply, "max": _maximum, "min": _minimum}


def _scatter_elements(builder: FuncBuilder, op: ge.ScatterElementsOp) -> list[SSAValue]:
    """Loops p over the data (parallel) and u over the updates (reduction, in row-major order, so
    of repeated targets the last replaces): update u is combined into element p when p is u with
    its axis coordinate replaced by the wrapped `indices[u]`."""
    data, indices, updates = builder.value(op.data), builder.value(op.indices), builder.value(op.updates)
    rank = len(data.type.get_shape())
    axis = op.axis.value.data % rank
    size = builder.as_index(builder.dim(data, axis))
    step = _SCATTER_COMBINES[op.reduction.data](op.data.type.element_type)
    reading = AffineMap(2 * rank, 0, tuple(AffineExpr.dimension(rank + d) for d in range(rank)))

    def scatter(b: Body, raw: SSAValue, update: SSAValue, acc: SSAValue) -> SSAValue:
        i = b.add(arith.IndexCastOp(raw, IndexType()))
        wrapped = b.add(arith.SelectOp(b.add(arith.CmpiOp(i, b.constant(0, IndexType()), "slt")),
                                       b.add(arith.AddiOp(i, size)), i))
        hit = b.add(arith.CmpiOp(wrapped, b.index(axis), "eq"))
        for d in range(rank):
            if d != axis:
                hit = b.add(arith.AndIOp(hit, b.add(arith.CmpiOp(b.index(rank + d), b.index(d), "eq"))))
        return b.add(arith.SelectOp(hit, step(b, update, acc), acc))

    return [builder.generic([(indices, reading), (updates, reading)], data, ["parallel"] * rank + ["reduction"] * rank,
                            scatter, AffineMap(2 * rank, 0, tuple(AffineExpr.dimension(d) for d in range(rank))))]


# --- normalization -------------------------------------------------------------------------

def _shifted_exponentials(builder: FuncBuilder, op: ge.SoftmaxOp | ge.LogSoftmaxOp) -> tuple[SSAValue, ...]:
    """`x - max`, its exponentials and their sum (kept as size 1) along the op's axis."""
    x = builder.value(op.input)
    t = x.type.element_type
    rank = len(x.type.get_shape())
    axes = [op.axis.value.data % rank]
    peak = keep_dims(builder, reduce(builder, x, axes, t, -math.inf, _maximum(t)), axes, rank)
    shifted = builder.elementwise([x, peak], op.result.type, lambda b, v, p: b.add(arith.SubfOp(v, p)))
    exps = builder.elementwise([shifted], op.result.type, lambda b, s: b.add(m.ExpOp(s)))
    return shifted, exps, keep_dims(builder, reduce(builder, exps, axes, t, 0, _add(t)), axes, rank)


def _softmax(builder: FuncBuilder, op: ge.SoftmaxOp) -> list[SSAValue]:
    _, exps, total = _shifted_exponentials(builder, op)
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


def _log_softmax(builder: FuncBuilder, op: ge.LogSoftmaxOp) -> list[SSAValue]:
    shifted, _, total = _shifted_exponentials(builder, op)
    return [builder.elementwise([shifted, total], op.result.type,
                                lambda b, s, e: b.add(arith.SubfOp(s, b.add(m.LogOp(e)))))]


def _instance_norm(builder: FuncBuilder, op: ge.InstanceNormOp) -> list[SSAValue]:
    x = builder.value(op.input)
    t = x.type.element_type
    rank = len(x.type.get_shape())
    axes = list(range(2, rank))
    count = _count(builder, x, axes, t)
    average = keep_dims(builder, mean(builder, x, axes, t), axes, rank)
    centered = builder.elementwise([x, average], op.result.type, lambda b, v, a: b.add(arith.SubfOp(v, a)))
    squares = keep_dims(builder, reduce(builder, centered, axes, t, 0, _mapped(_square, t)), axes, rank)
    squares_map = AffineMap(rank, 0, tuple(AffineExpr.dimension(a) if a < 2 else AffineExpr.constant(0)
                                           for a in range(rank)))
    channel = AffineMap(rank, 0, (AffineExpr.dimension(1),))
    epsilon = builder.scalar(op.epsilon.value.data, t)

    def normalize(b: Body, c: SSAValue, s: SSAValue, scale: SSAValue, bias: SSAValue, out: SSAValue) -> SSAValue:
        variance = b.add(arith.DivfOp(s, count))
        root = b.add(m.SqrtOp(b.add(arith.AddfOp(variance, epsilon))))
        return b.add(arith.AddfOp(b.add(arith.MulfOp(b.add(arith.DivfOp(c, root)), scale)), bias))

    inputs = [(centered, AffineMap.identity(rank)), (squares, squares_map),
              (builder.value(op.scale), channel), (builder.value(op.bias), channel)]
    return [builder.generic(inputs, (builder.sizes(centered), t), ["parallel"] * rank, normalize)]


def _lrn(builder: FuncBuilder, op: ge.LrnOp) -> list[SSAValue]:
    """The window sum is a generic with a reduction loop over the `size` channels of the
    zero-padded squares (its extent from an empty [size] tensor)."""
    x = builder.value(op.input)
    t = x.type.element_type
    rank = len(x.type.get_shape())
    size = op.size.value.data
    squares = builder.elementwise([x], op.result.type, lambda b, v: _square(b, t, v))
    padded = constant_pad(builder, squares, [0, (size - 1) // 2] + [0] * (rank - 2),
                          [0, size // 2] + [0] * (rank - 2), 0.0)
    window = builder.empty([size], t)
    dims = [AffineExpr.dimension(a) for a in range(rank)]
    reading = AffineMap(rank + 1, 0, (dims[0], dims[1] + AffineExpr.dimension(rank), *dims[2:]))
    window_map = AffineMap(rank + 1, 0, (AffineExpr.dimension(rank),))
    zeros = builder.full(builder.sizes(x), t, 0)
    sums = builder.generic([(padded, reading), (window, window_map)], zeros, ["parallel"] * rank + ["reduction"],
                           lambda b, s, w, acc: b.add(arith.AddfOp(acc, s)), AffineMap(rank + 1, 0, tuple(dims)))
    bias, beta = builder.scalar(op.bias.value.data, t), builder.scalar(op.beta.value.data, t)
    alpha = builder.scalar(op.alpha.value.data / size, t)

    def normalize(b: Body, v: SSAValue, s: SSAValue) -> SSAValue:
        scale = b.add(arith.AddfOp(bias, b.add(arith.MulfOp(alpha, s))))
        return b.add(arith.DivfOp(v, b.add(m.PowFOp(scale, beta))))

    return [builder.elementwise([x, sums], op.result.type, normalize)]


LOWERINGS = {ge.ReduceSumOp: _reduce_sum, ge.ReduceMaxOp: _reduce_max, ge.ReduceMeanOp: _reduce_mean,
             ge.GlobalAvgPoolOp: _global_avg_pool, ge.SoftmaxOp: _softmax, ge.LayerNormOp: _layer_norm,
             ge.BatchNormOp: _batch_norm,
             ge.ReduceProdOp: _reduce_prod, ge.ReduceMinOp: _reduce_min, ge.ReduceL1Op: _reduce_l1,
             ge.ReduceL2Op: _reduce_l2, ge.ReduceSumSquareOp: _reduce_sum_square,
             ge.ReduceLogSumOp: _reduce_log_sum, ge.ReduceLogSumExpOp: _reduce_log_sum_exp,
             ge.ArgMaxOp: lambda builder, op: _arg_reduction(builder, op, largest=True),
             ge.ArgMinOp: lambda builder, op: _arg_reduction(builder, op, largest=False),
             ge.TopKOp: _top_k, ge.LogSoftmaxOp: _log_softmax, ge.InstanceNormOp: _instance_norm, ge.LrnOp: _lrn,
             ge.CumSumOp: lambda builder, op: _cumulative(builder, op, _add, 0),
             ge.CumProdOp: lambda builder, op: _cumulative(builder, op, _multiply, 1),
             ge.ScatterElementsOp: _scatter_elements}
