"""Comparisons, logic and bitwise ops, float tests and `ge.select`: element-wise, mostly to or
from i1."""
from __future__ import annotations

from xdsl.dialects.builtin import StringAttr, UnitAttr, i1
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dfir.dialects.ge.base import ElementwiseBinaryOp, ShapedOp, UnaryOp
from dfir.dialects.ge.traits import Elementwise, InPlace
from dfir.dialects.ge_shapes import (broadcast_dims, require_bool, require_float, require_integer,
                                     require_same_element_type)
from dfir.dialects.ge_types import GeTensorType

__all__ = ["BitShiftOp", "BitwiseAndOp", "BitwiseNotOp", "BitwiseOrOp", "BitwiseXorOp", "EqualOp", "GreaterEqualOp",
           "GreaterOp", "IsInfOp", "IsNanOp", "LessEqualOp", "LessOp", "LogicalAndOp", "LogicalNotOp", "LogicalOrOp",
           "LogicalXorOp", "OPS", "SelectOp"]


class _CompareOp(ElementwiseBinaryOp):
    """`lhs <relation> rhs` element by element with numpy broadcasting; same element types, an
    i1 result. Float comparisons are ordered: NaN compares false."""

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (result,) = super().infer_types(operand_types, properties)
        return [GeTensorType(result.dims, i1, result.tensor_format)]


@irdl_op_definition
class EqualOp(_CompareOp):
    """`lhs == rhs` element by element.

        %z = ge.equal %x, %y : (!ge.tensor<[2, 3], i32>, !ge.tensor<[3], i32>) -> !ge.tensor<[2, 3], i1>
    """

    name = "ge.equal"


@irdl_op_definition
class LessOp(_CompareOp):
    """`lhs < rhs` element by element.

        %z = ge.less %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[2, 3], i1>
    """

    name = "ge.less"


@irdl_op_definition
class GreaterOp(_CompareOp):
    """`lhs > rhs` element by element.

        %z = ge.greater %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[2, 3], i1>
    """

    name = "ge.greater"


@irdl_op_definition
class LessEqualOp(_CompareOp):
    """`lhs <= rhs` element by element.

        %z = ge.less_equal %x, %y : (!ge.tensor<[2, 3], ui8>, !ge.tensor<[], ui8>) -> !ge.tensor<[2, 3], i1>
    """

    name = "ge.less_equal"


@irdl_op_definition
class GreaterEqualOp(_CompareOp):
    """`lhs >= rhs` element by element.

        %z = ge.greater_equal %x, %y : (!ge.tensor<[2, 3], f16>, !ge.tensor<[2, 1], f16>) -> !ge.tensor<[2, 3], i1>
    """

    name = "ge.greater_equal"


class _LogicalOp(ElementwiseBinaryOp):
    """A boolean function of two i1 tensors, with numpy broadcasting."""

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        require_bool(cls.name, operand_types[0], "lhs")
        return super().infer_types(operand_types, properties)


@irdl_op_definition
class LogicalAndOp(_LogicalOp):
    """`lhs and rhs` element by element.

        %z = ge.logical_and %a, %b : (!ge.tensor<[2, 3], i1>, !ge.tensor<[3], i1>) -> !ge.tensor<[2, 3], i1>
    """

    name = "ge.logical_and"


@irdl_op_definition
class LogicalOrOp(_LogicalOp):
    """`lhs or rhs` element by element.

        %z = ge.logical_or %a, %b : (!ge.tensor<[2, 3], i1>, !ge.tensor<[3], i1>) -> !ge.tensor<[2, 3], i1>
    """

    name = "ge.logical_or"


@irdl_op_definition
class LogicalXorOp(_LogicalOp):
    """`lhs != rhs` on booleans, element by element.

        %z = ge.logical_xor %a, %b : (!ge.tensor<[2, 3], i1>, !ge.tensor<[3], i1>) -> !ge.tensor<[2, 3], i1>
    """

    name = "ge.logical_xor"


class _BitwiseOp(ElementwiseBinaryOp):
    """A bitwise function of two integer tensors (two's complement), with numpy broadcasting."""

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        require_integer(cls.name, operand_types[0], "lhs")
        return super().infer_types(operand_types, properties)


@irdl_op_definition
class BitwiseAndOp(_BitwiseOp):
    """`lhs & rhs` element by element.

        %z = ge.bitwise_and %x, %y : (!ge.tensor<[4], i32>, !ge.tensor<[4], i32>) -> !ge.tensor<[4], i32>
    """

    name = "ge.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(_BitwiseOp):
    """`lhs | rhs` element by element.

        %z = ge.bitwise_or %x, %y : (!ge.tensor<[4], ui8>, !ge.tensor<[], ui8>) -> !ge.tensor<[4], ui8>
    """

    name = "ge.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(_BitwiseOp):
    """`lhs ^ rhs` element by element.

        %z = ge.bitwise_xor %x, %y : (!ge.tensor<[4], i16>, !ge.tensor<[4], i16>) -> !ge.tensor<[4], i16>
    """

    name = "ge.bitwise_xor"


