"""`ge.resize_bilinear` as one `linalg.generic` over the NCHW result that reads its four source
pixels with `tensor.extract` at positions computed from `linalg.index`; `ge.resize` and
`ge.grid_sample` likewise.

    %y = ge.resize_bilinear %x size [4, 6] half_pixel_centers : (!ge.tensor<[-1, 3, 2, 3], f32>) -> !ge.tensor<[-1, 3, 4, 6], f32>
  ==>
    %y = linalg.generic {indexing_maps = [(n, c, h, w) -> (n, c, h, w)], iterator_types = [parallel x 4]} outs(%e) {
    ^bb0(%out: f32):
      %h = linalg.index 2 : index
      %src = arith.subf (arith.mulf (arith.addf (sitofp %h), 0.5), 2/4), 0.5 : f64  // clipped to [0, 1]
      %top = arith.fptosi %src ; %bottom = arith.minsi (%top + 1), 1 ; %wh = %src - sitofp %top
      ...  (the same along w: %left, %right, %ww)
      %a = tensor.extract %x[%n, %c, %top, %left] : tensor<?x3x2x3xf32>   // and the three others
      linalg.yield truncf(lerp(lerp(%a, %b, %wh), lerp(%c, %d, %wh), %ww)) : f32
    }

As the reference, source positions, weights and the interpolation are computed in f64 and the
result rounded to the input type once. With the size given as an operand, its values (at least
0) are the result's dynamic sizes; a size below 1, a GeError in the reference, gives an empty
result here.

`ge.resize` is one `linalg.generic` of the same kind, over every dimension of the result: each
resized axis maps its output index to a source coordinate (the reference kernel's transforms)
and reads one (nearest), two (linear) or four (cubic) taps clamped to the input; the result is
the sum over every combination of taps of the element times the product of their weights.

    %y = ge.resize %x sizes %hw axes [1] mode "linear" coordinates "half_pixel" : !ge.tensor<[2, 3], f32> sizes !ge.tensor<[1], i64> -> !ge.tensor<[2, 6], f32>
  ==>
    %y = linalg.generic {iterator_types = [parallel x 2]} outs(%e : tensor<2x6xf32>) {
      %src = (sitofp(linalg.index 1) + 0.5) / (6 / 3) - 0.5 ; %below = floor %src ; %f = %src - %below
      %a = tensor.extract %x[%i0, clamp(%below)] ; %b = tensor.extract %x[%i0, clamp(%below + 1)]
      linalg.yield truncf(%a * (1 - %f) + %b * %f) : f32
    }

Sizes fed at run time are the result's dynamic sizes (at least 0); scales fed at run time give
floor(size * scale), computed by a one-element `linalg.generic` (IREE's host code has no f64
conversions) and read back. tf_crop_and_resize reads its roi and gives `extrapolation_value`
where any resized axis samples outside the input. antialias, and keep_aspect_ratio_policy with
a dynamic result, have no lowering (Unsupported).

`ge.grid_sample` is one more generic over the [N, C, H1, ...] result: each output reads its grid
point (one `tensor.extract` per coordinate), maps it to a source coordinate per spatial axis
with its padding (border clamps, reflection mirrors), and sums its taps (one, two or four per
axis; zeros padding drops those outside) as the reference kernel does.
"""
from __future__ import annotations

import itertools
from typing import NamedTuple

from xdsl.dialects import arith, tensor
from xdsl.dialects import math as m
from xdsl.dialects.builtin import IndexType, f64, i1, i64
from xdsl.ir import SSAValue

from dfir.dialects import ge
from dfir.passes.ge_to_linalg.builder import Body, FuncBuilder, IndexMath, Size, Unsupported

__all__ = ["LOWERINGS"]


class _Source(NamedTuple):
    """Along one axis: the input positions below and above the sampled point, and the weight of
    the one above (f64)."""

    below: SSAValue
    above: SSAValue
    weight: SSAValue


