"""The ops of IREE's `util` dialect that lowered GE graphs use, in the generic form `iree-compile`
parses.

`util.assume.int` tells IREE the range of an index (a dynamic dimension), so that it can bound
allocations and specialize; the value passes through unchanged (`umax` is left out when the
dimension has no upper bound):

    %n = "util.assume.int"(%d) <{assumptions = [[#util.int.assumption<umin = 1, umax = 64>]]}> : (index) -> index

`util.global` with a `#flow.parameter.named` initial value is a weight IREE reads at run time
from a parameter provider rather than from the executable, and `util.global.load` reads it:

    "util.global"() <{sym_name = "w", sym_visibility = "private", type = tensor<4xf32>,
                      initial_value = #flow.parameter.named<"dfir"::"weight_3f2a..."> : tensor<4xf32>}> : () -> ()
    %w = "util.global.load"() <{global = @w}> : () -> tensor<4xf32>

`util.optimization_barrier` passes its operands through and keeps IREE from fusing or folding
the ops that make them with the ops that use them:

    %s = "util.optimization_barrier"(%t) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
"""
from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, IndexType, IntAttr, StringAttr, SymbolRefAttr, TensorType
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (IRDLOperation, irdl_attr_definition, irdl_op_definition, param_def, prop_def, result_def,
                       var_operand_def, var_result_def)
from xdsl.parser import AttrParser
from xdsl.printer import Printer

__all__ = ["AssumeIntOp", "GlobalLoadOp", "GlobalOp", "FLOW", "IntAssumptionAttr", "NamedParameterAttr",
           "OptimizationBarrierOp", "UTIL"]

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


@irdl_attr_definition
class NamedParameterAttr(ParametrizedAttribute):
    """`#flow.parameter.named<"scope"::"key"> : type`: a value of `type` that IREE's runtime reads
    from the parameter `key` of the provider of `scope`."""

    name = "flow.parameter.named"

    scope: StringAttr = param_def()
    key: StringAttr = param_def()
    type: TensorType = param_def()

    def __init__(self, scope: str, key: str, type: TensorType):
        super().__init__(StringAttr(scope), StringAttr(key), type)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f'<"{self.scope.data}"::"{self.key.data}"> : ')
        printer.print_attribute(self.type)


@irdl_op_definition
class GlobalOp(IRDLOperation):
    """A private module-level value, here always a named parameter."""

    name = "util.global"

    sym_name = prop_def(StringAttr)
    sym_visibility = prop_def(StringAttr)
    type = prop_def(TypeAttribute)
    initial_value = prop_def(NamedParameterAttr)

    def __init__(self, sym_name: str, parameter: NamedParameterAttr):
        super().__init__(properties={"sym_name": StringAttr(sym_name), "sym_visibility": StringAttr("private"),
                                     "type": parameter.type, "initial_value": parameter})


@irdl_op_definition
class GlobalLoadOp(IRDLOperation):
    """The value of the global `global`."""

    name = "util.global.load"

    global_ = prop_def(SymbolRefAttr, prop_name="global")
    result = result_def(TensorType)

    def __init__(self, global_name: str, type: TensorType):
        super().__init__(properties={"global": SymbolRefAttr(global_name)}, result_types=[type])


@irdl_op_definition
class OptimizationBarrierOp(IRDLOperation):
    """Its operands, passed through, made where IREE cannot fuse them into their users."""

    name = "util.optimization_barrier"

    operands_ = var_operand_def()
    results_ = var_result_def()

    def __init__(self, value: SSAValue):
        super().__init__(operands=[[value]], result_types=[[value.type]])


UTIL = Dialect("util", [AssumeIntOp, GlobalOp, GlobalLoadOp, OptimizationBarrierOp], [IntAssumptionAttr])
FLOW = Dialect("flow", [], [NamedParameterAttr])
