"""Sliding windows over N, C and spatial dimensions (NCHW, also NCW, NCDHW and up): `ge.conv2d`,
`ge.max_pool`, `ge.avg_pool`, `ge.conv_transpose`.

The input is padded first with `tensor.pad` (convolution and average pooling with 0, max pooling
with the lowest finite value as the reference's onnxruntime convention); `ceil_mode` adds
`stride - 1` more at each spatial end, enough for the extra end padding of the last window
(`Window.overhang` never exceeds it), which no divisor counts. A convolution is a named linalg
convolution accumulating into its bias (or zeros): in 2-D `conv_2d_nchw_fchw` for `groups == 1`,
else `conv_2d_ngchw_gfchw` on channel-split views; in any other spatial rank (linalg has no named
op for it that xDSL knows) a `linalg.generic` of the same loops on the channel-split views.
A pooling is a `linalg.generic` over (n, c, outputs..., taps...) whose window loops take their
sizes from an empty tensor of the kernel's shape; average pooling then divides each sum by the
size of its window's counted part, from `linalg.index`.

    %y = ge.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!ge.tensor<[-1, 3, 8, 8], f32>, !ge.tensor<[4, 3, 3, 3], f32>, !ge.tensor<[4], f32>) -> !ge.tensor<[-1, 4, 8, 8], f32>
  ==>
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] { tensor.yield %zero : f32 } : tensor<?x3x8x8xf32> to tensor<?x3x10x10xf32>
    %init = linalg.generic {indexing_maps = [(n, m, h, w) -> (m), (n, m, h, w) -> (n, m, h, w)]} ins(%b) outs(%e)
    %y = linalg.conv_2d_nchw_fchw {strides = dense<1> : vector<2xi64>, dilations = dense<1> : vector<2xi64>}
           ins(%p, %w : tensor<?x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<?x4x8x8xf32>)

A 1x1 convolution with strides reads every stride-th pixel: it is that strided
`tensor.extract_slice` of the input, made behind a `util.optimization_barrier`, then a 1x1
convolution of stride 1. IREE data-tiles only a convolution of stride 1, and without the
barrier fuses the slice back into it (512 -> 1024 channels, 28x28 -> 14x14, stride 2, one thread:
57-62 ms a call in the `default` and `tiled` variants, with the slice alone 40 ms, with the
barrier 2.3 ms `tiled` and 17 ms `default`, onnxruntime 2.4 ms; ResNet-50 has three such
projections, ResNet-18 and RegNetY more). Only for static shapes: IREE cannot resolve the
dimensions of a barrier's dynamic result ("'tensor.dim' op unexpected during shape cleanup"), so a
dynamic one keeps the strided convolution:

    %y = ge.conv2d %x, %w strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] groups 1 : (!ge.tensor<[1, 8, 8, 8], f32>, !ge.tensor<[16, 8, 1, 1], f32>) -> !ge.tensor<[1, 16, 4, 4], f32>
  ==>
    %s = tensor.extract_slice %x[0, 0, 0, 0] [1, 8, 4, 4] [1, 1, 2, 2] : tensor<1x8x8x8xf32> to tensor<1x8x4x4xf32>
    %b = "util.optimization_barrier"(%s) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
    %y = linalg.conv_2d_nchw_fchw {strides = dense<1> : vector<2xi64>, dilations = dense<1> : vector<2xi64>}
           ins(%b, %w : tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) outs(%init : tensor<1x16x4x4xf32>)

NCHW throughout, by measurement (IREE llvm-cpu, local-sync, one thread, batch 32; the small CNN of
benchmarks/ge_exec.py, whose first convolution has 3 input channels): 8.2 ms a call with every
convolution in NCHW against 33 ms with the first one in NHWC between transposes. (An earlier
measurement that favoured NHWC below 8 channels compiled the generic form of the named ops, which
IREE turns into slow code whatever the layout: see `lowering.iree_executable.custom_form`.)

Output sizes come from the result type, or when dynamic from `Window.count` in index arithmetic,
at least 0: a dynamic input smaller than its window (a GeError in the reference) gives an empty
result here.
"""
from __future__ import annotations

