"""Sliding-window ops: convolutions, transposed convolutions and poolings."""
from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import AnyFloat, DenseArrayBase, I64, IntegerAttr, IntegerType, UnitAttr, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dfir.dialects.ge.base import ShapedOp
from dfir.dialects.ge_shapes import (check_count, check_min, check_window_properties, format_shape, intersect_dims,
                                     prop_flag, prop_int, prop_ints, require_float, require_image_format,
                                     require_number, require_rank, require_same_element_types, spatial_rank, window_dim,
                                     windows_of)
from dfir.dialects.ge_types import DimRange, GeTensorType

__all__ = ["AvgPoolOp", "Conv2DOp", "ConvTransposeOp", "GlobalAvgPoolOp", "MaxPoolOp", "OPS"]


@irdl_op_definition
class Conv2DOp(ShapedOp):
    """Convolution of an NCHW input with an [M, C / groups, kH, kW] filter and an optional [M]
    bias, of floats or of i32 (integer convolutions accumulate in i32); also over one (NCW) or
    three (NCDHW) spatial dimensions, or any number, with a filter of the same rank. `strides` and `dilations` have one entry per spatial axis, `pads` a begin and an
    end ([top, bottom, left, right] in 2-D); each output size is
    `(size + pads - dilation * (k - 1) - 1) // stride + 1`, computed on both ends of a range.

        %y = ge.conv2d %x, %w, %b strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (!ge.tensor<[-1, 3, 32, 32], f32, NCHW>, !ge.tensor<[8, 3, 3, 3], f32>, !ge.tensor<[8], f32>) -> !ge.tensor<[-1, 8, 32, 32], f32, NCHW>
    """

    name = "ge.conv2d"

    input = operand_def(GeTensorType)
    filter = operand_def(GeTensorType)
    bias = opt_operand_def(GeTensorType)
    strides = prop_def(DenseArrayBase.constr(i64))
    pads = prop_def(DenseArrayBase.constr(i64))
    dilations = prop_def(DenseArrayBase.constr(i64))
    groups = prop_def(IntegerAttr[I64])
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `,` $filter (`,` $bias^)? `strides` $strides `pads` $pads `dilations` "
                       "$dilations `groups` $groups attr-dict `:` functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        x, w, *bias = operand_types
        require_same_element_types(cls.name, operand_types)
        _require_float_or_i32(cls.name, x)
        spatial = spatial_rank(cls.name, x)
        require_rank(cls.name, w, x.rank, "filter")
        check_window_properties(cls.name, properties, spatial)
        groups = prop_int(properties, "groups")
        if groups < 1:
            raise VerifyException(f"{cls.name}: groups must be >= 1, got {groups}")
        if not all(d.is_fixed for d in w.dims[2:]):
            raise VerifyException(f"{cls.name}: filter spatial dimensions must be fixed, got {format_shape(w)}")
        channels = _channels_per_group(cls.name, x, w, groups)
        if x.dims[1].intersect(channels) is None:
            raise VerifyException(f"{cls.name}: input {format_shape(x)} has {x.dims[1]} channels but filter "
                                  f"{format_shape(w)} with groups {groups} expects {channels}")
        out_channels = w.dims[0]
        if bias:
            require_rank(cls.name, bias[0], 1, "bias")
            intersect_dims(cls.name, f"bias {format_shape(bias[0])} must have one entry per output channel",
                            bias[0].dims[0], out_channels)
        windows = windows_of(properties, [d.lo for d in w.dims[2:]])
        sizes = [window_dim(cls.name, x, 2 + i, window, False) for i, window in enumerate(windows)]
        return [x.with_dims([x.dims[0], out_channels, *sizes])]


def _require_float_or_i32(op_name: str, x: GeTensorType) -> None:
    """Floats, or i32: the type integer convolutions accumulate in."""
    if not isinstance(x.element_type, AnyFloat) and x.element_type != IntegerType(32):
        raise VerifyException(f"{op_name}: input must have a floating-point or i32 element type, got "
                              f"{x.element_type}")