def _resize_bilinear(builder: FuncBuilder, op: ge.ResizeBilinearOp) -> list[SSAValue]:
    x = builder.value(op.input)
    element_type = x.type.element_type
    in_sizes = [builder.dim(x, axis) for axis in (2, 3)]
    out_sizes = _output_sizes(builder, op)
    mode = "align_corners" if op.align_corners else "half_pixel_centers" if op.half_pixel_centers else "asymmetric"

    def body(b: Body, _: SSAValue) -> SSAValue:
        n, c = b.index(0), b.index(1)
        row, column = (_source(b, b.index(2 + axis), in_sizes[axis], out_sizes[axis], mode) for axis in range(2))

        def pixel(r: SSAValue, col: SSAValue) -> SSAValue:
            return _as_f64(b, b.add(tensor.ExtractOp(x, [n, c, r, col], element_type)))
        left = _lerp(b, pixel(row.below, column.below), pixel(row.above, column.below), row.weight)
        right = _lerp(b, pixel(row.below, column.above), pixel(row.above, column.above), row.weight)
        y = _lerp(b, left, right, column.weight)
        return y if element_type == f64 else b.add(arith.TruncFOp(y, element_type))
    sizes = [builder.dim(x, 0), builder.dim(x, 1), *out_sizes]
    return [builder.generic([], (sizes, element_type), ["parallel"] * 4, body)]


def _output_sizes(builder: FuncBuilder, op: ge.ResizeBilinearOp) -> list[Size]:
    """Static sizes from the result type; dynamic ones read from the size operand."""
    sizes: list[Size] = []
    for axis, dim in enumerate(op.result.type.dims[2:]):
        if dim.is_fixed:
            sizes.append(dim.lo)
            continue
        size = builder.value(op.size_input)
        value = builder.add(tensor.ExtractOp(size, [builder.index(axis)], size.type.element_type)).result
        index = builder.add(arith.IndexCastOp(value, IndexType())).result
        sizes.append(builder.add(arith.MaxSIOp(index, builder.index(0))).result)
    return sizes


def _source(b: Body, position: SSAValue, size: Size, out: Size, mode: str) -> _Source:
    """`_source_positions` of the reference kernel, at one output position."""
    size_f = _to_f64(b, size)
    last = b.add(arith.SubfOp(size_f, b.constant(1.0, f64)))
    point = _sampled_point(b, _to_f64(b, position), size_f, _to_f64(b, out), mode)
    source = b.add(arith.MinimumfOp(b.add(arith.MaximumfOp(point, b.constant(0.0, f64))), last))
    below = b.add(arith.IndexCastOp(b.add(arith.FPToSIOp(source, i64)), IndexType()))
    i = IndexMath(b)
    above = i.min(i.add(below, 1), i.sub(size, 1))
    return _Source(below, above, b.add(arith.SubfOp(source, _to_f64(b, below))))


def _sampled_point(b: Body, p: SSAValue, size: SSAValue, out: SSAValue, mode: str) -> SSAValue:
    """The input coordinate output position `p` samples, before clipping to the input."""
    one, half = b.constant(1.0, f64), b.constant(0.5, f64)
    if mode == "align_corners":
        ratio = b.add(arith.DivfOp(b.add(arith.SubfOp(size, one)), b.add(arith.SubfOp(out, one))))
        wide = b.add(arith.CmpfOp(out, one, "ogt"))
        return b.add(arith.SelectOp(wide, b.add(arith.MulfOp(p, ratio)), b.constant(0.0, f64)))
    ratio = b.add(arith.DivfOp(size, out))
    if mode == "half_pixel_centers":
        return b.add(arith.SubfOp(b.add(arith.MulfOp(b.add(arith.AddfOp(p, half)), ratio)), half))
    return b.add(arith.MulfOp(p, ratio))