import functools
from typing import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (DYNAMIC_INDEX, ArrayAttr, BFloat16Type, DenseIntOrFPElementsAttr,
                                   Float16Type, Float32Type, Float64Type, IndexType, IntegerAttr, TensorType, VectorType,
                                   i64)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from dfir.core.shape_arith import Window
from dfir.dialects import ge
from dfir.dialects.ge_shapes import windows_of
from dfir.dialects.iree_util import OptimizationBarrierOp
from dfir.dialects.upstream import DepthwiseConv2DNchwChwOp, PoolingNchwSumOp
from dfir.passes.ge_to_linalg.builder import Body, FuncBuilder, IndexMath, Size, Unsupported, is_float, is_unsigned
from dfir.passes.ge_to_linalg.movement import constant_pad, extract_slice, gather_positions, insert_slice

__all__ = ["LOWERINGS"]


def _padded(builder: FuncBuilder, x: SSAValue, windows: Sequence[Window], ceil_mode: bool,
            fill: float) -> SSAValue:
    """`x` padded on its spatial dimensions, `ceil_mode`'s room for the last window included."""
    low = [0, 0, *(w.pad_begin for w in windows)]
    high = [0, 0, *(w.pad_end + (w.stride - 1 if ceil_mode else 0) for w in windows)]
    if not any(low + high):
        return x
    element_type = x.type.element_type
    value = builder.scalar(fill, element_type)
    block = Block(arg_types=[IndexType()] * len(low))
    block.add_op(tensor.YieldOp(value))
    shape = [s if s == DYNAMIC_INDEX else s + lo + hi for s, lo, hi in zip(x.type.get_shape(), low, high)]
    return builder.add(tensor.PadOp(x, [], [], Region(block), low, high, TensorType(element_type, shape))).result


def _output_size(builder: FuncBuilder, op: Operation, x: SSAValue, axis: int, window: Window,
                 ceil_mode: bool) -> Size:
    """Spatial size `axis` of the result: static from its type, else `Window.count` computed."""
    dim = op.results[0].type.dims[axis]
    if dim.is_fixed:
        return dim.lo
    i = IndexMath(builder)
    size = builder.dim(x, axis)
    span = i.sub(i.add(size, window.pad_begin + window.pad_end), window.extent)
    if not ceil_mode:
        return i.max(i.add(i.binary(arith.FloorDivSIOp, span, window.stride), 1), 0)
    count = i.add(i.binary(arith.CeilDivSIOp, span, window.stride), 1)
    last_start = i.mul(i.sub(count, 1), window.stride)
    outside = builder.add(arith.CmpiOp(last_start, i.add(size, window.pad_begin), "sge")).result
    count = builder.add(arith.SelectOp(outside, i.sub(count, 1), count)).result
    return i.max(count, 0)


def _dims(*exprs: AffineExpr | int, rank: int) -> AffineMap:
    return AffineMap(rank, 0, tuple(AffineExpr.dimension(e) if isinstance(e, int) else e for e in exprs))


def _tap(loop_out: int, loop_tap: int, window: Window) -> AffineExpr:
    """The padded input position under tap `loop_tap` of the window at output `loop_out`."""
    return AffineExpr.dimension(loop_out) * window.stride + AffineExpr.dimension(loop_tap) * window.dilation


# --- convolution --------------------------------------------------------------------------------

