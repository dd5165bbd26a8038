"""Activation functions: element-wise, most with a parameter (`alpha`, `gamma`, `lambd`...)."""
from __future__ import annotations

from xdsl.dialects.builtin import Float64Type, FloatAttr
from xdsl.irdl import irdl_op_definition, prop_def
from xdsl.utils.exceptions import VerifyException

from dfir.dialects.ge.base import ElementwiseBinaryOp, UnaryOp
from dfir.dialects.ge_shapes import format_shape, require_number

__all__ = ["CeluOp", "EluOp", "HardSigmoidOp", "HardSwishOp", "LeakyReluOp", "MishOp", "OPS", "PReluOp", "SeluOp",
           "ShrinkOp", "SoftplusOp", "SoftsignOp", "ThresholdedReluOp"]


class _AlphaUnaryOp(UnaryOp):
    """An element-wise function of one floating-point tensor with one float parameter, `alpha`."""

    alpha = prop_def(FloatAttr[Float64Type])

    assembly_format = "$input `alpha` $alpha attr-dict `:` type($result)"


@irdl_op_definition
class PReluOp(ElementwiseBinaryOp):
    """`x` where it is >= 0, else `x * slope`; the slope broadcasts to `x` (numpy's rules), and
    the result has the shape of `x`.

        %y = ge.prelu %x, %slope : (!ge.tensor<[-1, 3, 4], f32>, !ge.tensor<[3, 1], f32>) -> !ge.tensor<[-1, 3, 4], f32>
    """

    name = "ge.prelu"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        x, slope = operand_types
        require_number(cls.name, x, "input")
        (result,) = super().infer_types(operand_types, properties)
        if result.rank != x.rank or any(r.intersect(d) is None for r, d in zip(result.dims, x.dims)):
            raise VerifyException(f"{cls.name}: slope {format_shape(slope)} does not broadcast to the input "
                                  f"{format_shape(x)}")
        return [x]


@irdl_op_definition
class SoftplusOp(UnaryOp):
    """`log(1 + exp(x))`, element by element, without overflow for large `x`.

        %y = ge.softplus %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.softplus"


@irdl_op_definition
class SoftsignOp(UnaryOp):
    """`x / (1 + |x|)`, element by element.

        %y = ge.softsign %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.softsign"


@irdl_op_definition
class MishOp(UnaryOp):
    """`x * tanh(softplus(x))`, element by element.

        %y = ge.mish %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.mish"


@irdl_op_definition
class HardSwishOp(UnaryOp):
    """`x * max(0, min(1, x / 6 + 1 / 2))`, element by element.

        %y = ge.hard_swish %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.hard_swish"


@irdl_op_definition
class LeakyReluOp(_AlphaUnaryOp):
    """`x` where it is >= 0, else `alpha * x`, element by element.

        %y = ge.leaky_relu %x alpha 1.000000e-01 : !ge.tensor<[2, 3], f32>
    """

    name = "ge.leaky_relu"


@irdl_op_definition
class EluOp(_AlphaUnaryOp):
    """`x` where it is > 0, else `alpha * (exp(x) - 1)`, element by element.

        %y = ge.elu %x alpha 1.000000e+00 : !ge.tensor<[2, 3], f32>
    """

    name = "ge.elu"


@irdl_op_definition
class CeluOp(_AlphaUnaryOp):
    """`max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`, element by element; alpha is not 0.

        %y = ge.celu %x alpha 1.000000e+00 : !ge.tensor<[2, 3], f32>
    """

    name = "ge.celu"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        if properties["alpha"].value.data == 0:
            raise VerifyException(f"{cls.name}: alpha must not be 0")
        return super().infer_types(operand_types, properties)


@irdl_op_definition
class ThresholdedReluOp(_AlphaUnaryOp):
    """`x` where it is > alpha, else 0, element by element.

        %y = ge.thresholded_relu %x alpha 1.000000e+00 : !ge.tensor<[2, 3], f32>
    """

    name = "ge.thresholded_relu"


@irdl_op_definition
class SeluOp(UnaryOp):
    """`gamma * x` where `x` > 0, else `gamma * alpha * (exp(x) - 1)`, element by element.

        %y = ge.selu %x alpha 1.673260e+00 gamma 1.050700e+00 : !ge.tensor<[2, 3], f32>
    """

    name = "ge.selu"

    alpha = prop_def(FloatAttr[Float64Type])
    gamma = prop_def(FloatAttr[Float64Type])

    assembly_format = "$input `alpha` $alpha `gamma` $gamma attr-dict `:` type($result)"


@irdl_op_definition
class HardSigmoidOp(UnaryOp):
    """`max(0, min(1, alpha * x + beta))`, element by element.

        %y = ge.hard_sigmoid %x alpha 2.000000e-01 beta 5.000000e-01 : !ge.tensor<[2, 3], f32>
    """

    name = "ge.hard_sigmoid"

    alpha = prop_def(FloatAttr[Float64Type])
    beta = prop_def(FloatAttr[Float64Type])

    assembly_format = "$input `alpha` $alpha `beta` $beta attr-dict `:` type($result)"


@irdl_op_definition
class ShrinkOp(UnaryOp):
    """`x - bias` where `x` > lambd, `x + bias` where `x` < -lambd, else 0, element by element.

        %y = ge.shrink %x bias 0.000000e+00 lambd 5.000000e-01 : !ge.tensor<[2, 3], f32>
    """

    name = "ge.shrink"

    bias = prop_def(FloatAttr[Float64Type])
    lambd = prop_def(FloatAttr[Float64Type])

    assembly_format = "$input `bias` $bias `lambd` $lambd attr-dict `:` type($result)"


OPS = (PReluOp, SoftplusOp, SoftsignOp, MishOp, HardSwishOp, LeakyReluOp, EluOp, CeluOp, ThresholdedReluOp, SeluOp,
       HardSigmoidOp, ShrinkOp)
"""The family's ops, in the order they were added."""