def _lerp(b: Body, low: SSAValue, high: SSAValue, weight: SSAValue) -> SSAValue:
    """`low * (1 - weight) + high * weight`, the reference's order."""
    rest = b.add(arith.SubfOp(b.constant(1.0, f64), weight))
    return b.add(arith.AddfOp(b.add(arith.MulfOp(low, rest)), b.add(arith.MulfOp(high, weight))))


def _to_f64(b: Body, size: Size) -> SSAValue:
    if isinstance(size, int):
        return b.constant(float(size), f64)
    return b.add(arith.SIToFPOp(b.add(arith.IndexCastOp(size, i64)), f64))


def _as_f64(b: Body, value: SSAValue) -> SSAValue:
    return value if value.type == f64 else b.add(arith.ExtFOp(value, f64))


def _resize(builder: FuncBuilder, op: ge.ResizeOp) -> list[SSAValue]:
    _check_resize_form(op)
    x = builder.value(op.input)
    element_type = x.type.element_type
    rank = op.input.type.rank
    axes = [a % rank for a in op.axes.get_values()]
    scales = None if op.scales is None else builder.value(op.scales)
    in_sizes = builder.sizes(x)
    out_sizes = list(in_sizes)
    for i, axis in enumerate(axes):
        out_sizes[axis] = _resized_size(builder, op, i, axis, in_sizes[axis], scales)

    def body(b: Body, _: SSAValue) -> SSAValue:
        index = [b.index(d) for d in range(rank)]
        taps: list[list[tuple[SSAValue, SSAValue | None]]] = [[(i, None)] for i in index]
        common = _common_scale(b, builder, op, axes, in_sizes)
        outside = []
        for i, axis in enumerate(axes):
            scale = common or _resize_scale(b, scales, i, in_sizes[axis], out_sizes[axis])
            if op.roi is None:
                source = _resize_source(b, index[axis], in_sizes[axis], out_sizes[axis], scale, op)
            else:
                source = _crop_source(b, builder.value(op.roi), i, len(axes), index[axis], in_sizes[axis], scale)
                outside.append(_outside(b, source, in_sizes[axis]))
            taps[axis] = _resize_taps(b, source, in_sizes[axis], op)
        total = None
        for combination in itertools.product(*taps):
            value = _as_f64(b, b.add(tensor.ExtractOp(x, [t for t, _ in combination], element_type)))
            for _, weight in combination:
                value = value if weight is None else b.add(arith.MulfOp(value, weight))
            total = value if total is None else b.add(arith.AddfOp(total, value))
        for flag in outside:
            value = op.extrapolation_value.value.data if op.extrapolation_value is not None else 0.0
            total = b.add(arith.SelectOp(flag, b.constant(value, f64), total))
        return total if element_type == f64 else b.add(arith.TruncFOp(total, element_type))
    return [builder.generic([], (out_sizes, element_type), ["parallel"] * rank, body)]


def _crop_source(b: Body, roi: SSAValue, i: int, count: int, position: SSAValue, size: Size,
                 scale: SSAValue) -> SSAValue:
    """tf_crop_and_resize's source coordinate on resized axis `i`, whose crop is roi[i] to
    roi[count + i] (fractions of the input's extent)."""
    def roi_at(k: int) -> SSAValue:
        return _as_f64(b, b.add(tensor.ExtractOp(roi, [b.constant(k, IndexType())], roi.type.element_type)))
    start, end = roi_at(i), roi_at(count + i)
    one = b.constant(1.0, f64)
    last = b.add(arith.SubfOp(_to_f64(b, size), one))
    extent = b.add(arith.MulfOp(b.add(arith.SubfOp(end, start)), last))
    length = b.add(arith.MulfOp(scale, _to_f64(b, size)))
    spread = b.add(arith.DivfOp(b.add(arith.MulfOp(_to_f64(b, position), extent)), b.add(arith.SubfOp(length, one))))
    single = b.add(arith.CmpfOp(length, one, "oeq"))
    offset = b.add(arith.SelectOp(single, b.add(arith.MulfOp(extent, b.constant(0.5, f64))), spread))
    return b.add(arith.AddfOp(offset, b.add(arith.MulfOp(start, last))))