def _conv2d(builder: FuncBuilder, op: ge.Conv2DOp) -> list[SSAValue]:
    x, w = builder.value(op.input), builder.value(op.filter)
    bias = None if op.bias is None else builder.value(op.bias)
    windows = windows_of(op.properties, w.type.get_shape()[2:])
    padded = _padded(builder, x, windows, False, 0)
    sizes = [builder.dim(x, 0), builder.dim(w, 0),
             *(_output_size(builder, op, x, 2 + i, window, False) for i, window in enumerate(windows))]
    groups = op.groups.value.data
    if len(windows) != 2:
        return [_conv_grouped(builder, padded, w, bias, sizes, groups, _generic_conv(windows),
                              f"a {len(windows)}-D convolution")]
    attrs = _window_attrs([v.stride for v in windows], [v.dilation for v in windows])
    if groups > 1 and _depthwise(x, w, groups):
        init = _init(builder, bias, sizes, x.type.element_type, AffineExpr.dimension(1))
        op = DepthwiseConv2DNchwChwOp([padded, _collapse(builder, w, 0)], [init], [init.type], **attrs)
        return [builder.add(op).results[0]]
    if groups > 1:
        return [_conv_grouped(builder, padded, w, bias, sizes, groups,
                              _named_conv(linalg.Conv2DNgchwGfchwOp, attrs), "a grouped convolution")]
    if _static_strided_pointwise(x, w, windows):
        every_stride = extract_slice(builder, padded, [0] * 4, [*x.type.get_shape()[:2], *sizes[2:]],
                                     [1, 1, *(window.stride for window in windows)])
        padded = builder.add(OptimizationBarrierOp(every_stride)).results[0]
        attrs = _window_attrs([1, 1], [1, 1])
    init = _init(builder, bias, sizes, x.type.element_type, AffineExpr.dimension(1))
    return [builder.add(linalg.Conv2DNchwFchwOp([padded, w], [init], [init.type], **attrs)).results[0]]


def _window_attrs(strides: Sequence[int], dilations: Sequence[int]) -> dict[str, Attribute]:
    """A 2-D named convolution's `strides` and `dilations`."""
    return {name: DenseIntOrFPElementsAttr.from_list(VectorType(i64, [2]), list(values))
            for name, values in (("strides", strides), ("dilations", dilations))}


def _static_strided_pointwise(x: SSAValue, w: SSAValue, windows: Sequence[Window]) -> bool:
    """A 1x1 filter moved more than one pixel at a time over an input of static shape."""
    return (w.type.get_shape()[2:] == (1, 1) and any(window.stride != 1 for window in windows)
            and DYNAMIC_INDEX not in x.type.get_shape())


def _depthwise(x: SSAValue, w: SSAValue, groups: int) -> bool:
    """One filter per channel: as many groups as input and output channels (all static)."""
    out_channels, per_group = w.type.get_shape()[:2]
    return per_group == 1 and out_channels == groups == x.type.get_shape()[1]


GroupedConv = Callable[[FuncBuilder, SSAValue, SSAValue, SSAValue], SSAValue]
"""(builder, input [N, G, C / G, spatial...], filter [G, M / G, C / G, taps...], accumulator
[N, G, M / G, outputs...]) -> the accumulated convolution."""


def _named_conv(op_class: type, attrs: dict[str, Attribute]) -> GroupedConv:
    return lambda builder, x, w, init: builder.add(op_class([x, w], [init], [init.type], **attrs)).results[0]


def _generic_conv(windows: Sequence[Window]) -> GroupedConv:
    """A `linalg.generic` over (n, g, m, outputs..., c, taps...)."""
    spatial = len(windows)
    rank = 4 + 2 * spatial
    out, c, taps = 3, 3 + spatial, 4 + spatial
    x_map = _dims(0, 1, c, *(_tap(out + i, taps + i, window) for i, window in enumerate(windows)), rank=rank)
    w_map = _dims(1, 2, c, *range(taps, rank), rank=rank)
    iterators = ["parallel"] * (3 + spatial) + ["reduction"] * (1 + spatial)

    def convolve(builder: FuncBuilder, x: SSAValue, w: SSAValue, init: SSAValue) -> SSAValue:
        return builder.generic([(x, x_map), (w, w_map)], init, iterators,
                               lambda b, v, f, acc: b.add(arith.AddfOp(acc, b.add(arith.MulfOp(v, f)))),
                               _dims(*range(3 + spatial), rank=rank))
    return convolve


