"""Element-wise arithmetic and math: each result element from the operand elements at its index
(numpy broadcasting), and the element-type changes `ge.cast` and `ge.bitcast`."""
from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, StringAttr, UnitAttr, i1
from xdsl.ir import Attribute, TypeAttribute
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dfir.core.shape_arith import range_add, range_div, range_max, range_min, range_mul, range_sub
from dfir.dialects.ge.base import ElementwiseBinaryOp, SameTypeOp, ShapedOp, UnaryOp
from dfir.dialects.ge.traits import Elementwise, InPlace, View
from dfir.dialects.ge_shapes import known_operands, require_number
from dfir.dialects.ge_types import dtype_of, GeTensorType

__all__ = ["AbsOp", "AcosOp", "AcoshOp", "AddOp", "AsinOp", "AsinhOp", "AtanOp", "AtanhOp", "BitCastOp", "CastOp",
           "CeilOp", "CosOp", "CoshOp", "DivOp", "ErfOp", "ExpOp", "FloorOp", "GeluOp", "IdentityOp", "LogOp",
           "MaximumOp", "MinimumOp", "ModOp", "MulOp", "NegOp", "OPS", "PowOp", "ReciprocalOp", "ReluOp", "RoundOp",
           "SigmoidOp", "SignOp", "SinOp", "SinhOp", "SqrtOp", "SubOp", "TanOp", "TanhOp"]


@irdl_op_definition
class AddOp(ElementwiseBinaryOp):
    """Element-wise sum with numpy broadcasting; the result takes the format of the wider operand.

        %z = ge.add %x, %b : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
    """

    name = "ge.add"
    VALUE_RULE = staticmethod(range_add)


