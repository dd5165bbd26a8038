"""Normalizations: batch, layer and instance norms, local response normalization, softmax and
log-softmax."""
from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import Float64Type, FloatAttr, I64, IntegerAttr
from xdsl.irdl import (VarConstraint, base, irdl_op_definition, operand_def, opt_operand_def, prop_def, result_def,
                       traits_def)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dfir.dialects.ge.base import ShapedOp
from dfir.dialects.ge_shapes import (check_min, format_shape, intersect_dims, normalize_axis, prop_int, require_float,
                                     require_rank, require_same_element_types)
from dfir.dialects.ge_types import format_dims, GeTensorType

__all__ = ["BatchNormOp", "InstanceNormOp", "LayerNormOp", "LogSoftmaxOp", "LrnOp", "OPS", "SoftmaxOp"]


@irdl_op_definition
class BatchNormOp(ShapedOp):
    """Inference batch normalization over channel dimension 1:
    `(x - mean) / sqrt(variance + epsilon) * scale + offset`, each parameter of shape [C].

        %y = ge.batch_norm %x, %scale, %offset, %mean, %variance epsilon 1.0e-05 : (!ge.tensor<[-1, 8, 4, 4], f32>, !ge.tensor<[8], f32>, !ge.tensor<[8], f32>, !ge.tensor<[8], f32>, !ge.tensor<[8], f32>) -> !ge.tensor<[-1, 8, 4, 4], f32>
    """

    name = "ge.batch_norm"

    input = operand_def(GeTensorType)
    scale = operand_def(GeTensorType)
    offset = operand_def(GeTensorType)
    mean = operand_def(GeTensorType)
    variance = operand_def(GeTensorType)
    epsilon = prop_def(FloatAttr[Float64Type])
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `,` $scale `,` $offset `,` $mean `,` $variance `epsilon` $epsilon attr-dict "
                       "`:` functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        x, *parameters = operand_types
        require_same_element_types(cls.name, operand_types)
        require_float(cls.name, x, "input")
        if x.rank < 2:
            raise VerifyException(f"{cls.name}: input must have rank >= 2, got {format_shape(x)}")
        for what, t in zip(("scale", "offset", "mean", "variance"), parameters):
            require_rank(cls.name, t, 1, what)
            intersect_dims(cls.name, f"{what} {format_shape(t)} must have one entry per channel of the input "
                            f"{format_shape(x)}", t.dims[0], x.dims[1])
        return [x]


@irdl_op_definition
class LayerNormOp(ShapedOp):
    """Normalization over the dimensions from `axis` on: `(x - mean) / sqrt(variance + epsilon)
    * scale + bias`; `scale` and the optional `bias` broadcast to those dimensions (as ONNX).

        %y = ge.layer_norm %x, %scale, %bias axis -1 epsilon 1.0e-05 : (!ge.tensor<[-1, 16, 64], f32>, !ge.tensor<[64], f32>, !ge.tensor<[64], f32>) -> !ge.tensor<[-1, 16, 64], f32>
    """

    name = "ge.layer_norm"

    input = operand_def(GeTensorType)
    scale = operand_def(GeTensorType)
    bias = opt_operand_def(GeTensorType)
    axis = prop_def(IntegerAttr[I64])
    epsilon = prop_def(FloatAttr[Float64Type])
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `,` $scale (`,` $bias^)? `axis` $axis `epsilon` $epsilon attr-dict `:` "
                       "functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        x, *parameters = operand_types
        require_same_element_types(cls.name, operand_types)
        require_float(cls.name, x, "input")
        axis = normalize_axis(cls.name, prop_int(properties, "axis"), x)
        normalized = x.dims[axis:]
        for what, t in zip(("scale", "bias"), parameters):
            fits = t.rank <= len(normalized) and all(
                p.contains(1) or p.intersect(n) is not None
                for p, n in zip(reversed(t.dims), reversed(normalized)))
            if not fits:
                raise VerifyException(f"{cls.name}: {what} {format_shape(t)} does not broadcast to the normalized "
                                      f"dimensions {format_dims(normalized)}")
        return [x]