def _conv_grouped(builder: FuncBuilder, padded: SSAValue, w: SSAValue, bias: SSAValue | None,
                  sizes: Sequence[Size], groups: int, convolve: GroupedConv, kind: str) -> SSAValue:
    """`convolve` on the channels split into groups, merged back after (`kind` names the
    convolution in the refusal of dynamic channel counts)."""
    out_channels, per_group = w.type.get_shape()[:2]
    if DYNAMIC_INDEX in (out_channels, per_group, padded.type.get_shape()[1]):
        raise Unsupported(f"{kind} needs static channel counts")
    group_size = out_channels // groups
    grouped = [sizes[0], groups, group_size, *sizes[2:]]
    channel = AffineExpr.dimension(1) * group_size + AffineExpr.dimension(2)
    init = _init(builder, bias, grouped, padded.type.element_type, channel)
    split_x = _expand(builder, padded, 1, [groups, per_group])
    split_w = _expand(builder, w, 0, [groups, group_size])
    return _collapse(builder, convolve(builder, split_x, split_w, init), 1)


def _init(builder: FuncBuilder, bias: SSAValue | None, sizes: Sequence[Size], element_type: Attribute,
          channel: AffineExpr) -> SSAValue:
    """The accumulator: the bias along the output channel `channel` (an expression of the loops),
    or zeros."""
    if bias is None:
        return builder.full(sizes, element_type, 0)
    rank = len(sizes)
    return builder.generic([(bias, AffineMap(rank, 0, (channel,)))], (sizes, element_type),
                           ["parallel"] * rank, lambda b, value, out: value)


def _reassociation(groups: Sequence[Sequence[int]]) -> ArrayAttr:
    return ArrayAttr([ArrayAttr([IntegerAttr(i, i64) for i in group]) for group in groups])


def _split_groups(rank: int, axis: int) -> list[list[int]]:
    """Reassociation of `rank` dimensions in which `axis` and the next one form one group."""
    return [[d] if d < axis else [d, d + 1] if d == axis else [d + 1] for d in range(rank)]


def _expand(builder: FuncBuilder, value: SSAValue, axis: int, parts: Sequence[int]) -> SSAValue:
    """`value` with static dimension `axis` split into `parts`."""
    shape = list(value.type.get_shape())
    new_shape = shape[:axis] + list(parts) + shape[axis + 1:]
    dynamic = [builder.dim(value, d) for d, s in enumerate(shape) if s == DYNAMIC_INDEX]
    result_type = TensorType(value.type.element_type, new_shape)
    op = tensor.ExpandShapeOp(value, dynamic, _reassociation(_split_groups(len(shape), axis)), new_shape, result_type)
    return builder.add(op).result


def _collapse(builder: FuncBuilder, value: SSAValue, axis: int) -> SSAValue:
    """`value` with static dimensions `axis` and `axis + 1` merged."""
    shape = list(value.type.get_shape())
    new_shape = shape[:axis] + [shape[axis] * shape[axis + 1]] + shape[axis + 2:]
    op = tensor.CollapseShapeOp.create(
        operands=[value], result_types=[TensorType(value.type.element_type, new_shape)],
        properties={"reassociation": _reassociation(_split_groups(len(new_shape), axis))})
    return builder.add(op).results[0]


# --- pooling ------------------------------------------------------------------------------------

def _pool(builder: FuncBuilder, op: Operation, fill: float, init: float,
          combine: Callable[[Body, SSAValue, SSAValue], SSAValue],
          named: type[Operation] | None = None) -> tuple[SSAValue, list[Window]]:
    """Each window of the input padded with `fill`, folded with `combine(b, element, acc)` from
    `init` (as the `named` pooling op when given and the pooling is 2-D); also the windows."""
    x = builder.value(op.input)
    kernel = list(op.kernel.get_values())
    windows = windows_of(op.properties, kernel)
    ceil_mode = op.ceil_mode is not None
    padded = _padded(builder, x, windows, ceil_mode, fill)
    sizes = [builder.dim(x, 0), builder.dim(x, 1),
             *(_output_size(builder, op, x, 2 + i, window, ceil_mode) for i, window in enumerate(windows))]
    element_type = x.type.element_type
    spatial, rank = len(windows), 2 + 2 * len(windows)
    taps = builder.empty(kernel, element_type)
    inputs = [(padded, _dims(0, 1, *(_tap(2 + i, 2 + spatial + i, window) for i, window in enumerate(windows)),
                             rank=rank)),
              (taps, _dims(*range(2 + spatial, rank), rank=rank))]
    acc = builder.full(sizes, element_type, init)
    if named is not None and spatial == 2:
        attrs = {name: DenseIntOrFPElementsAttr.from_list(VectorType(i64, [2]), [getattr(w, name[:-1]) for w in windows])
                 for name in ("strides", "dilations")}
        return builder.add(named([padded, taps], [acc], [acc.type], **attrs)).results[0], windows
    result = builder.generic(inputs, acc, ["parallel"] * (2 + spatial) + ["reduction"] * spatial,
                             lambda b, value, _, a: combine(b, value, a), _dims(*range(2 + spatial), rank=rank))
    return result, windows