def _outside(b: Body, source: SSAValue, size: Size) -> SSAValue:
    """Whether the source coordinate lies outside [0, size - 1]."""
    last = b.add(arith.SubfOp(_to_f64(b, size), b.constant(1.0, f64)))
    below = b.add(arith.CmpfOp(source, b.constant(0.0, f64), "olt"))
    return b.add(arith.OrIOp(below, b.add(arith.CmpfOp(source, last, "ogt"))))


def _check_resize_form(op: ge.ResizeOp) -> None:
    stretches = _aspect_policy(op) == "stretch"
    fixed = all(d.is_fixed for d in op.result.type.dims)
    for option, unsupported in (("antialias", op.antialias is not None),
                                ("keep_aspect_ratio_policy with a dynamic result", not (stretches or fixed))):
        if unsupported:
            raise Unsupported(f"{option} has no lowering")


def _resized_size(builder: FuncBuilder, op: ge.ResizeOp, i: int, axis: int, size: Size,
                  scales: SSAValue | None) -> Size:
    """Output size `i`: the result type's when fixed, else the sizes operand's, else
    floor(size * scale) (at least 0)."""
    dim = op.result.type.dims[axis]
    if dim.is_fixed:
        return dim.lo
    sizes = builder.value(op.sizes) if op.sizes is not None else _scaled_size(builder, scales, i, size)
    value = builder.add(tensor.ExtractOp(sizes, [builder.index(i if op.sizes is not None else 0)],
                                         sizes.type.element_type)).result
    index = builder.add(arith.IndexCastOp(value, IndexType())).result
    return builder.add(arith.MaxSIOp(index, builder.index(0))).result


def _scaled_size(builder: FuncBuilder, scales: SSAValue, i: int, size: Size) -> SSAValue:
    """floor(size * scales[i]) in f64 as a [1] i64 tensor: computed on the device, as the host
    code IREE runs has no f64 conversions."""
    def body(b: Body, _: SSAValue) -> SSAValue:
        scale = _resize_scale(b, scales, i, size, size)
        return b.add(arith.FPToSIOp(b.add(arith.MulfOp(_to_f64(b, size), scale)), i64))
    return builder.generic([], ([1], i64), ["parallel"], body)


def _aspect_policy(op: ge.ResizeOp) -> str:
    return "stretch" if op.keep_aspect_ratio_policy is None else op.keep_aspect_ratio_policy.data


def _common_scale(b: Body, builder: FuncBuilder, op: ge.ResizeOp, axes: list[int],
                  in_sizes: list[Size]) -> SSAValue | None:
    """keep_aspect_ratio_policy: the one scale of every axis, the smallest (not_larger) or largest
    (not_smaller) ratio of requested size to input size; None under "stretch"."""
    policy = _aspect_policy(op)
    if policy == "stretch":
        return None
    sizes = builder.value(op.sizes)
    ratios = []
    for i, axis in enumerate(axes):
        requested = b.add(tensor.ExtractOp(sizes, [b.constant(i, IndexType())], sizes.type.element_type))
        requested = b.add(arith.SIToFPOp(requested, f64))
        ratios.append(b.add(arith.DivfOp(requested, _to_f64(b, in_sizes[axis]))))
    pick = arith.MinimumfOp if policy == "not_larger" else arith.MaximumfOp
    scale = ratios[0]
    for ratio in ratios[1:]:
        scale = b.add(pick(scale, ratio))
    return scale


def _resize_scale(b: Body, scales: SSAValue | None, i: int, size: Size, out: Size) -> SSAValue:
    """The coordinate scale of resized axis `i`: the scales operand's, else out / size."""
    if scales is None:
        return b.add(arith.DivfOp(_to_f64(b, out), _to_f64(b, size)))
    return _as_f64(b, b.add(tensor.ExtractOp(scales, [b.constant(i, IndexType())], scales.type.element_type)))


