"""The one op of IREE's `util` dialect that lowered GE graphs use: `util.assume.int`.

It tells IREE the range of an index (a dynamic dimension), so that it can bound allocations and
specialize; the value passes through unchanged. The generic form, which `iree-compile` parses:

    %n = "util.assume.int"(%d) <{assumptions = [[#util.int.assumption<umin = 1, umax = 64>]]}> : (index) -> index

`umax` is left out when the dimension has no upper bound.
"""
from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, IndexType, IntAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue
from xdsl.irdl import (IRDLOperation, irdl_attr_definition, irdl_op_definition, param_def, prop_def,
                       var_operand_def, var_result_def)
from xdsl.parser import AttrParser
from xdsl.printer import Printer

__all__ = ["AssumeIntOp", "IntAssumptionAttr", "UTIL"]

_NO_BOUND = -1


@irdl_attr_definition
class IntAssumptionAttr(ParametrizedAttribute):
    """`#util.int.assumption<umin = lo, umax = hi>`: an unsigned range (no `umax`: unbounded)."""

    name = "util.int.assumption"

    umin: IntAttr = param_def()
    umax: IntAttr = param_def()

    def __init__(self, umin: int, umax: int | None):
        super().__init__(IntAttr(umin), IntAttr(_NO_BOUND if umax is None else umax))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        values = {"umax": _NO_BOUND}
        with parser.in_angle_brackets():
            while True:
                key = parser.parse_identifier()
                parser.parse_punctuation("=")
                values[key] = parser.parse_integer()
                if parser.parse_optional_punctuation(",") is None:
                    break
        return [IntAttr(values["umin"]), IntAttr(values["umax"])]

    def print_parameters(self, printer: Printer) -> None:
        bound = "" if self.umax.data == _NO_BOUND else f", umax = {self.umax.data}"
        printer.print_string(f"<umin = {self.umin.data}{bound}>")


@irdl_op_definition
class AssumeIntOp(IRDLOperation):
    """Each operand, passed through, with its assumed range (one assumption per operand)."""

    name = "util.assume.int"

    operands_ = var_operand_def(IndexType)
    results_ = var_result_def(IndexType)
    assumptions = prop_def(ArrayAttr)

    def __init__(self, value: SSAValue, umin: int, umax: int | None):
        super().__init__(operands=[[value]], result_types=[[IndexType()]],
                         properties={"assumptions": ArrayAttr([ArrayAttr([IntAssumptionAttr(umin, umax)])])})


UTIL = Dialect("util", [AssumeIntOp], [IntAssumptionAttr])