_LOWEST = {Float16Type: -65504.0, BFloat16Type: -3.3895313892515355e38,
           Float32Type: float(np.finfo(np.float32).min), Float64Type: float(np.finfo(np.float64).min)}
"""The lowest finite value of each float type of GE: max pooling's padding."""


def _max_pool(builder: FuncBuilder, op: ge.MaxPoolOp) -> list[SSAValue]:
    t = op.input.type.element_type
    if is_float(t):
        lowest, init, maximum = _LOWEST[type(t)], float("-inf"), arith.MaximumfOp
    else:
        lowest = 0 if is_unsigned(t) else -2 ** (t.width.data - 1)
        init, maximum = lowest, arith.MaxUIOp if is_unsigned(t) else arith.MaxSIOp
    result, _ = _pool(builder, op, lowest, init, lambda b, value, acc: b.add(maximum(acc, value)),
                      linalg.PoolingNchwMaxOp if is_float(t) else None)
    return [result]


def _avg_pool(builder: FuncBuilder, op: ge.AvgPoolOp) -> list[SSAValue]:
    sums, windows = _pool(builder, op, 0, 0, lambda b, value, acc: b.add(arith.AddfOp(acc, value)), PoolingNchwSumOp)
    x = builder.value(op.input)
    spatial = [builder.dim(x, 2 + i) for i in range(len(windows))]
    include_pad = op.count_include_pad is not None
    element_type = x.type.element_type
    if op.ceil_mode is None and not any(w.pad_begin or w.pad_end for w in windows):
        # every window lies inside the input: each divides by the kernel's size
        size = builder.scalar(float(np.prod([w.kernel for w in windows])), element_type)
        return [builder.generic([], sums, ["parallel"] * (2 + len(windows)),
                                lambda b, total: b.add(arith.DivfOp(total, size)))]

    def divide(b: Body, total: SSAValue) -> SSAValue:
        i = IndexMath(b)
        counts = [_counted_taps(i, b.index(2 + axis), size, window, include_pad)
                  for axis, (size, window) in enumerate(zip(spatial, windows))]
        count = b.add(arith.IndexCastOp(functools.reduce(i.mul, counts), i64))
        return b.add(arith.DivfOp(total, b.add(arith.SIToFPOp(count, element_type))))
    return [builder.generic([], sums, ["parallel"] * (2 + len(windows)), divide)]


def _counted_taps(i: IndexMath, out: SSAValue, size: Size, window: Window, include_pad: bool) -> SSAValue:
    """How many taps of the window at `out` fall on counted positions along one axis: the
    input, and its explicit padding too with `count_include_pad` (never `ceil_mode`'s extra)."""
    lo, hi = (0, i.add(size, window.pad_begin + window.pad_end)) if include_pad else \
        (window.pad_begin, i.add(size, window.pad_begin))
    start = i.mul(out, window.stride)
    first = i.max(i.binary(arith.CeilDivSIOp, i.sub(lo, start), window.dilation), 0)
    end = i.min(i.binary(arith.CeilDivSIOp, i.sub(hi, start), window.dilation), window.kernel)
    return i.max(i.sub(end, first), 0)


# --- transposed convolution -----------------------------------------------------------------