def _resize_source(b: Body, position: SSAValue, size: Size, out: Size, scale: SSAValue, op: ge.ResizeOp) -> SSAValue:
    """`_source_coordinates` of the reference kernel, at one output position."""
    p, n = _to_f64(b, position), _to_f64(b, size)
    one, half, zero = b.constant(1.0, f64), b.constant(0.5, f64), b.constant(0.0, f64)
    length = b.add(arith.MulfOp(scale, n))
    single = b.add(arith.CmpfOp(length, one, "oeq"))
    transform = op.coordinate_transformation_mode.data
    if transform == "align_corners":
        ratio = b.add(arith.DivfOp(b.add(arith.SubfOp(n, one)), b.add(arith.SubfOp(length, one))))
        return b.add(arith.SelectOp(single, zero, b.add(arith.MulfOp(p, ratio))))
    if transform == "asymmetric":
        return b.add(arith.DivfOp(p, scale))
    centered = b.add(arith.SubfOp(b.add(arith.DivfOp(b.add(arith.AddfOp(p, half)), scale)), half))
    if transform == "pytorch_half_pixel":
        return b.add(arith.SelectOp(single, zero, centered))
    if transform == "half_pixel_symmetric":
        shrink = b.add(arith.SubfOp(one, b.add(arith.DivfOp(_to_f64(b, out), length))))
        return b.add(arith.AddfOp(b.add(arith.MulfOp(b.add(arith.MulfOp(n, half)), shrink)), centered))
    return centered


def _resize_taps(b: Body, source: SSAValue, size: Size, op: ge.ResizeOp) -> list[tuple[SSAValue, SSAValue | None]]:
    """`_taps` of the reference kernel: (input index clamped to the input, weight or None for 1)."""
    below = b.add(m.FloorOp(source))
    fraction = b.add(arith.SubfOp(source, below))
    i = IndexMath(b)
    first = b.add(arith.IndexCastOp(b.add(arith.FPToSIOp(below, i64)), IndexType()))

    def tap(offset: int) -> SSAValue:
        return i.max(i.min(i.add(first, offset), i.sub(size, 1)), 0)
    mode = op.mode.data
    if mode == "nearest":
        nearest = op.nearest_mode.data if op.nearest_mode is not None else "round_prefer_floor"
        if nearest == "floor":
            return [(tap(0), None)]
        predicate, threshold = {"round_prefer_floor": ("ogt", 0.5), "round_prefer_ceil": ("oge", 0.5),
                                "ceil": ("ogt", 0.0)}[nearest]
        up = b.add(arith.CmpfOp(fraction, b.constant(threshold, f64), predicate))
        return [(b.add(arith.SelectOp(up, tap(1), tap(0))), None)]
    one = b.constant(1.0, f64)
    if mode == "linear":
        offsets, weights = (0, 1), [b.add(arith.SubfOp(one, fraction)), fraction]
    else:
        a = op.cubic_coeff_a.value.data if op.cubic_coeff_a is not None else -0.75
        distances = [b.add(arith.AddfOp(fraction, one)), fraction, b.add(arith.SubfOp(one, fraction)),
                     b.add(arith.SubfOp(b.constant(2.0, f64), fraction))]
        offsets = (-1, 0, 1, 2)
        weights = [_cubic(b, d, a, near=offset in (0, 1)) for offset, d in zip(offsets, distances)]
    if op.exclude_outside is not None:
        weights = _inside_weights(b, [i.add(first, offset) for offset in offsets], weights, size)
    return [(tap(offset), w) for offset, w in zip(offsets, weights)]