def _channels_per_group(op_name: str, x: GeTensorType, w: GeTensorType, groups: int) -> DimRange:
    """The input channels a filter expects: its dimension 1 times `groups`."""
    if w.dims[0].is_fixed and w.dims[0].lo % groups:
        raise VerifyException(f"{op_name}: filter {format_shape(w)} has {w.dims[0].lo} output channels, which "
                              f"is not a multiple of groups {groups}")
    per_group = w.dims[1]
    return DimRange(per_group.lo * groups, None if per_group.hi is None else per_group.hi * groups)


class _PoolOp(ShapedOp):
    """Sliding-window pooling over the spatial dimensions (2 and up) of an NCHW-like input:
    `kernel`, `strides` and `dilations` have one entry per spatial axis, `pads` two."""

    ELEMENT_CHECK: ClassVar = staticmethod(require_float)
    """What the input's element type must be."""

    input = operand_def(GeTensorType)
    kernel = prop_def(DenseArrayBase.constr(i64))
    strides = prop_def(DenseArrayBase.constr(i64))
    pads = prop_def(DenseArrayBase.constr(i64))
    dilations = prop_def(DenseArrayBase.constr(i64))
    ceil_mode = opt_prop_def(UnitAttr)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        cls.ELEMENT_CHECK(cls.name, x, "input")
        spatial = spatial_rank(cls.name, x)
        kernel = prop_ints(properties, "kernel")
        check_count(cls.name, "kernel", kernel, spatial)
        check_min(cls.name, "kernel", kernel, 1)
        check_window_properties(cls.name, properties, spatial)
        windows = windows_of(properties, kernel)
        for window in windows:
            if window.pad_begin >= window.extent or window.pad_end >= window.extent:
                raise VerifyException(f"{cls.name}: pads {prop_ints(properties, 'pads')} must be smaller "
                                      f"than the window extent {window.extent}")
        ceil_mode = prop_flag(properties, "ceil_mode")
        sizes = [window_dim(cls.name, x, 2 + i, window, ceil_mode) for i, window in enumerate(windows)]
        return [x.with_dims([*x.dims[:2], *sizes])]


@irdl_op_definition
class MaxPoolOp(_PoolOp):
    """The maximum of each window (padding never wins), of floats or integers. Output sizes as
    `ge.conv2d`, rounded up with `ceil_mode`.

        %y = ge.max_pool %x kernel [2, 2] strides [2, 2] pads [0, 0, 0, 0] dilations [1, 1] : !ge.tensor<[1, 8, 32, 32], f32> -> !ge.tensor<[1, 8, 16, 16], f32>
    """

    name = "ge.max_pool"

    ELEMENT_CHECK: ClassVar = staticmethod(require_number)

    assembly_format = ("$input `kernel` $kernel `strides` $strides `pads` $pads `dilations` $dilations "
                       "(`ceil_mode` $ceil_mode^)? attr-dict `:` type($input) `->` type($result)")


@irdl_op_definition
class AvgPoolOp(_PoolOp):
    """The mean of each window; padding counts toward the divisor only with `count_include_pad`.

        %y = ge.avg_pool %x kernel [3, 3] strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] count_include_pad : !ge.tensor<[1, 8, 32, 32], f32> -> !ge.tensor<[1, 8, 32, 32], f32>
    """

    name = "ge.avg_pool"

    count_include_pad = opt_prop_def(UnitAttr)

    assembly_format = ("$input `kernel` $kernel `strides` $strides `pads` $pads `dilations` $dilations "
                       "(`ceil_mode` $ceil_mode^)? (`count_include_pad` $count_include_pad^)? attr-dict "
                       "`:` type($input) `->` type($result)")


@irdl_op_definition
class GlobalAvgPoolOp(ShapedOp):
    """The mean over every spatial dimension (2 and up) of an NCHW-like input, kept as size 1.

        %y = ge.global_avg_pool %x : !ge.tensor<[-1, 8, 7, 7], f32> -> !ge.tensor<[-1, 8, 1, 1], f32>
    """

    name = "ge.global_avg_pool"

    input = operand_def(GeTensorType)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        require_float(cls.name, x, "input")
        if x.rank < 3:
            raise VerifyException(f"{cls.name}: input must have rank >= 3, got {format_shape(x)}")
        require_image_format(cls.name, x)
        return [x.with_dims([*x.dims[:2]] + [DimRange.fixed(1)] * (x.rank - 2))]