def _conv_transpose(builder: FuncBuilder, op: ge.ConvTransposeOp) -> list[SSAValue]:
    """The input spread `stride` apart into zeros with a margin of the filter's extent
    (`tensor.insert_slice` with strides), convolved with the flipped filter (read with
    `tensor.extract`) by a generic over (n, g, m, outputs..., c, taps...); the full output is then
    cropped (or extended with zeros) by `pads`, and the bias added."""
    x, w = builder.value(op.input), builder.value(op.filter)
    n, channels, *sizes = builder.sizes(x)
    if not all(isinstance(s, int) for s in (channels, *sizes)):
        raise Unsupported("a transposed convolution needs static channels and spatial sizes")
    _, per_group, *kernel = w.type.get_shape()
    groups, t, spatial = op.groups.value.data, x.type.element_type, len(sizes)
    strides, dilations = list(op.strides.get_values()), list(op.dilations.get_values())
    extra, pads = list(op.output_padding.get_values()), list(op.pads.get_values())
    margins = [d * (k - 1) for d, k in zip(dilations, kernel)]
    full = [s * (size - 1) + margin + 1 + e for s, size, margin, e in zip(strides, sizes, margins, extra)]
    spread = builder.full([n, groups, channels // groups, *(f + m for f, m in zip(full, margins))], t, 0)
    spread = insert_slice(builder, _expand(builder, x, 1, [groups, channels // groups]), spread,
                          [0, 0, 0, *margins], [1, 1, 1, *strides])
    rank, out, c, taps = 4 + 2 * spatial, 3, 3 + spatial, 4 + spatial
    d = [AffineExpr.dimension(i) for i in range(rank)]  # n, g, m, outputs..., c, taps...
    maps = [_dims(0, 1, c, *(d[out + i] + d[taps + i] * dilations[i] for i in range(spatial)), rank=rank),
            _dims(1, c, 2, *range(taps, rank), rank=rank)]
    total = builder.generic(list(zip([spread, _flipped(builder, w, groups)], maps)),
                            builder.full([n, groups, per_group, *full], t, 0),
                            ["parallel"] * (3 + spatial) + ["reduction"] * (1 + spatial),
                            lambda b, v, f, acc: b.add(arith.AddfOp(acc, b.add(arith.MulfOp(v, f)))),
                            _dims(*range(3 + spatial), rank=rank))
    y = _collapse(builder, total, 1)
    begins, ends = pads[0::2], pads[1::2]
    if any(p < 0 for p in pads):
        y = constant_pad(builder, y, [0, 0, *(max(0, -p) for p in begins)], [0, 0, *(max(0, -p) for p in ends)], 0.0)
    result_sizes = [n, groups * per_group, *(dim.lo for dim in op.result.type.dims[2:])]
    y = extract_slice(builder, y, [0, 0, *(max(0, p) for p in begins)], result_sizes)
    if op.bias is None:
        return [y]
    channel = AffineMap(2 + spatial, 0, (AffineExpr.dimension(1),))
    return [builder.generic([(y, AffineMap.identity(2 + spatial)), (builder.value(op.bias), channel)],
                            (result_sizes, t), ["parallel"] * (2 + spatial),
                            lambda b, v, bias, out: b.add(arith.AddfOp(v, bias)))]


def _flipped(builder: FuncBuilder, w: SSAValue, groups: int) -> SSAValue:
    """The [C, M / groups, taps...] filter as [groups, C / groups, M / groups, taps...], its taps reversed."""
    grouped = _expand(builder, w, 0, [groups, w.type.get_shape()[0] // groups])
    taps = grouped.type.get_shape()[3:]

    def reversed_tap(b: Body, axis: int) -> Callable[[SSAValue], SSAValue] | None:
        if axis < 3:
            return None
        last = b.constant(taps[axis - 3] - 1, IndexType())
        return lambda i: b.add(arith.SubiOp(last, i))

    return gather_positions(builder, grouped, builder.sizes(grouped), reversed_tap)


LOWERINGS = {ge.Conv2DOp: _conv2d, ge.MaxPoolOp: _max_pool, ge.AvgPoolOp: _avg_pool,
             ge.ConvTransposeOp: _conv_transpose}