def _inside_weights(b: Body, taps: list[SSAValue], weights: list[SSAValue], size: Size) -> list[SSAValue]:
    """exclude_outside: the weights of taps outside the input dropped, the rest renormalized."""
    zero = b.constant(0.0, f64)
    last = IndexMath(b).sub(size, 1)
    kept = []
    for tap, weight in zip(taps, weights):
        inside = b.add(arith.AndIOp(b.add(arith.CmpiOp(tap, b.constant(0, IndexType()), "sge")),
                                    b.add(arith.CmpiOp(tap, last, "sle"))))
        kept.append(b.add(arith.SelectOp(inside, weight, zero)))
    total = kept[0]
    for weight in kept[1:]:
        total = b.add(arith.AddfOp(total, weight))
    total = b.add(arith.SelectOp(b.add(arith.CmpfOp(total, zero, "oeq")), b.constant(1.0, f64), total))
    return [b.add(arith.DivfOp(weight, total)) for weight in kept]


def _cubic(b: Body, d: SSAValue, a: float, near: bool) -> SSAValue:
    """Keys' cubic kernel at a distance known to be in [0, 1] (`near`) or in [1, 2]."""
    def c(v: float) -> SSAValue:
        return b.constant(v, f64)

    def horner(coefficients: list[float]) -> SSAValue:
        value = c(coefficients[0])
        for k in coefficients[1:]:
            value = b.add(arith.AddfOp(b.add(arith.MulfOp(value, d)), c(k)))
        return value
    return horner([a + 2, -(a + 3), 0.0, 1.0] if near else [a, -5 * a, 8 * a, -4 * a])


def _grid_sample(builder: FuncBuilder, op: ge.GridSampleOp) -> list[SSAValue]:
    x, grid = builder.value(op.input), builder.value(op.grid)
    element_type = x.type.element_type
    rank = op.input.type.rank
    spatial = rank - 2
    in_sizes = builder.sizes(x)
    out_sizes = [in_sizes[0], in_sizes[1], *builder.sizes(grid)[1:-1]]

    def body(b: Body, _: SSAValue) -> SSAValue:
        index = [b.index(d) for d in range(rank)]
        taps = []
        for axis in range(spatial):
            coordinate = b.constant(spatial - 1 - axis, IndexType())  # the grid lists x first
            point = b.add(tensor.ExtractOp(grid, [index[0], *index[2:], coordinate], grid.type.element_type))
            taps.append(_grid_taps(b, _as_f64(b, point), in_sizes[2 + axis], op))
        total = None
        for combination in itertools.product(*taps):
            value = _as_f64(b, b.add(tensor.ExtractOp(x, [index[0], index[1], *(t for t, _ in combination)],
                                                      element_type)))
            for _, weight in combination:
                value = b.add(arith.MulfOp(value, weight))
            total = value if total is None else b.add(arith.AddfOp(total, value))
        return total if element_type == f64 else b.add(arith.TruncFOp(total, element_type))
    return [builder.generic([], (out_sizes, element_type), ["parallel"] * rank, body)]


def _grid_taps(b: Body, point: SSAValue, size: Size, op: ge.GridSampleOp) -> list[tuple[SSAValue, SSAValue]]:
    """`_grid_taps` of the reference kernel: (index inside the input, weight) pairs along one axis."""
    one, half = b.constant(1.0, f64), b.constant(0.5, f64)
    n = _to_f64(b, size)
    last = b.add(arith.SubfOp(n, one))
    shifted = b.add(arith.AddfOp(point, one))
    if op.align_corners is not None:
        low, high = b.constant(0.0, f64), last
        source = b.add(arith.MulfOp(b.add(arith.MulfOp(shifted, half)), last))
    else:
        low, high = b.constant(-0.5, f64), b.add(arith.SubfOp(n, half))
        source = b.add(arith.MulfOp(b.add(arith.SubfOp(b.add(arith.MulfOp(shifted, n)), one)), half))
    mode, padding = op.mode.data, op.padding_mode.data
    if mode == "nearest":
        source = b.add(m.RoundEvenOp(source))
    outside = _outside_range(b, source, low, high)
    if padding == "border":
        clamped = b.add(arith.MinimumfOp(b.add(arith.MaximumfOp(source, b.constant(0.0, f64))), last))
        source = b.add(arith.SelectOp(outside, clamped, source))
    elif padding == "reflection":
        source = b.add(arith.SelectOp(outside, _reflect(b, source, low, high), source))
    if mode == "nearest":
        return [_padded_tap(b, b.add(m.TruncOp(source)), one, size, op, low, high)]
    below = b.add(m.FloorOp(source))
    t = b.add(arith.SubfOp(source, below))
    if mode == "linear":
        offsets, weights = (0, 1), [b.add(arith.SubfOp(one, t)), t]
    else:
        distances = [b.add(arith.AddfOp(t, one)), t, b.add(arith.SubfOp(one, t)),
                     b.add(arith.SubfOp(b.constant(2.0, f64), t))]
        offsets = (-1, 0, 1, 2)
        weights = [_cubic(b, d, -0.75, near=o in (0, 1)) for o, d in zip(offsets, distances)]
    return [_padded_tap(b, b.add(arith.AddfOp(below, b.constant(float(o), f64))), w, size, op, low, high)
            for o, w in zip(offsets, weights)]


