"""Quantization: QuantizeLinear, DequantizeLinear, the integer contractions (MatMulInteger,
ConvInteger) and the quantized-linear ones (QLinearMatMul, QLinearConv), as compositions of casts,
element-wise ops and an int32 matmul or convolution; and BitCast, one `bitcast` op.

The compositions compute what ONNX's reference computes, in the same types, so they are exact:
- QuantizeLinear: `saturate(round_half_even(x / scale) + zero_point)`, the division in the type of
  x and scale, the rest in float32 (or float64), where integers up to 2^24 are exact and the clip
  to the quantized type's range makes larger ones equal.
- DequantizeLinear: `(float32(x) - zero_point) * scale`, in float64 for int32 x with a zero point
  (as numpy promotes), then cast to the output type.
- The integer contractions subtract the zero points in int32 and accumulate in int32; the
  quantized-linear ones then scale the int32 result in float64 by `x_scale * w_scale / y_scale`,
  add the output zero point, round half to even and saturate.

A scale or zero point is a scalar (or one element), a vector along `axis`, or (with `block_size`)
a tensor of x's rank whose `axis` dimension holds one entry per block: blocks become a gather of
`arange(size) // block_size` along the axis. float8, int4 and int2 types have no GE equivalent
and are refused with the tensor that has them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx

from dfir.core import data_type as dt
from dfir.frontend.ge.onnx.attributes import attribute, attributes_of
from dfir.frontend.ge.onnx.ops.contraction import matmul_of
from dfir.frontend.ge.onnx.ops.converter import Converter
from dfir.frontend.ge.onnx.ops.window import conv_of

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Value
    from dfir.frontend.ge.onnx.importer import Importer

_RANGES = {dt.DT_UINT8: (0, 255), dt.DT_INT8: (-128, 127), dt.DT_UINT16: (0, 65535), dt.DT_INT16: (-32768, 32767)}
"""The integer types dfir quantizes to, and their ranges."""

_DEQUANTIZABLE = (*_RANGES, dt.DT_INT32)


def _numpy(value: Value) -> np.dtype:
    return dt.to_numpy(value.dtype)


def _as(imp: Importer, node: onnx.NodeProto, value: Value, dtype: np.dtype | dt.DType, suffix: str) -> Value:
    """`value` cast to `dtype` (itself when it has that type)."""
    target = dtype if isinstance(dtype, dt.DType) else dt.from_numpy(dtype)
    return value if value.dtype == target else imp.g.cast(value, target, name=imp.name(node, suffix))


def _along(imp: Importer, node: onnx.NodeProto, param: Value, x: Value, axis: int, block_size: int,
           what: str) -> Value:
    """`param` (a scale or zero point) broadcastable to `x`: a scalar as it is, a vector along
    `axis`, or blocks of `block_size` along `axis` repeated to x's size there."""
    if param.type.rank == 0:
        return param
    if param.shape == [1]:
        return imp.g.reshape(param, [], name=imp.name(node, f"/{what}_scalar"))
    rank = x.type.rank
    if not -rank <= axis < rank:
        raise imp.node_error(node, f"axis {axis} is out of range for x of rank {rank}")
    axis %= rank
    if block_size:
        return _blocks(imp, node, param, x, axis, block_size, what)
    if param.type.rank != 1 or -1 not in (param.shape[0], x.shape[axis]) and param.shape[0] != x.shape[axis]:
        raise imp.node_error(node, f"{what} of shape {param.shape} is neither a scalar nor a vector along axis "
                                   f"{axis} of x {x.shape}")
    return imp.g.reshape(param, [-1] + [1] * (rank - axis - 1), name=imp.name(node, f"/{what}_axis"))


