"""`ge.resize_bilinear` as one `linalg.generic` over the NCHW result that reads its four source
pixels with `tensor.extract` at positions computed from `linalg.index`.

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
"""
from __future__ import annotations

from typing import NamedTuple

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, f64, i64
from xdsl.ir import SSAValue

from dfir.dialects import ge
from dfir.passes.ge_to_linalg.builder import Body, FuncBuilder, IndexMath, Size

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


LOWERINGS = {ge.ResizeBilinearOp: _resize_bilinear}