def _padded_tap(b: Body, tap: SSAValue, weight: SSAValue, size: Size, op: ge.GridSampleOp, low: SSAValue,
                high: SSAValue) -> tuple[SSAValue, SSAValue]:
    """A tap that may lie outside the input as an index inside it and its weight (zeros: dropped,
    border: clamped, reflection: mirrored)."""
    padding = op.padding_mode.data
    if padding == "zeros":
        last = b.add(arith.SubfOp(_to_f64(b, size), b.constant(1.0, f64)))
        inside = b.add(arith.XOrIOp(_outside_range(b, tap, b.constant(0.0, f64), last), b.constant(1, i1)))
        weight = b.add(arith.SelectOp(inside, weight, b.constant(0.0, f64)))
    elif padding == "reflection":
        tap = b.add(m.TruncOp(_reflect(b, tap, low, high)))
    i = IndexMath(b)
    index = b.add(arith.IndexCastOp(b.add(arith.FPToSIOp(tap, i64)), IndexType()))
    return i.max(i.min(index, i.sub(size, 1)), 0), weight


def _outside_range(b: Body, v: SSAValue, low: SSAValue, high: SSAValue) -> SSAValue:
    below = b.add(arith.CmpfOp(v, low, "olt"))
    return b.add(arith.OrIOp(below, b.add(arith.CmpfOp(v, high, "ogt"))))


def _reflect(b: Body, v: SSAValue, low: SSAValue, high: SSAValue) -> SSAValue:
    """`_reflect` of the reference kernel: `v` mirrored at `low` and `high` until inside."""
    span = b.add(arith.SubfOp(high, low))
    is_below = b.add(arith.CmpfOp(v, low, "olt"))
    beyond = b.add(arith.SelectOp(is_below, b.add(arith.SubfOp(low, v)), b.add(arith.SubfOp(v, high))))
    flips = b.add(m.FloorOp(b.add(arith.DivfOp(beyond, span))))
    rest = b.add(arith.SubfOp(beyond, b.add(arith.MulfOp(flips, span))))
    odd = b.add(arith.TruncIOp(b.add(arith.FPToSIOp(flips, i64)), i1))
    from_low, from_high = b.add(arith.AddfOp(low, rest)), b.add(arith.SubfOp(high, rest))
    near_low = b.add(arith.XOrIOp(is_below, odd))  # below and even, or above and odd
    reflected = b.add(arith.SelectOp(near_low, from_low, from_high))
    reflected = b.add(arith.SelectOp(b.add(arith.CmpfOp(span, b.constant(0.0, f64), "ole")), low, reflected))
    return b.add(arith.SelectOp(_outside_range(b, v, low, high), reflected, v))


LOWERINGS = {ge.ResizeBilinearOp: _resize_bilinear, ge.ResizeOp: _resize, ge.GridSampleOp: _grid_sample}