def _blocks(imp: Importer, node: onnx.NodeProto, param: Value, x: Value, axis: int, block_size: int,
            what: str) -> Value:
    size = x.shape[axis]
    if block_size < 0 or size == -1:
        raise imp.node_error(node, f"blocked {what} needs a positive block_size and a fixed axis {axis} of x, got "
                                   f"block_size {block_size} and x {x.shape}")
    expected = [-(-size // block_size) if a == axis else d for a, d in enumerate(x.shape)]
    if param.type.rank != x.type.rank or any(-1 not in (p, e) and p != e for p, e in zip(param.shape, expected)):
        raise imp.node_error(node, f"blocked {what} of shape {param.shape} does not match x {x.shape} in blocks of "
                                   f"{block_size} along axis {axis} (expected {expected})")
    blocks = imp.g.const(np.arange(size, dtype=np.int64) // block_size, name=imp.name(node, f"/{what}_blocks"))
    return imp.g.gather(param, blocks, axis, name=imp.name(node, f"/{what}_repeated"))


def _saturated(imp: Importer, node: onnx.NodeProto, value: Value, target: dt.DType) -> Value:
    """`value` (float, integral) clipped to the range of `target` and cast to it."""
    low, high = (imp.g.const(np.array(bound, _numpy(value)), name=imp.name(node, suffix))
                 for bound, suffix in zip(_RANGES[target], ("/lowest", "/highest")))
    clipped = imp.g.minimum(imp.g.maximum(value, low, name=imp.name(node, "/at_least")), high,
                            name=imp.name(node, "/at_most"))
    return imp.g.cast(clipped, target, name=imp.name(node))


def _quantized_type(imp: Importer, node: onnx.NodeProto, zero_point: Value | None) -> dt.DType:
    """The type QuantizeLinear produces: its zero point's, else `output_dtype`'s, else uint8."""
    declared = attribute(node, "output_dtype", 0)
    target = zero_point.dtype if zero_point is not None else (
        imp.dtype_of(declared, "the output_dtype") if declared else dt.DT_UINT8)
    if declared and imp.dtype_of(declared, "the output_dtype") != target:
        raise imp.node_error(node, f"output_dtype {onnx.TensorProto.DataType.Name(declared)} differs from the zero "
                                   f"point's type {target}")
    if target not in _RANGES:
        raise imp.node_error(node, f"quantizing to {target} is not supported; supported: {', '.join(map(str, _RANGES))}")
    return target


def _quantize_linear(imp, node):
    attrs = attributes_of(node)
    x, scale, zero_point = (imp.tensor(node, i) for i in range(3))
    target = _quantized_type(imp, node, zero_point)
    axis, block_size = attrs.get("axis", 1), attrs.get("block_size", 0)
    precision = attrs.get("precision", 0)
    if not precision and x.dtype != scale.dtype:
        raise imp.node_error(node, f"x is {x.dtype} and y_scale {scale.dtype}: without the precision attribute "
                                   "the type of the division is ambiguous")
    work = imp.dtype_of(precision, "the precision") if precision else scale.dtype
    if dt.to_numpy(work).kind != "f":
        raise imp.node_error(node, f"dividing x by y_scale in {work} is not supported; the division must be "
                                   "in a float type")
    g = imp.g
    scaled = g.div(_as(imp, node, x, work, "/x"),
                   _as(imp, node, _along(imp, node, scale, x, axis, block_size, "scale"), work, "/scale"),
                   name=imp.name(node, "/scaled"))
    rounded = g.round(scaled, name=imp.name(node, "/rounded"))
    exact = _as(imp, node, rounded, np.promote_types(_numpy(rounded), np.float32), "/widened")
    if zero_point is not None:
        shift = _as(imp, node, _along(imp, node, zero_point, x, axis, block_size, "zero_point"), exact.dtype,
                    "/zero_point_float")
        exact = g.add(exact, shift, name=imp.name(node, "/shifted"))
    return [_saturated(imp, node, exact, target)]


def _dequantize_linear(imp, node):
    attrs = attributes_of(node)
    x, scale, zero_point = (imp.tensor(node, i) for i in range(3))
    if x.dtype not in _DEQUANTIZABLE:
        raise imp.node_error(node, f"x of type {x.dtype} cannot be dequantized; supported: "
                                   f"{', '.join(map(str, _DEQUANTIZABLE))}")
    if zero_point is not None and zero_point.dtype != x.dtype:
        raise imp.node_error(node, f"the zero point is {zero_point.dtype}, x is {x.dtype}; they must match")
    axis, block_size = attrs.get("axis", 1), attrs.get("block_size", 0)
    declared = attrs.get("output_dtype", 0)
    out = imp.dtype_of(declared, "the output_dtype") if declared else scale.dtype
    g = imp.g
    shifted = _as(imp, node, x, np.float32, "/x_float")
    if zero_point is not None:
        wide = np.float64 if x.dtype == dt.DT_INT32 else np.float32
        shifted = g.sub(_as(imp, node, shifted, wide, "/x_wide"),
                        _as(imp, node, _along(imp, node, zero_point, x, axis, block_size, "zero_point"), wide,
                            "/zero_point_float"), name=imp.name(node, "/shifted"))
    work = np.promote_types(_numpy(shifted), _numpy(scale))
    scaled = g.mul(_as(imp, node, shifted, work, "/shifted_wide"),
                   _as(imp, node, _along(imp, node, scale, x, axis, block_size, "scale"), work, "/scale_wide"),
                   name=imp.name(node, "/scaled" if out != dt.from_numpy(work) else ""))
    return [_as(imp, node, scaled, out, "")]


def _int32(imp: Importer, node: onnx.NodeProto, value: Value, zero_point: Value | None, what: str,
           per_last_axis: bool) -> Value:
    """`value - zero_point` in int32; the zero point a scalar, or (`per_last_axis`) a vector
    along the last axis."""
    widened = _as(imp, node, value, dt.DT_INT32, f"/{what}_int32")
    if zero_point is None:
        return widened
    if zero_point.dtype != value.dtype:
        raise imp.node_error(node, f"the zero point of {what} is {zero_point.dtype}, {what} is {value.dtype}; "
                                   "they must match")
    _require_scalar(imp, node, zero_point, f"the zero point of {what}", per_last_axis)
    shift = _as(imp, node, _scalar(imp, node, zero_point, f"/{what}_zero_point"), dt.DT_INT32,
                f"/{what}_zero_point_int32")
    return imp.g.sub(widened, shift, name=imp.name(node, f"/{what}_shifted"))


def _require_scalar(imp: Importer, node: onnx.NodeProto, value: Value, what: str, vector: bool = False) -> None:
    if value.type.rank == 0 or value.shape == [1] or vector and value.type.rank == 1:
        return
    kinds = "a scalar or a vector along the last axis" if vector else "a scalar"
    raise imp.node_error(node, f"{what} of shape {value.shape} is not supported; expected {kinds}")


def _scalar(imp: Importer, node: onnx.NodeProto, value: Value, suffix: str) -> Value:
    return imp.g.reshape(value, [], name=imp.name(node, suffix)) if value.shape == [1] else value


def _requantized(imp: Importer, node: onnx.NodeProto, accumulated: Value, factor: Value,
                 zero_point: Value | None, target: dt.DType) -> Value:
    """`saturate(round_half_even(float64(accumulated) * factor + zero_point))` as `target`."""
    g = imp.g
    scaled = g.mul(_as(imp, node, accumulated, np.float64, "/accumulated_float"),
                   _as(imp, node, factor, np.float64, "/factor_float"), name=imp.name(node, "/requantized"))
    if zero_point is not None:
        scaled = g.add(scaled, _as(imp, node, zero_point, np.float64, "/y_zero_point_float"),
                       name=imp.name(node, "/shifted"))
    return _saturated(imp, node, g.round(scaled, name=imp.name(node, "/rounded")), target)


def _factor(imp: Importer, node: onnx.NodeProto, x_scale: Value, w_scale: Value, y_scale: Value) -> Value:
    """`x_scale * w_scale / y_scale` in the scales' type."""
    g = imp.g
    return g.div(g.mul(x_scale, w_scale, name=imp.name(node, "/scale_product")), y_scale,
                 name=imp.name(node, "/factor"))


def _output_type(imp: Importer, node: onnx.NodeProto, zero_point: Value | None, x: Value) -> dt.DType:
    target = zero_point.dtype if zero_point is not None else x.dtype
    if target not in (dt.DT_INT8, dt.DT_UINT8):
        raise imp.node_error(node, f"the output type {target} is not supported; expected int8 or uint8")
    return target


def _matmul_integer(imp, node):
    a, b, a_zero, b_zero = (imp.tensor(node, i) for i in range(4))
    lhs = _int32(imp, node, a, a_zero, "a", per_last_axis=False)
    rhs = _int32(imp, node, b, b_zero, "b", per_last_axis=True)
    return [matmul_of(imp, node, lhs, rhs)]


def _qlinear_matmul(imp, node):
    a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = (imp.tensor(node, i) for i in range(8))
    target = _output_type(imp, node, y_zero, a)
    for value, what in ((a_scale, "a_scale"), (y_scale, "y_scale"), (y_zero, "y_zero_point")):
        if value is not None:
            _require_scalar(imp, node, value, what)
    _require_scalar(imp, node, b_scale, "b_scale", vector=True)
    lhs = _int32(imp, node, a, a_zero, "a", per_last_axis=False)
    rhs = _int32(imp, node, b, b_zero, "b", per_last_axis=True)
    accumulated = matmul_of(imp, node, lhs, rhs, "/accumulated")
    factor = _factor(imp, node, _scalar(imp, node, a_scale, "/a_scale"), b_scale,
                     _scalar(imp, node, y_scale, "/y_scale"))
    y_zero = None if y_zero is None else _scalar(imp, node, y_zero, "/y_zero_point")
    return [_requantized(imp, node, accumulated, factor, y_zero, target)]


def _filter_int32(imp: Importer, node: onnx.NodeProto, w: Value, zero_point: Value | None) -> Value:
    """`w - zero_point` in int32, the zero point a scalar or one per output channel."""
    widened = _as(imp, node, w, dt.DT_INT32, "/w_int32")
    if zero_point is None:
        return widened
    if zero_point.dtype != w.dtype:
        raise imp.node_error(node, f"the zero point of w is {zero_point.dtype}, w is {w.dtype}; they must match")
    _require_scalar(imp, node, zero_point, "the zero point of w", vector=True)
    shift = _as(imp, node, zero_point, dt.DT_INT32, "/w_zero_point_int32")
    if shift.type.rank == 1:
        shift = imp.g.reshape(shift, [-1, 1, 1, 1], name=imp.name(node, "/w_zero_point_channels"))
    return imp.g.sub(widened, shift, name=imp.name(node, "/w_shifted"))


def _conv_integer(imp, node):
    x, w, x_zero, w_zero = (imp.tensor(node, i) for i in range(4))
    lhs = _int32(imp, node, x, x_zero, "x", per_last_axis=False)
    return [conv_of(imp, node, lhs, _filter_int32(imp, node, w, w_zero), None)]


def _qlinear_conv(imp, node):
    x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, bias = (imp.tensor(node, i) for i in range(9))
    target = _output_type(imp, node, y_zero, x)
    for value, what in ((x_scale, "x_scale"), (y_scale, "y_scale"), (y_zero, "y_zero_point")):
        if value is not None:
            _require_scalar(imp, node, value, what)
    _require_scalar(imp, node, w_scale, "w_scale", vector=True)
    if bias is not None and bias.dtype != dt.DT_INT32:
        raise imp.node_error(node, f"the bias is {bias.dtype}; QLinearConv takes an int32 bias")
    lhs = _int32(imp, node, x, x_zero, "x", per_last_axis=False)
    accumulated = conv_of(imp, node, lhs, _filter_int32(imp, node, w, w_zero), bias, "/accumulated")
    if w_scale.type.rank == 1 and w_scale.shape != [1]:
        w_scale = imp.g.reshape(w_scale, [-1, 1, 1], name=imp.name(node, "/w_scale_channels"))
    factor = _factor(imp, node, _scalar(imp, node, x_scale, "/x_scale"), _scalar(imp, node, w_scale, "/w_scale"),
                     _scalar(imp, node, y_scale, "/y_scale"))
    y_zero = None if y_zero is None else _scalar(imp, node, y_zero, "/y_zero_point")
    return [_requantized(imp, node, accumulated, factor, y_zero, target)]


def _bitcast(imp, node):
    dtype = imp.dtype_of(attribute(node, "to"), "the BitCast target")
    return [imp.g.bitcast(imp.tensor(node, 0), dtype, name=imp.name(node))]


CONVERTERS: dict[str, Converter] = {
    "BitCast": _bitcast, "QuantizeLinear": _quantize_linear, "DequantizeLinear": _dequantize_linear,
    "MatMulInteger": _matmul_integer, "QLinearMatMul": _qlinear_matmul, "ConvInteger": _conv_integer,
    "QLinearConv": _qlinear_conv,
}
