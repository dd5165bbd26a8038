"""The graph container and what feeds it: `ge.graph`, `ge.output`, the inputs (`ge.data`) and the
weights (`ge.const`, `ge.variable`)."""
from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

from xdsl.dialects.builtin import (AnyFloat, DenseIntOrFPElementsAttr, DenseResourceAttr, I64, IntegerAttr, IntegerType,
                                   StringAttr, SymbolNameConstraint, TensorType, i64)
from xdsl.ir import Block, Region, SSAValue
from xdsl.irdl import (IRDLOperation, base, irdl_op_definition, opt_prop_def, opt_region_def, prop_def, region_def,
                       result_def, traits_def, var_operand_def)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, Pure, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from dfir.core.backends import GE_BACKENDS
from dfir.dialects.ge.base import ShapedOp
from dfir.dialects.ge_shapes import MAX_KNOWN_ELEMENTS
from dfir.dialects.ge_types import DimRange, dtype_of, GeTensorType

__all__ = ["BACKENDS", "ConstOp", "ConstValue", "DataOp", "GraphOp", "MAX_LISTED_ELEMENTS", "OPS", "OutputOp",
           "REQUESTED_BACKEND_ATTR", "VariableOp", "const_type", "op_name_of"]


BACKENDS = GE_BACKENDS
"""The device backends a `ge.graph` can run on (`dfir.core.backends`)."""

REQUESTED_BACKEND_ATTR = "requested_backend"
"""The `ge.graph` attribute naming the backend its build options ask for (`auto` or one of
`BACKENDS`); `convert-ge-to-linalg` decides `backend` from it."""


@irdl_op_definition
class GraphOp(IRDLOperation):
    """A GE graph: a symbol whose single block computes tensors from `ge.data` inputs.

    The block holds no terminator in the MLIR sense; instead the graph checks that it ends with
    exactly one `ge.output` (so a graph without one, or with two, gets a message from this op).
    `ge.data` indexes are 0..n-1, each used once, and op names (the `ge.data` names and the
    optional `name` of other ops) are unique.

        ge.graph @g {
          %x = ge.data 0 "x" : !ge.tensor<[2], f32>
          ge.output %x : !ge.tensor<[2], f32>
        }

    `backend` names the device backend that runs the graph (one of `BACKENDS`; absent: not chosen
    yet, which runs as "reference"). `convert-ge-to-linalg` sets
    it and, for an IREE backend, fills the optional `codegen` region with the graph as one
    upstream `func.func @main` (one argument per `ge.data` in index order, one result per
    `ge.output` operand):

        ge.graph @g backend "iree-cpu" {
          ...
        } codegen {
          func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> { ... }
        }
    """

    name = "ge.graph"

    sym_name = prop_def(SymbolNameConstraint())
    backend = opt_prop_def(StringAttr)
    body = region_def("single_block")
    codegen = opt_region_def("single_block")

    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    assembly_format = "$sym_name (`backend` $backend^)? attr-dict-with-keyword $body (`codegen` $codegen^)?"

    def __init__(self, sym_name: str, body: Region | None = None):
        super().__init__(properties={"sym_name": StringAttr(sym_name)},
                         regions=[body if body is not None else Region(Block()), None])

    @property
    def block(self) -> Block:
        return self.body.block

    @property
    def data_ops(self) -> list[DataOp]:
        """The graph's inputs in index order."""
        data = [op for op in self.block.ops if isinstance(op, DataOp)]
        return sorted(data, key=lambda d: d.index.value.data)

    @property
    def output_op(self) -> OutputOp:
        last = self.block.last_op
        assert isinstance(last, OutputOp), "a verified ge.graph ends with ge.output"
        return last

    def verify_(self) -> None:
        where = f"ge.graph @{self.sym_name.data}"
        if self.backend is not None and self.backend.data not in BACKENDS:
            raise VerifyException(f"{where}: unknown backend \"{self.backend.data}\", expected one of "
                                  f"{list(BACKENDS)}")
        outputs = [op for op in self.block.ops if isinstance(op, OutputOp)]
        if len(outputs) != 1:
            raise VerifyException(f"{where}: expected exactly one ge.output, found {len(outputs)}")
        if self.block.last_op is not outputs[0]:
            raise VerifyException(f"{where}: ge.output must be the last op of the graph")
        self._verify_data_indexes(where)
        self._verify_unique_names(where)

    def _verify_data_indexes(self, where: str) -> None:
        indexes = [d.index.value.data for d in self.data_ops]
        repeated = [i for i, n in Counter(indexes).items() if n > 1]
        if repeated:
            raise VerifyException(f"{where}: data index {repeated[0]} is used by more than one ge.data")
        if indexes != list(range(len(indexes))):
            raise VerifyException(f"{where}: data indexes must be 0..{len(indexes) - 1}, got {indexes}")

    def _verify_unique_names(self, where: str) -> None:
        names = [n for n in (op_name_of(op) for op in self.block.ops) if n is not None]
        repeated = [n for n, count in Counter(names).items() if count > 1]
        if repeated:
            raise VerifyException(f"{where}: op name \"{repeated[0]}\" is used more than once")


