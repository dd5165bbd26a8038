"""What the tensor ops of every family share: `ShapedOp` (a shape function, an optional node name
and the verifier tying them), `SameTypeOp` (one operand, a result of its type) and the bases of the
element-wise ops of one and two operands, which declare the `Elementwise` and `InPlace` traits."""
from __future__ import annotations

from typing import ClassVar, Mapping, Sequence

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, VarConstraint, base, operand_def, opt_attr_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dfir.dialects.ge.traits import Elementwise, InPlace
from dfir.dialects.ge_shapes import (broadcast_dims, is_compatible, known_operands, require_float,
                                     require_same_element_type, value_binary, ValueRanges)
from dfir.dialects.ge_types import GeTensorType

__all__ = ["ElementwiseBinaryOp", "LOC_ATTR", "SameTypeOp", "ShapedOp", "UnaryOp"]


LOC_ATTR = "loc"
"""A tensor op's optional attribute: the user's `path:line` that built it (the graph builder
writes it, as the importer writes a `df.node`'s; errors about the op name it)."""


class ShapedOp(IRDLOperation):
    """Base of the tensor ops: a shape function, an optional node name, and the check tying them.

    `infer_types` is a pure function of operand types and properties (no op needed), so the
    builder and shape-range inference can call it before an op exists.
    """

    node_name = opt_attr_def(StringAttr, attr_name="name")

    @classmethod
    def infer_types(cls, operand_types: Sequence[GeTensorType], properties: Mapping[str, Attribute],
                    operand_values: Sequence[ValueRanges | None] | None = None) -> list[GeTensorType]:
        """The result types these operands and properties give; VerifyException when invalid.

        `operand_values`, when given, holds what is known of small integer operands (see
        `infer_values`); only ops whose result shape depends on an operand's values use it.
        """
        raise NotImplementedError(f"{cls.name} has no shape function")

    @classmethod
    def infer_values(cls, operand_types: Sequence[GeTensorType], properties: Mapping[str, Attribute],
                     operand_values: Sequence[ValueRanges | None]) -> Sequence[ValueRanges | None]:
        """What is known of the elements of each small integer result (shape arithmetic), given
        what is known of the operands (None: nothing). Shorter than the results when the trailing
        ones are unknown; the default knows nothing."""
        return ()

    def verify_(self) -> None:
        inferred = self.infer_types([o.type for o in self.operands], self.properties)
        if len(inferred) != len(self.results):
            raise VerifyException(f"{self.name}: {len(self.results)} results declared, {len(inferred)} inferred")
        for result, expected in zip(self.results, inferred, strict=True):
            if not is_compatible(result.type, expected):
                raise VerifyException(f"{self.name}: result type {result.type} is incompatible with "
                                      f"the inferred type {expected}")


class ElementwiseBinaryOp(ShapedOp):
    """`lhs <op> rhs` element by element, with numpy broadcasting; same element types."""

    lhs = operand_def(GeTensorType)
    rhs = operand_def(GeTensorType)
    result = result_def(GeTensorType)

    traits = traits_def(Pure(), Elementwise(), InPlace())

    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    VALUE_RULE: ClassVar = None
    """How known element ranges combine (interval arithmetic), or None when the op ignores them."""

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: GeTensorType):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        lhs, rhs = operand_types
        require_same_element_type(cls.name, lhs, rhs)
        dims = broadcast_dims(f"{cls.name}: shapes", lhs.dims, rhs.dims)
        wider = lhs if lhs.rank >= rhs.rank else rhs
        return [wider.with_dims(dims)]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        lhs, rhs = known_operands(operand_values, 2)
        if cls.VALUE_RULE is None or lhs is None or rhs is None:
            return ()
        return [value_binary(lhs, rhs, cls.VALUE_RULE)]


class SameTypeOp(ShapedOp):
    """An op of one tensor whose result has the operand's type."""

    T: ClassVar = VarConstraint("T", base(GeTensorType))
    input = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($result)"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[input.type])

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        return [operand_types[0]]


class UnaryOp(SameTypeOp):
    """An element-wise function of one floating-point tensor; the result has the operand's type."""

    traits = traits_def(Elementwise(), InPlace())

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        require_float(cls.name, x)
        return [x]
