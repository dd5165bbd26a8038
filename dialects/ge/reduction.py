"""Reductions over axes (`ge.reduce_*`), arg-reductions, top-k and cumulative sums and products."""
from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, I64, IntegerAttr, IntegerType, UnitAttr, i64
from xdsl.irdl import (VarConstraint, base, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def,
                       traits_def)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dfir.dialects.ge.base import ShapedOp
from dfir.dialects.ge_shapes import (check_min, format_shape, normalize_axes, normalize_axis, prop_flag, prop_int,
                                     prop_ints, require_float)
from dfir.dialects.ge_types import DimRange, GeTensorType

__all__ = ["ArgMaxOp", "ArgMinOp", "CumProdOp", "CumSumOp", "OPS", "ReduceL1Op", "ReduceL2Op", "ReduceLogSumExpOp",
           "ReduceLogSumOp", "ReduceMaxOp", "ReduceMeanOp", "ReduceMinOp", "ReduceProdOp", "ReduceSumOp",
           "ReduceSumSquareOp", "TopKOp"]


class _ReduceOp(ShapedOp):
    """A reduction over `axes`; reduced dimensions stay as size 1 with `keep_dims`."""

    input = operand_def(GeTensorType)
    axes = prop_def(DenseArrayBase.constr(i64))
    keep_dims = opt_prop_def(UnitAttr)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `axes` $axes (`keep_dims` $keep_dims^)? attr-dict `:` type($input) `->` "
                       "type($result)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        axes = normalize_axes(cls.name, prop_ints(properties, "axes"), x)
        if prop_flag(properties, "keep_dims"):
            return [x.with_dims([DimRange.fixed(1) if i in axes else d for i, d in enumerate(x.dims)])]
        return [x.with_dims([d for i, d in enumerate(x.dims) if i not in axes])]


@irdl_op_definition
class ReduceSumOp(_ReduceOp):
    """The sum over `axes`.

        %y = ge.reduce_sum %x axes [1] keep_dims : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1, 1], f32>
    """

    name = "ge.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(_ReduceOp):
    """The mean over `axes`.

        %y = ge.reduce_mean %x axes [2, 3] : !ge.tensor<[-1, 8, 4, 4], f32> -> !ge.tensor<[-1, 8], f32>
    """

    name = "ge.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(_ReduceOp):
    """The maximum over `axes`.

        %y = ge.reduce_max %x axes [-1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
    """

    name = "ge.reduce_max"


@irdl_op_definition
class ReduceProdOp(_ReduceOp):
    """The product over `axes` (1 over no elements).

        %y = ge.reduce_prod %x axes [1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
    """

    name = "ge.reduce_prod"


@irdl_op_definition
class ReduceMinOp(_ReduceOp):
    """The minimum over `axes` (the type's largest value over no elements).

        %y = ge.reduce_min %x axes [0] keep_dims : !ge.tensor<[-1, 8], i32> -> !ge.tensor<[1, 8], i32>
    """

    name = "ge.reduce_min"


@irdl_op_definition
class ReduceL1Op(_ReduceOp):
    """The sum of absolute values over `axes`.

        %y = ge.reduce_l1 %x axes [1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
    """

    name = "ge.reduce_l1"


@irdl_op_definition
class ReduceL2Op(_ReduceOp):
    """The square root of the sum of squares over `axes` (integers: truncated toward zero).

        %y = ge.reduce_l2 %x axes [1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
    """

    name = "ge.reduce_l2"


@irdl_op_definition
class ReduceSumSquareOp(_ReduceOp):
    """The sum of squares over `axes`.

        %y = ge.reduce_sum_square %x axes [1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
    """

    name = "ge.reduce_sum_square"


class _FloatReduceOp(_ReduceOp):
    """A reduction defined on floating-point inputs only."""

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        require_float(cls.name, operand_types[0], "input")
        return super().infer_types(operand_types, properties, operand_values)


@irdl_op_definition
class ReduceLogSumOp(_FloatReduceOp):
    """`log(sum(x))` over `axes`.

        %y = ge.reduce_log_sum %x axes [1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
    """

    name = "ge.reduce_log_sum"


@irdl_op_definition
class ReduceLogSumExpOp(_FloatReduceOp):
    """`log(sum(exp(x)))` over `axes`, as `max + log(sum(exp(x - max)))`.

        %y = ge.reduce_log_sum_exp %x axes [1] : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1], f32>
    """

    name = "ge.reduce_log_sum_exp"