@irdl_op_definition
class SubOp(ElementwiseBinaryOp):
    """Element-wise difference `lhs - rhs` with numpy broadcasting.

        %z = ge.sub %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[1, 3], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.sub"
    VALUE_RULE = staticmethod(range_sub)


@irdl_op_definition
class MulOp(ElementwiseBinaryOp):
    """Element-wise product with numpy broadcasting.

        %z = ge.mul %x, %s : (!ge.tensor<[2, 3], f32>, !ge.tensor<[], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.mul"
    VALUE_RULE = staticmethod(range_mul)


@irdl_op_definition
class ReluOp(SameTypeOp):
    """`max(x, 0)` element by element; the result has the operand's type.

        %y = ge.relu %x : !ge.tensor<[-1, 3], f32>
    """

    name = "ge.relu"

    traits = traits_def(Elementwise(), InPlace())


@irdl_op_definition
class IdentityOp(SameTypeOp):
    """The operand itself, of any element type.

        %y = ge.identity %x : !ge.tensor<[-1, 3], i64>
    """

    name = "ge.identity"

    traits = traits_def(Elementwise(), View())

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        return known_operands(operand_values, 1)


@irdl_op_definition
class SqrtOp(UnaryOp):
    """Square root, element by element.

        %y = ge.sqrt %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.sqrt"


@irdl_op_definition
class ExpOp(UnaryOp):
    """`e ** x`, element by element.

        %y = ge.exp %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.exp"


@irdl_op_definition
class LogOp(UnaryOp):
    """Natural logarithm, element by element.

        %y = ge.log %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.log"


@irdl_op_definition
class TanhOp(UnaryOp):
    """Hyperbolic tangent, element by element.

        %y = ge.tanh %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.tanh"


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """`1 / (1 + exp(-x))`, element by element.

        %y = ge.sigmoid %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.sigmoid"


@irdl_op_definition
class ErfOp(UnaryOp):
    """The Gauss error function, element by element.

        %y = ge.erf %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.erf"


_GELU_APPROXIMATIONS = ("none", "tanh")


@irdl_op_definition
class GeluOp(UnaryOp):
    """`x * Phi(x)` with Phi the standard normal CDF; `approximate "tanh"` uses the tanh formula
    (as ONNX Gelu), otherwise the exact erf form.

        %y = ge.gelu %x approximate "tanh" : !ge.tensor<[2, 3], f32>
    """

    name = "ge.gelu"

    approximate = opt_prop_def(StringAttr)

    assembly_format = "$input (`approximate` $approximate^)? attr-dict `:` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        mode = properties["approximate"].data if "approximate" in properties else "none"
        if mode not in _GELU_APPROXIMATIONS:
            raise VerifyException(f"ge.gelu: approximate must be one of {', '.join(_GELU_APPROXIMATIONS)}, "
                                  f"got '{mode}'")
        return super().infer_types(operand_types, properties)


@irdl_op_definition
class DivOp(ElementwiseBinaryOp):
    """Element-wise quotient with numpy broadcasting; integer division truncates toward zero.

        %z = ge.div %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.div"
    VALUE_RULE = staticmethod(range_div)


@irdl_op_definition
class PowOp(ElementwiseBinaryOp):
    """`lhs ** rhs` element by element, with numpy broadcasting.

        %z = ge.pow %x, %e : (!ge.tensor<[2, 3], f32>, !ge.tensor<[], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.pow"


@irdl_op_definition
class MaximumOp(ElementwiseBinaryOp):
    """Element-wise maximum with numpy broadcasting.

        %z = ge.maximum %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[2, 1], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.maximum"
    VALUE_RULE = staticmethod(range_max)


@irdl_op_definition
class MinimumOp(ElementwiseBinaryOp):
    """Element-wise minimum with numpy broadcasting.

        %z = ge.minimum %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[2, 1], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.minimum"
    VALUE_RULE = staticmethod(range_min)


@irdl_op_definition
class ModOp(ElementwiseBinaryOp):
    """The remainder of `lhs / rhs` element by element, with numpy broadcasting: with `fmod` it
    has the sign of `lhs` (C's fmod, truncated division), without it the sign of `rhs` (floored
    division, Python's `%`). An integer remainder by 0 is 0.

        %z = ge.mod %x, %y : (!ge.tensor<[2, 3], i32>, !ge.tensor<[3], i32>) -> !ge.tensor<[2, 3], i32>
        %r = ge.mod %a, %b fmod : (!ge.tensor<[4], f32>, !ge.tensor<[4], f32>) -> !ge.tensor<[4], f32>
    """

    name = "ge.mod"

    fmod = opt_prop_def(UnitAttr)

    assembly_format = "$lhs `,` $rhs (`fmod` $fmod^)? attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        require_number(cls.name, operand_types[0], "lhs")
        return super().infer_types(operand_types, properties)


class _NumericUnaryOp(UnaryOp):
    """An element-wise function of one float or integer tensor; the result has the operand's type."""

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        require_number(cls.name, operand_types[0])
        return [operand_types[0]]


@irdl_op_definition
class NegOp(_NumericUnaryOp):
    """`-x`, element by element (integers wrap around).

        %y = ge.neg %x : !ge.tensor<[2, 3], i32>
    """

    name = "ge.neg"


@irdl_op_definition
class AbsOp(_NumericUnaryOp):
    """`|x|`, element by element (the most negative signed integer stays itself).

        %y = ge.abs %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.abs"


@irdl_op_definition
class SignOp(_NumericUnaryOp):
    """-1, 0 or 1 by the sign of `x`, element by element; NaN stays NaN.

        %y = ge.sign %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.sign"


@irdl_op_definition
class ReciprocalOp(UnaryOp):
    """`1 / x`, element by element.

        %y = ge.reciprocal %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.reciprocal"


@irdl_op_definition
class FloorOp(UnaryOp):
    """The largest integer <= `x`, element by element.

        %y = ge.floor %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.floor"


@irdl_op_definition
class CeilOp(UnaryOp):
    """The smallest integer >= `x`, element by element.

        %y = ge.ceil %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.ceil"


@irdl_op_definition
class RoundOp(UnaryOp):
    """The nearest integer to `x`, halves to even (2.5 -> 2, 3.5 -> 4), element by element.

        %y = ge.round %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.round"


@irdl_op_definition
class SinOp(UnaryOp):
    """Sine, element by element.

        %y = ge.sin %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.sin"


@irdl_op_definition
class CosOp(UnaryOp):
    """Cosine, element by element.

        %y = ge.cos %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.cos"


@irdl_op_definition
class TanOp(UnaryOp):
    """Tangent, element by element.

        %y = ge.tan %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.tan"


@irdl_op_definition
class AsinOp(UnaryOp):
    """Arcsine, element by element (NaN outside [-1, 1]).

        %y = ge.asin %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.asin"


@irdl_op_definition
class AcosOp(UnaryOp):
    """Arccosine, element by element (NaN outside [-1, 1]).

        %y = ge.acos %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.acos"


@irdl_op_definition
class AtanOp(UnaryOp):
    """Arctangent, element by element.

        %y = ge.atan %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.atan"


@irdl_op_definition
class SinhOp(UnaryOp):
    """Hyperbolic sine, element by element.

        %y = ge.sinh %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.sinh"


@irdl_op_definition
class CoshOp(UnaryOp):
    """Hyperbolic cosine, element by element.

        %y = ge.cosh %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.cosh"


@irdl_op_definition
class AsinhOp(UnaryOp):
    """Inverse hyperbolic sine, element by element.

        %y = ge.asinh %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.asinh"


@irdl_op_definition
class AcoshOp(UnaryOp):
    """Inverse hyperbolic cosine, element by element (NaN below 1).

        %y = ge.acosh %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.acosh"


@irdl_op_definition
class AtanhOp(UnaryOp):
    """Inverse hyperbolic tangent, element by element (NaN outside [-1, 1]).

        %y = ge.atanh %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.atanh"


class _RetypeOp(ShapedOp):
    """An element-wise op giving its input the element type `to`; the shape and format stay."""

    input = operand_def(GeTensorType)
    to = prop_def(TypeAttribute)
    result = result_def(GeTensorType)

    traits = traits_def(Pure(), Elementwise())

    assembly_format = "$input `to` $to attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        to = properties["to"]
        try:
            dtype_of(to)
        except KeyError:
            raise VerifyException(f"{cls.name}: target {to} is not a GE data type") from None
        cls.check_target(x.element_type, to)
        return [GeTensorType(x.dims, to, x.tensor_format)]

    @classmethod
    def check_target(cls, source: Attribute, target: Attribute) -> None:
        """Refuse a `source` to `target` the op cannot do (any pair by default)."""


@irdl_op_definition
class CastOp(_RetypeOp):
    """The input converted element by element to the element type `to` (floats to integers
    truncate toward zero; anything to i1 is "not zero").

        %y = ge.cast %x to i32 : !ge.tensor<[-1, 3], f32> -> !ge.tensor<[-1, 3], i32>
    """

    name = "ge.cast"

    traits = traits_def(InPlace())

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        integral = isinstance(properties["to"], IntegerType) and properties["to"].width.data > 1
        return known_operands(operand_values, 1) if integral else ()


@irdl_op_definition
class BitCastOp(_RetypeOp):
    """The input's bits read as the element type `to`, of the same width (as ONNX BitCast; a
    bool is one byte, 0 or 1). Nothing reads as a bool, whose bytes other than 0 and 1 are no bool.

        %y = ge.bitcast %x to i32 : !ge.tensor<[-1, 3], f32> -> !ge.tensor<[-1, 3], i32>
    """

    name = "ge.bitcast"

    traits = traits_def(View())

    @classmethod
    def check_target(cls, source: Attribute, target: Attribute) -> None:
        if target == i1 and source != i1:
            raise VerifyException(f"{cls.name}: {source} cannot be read as i1, whose bytes must be 0 or 1")
        if _storage_bits(source) != _storage_bits(target):
            raise VerifyException(f"{cls.name}: {source} has {_storage_bits(source)} bits and {target} "
                                  f"{_storage_bits(target)}; a bit cast needs equal widths")


def _storage_bits(element_type: Attribute) -> int:
    """The bits one element takes in memory (a bool takes a byte)."""
    if isinstance(element_type, IntegerType):
        return max(element_type.width.data, 8)
    return element_type.bitwidth


OPS = (AddOp, SubOp, MulOp, ReluOp, IdentityOp, SqrtOp, ExpOp, LogOp, TanhOp, SigmoidOp, ErfOp, GeluOp, DivOp, PowOp,
       MaximumOp, MinimumOp, ModOp, NegOp, AbsOp, SignOp, ReciprocalOp, FloorOp, CeilOp, RoundOp, SinOp, CosOp, TanOp,
       AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, CastOp, BitCastOp)
"""The family's ops, in the order they were added."""