@irdl_op_definition
class OutputOp(IRDLOperation):
    """The graph's results, in order; the last op of its `ge.graph`.

        ge.output %y, %z : !ge.tensor<[2], f32>, !ge.tensor<[], i32>
    """

    name = "ge.output"

    outputs = var_operand_def(GeTensorType)

    traits = traits_def(HasParent(GraphOp))

    assembly_format = "$outputs attr-dict `:` type($outputs)"

    def __init__(self, outputs: Sequence[SSAValue]):
        super().__init__(operands=[outputs])

    def verify_(self) -> None:
        if not self.outputs:
            raise VerifyException("ge.output: a graph needs at least one output")


def op_name_of(op: IRDLOperation) -> str | None:
    """The name an op carries in the graph (a `ge.data` name or a tensor op's `name`), if any."""
    if isinstance(op, DataOp):
        return op.data_name.data
    if isinstance(op, ShapedOp) and op.node_name is not None:
        return op.node_name.data
    return None


@irdl_op_definition
class DataOp(IRDLOperation):
    """Graph input number `index`, called `name`; its result type is the declared input type.

        %x = ge.data 0 "x" : !ge.tensor<[-1, 784], f32>
    """

    name = "ge.data"

    index = prop_def(IntegerAttr[I64])
    data_name = prop_def(StringAttr, prop_name="name")
    result = result_def(GeTensorType)

    traits = traits_def(Pure(), HasParent(GraphOp))

    assembly_format = "$index $name attr-dict `:` type($result)"

    def __init__(self, index: int, data_name: str, result_type: GeTensorType):
        super().__init__(properties={"index": IntegerAttr(index, i64), "name": StringAttr(data_name)},
                         result_types=[result_type])

    def verify_(self) -> None:
        if self.index.value.data < 0:
            raise VerifyException(f"ge.data: index must be >= 0, got {self.index.value.data}")


ConstValue = DenseIntOrFPElementsAttr | DenseResourceAttr
"""A constant's value: its elements in the IR, or a named weight blob (`dfir.dialects.blobs`)."""


def const_type(value: ConstValue) -> GeTensorType:
    """The result type of a `ge.const` holding `value`: its static shape and element type, ND."""
    return GeTensorType([DimRange.fixed(s) for s in value.type.get_shape()], value.type.get_element_type())


MAX_LISTED_ELEMENTS = 100
"""The most elements xDSL prints as a list in a `dense` attribute; it prints more as hex bytes."""