@irdl_op_definition
class SoftmaxOp(ShapedOp):
    """`exp(x) / sum(exp(x))` along `axis`.

        %y = ge.softmax %x axis -1 : !ge.tensor<[-1, 10], f32>
    """

    name = "ge.softmax"

    T: ClassVar = VarConstraint("T", base(GeTensorType))
    input = operand_def(T)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input `axis` $axis attr-dict `:` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        require_float(cls.name, x, "input")
        normalize_axis(cls.name, prop_int(properties, "axis"), x)
        return [x]


@irdl_op_definition
class LogSoftmaxOp(ShapedOp):
    """`x - log(sum(exp(x)))` along `axis`, computed as `x - max - log(sum(exp(x - max)))`.

        %y = ge.log_softmax %x axis -1 : !ge.tensor<[-1, 10], f32>
    """

    name = "ge.log_softmax"

    T: ClassVar = VarConstraint("T", base(GeTensorType))
    input = operand_def(T)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input `axis` $axis attr-dict `:` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        return SoftmaxOp.infer_types.__func__(cls, operand_types, properties, operand_values)


@irdl_op_definition
class InstanceNormOp(ShapedOp):
    """Normalization of each (batch, channel) plane over the spatial dimensions (2 and up):
    `(x - mean) / sqrt(variance + epsilon) * scale[c] + bias[c]`, `scale` and `bias` of shape [C].

        %y = ge.instance_norm %x, %scale, %bias epsilon 1.0e-05 : (!ge.tensor<[-1, 3, 8, 8], f32>, !ge.tensor<[3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3, 8, 8], f32>
    """

    name = "ge.instance_norm"

    input = operand_def(GeTensorType)
    scale = operand_def(GeTensorType)
    bias = operand_def(GeTensorType)
    epsilon = prop_def(FloatAttr[Float64Type])
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `,` $scale `,` $bias `epsilon` $epsilon attr-dict `:` "
                       "functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        x, *parameters = operand_types
        require_same_element_types(cls.name, operand_types)
        require_float(cls.name, x, "input")
        if x.rank < 3:
            raise VerifyException(f"{cls.name}: input must have rank >= 3, got {format_shape(x)}")
        for what, t in zip(("scale", "bias"), parameters):
            require_rank(cls.name, t, 1, what)
            intersect_dims(cls.name, f"{what} {format_shape(t)} must have one entry per channel of the input "
                           f"{format_shape(x)}", t.dims[0], x.dims[1])
        return [x]


@irdl_op_definition
class LrnOp(ShapedOp):
    """Local response normalization across channels (dimension 1, as ONNX LRN):
    `x / (bias + alpha / size * sum of squares over the channels c - (size-1)/2 .. c + size/2) ** beta`.

        %y = ge.lrn %x size 3 alpha 1.0e-04 beta 7.5e-01 bias 1.0 : !ge.tensor<[-1, 8, 4, 4], f32>
    """

    name = "ge.lrn"

    T: ClassVar = VarConstraint("T", base(GeTensorType))
    input = operand_def(T)
    size = prop_def(IntegerAttr[I64])
    alpha = prop_def(FloatAttr[Float64Type])
    beta = prop_def(FloatAttr[Float64Type])
    bias = prop_def(FloatAttr[Float64Type])
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input `size` $size `alpha` $alpha `beta` $beta `bias` $bias attr-dict `:` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        require_float(cls.name, x, "input")
        if x.rank < 2:
            raise VerifyException(f"{cls.name}: input must have rank >= 2, got {format_shape(x)}")
        check_min(cls.name, "size", [prop_int(properties, "size")], 1)
        return [x]


OPS = (BatchNormOp, LayerNormOp, SoftmaxOp, LogSoftmaxOp, InstanceNormOp, LrnOp)
"""The family's ops, in the order they were added."""