_SHIFT_DIRECTIONS = ("left", "right")


@irdl_op_definition
class BitShiftOp(_BitwiseOp):
    """`lhs << rhs` (direction "left") or `lhs >> rhs` ("right": logical for unsigned types,
    arithmetic for signed ones), element by element with numpy broadcasting. A shift by the bit
    width or more gives 0 (-1 for a negative signed value shifted right).

        %z = ge.bit_shift %x, %n direction "right" : (!ge.tensor<[4], ui32>, !ge.tensor<[4], ui32>) -> !ge.tensor<[4], ui32>
    """

    name = "ge.bit_shift"

    direction = prop_def(StringAttr)

    assembly_format = "$lhs `,` $rhs `direction` $direction attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        direction = properties["direction"].data
        if direction not in _SHIFT_DIRECTIONS:
            raise VerifyException(f"{cls.name}: direction must be one of {', '.join(_SHIFT_DIRECTIONS)}, "
                                  f"got '{direction}'")
        return super().infer_types(operand_types, properties)


@irdl_op_definition
class SelectOp(ShapedOp):
    """`x` where `condition` is true, else `y`, element by element; all three broadcast together
    (numpy's rules, as ONNX Where). `x` and `y` share the result's element type.

        %z = ge.select %c, %x, %y : (!ge.tensor<[2, 1], i1>, !ge.tensor<[3], f32>, !ge.tensor<[], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.select"

    condition = operand_def(GeTensorType)
    x = operand_def(GeTensorType)
    y = operand_def(GeTensorType)
    result = result_def(GeTensorType)

    traits = traits_def(Pure(), Elementwise(), InPlace())

    assembly_format = "$condition `,` $x `,` $y attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        condition, x, y = operand_types
        require_bool(cls.name, condition, "condition")
        require_same_element_type(cls.name, x, y)
        dims = broadcast_dims(f"{cls.name}: shapes", x.dims, y.dims)
        dims = broadcast_dims(f"{cls.name}: shapes", condition.dims, dims)
        wider = max((x, y, condition), key=lambda t: t.rank)
        return [GeTensorType(dims, x.element_type, wider.tensor_format)]


@irdl_op_definition
class LogicalNotOp(UnaryOp):
    """`not x` of an i1 tensor, element by element.

        %y = ge.logical_not %x : !ge.tensor<[2, 3], i1>
    """

    name = "ge.logical_not"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        require_bool(cls.name, operand_types[0])
        return [operand_types[0]]


@irdl_op_definition
class BitwiseNotOp(UnaryOp):
    """`~x` of an integer tensor (two's complement), element by element.

        %y = ge.bitwise_not %x : !ge.tensor<[2, 3], i32>
    """

    name = "ge.bitwise_not"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        require_integer(cls.name, operand_types[0])
        return [operand_types[0]]


class _FloatTestOp(ShapedOp):
    """A test of each element of a float tensor, as an i1 tensor of its shape."""

    input = operand_def(GeTensorType)
    result = result_def(GeTensorType)

    traits = traits_def(Pure(), Elementwise(), InPlace())

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        require_float(cls.name, x)
        return [GeTensorType(x.dims, i1, x.tensor_format)]


@irdl_op_definition
class IsNanOp(_FloatTestOp):
    """Whether each element of a float tensor is NaN.

        %y = ge.is_nan %x : (!ge.tensor<[2, 3], f32>) -> !ge.tensor<[2, 3], i1>
    """

    name = "ge.is_nan"


@irdl_op_definition
class IsInfOp(_FloatTestOp):
    """Whether each element of a float tensor is an infinity, as an i1 tensor of its shape:
    +inf counts with `detect_positive`, -inf with `detect_negative` (ONNX IsInf sets both by
    default).

        %y = ge.is_inf %x detect_positive detect_negative : (!ge.tensor<[2, 3], f32>) -> !ge.tensor<[2, 3], i1>
    """

    name = "ge.is_inf"

    detect_positive = opt_prop_def(UnitAttr)
    detect_negative = opt_prop_def(UnitAttr)

    assembly_format = ("$input (`detect_positive` $detect_positive^)? (`detect_negative` $detect_negative^)? "
                       "attr-dict `:` functional-type(operands, results)")


OPS = (EqualOp, LessOp, GreaterOp, LessEqualOp, GreaterEqualOp, LogicalAndOp, LogicalOrOp, LogicalXorOp, BitwiseAndOp,
       BitwiseOrOp, BitwiseXorOp, BitShiftOp, SelectOp, LogicalNotOp, BitwiseNotOp, IsNanOp, IsInfOp)
"""The family's ops, in the order they were added."""