@irdl_op_definition
class ConstOp(ShapedOp):
    """A constant tensor; its result type is the value's static shape and element type (ND).

    The value is a builtin `dense` attribute, or a `dense_resource` naming a weight blob whose
    bytes stay out of the IR text (`dfir.dialects.blobs`; the GE graph builder makes one of every
    constant of `BLOB_MIN_BYTES` or more). A `dense` with more than 100
    elements, not all equal,
    prints as a hex string of its raw little-endian bytes (`dense<"0x0000803F...">`), which
    xDSL parses back with a single `bytes.fromhex`; the printer writes that string from the raw
    bytes itself (xDSL's unpacks every element first), so weights of millions of elements print
    and parse in a fraction of a second; small constants stay readable lists. xDSL 0.74 prints a
    NaN or an infinity inside a list as a bit pattern that its parser reads back as an integer
    value, so the custom form prints such small float constants in hex too (the generic form
    cannot help it).

        %b = ge.const dense<[0.5, -1.0]> : tensor<2xf32>
        %w = ge.const dense_resource<weight_0f3c59a1d2e4b6c8a0f1e2d3c4b5a697> : tensor<512x512xf32>
    """

    name = "ge.const"

    value = prop_def(base(DenseIntOrFPElementsAttr) | base(DenseResourceAttr))
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    def __init__(self, value: ConstValue):
        super().__init__(properties={"value": value}, result_types=[const_type(value)])

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        value = properties["value"]
        if not isinstance(value.type, TensorType):
            raise VerifyException(f"{cls.name}: value must have a tensor type, got {value.type}")
        try:
            dtype_of(value.type.get_element_type())
        except KeyError:
            raise VerifyException(f"{cls.name}: element type {value.type.get_element_type()} is not a GE "
                                  "data type") from None
        return [const_type(value)]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        value = properties["value"]
        if isinstance(value, DenseResourceAttr):
            return ()
        element_type = value.get_element_type()
        small = len(value.get_shape()) <= 1 and math.prod(value.get_shape()) <= MAX_KNOWN_ELEMENTS
        if not (small and isinstance(element_type, IntegerType) and element_type.width.data > 1):
            return ()
        return [tuple(DimRange.fixed(int(v)) for v in value.get_values())]

    def verify_(self) -> None:
        _verify_value_type(self)

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        start = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, ConstValue):
            parser.raise_error(f"ge.const expects a dense or dense_resource attribute, got {value}", start)
        attributes = parser.parse_optional_attr_dict()
        op = cls(value)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        if isinstance(self.value, DenseIntOrFPElementsAttr) and _prints_as_hex(self.value):
            printer.print_string(f'dense<"0x{self.value.data.data.hex().upper()}"> : ')
            printer.print_attribute(self.value.type)
        else:
            printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)


def _verify_value_type(op: ConstOp | VariableOp) -> None:
    """A constant's (or variable's) result type is the type of its value."""
    (expected,) = op.infer_types([], op.properties)
    if op.result.type != expected:
        raise VerifyException(f"{op.name}: result type {op.result.type} must be {expected}, the type of its value")


def _prints_as_hex(value: DenseIntOrFPElementsAttr) -> bool:
    """Whether `value` prints as its hex bytes: over MAX_LISTED_ELEMENTS elements and not a
    splat (as xDSL prints it), or a short list of floats holding a NaN or an infinity."""
    raw, count, element_type = value.data.data, len(value), value.get_element_type()
    listed = value.get_values
    if count > MAX_LISTED_ELEMENTS:
        width = len(raw) // count
        if raw != raw[:width] * count:
            return True
        listed = lambda: element_type.unpack(raw[:width], 1)  # noqa: E731 - a splat lists one element
    return isinstance(element_type, AnyFloat) and not all(math.isfinite(v) for v in listed())


@irdl_op_definition
class VariableOp(ShapedOp):
    """A named, persistent weight holding its initial value; typed like `ge.const`.

    At run time a variable is its value. Its name is what weight-update graphs of a bundle would
    refer to; inside one graph it behaves as a constant.

        %w = ge.variable "fc1.weight" dense<[1.0, 2.0]> : tensor<2xf32>
    """

    name = "ge.variable"

    var_name = prop_def(StringAttr)
    value = prop_def(base(DenseIntOrFPElementsAttr) | base(DenseResourceAttr))
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    def __init__(self, var_name: str, value: ConstValue):
        super().__init__(properties={"var_name": StringAttr(var_name), "value": value},
                         result_types=[const_type(value)])

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        if not properties["var_name"].data:
            raise VerifyException(f"{cls.name}: the variable name must not be empty")
        return ConstOp.infer_types.__func__(cls, operand_types, properties)

    def verify_(self) -> None:
        _verify_value_type(self)

    @classmethod
    def parse(cls, parser: Parser) -> VariableOp:
        var_name = parser.parse_str_literal()
        const = ConstOp.parse(parser)
        op = cls(var_name, const.value)
        op.attributes.update(const.attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.var_name.data)
        ConstOp.print(self, printer)


OPS = (GraphOp, OutputOp, DataOp, ConstOp, VariableOp)
"""The family's ops, in the order they were added."""