@irdl_op_definition
class ConvTransposeOp(ShapedOp):
    """Transposed convolution of an NCHW input with a [C, M / groups, kH, kW] filter and an
    optional [M] bias (as ONNX ConvTranspose); also over one, three or more spatial dimensions,
    with a filter of the input's rank. Each input pixel scatters the filter times its value at
    `stride` steps; the full output spans `stride * (size - 1) + dilation * (k - 1) + 1
    + output_padding`, of which `pads` (a begin and an end per axis: [top, bottom, left, right]
    in 2-D) are cut off (a negative entry adds that many zeros instead), and the bias is added last.

        %y = ge.conv_transpose %x, %w strides [2, 2] pads [1, 1, 1, 1] dilations [1, 1] output_padding [1, 1] groups 1 : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[8, 3, 3, 3], f32>) -> !ge.tensor<[-1, 3, 8, 8], f32>
    """

    name = "ge.conv_transpose"

    input = operand_def(GeTensorType)
    filter = operand_def(GeTensorType)
    bias = opt_operand_def(GeTensorType)
    strides = prop_def(DenseArrayBase.constr(i64))
    pads = prop_def(DenseArrayBase.constr(i64))
    dilations = prop_def(DenseArrayBase.constr(i64))
    output_padding = prop_def(DenseArrayBase.constr(i64))
    groups = prop_def(IntegerAttr[I64])
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `,` $filter (`,` $bias^)? `strides` $strides `pads` $pads `dilations` $dilations "
                       "`output_padding` $output_padding `groups` $groups attr-dict `:` "
                       "functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        x, w, *bias = operand_types
        require_same_element_types(cls.name, operand_types)
        require_float(cls.name, x, "input")
        spatial = spatial_rank(cls.name, x)
        require_rank(cls.name, w, x.rank, "filter")
        strides, dilations = prop_ints(properties, "strides"), prop_ints(properties, "dilations")
        pads, extra = prop_ints(properties, "pads"), prop_ints(properties, "output_padding")
        for what, values, least in (("strides", strides, 1), ("dilations", dilations, 1),
                                    ("output_padding", extra, 0)):
            check_count(cls.name, what, values, spatial)
            check_min(cls.name, what, values, least)
        check_count(cls.name, "pads", pads, 2 * spatial)
        groups = prop_int(properties, "groups")
        check_min(cls.name, "groups", [groups], 1)
        if not all(d.is_fixed for d in w.dims[1:]):
            raise VerifyException(f"{cls.name}: filter dimensions 1 to {w.rank - 1} must be fixed, "
                                  f"got {format_shape(w)}")
        intersect_dims(cls.name, f"input {format_shape(x)} must have one channel per filter row of "
                       f"{format_shape(w)}", x.dims[1], w.dims[0])
        out_channels = DimRange.fixed(w.dims[1].lo * groups)
        if bias:
            require_rank(cls.name, bias[0], 1, "bias")
            intersect_dims(cls.name, f"bias {format_shape(bias[0])} must have one entry per output channel",
                           bias[0].dims[0], out_channels)
        sizes = []
        for i in range(spatial):
            span = dilations[i] * (w.dims[2 + i].lo - 1) + 1 + extra[i] - pads[2 * i] - pads[2 * i + 1]
            d = x.dims[2 + i]
            low, high = strides[i] * (max(d.lo, 1) - 1) + span, None if d.hi is None else strides[i] * (d.hi - 1) + span
            if high is not None and high < 0:
                raise VerifyException(f"{cls.name}: pads {pads} cut more than the output of {format_shape(x)} "
                                      f"spans along dimension {2 + i}")
            sizes.append(DimRange(max(low, 0), high))
        return [x.with_dims([x.dims[0], out_channels, *sizes])]


OPS = (Conv2DOp, MaxPoolOp, AvgPoolOp, GlobalAvgPoolOp, ConvTransposeOp)
"""The family's ops, in the order they were added."""