class _ArgReduceOp(ShapedOp):
    """The i64 position of an extreme value along `axis` (the first one, or the last with
    `select_last_index`); the axis stays as size 1 with `keep_dims`."""

    input = operand_def(GeTensorType)
    axis = prop_def(IntegerAttr[I64])
    keep_dims = opt_prop_def(UnitAttr)
    select_last_index = opt_prop_def(UnitAttr)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `axis` $axis (`keep_dims` $keep_dims^)? (`select_last_index` $select_last_index^)? "
                       "attr-dict `:` type($input) `->` type($result)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        axis = normalize_axis(cls.name, prop_int(properties, "axis"), x)
        if prop_flag(properties, "keep_dims"):
            dims = [DimRange.fixed(1) if i == axis else d for i, d in enumerate(x.dims)]
        else:
            dims = [d for i, d in enumerate(x.dims) if i != axis]
        return [GeTensorType(dims, i64, x.tensor_format)]


@irdl_op_definition
class ArgMaxOp(_ArgReduceOp):
    """The position of the maximum along `axis`.

        %i = ge.arg_max %x axis 1 keep_dims : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[-1, 1], i64>
    """

    name = "ge.arg_max"


@irdl_op_definition
class ArgMinOp(_ArgReduceOp):
    """The position of the minimum along `axis`.

        %i = ge.arg_min %x axis 0 select_last_index : !ge.tensor<[-1, 8], f32> -> !ge.tensor<[8], i64>
    """

    name = "ge.arg_min"


@irdl_op_definition
class TopKOp(ShapedOp):
    """The `k` largest (or, without `largest`, smallest) entries along `axis` and their i64
    positions, sorted (equal values: lower position first); without `sorted` the order is
    unspecified (this op still sorts).

        %v, %i = ge.top_k %x k 3 axis -1 largest sorted : !ge.tensor<[-1, 8], f32> -> (!ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 3], i64>)
    """

    name = "ge.top_k"

    input = operand_def(GeTensorType)
    k = prop_def(IntegerAttr[I64])
    axis = prop_def(IntegerAttr[I64])
    largest = opt_prop_def(UnitAttr)
    sorted = opt_prop_def(UnitAttr)
    values = result_def(GeTensorType)
    indices = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `k` $k `axis` $axis (`largest` $largest^)? (`sorted` $sorted^)? attr-dict `:` "
                       "type($input) `->` `(` type($values) `,` type($indices) `)`")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        axis = normalize_axis(cls.name, prop_int(properties, "axis"), x)
        k = prop_int(properties, "k")
        check_min(cls.name, "k", [k], 0)
        if x.dims[axis].hi is not None and k > x.dims[axis].hi:
            raise VerifyException(f"{cls.name}: k {k} exceeds dimension {axis} of {format_shape(x)}")
        values = x.with_dims([DimRange.fixed(k) if i == axis else d for i, d in enumerate(x.dims)])
        return [values, GeTensorType(values.dims, i64, x.tensor_format)]


class _CumulativeOp(ShapedOp):
    """A running sum or product along `axis`: element i combines positions 0..i, or i..end with
    `reverse`; `exclusive` leaves position i itself out (the first element is then the identity)."""

    T: ClassVar = VarConstraint("T", base(GeTensorType))
    input = operand_def(T)
    axis = prop_def(IntegerAttr[I64])
    exclusive = opt_prop_def(UnitAttr)
    reverse = opt_prop_def(UnitAttr)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = ("$input `axis` $axis (`exclusive` $exclusive^)? (`reverse` $reverse^)? attr-dict `:` "
                       "type($result)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        if x.element_type == IntegerType(1):
            raise VerifyException(f"{cls.name}: input must be numeric, got i1")
        normalize_axis(cls.name, prop_int(properties, "axis"), x)
        return [x]


@irdl_op_definition
class CumSumOp(_CumulativeOp):
    """Running sums along `axis` (as ONNX CumSum): element i sums positions 0..i, or i..end with
    `reverse`; `exclusive` leaves position i itself out.

        %y = ge.cum_sum %x axis 1 exclusive : !ge.tensor<[-1, 8], f32>
    """

    name = "ge.cum_sum"


@irdl_op_definition
class CumProdOp(_CumulativeOp):
    """Running products along `axis` (as ONNX CumProd): element i multiplies positions 0..i, or
    i..end with `reverse`; `exclusive` leaves position i itself out (the first product is 1).

        %y = ge.cum_prod %x axis 0 reverse : !ge.tensor<[-1, 8], f32>
    """

    name = "ge.cum_prod"


OPS = (ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceProdOp, ReduceMinOp, ReduceL1Op, ReduceL2Op, ReduceSumSquareOp,
       ReduceLogSumOp, ReduceLogSumExpOp, ArgMaxOp, ArgMinOp, TopKOp, CumSumOp, CumProdOp)
"""The family's ops, in the order they were added."""
