"""The `ge` dialect: GE graphs of tensor ops over `!ge.tensor` values (see `ge_types`).

A graph is a module-level symbol holding one block: `ge.data` ops for its inputs, tensor ops, and
a final `ge.output` listing its results.

    ge.graph @mlp {
      %x = ge.data 0 "x" : !ge.tensor<[-1, 2], f32>
      %w = ge.const dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
      %h = ge.matmul %x, %w : (!ge.tensor<[-1, 2], f32>, !ge.tensor<[2, 2], f32>) -> !ge.tensor<[-1, 2], f32>
      %y = ge.relu %h : !ge.tensor<[-1, 2], f32>
      ge.output %y : !ge.tensor<[-1, 2], f32>
    }

Every tensor op derives from `ShapedOp` and owns a *shape function*, `infer_types(operand_types,
properties)`, that returns its result types or raises a VerifyException naming the op and the
shapes. The op's verifier checks that each declared result type is compatible with the inferred
one; the graph builder (`dfir.frontend.ge.graph`) uses the same function to type the ops it creates, and
a new op plugs in by declaring itself and its shape function, nothing else. The checks and range
arithmetic that shape functions share are in `ge_shapes`, over the integer rules of
`dfir.core.shape_arith`.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import ClassVar, Mapping, Sequence

from xdsl.dialects.builtin import (I64, AnyFloat, DenseArrayBase, DenseIntOrFPElementsAttr, DenseResourceAttr, FloatAttr,
                                   Float64Type, IntegerAttr, IntegerType, StringAttr, SymbolNameConstraint,
                                   TensorType, UnitAttr, i1, i64)
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue, TypeAttribute
from xdsl.irdl import (AttrSizedOperandSegments, IRDLOperation, VarConstraint, base, irdl_op_definition, opt_attr_def,
                       operand_def, opt_operand_def, opt_prop_def, opt_region_def, prop_def, region_def, result_def,
                       traits_def, var_operand_def, var_result_def)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, Pure, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from dfir.core.resize_sizes import ASPECT_POLICIES, resize_plan
from dfir.core.shape_arith import (range_add, range_div, range_max, range_min, range_mul, range_sub,
                                   slice_bounds, slice_length)
from dfir.dialects.ge_plan_attrs import SlotAttr
from dfir.dialects.ge_shapes import (MAX_KNOWN_ELEMENTS, ValueRanges, broadcast_dims, check_count, check_min,
                                     check_window_properties, dim_shift, dim_sum, element_range, format_shape,
                                     intersect_dims, is_compatible, known_operands, normalize_axes, normalize_axis,
                                     prop_flag, prop_int, prop_ints, require_bool, require_float,
                                     require_image_format, require_index, require_integer, require_number,
                                     require_rank, require_same_element_type, require_same_element_types, slice_dim,
                                     slice_params, spatial_rank, value_binary, window_dim, windows_of)
from dfir.dialects.ge_types import DimRange, GeTensorType, dtype_of, format_dims

__all__ = ["BACKENDS", "GE", "LOC_ATTR", "REQUESTED_BACKEND_ATTR", "GraphOp", "OutputOp", "DataOp", "ConstOp", "VariableOp", "IdentityOp", "AddOp", "SubOp",
           "MulOp", "DivOp", "PowOp", "MaximumOp", "MinimumOp", "ReluOp", "SqrtOp", "ExpOp", "LogOp",
           "TanhOp", "SigmoidOp", "GeluOp", "ErfOp", "MatMulOp", "BatchMatMulOp", "GemmOp", "Conv2DOp",
           "MaxPoolOp", "AvgPoolOp", "GlobalAvgPoolOp", "BatchNormOp", "LayerNormOp", "SoftmaxOp",
           "ReshapeOp", "TransposeOp", "ConcatOp", "SplitOp", "SliceOp", "GatherOp", "SqueezeOp",
           "UnsqueezeOp", "PadOp", "FlattenOp", "ReduceSumOp", "ReduceMeanOp", "ReduceMaxOp", "CastOp",
           "ShapeOp", "ResizeBilinearOp", "ResizeOp", "GridSampleOp", "ShapedOp", "ValueRanges", "const_type",
           "ConstValue", "op_name_of",
           "slice_bounds", "slice_length",
           "EqualOp", "LessOp", "GreaterOp", "LessEqualOp", "GreaterEqualOp", "LogicalAndOp",
           "LogicalOrOp", "LogicalXorOp", "BitwiseAndOp", "BitwiseOrOp", "BitwiseXorOp", "BitShiftOp",
           "ModOp", "PReluOp", "SelectOp", "LogicalNotOp", "BitwiseNotOp", "NegOp", "AbsOp", "SignOp",
           "ReciprocalOp", "FloorOp", "CeilOp", "RoundOp", "SinOp", "CosOp", "TanOp", "AsinOp", "AcosOp",
           "AtanOp", "SinhOp", "CoshOp", "AsinhOp", "AcoshOp", "AtanhOp", "SoftplusOp", "SoftsignOp",
           "MishOp", "HardSwishOp", "IsNanOp", "IsInfOp", "LeakyReluOp", "EluOp", "CeluOp",
           "ThresholdedReluOp", "SeluOp", "HardSigmoidOp", "ShrinkOp",
           "ExpandOp", "TileOp", "LogSoftmaxOp", "ReduceProdOp", "ReduceMinOp", "ReduceL1Op", "ReduceL2Op",
           "ReduceSumSquareOp", "ReduceLogSumOp", "ReduceLogSumExpOp", "ArgMaxOp", "ArgMinOp", "TopKOp",
           "InstanceNormOp", "LrnOp", "ConvTransposeOp", "TriluOp", "CumSumOp", "BitCastOp", "CumProdOp",
           "ScatterElementsOp"]


BACKENDS = ("reference", "iree-cpu", "iree-cuda", "onnxruntime")
"""The device backends a `ge.graph` can run on."""
LOC_ATTR = "loc"
"""A tensor op's optional attribute: the user's `path:line` that built it (the graph builder
writes it, as the importer writes a `df.node`'s; errors about the op name it)."""
REQUESTED_BACKEND_ATTR = "requested_backend"
"""The `ge.graph` attribute naming the backend its build options ask for (`auto` or one of
`BACKENDS`); `convert-ge-to-linalg` decides `backend` from it."""


# --- the graph container -----------------------------------------------------------------------

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

    `backend` names the device backend that runs the graph ("reference", "iree-cpu",
    "iree-cuda", "onnxruntime"; absent: not chosen yet, which runs as "reference"). `convert-ge-to-linalg` sets
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


# --- tensor ops ----------------------------------------------------------------------------------

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


class _ElementwiseBinaryOp(ShapedOp):
    """`lhs <op> rhs` element by element, with numpy broadcasting; same element types."""

    lhs = operand_def(GeTensorType)
    rhs = operand_def(GeTensorType)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

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


@irdl_op_definition
class AddOp(_ElementwiseBinaryOp):
    """Element-wise sum with numpy broadcasting; the result takes the format of the wider operand.

        %z = ge.add %x, %b : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], f32>
    """

    name = "ge.add"
    VALUE_RULE = staticmethod(range_add)


@irdl_op_definition
class SubOp(_ElementwiseBinaryOp):
    """Element-wise difference `lhs - rhs` with numpy broadcasting.

        %z = ge.sub %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[1, 3], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.sub"
    VALUE_RULE = staticmethod(range_sub)


@irdl_op_definition
class MulOp(_ElementwiseBinaryOp):
    """Element-wise product with numpy broadcasting.

        %z = ge.mul %x, %s : (!ge.tensor<[2, 3], f32>, !ge.tensor<[], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.mul"
    VALUE_RULE = staticmethod(range_mul)


@irdl_op_definition
class ReluOp(ShapedOp):
    """`max(x, 0)` element by element; the result has the operand's type.

        %y = ge.relu %x : !ge.tensor<[-1, 3], f32>
    """

    name = "ge.relu"

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


@irdl_op_definition
class MatMulOp(ShapedOp):
    """Matrix product over the last two dimensions; leading (batch) dimensions broadcast.

    `lhs [..., M, K] x rhs [..., K, N] -> [..., M, N]`; both operands have rank >= 2.

        %y = ge.matmul %x, %w : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
    """

    name = "ge.matmul"

    lhs = operand_def(GeTensorType)
    rhs = operand_def(GeTensorType)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: GeTensorType):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        lhs, rhs = operand_types
        require_same_element_type("ge.matmul", lhs, rhs)
        for side, t in (("lhs", lhs), ("rhs", rhs)):
            if t.rank < 2:
                raise VerifyException(f"ge.matmul: {side} must have rank >= 2, got {format_shape(t)}")
        (*lhs_batch, m, lhs_k), (*rhs_batch, rhs_k, n) = lhs.dims, rhs.dims
        if lhs_k.intersect(rhs_k) is None:
            raise VerifyException(f"ge.matmul: inner dimensions differ: lhs {format_shape(lhs)} has {lhs_k} "
                                  f"columns, rhs {format_shape(rhs)} has {rhs_k} rows")
        batch = broadcast_dims("ge.matmul: batch dimensions", lhs_batch, rhs_batch)
        return [lhs.with_dims([*batch, m, n])]


@irdl_op_definition
class ReshapeOp(ShapedOp):
    """The input's elements in a new shape, as ONNX Reshape (allowzero = 0) defines it.

    In the target `shape`, 0 copies the input dimension at the same index and one -1 takes
    whatever size keeps the element count; when the counts are static they must agree.

        %y = ge.reshape %x to [0, -1] : !ge.tensor<[2, 3, 4], f32> -> !ge.tensor<[2, 12], f32>
    """

    name = "ge.reshape"

    input = operand_def(GeTensorType)
    shape = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `to` $shape attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, shape: Sequence[int], result_type: GeTensorType):
        super().__init__(operands=[input], properties={"shape": DenseArrayBase.from_list(i64, shape)},
                         result_types=[result_type])

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (source,) = operand_types
        target = list(properties["shape"].get_values())
        _check_reshape_target(source, target)
        dims = [source.dims[i] if s == 0 else DimRange.fixed(s) for i, s in enumerate(target) if s != -1]
        if -1 in target:
            dims.insert(target.index(-1), _inferred_reshape_dim(source, target, element_range(dims)))
        elif element_range(dims).intersect(element_range(source.dims)) is None:
            raise VerifyException(f"ge.reshape: cannot reshape {format_shape(source)} "
                                  f"({element_range(source.dims)} elements) to {target} "
                                  f"({element_range(dims)} elements)")
        return [source.with_dims(dims)]


def _check_reshape_target(source: GeTensorType, target: list[int]) -> None:
    if any(s < -1 for s in target):
        raise VerifyException(f"ge.reshape: target shape entries must be >= -1, got {target}")
    if target.count(-1) > 1:
        raise VerifyException(f"ge.reshape: target shape {target} has more than one -1")
    copies = [i for i, s in enumerate(target) if s == 0 and i >= source.rank]
    if copies:
        raise VerifyException(f"ge.reshape: target shape {target} copies dimension {copies[0]} "
                              f"(a 0 at index {copies[0]}) but the input {format_shape(source)} has "
                              f"rank {source.rank}")


def _inferred_reshape_dim(source: GeTensorType, target: list[int], known: DimRange) -> DimRange:
    """The range of the -1 dimension: the source count divided by the other dimensions' count.

    With ranges, a copied dimension (a 0) is the same size on both sides and cancels, so
    `[-1, 8, 1, 1] to [0, -1]` gives 8, not -1: the -1 is the count of the dimensions that are
    not copied divided by the fixed target entries.
    """
    total = element_range(source.dims)
    if total.is_fixed and known.is_fixed:
        if known.lo == 0:
            raise VerifyException(f"ge.reshape: cannot reshape {format_shape(source)} to {target}: the size "
                                  "of -1 is ambiguous when the other dimensions hold 0 elements")
        if total.lo % known.lo:
            raise VerifyException(f"ge.reshape: cannot reshape {format_shape(source)} ({total} elements) "
                                  f"to {target}: {total} is not a multiple of {known}")
        return DimRange.fixed(total.lo // known.lo)
    copied = {i for i, s in enumerate(target) if s == 0}
    rest = element_range([d for i, d in enumerate(source.dims) if i not in copied])
    fixed = math.prod(s for s in target if s > 0)
    return DimRange(-(-rest.lo // fixed), None if rest.hi is None else rest.hi // fixed)


# --- more tensor ops -----------------------------------------------------------------------------

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


class _UnaryOp(ShapedOp):
    """An element-wise function of one floating-point tensor; the result has the operand's type."""

    T: ClassVar = VarConstraint("T", base(GeTensorType))
    input = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($result)"

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[input.type])

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        require_float(cls.name, x)
        return [x]


class _AlphaUnaryOp(_UnaryOp):
    """An element-wise function of one floating-point tensor with one float parameter, `alpha`."""

    alpha = prop_def(FloatAttr[Float64Type])

    assembly_format = "$input `alpha` $alpha attr-dict `:` type($result)"


@irdl_op_definition
class IdentityOp(_UnaryOp):
    """The operand itself, of any element type.

        %y = ge.identity %x : !ge.tensor<[-1, 3], i64>
    """

    name = "ge.identity"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        return [operand_types[0]]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        return known_operands(operand_values, 1)


@irdl_op_definition
class SqrtOp(_UnaryOp):
    """Square root, element by element.

        %y = ge.sqrt %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.sqrt"


@irdl_op_definition
class ExpOp(_UnaryOp):
    """`e ** x`, element by element.

        %y = ge.exp %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.exp"


@irdl_op_definition
class LogOp(_UnaryOp):
    """Natural logarithm, element by element.

        %y = ge.log %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.log"


@irdl_op_definition
class TanhOp(_UnaryOp):
    """Hyperbolic tangent, element by element.

        %y = ge.tanh %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.tanh"


@irdl_op_definition
class SigmoidOp(_UnaryOp):
    """`1 / (1 + exp(-x))`, element by element.

        %y = ge.sigmoid %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.sigmoid"


@irdl_op_definition
class ErfOp(_UnaryOp):
    """The Gauss error function, element by element.

        %y = ge.erf %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.erf"


_GELU_APPROXIMATIONS = ("none", "tanh")


@irdl_op_definition
class GeluOp(_UnaryOp):
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
class DivOp(_ElementwiseBinaryOp):
    """Element-wise quotient with numpy broadcasting; integer division truncates toward zero.

        %z = ge.div %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.div"
    VALUE_RULE = staticmethod(range_div)


@irdl_op_definition
class PowOp(_ElementwiseBinaryOp):
    """`lhs ** rhs` element by element, with numpy broadcasting.

        %z = ge.pow %x, %e : (!ge.tensor<[2, 3], f32>, !ge.tensor<[], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.pow"


@irdl_op_definition
class MaximumOp(_ElementwiseBinaryOp):
    """Element-wise maximum with numpy broadcasting.

        %z = ge.maximum %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[2, 1], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.maximum"
    VALUE_RULE = staticmethod(range_max)


@irdl_op_definition
class MinimumOp(_ElementwiseBinaryOp):
    """Element-wise minimum with numpy broadcasting.

        %z = ge.minimum %x, %y : (!ge.tensor<[2, 3], f32>, !ge.tensor<[2, 1], f32>) -> !ge.tensor<[2, 3], f32>
    """

    name = "ge.minimum"
    VALUE_RULE = staticmethod(range_min)


# --- comparisons, logic and bitwise ops -----------------------------------------------------------

class _CompareOp(_ElementwiseBinaryOp):
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


class _LogicalOp(_ElementwiseBinaryOp):
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


class _BitwiseOp(_ElementwiseBinaryOp):
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
class ModOp(_ElementwiseBinaryOp):
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


@irdl_op_definition
class PReluOp(_ElementwiseBinaryOp):
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

    traits = traits_def(Pure())

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


# --- element-wise functions of one tensor ----------------------------------------------------------

@irdl_op_definition
class LogicalNotOp(_UnaryOp):
    """`not x` of an i1 tensor, element by element.

        %y = ge.logical_not %x : !ge.tensor<[2, 3], i1>
    """

    name = "ge.logical_not"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        require_bool(cls.name, operand_types[0])
        return [operand_types[0]]


@irdl_op_definition
class BitwiseNotOp(_UnaryOp):
    """`~x` of an integer tensor (two's complement), element by element.

        %y = ge.bitwise_not %x : !ge.tensor<[2, 3], i32>
    """

    name = "ge.bitwise_not"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        require_integer(cls.name, operand_types[0])
        return [operand_types[0]]


class _NumericUnaryOp(_UnaryOp):
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
class ReciprocalOp(_UnaryOp):
    """`1 / x`, element by element.

        %y = ge.reciprocal %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.reciprocal"


@irdl_op_definition
class FloorOp(_UnaryOp):
    """The largest integer <= `x`, element by element.

        %y = ge.floor %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.floor"


@irdl_op_definition
class CeilOp(_UnaryOp):
    """The smallest integer >= `x`, element by element.

        %y = ge.ceil %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.ceil"


@irdl_op_definition
class RoundOp(_UnaryOp):
    """The nearest integer to `x`, halves to even (2.5 -> 2, 3.5 -> 4), element by element.

        %y = ge.round %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.round"


@irdl_op_definition
class SinOp(_UnaryOp):
    """Sine, element by element.

        %y = ge.sin %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.sin"


@irdl_op_definition
class CosOp(_UnaryOp):
    """Cosine, element by element.

        %y = ge.cos %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.cos"


@irdl_op_definition
class TanOp(_UnaryOp):
    """Tangent, element by element.

        %y = ge.tan %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.tan"


@irdl_op_definition
class AsinOp(_UnaryOp):
    """Arcsine, element by element (NaN outside [-1, 1]).

        %y = ge.asin %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.asin"


@irdl_op_definition
class AcosOp(_UnaryOp):
    """Arccosine, element by element (NaN outside [-1, 1]).

        %y = ge.acos %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.acos"


@irdl_op_definition
class AtanOp(_UnaryOp):
    """Arctangent, element by element.

        %y = ge.atan %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.atan"


@irdl_op_definition
class SinhOp(_UnaryOp):
    """Hyperbolic sine, element by element.

        %y = ge.sinh %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.sinh"


@irdl_op_definition
class CoshOp(_UnaryOp):
    """Hyperbolic cosine, element by element.

        %y = ge.cosh %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.cosh"


@irdl_op_definition
class AsinhOp(_UnaryOp):
    """Inverse hyperbolic sine, element by element.

        %y = ge.asinh %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.asinh"


@irdl_op_definition
class AcoshOp(_UnaryOp):
    """Inverse hyperbolic cosine, element by element (NaN below 1).

        %y = ge.acosh %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.acosh"


@irdl_op_definition
class AtanhOp(_UnaryOp):
    """Inverse hyperbolic tangent, element by element (NaN outside [-1, 1]).

        %y = ge.atanh %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.atanh"


@irdl_op_definition
class SoftplusOp(_UnaryOp):
    """`log(1 + exp(x))`, element by element, without overflow for large `x`.

        %y = ge.softplus %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.softplus"


@irdl_op_definition
class SoftsignOp(_UnaryOp):
    """`x / (1 + |x|)`, element by element.

        %y = ge.softsign %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.softsign"


@irdl_op_definition
class MishOp(_UnaryOp):
    """`x * tanh(softplus(x))`, element by element.

        %y = ge.mish %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.mish"


@irdl_op_definition
class HardSwishOp(_UnaryOp):
    """`x * max(0, min(1, x / 6 + 1 / 2))`, element by element.

        %y = ge.hard_swish %x : !ge.tensor<[2, 3], f32>
    """

    name = "ge.hard_swish"


class _FloatTestOp(ShapedOp):
    """A test of each element of a float tensor, as an i1 tensor of its shape."""

    input = operand_def(GeTensorType)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

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


# --- activations with parameters -------------------------------------------------------------------

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
class SeluOp(_UnaryOp):
    """`gamma * x` where `x` > 0, else `gamma * alpha * (exp(x) - 1)`, element by element.

        %y = ge.selu %x alpha 1.673260e+00 gamma 1.050700e+00 : !ge.tensor<[2, 3], f32>
    """

    name = "ge.selu"

    alpha = prop_def(FloatAttr[Float64Type])
    gamma = prop_def(FloatAttr[Float64Type])

    assembly_format = "$input `alpha` $alpha `gamma` $gamma attr-dict `:` type($result)"


@irdl_op_definition
class HardSigmoidOp(_UnaryOp):
    """`max(0, min(1, alpha * x + beta))`, element by element.

        %y = ge.hard_sigmoid %x alpha 2.000000e-01 beta 5.000000e-01 : !ge.tensor<[2, 3], f32>
    """

    name = "ge.hard_sigmoid"

    alpha = prop_def(FloatAttr[Float64Type])
    beta = prop_def(FloatAttr[Float64Type])

    assembly_format = "$input `alpha` $alpha `beta` $beta attr-dict `:` type($result)"


@irdl_op_definition
class ShrinkOp(_UnaryOp):
    """`x - bias` where `x` > lambd, `x + bias` where `x` < -lambd, else 0, element by element.

        %y = ge.shrink %x bias 0.000000e+00 lambd 5.000000e-01 : !ge.tensor<[2, 3], f32>
    """

    name = "ge.shrink"

    bias = prop_def(FloatAttr[Float64Type])
    lambd = prop_def(FloatAttr[Float64Type])

    assembly_format = "$input `bias` $bias `lambd` $lambd attr-dict `:` type($result)"


@irdl_op_definition
class BatchMatMulOp(ShapedOp):
    """Batched matrix product; `adj_x` / `adj_y` transpose the last two dimensions of an operand
    first, and leading (batch) dimensions broadcast.

    `lhs [..., M, K] x rhs [..., K, N] -> [..., M, N]`; both operands have rank >= 2.

        %z = ge.batch_matmul %x, %y adj_y : (!ge.tensor<[-1, 4, 8], f32>, !ge.tensor<[-1, 5, 8], f32>) -> !ge.tensor<[-1, 4, 5], f32>
    """

    name = "ge.batch_matmul"

    lhs = operand_def(GeTensorType)
    rhs = operand_def(GeTensorType)
    adj_x = opt_prop_def(UnitAttr)
    adj_y = opt_prop_def(UnitAttr)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$lhs `,` $rhs (`adj_x` $adj_x^)? (`adj_y` $adj_y^)? attr-dict `:` "
                       "functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        lhs, rhs = operand_types
        require_same_element_type(cls.name, lhs, rhs)
        for side, t in (("lhs", lhs), ("rhs", rhs)):
            if t.rank < 2:
                raise VerifyException(f"{cls.name}: {side} must have rank >= 2, got {format_shape(t)}")
        *lhs_batch, m, lhs_k = lhs.dims
        *rhs_batch, rhs_k, n = rhs.dims
        if prop_flag(properties, "adj_x"):
            m, lhs_k = lhs_k, m
        if prop_flag(properties, "adj_y"):
            rhs_k, n = n, rhs_k
        if lhs_k.intersect(rhs_k) is None:
            raise VerifyException(f"{cls.name}: inner dimensions differ: lhs {format_shape(lhs)} contributes "
                                  f"{lhs_k}, rhs {format_shape(rhs)} contributes {rhs_k}")
        batch = broadcast_dims(f"{cls.name}: batch dimensions", lhs_batch, rhs_batch)
        return [lhs.with_dims([*batch, m, n])]


@irdl_op_definition
class GemmOp(ShapedOp):
    """`alpha * op(a) x op(b) + beta * c` for matrices, `op` transposing when `trans_a` / `trans_b`
    is set; the optional `c` broadcasts to the [M, N] result (as ONNX Gemm).

        %y = ge.gemm %a, %b, %c alpha 1.0 beta 1.0 trans_b : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[8, 4], f32>, !ge.tensor<[8], f32>) -> !ge.tensor<[-1, 8], f32>
    """

    name = "ge.gemm"

    a = operand_def(GeTensorType)
    b = operand_def(GeTensorType)
    c = opt_operand_def(GeTensorType)
    alpha = prop_def(FloatAttr[Float64Type])
    beta = prop_def(FloatAttr[Float64Type])
    trans_a = opt_prop_def(UnitAttr)
    trans_b = opt_prop_def(UnitAttr)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$a `,` $b (`,` $c^)? `alpha` $alpha `beta` $beta (`trans_a` $trans_a^)? "
                       "(`trans_b` $trans_b^)? attr-dict `:` functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        a, b, *c = operand_types
        require_same_element_types(cls.name, operand_types)
        require_rank(cls.name, a, 2, "a")
        require_rank(cls.name, b, 2, "b")
        m, k_a = reversed(a.dims) if prop_flag(properties, "trans_a") else a.dims
        k_b, n = reversed(b.dims) if prop_flag(properties, "trans_b") else b.dims
        if k_a.intersect(k_b) is None:
            raise VerifyException(f"{cls.name}: inner dimensions differ: a {format_shape(a)} contributes {k_a}, "
                                  f"b {format_shape(b)} contributes {k_b}")
        result = a.with_dims([m, n])
        if c:
            dims = broadcast_dims(f"{cls.name}: c", result.dims, c[0].dims)
            if c[0].rank > 2 or any(d.intersect(r) is None for d, r in zip(dims, result.dims)):
                raise VerifyException(f"{cls.name}: c {format_shape(c[0])} does not broadcast to the result "
                                      f"{format_shape(result)}")
        return [result]


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
class TransposeOp(ShapedOp):
    """The input with its dimensions permuted: result dimension i is input dimension `perm[i]`.

        %y = ge.transpose %x perm [0, 2, 1] : !ge.tensor<[-1, 3, 4], f32> -> !ge.tensor<[-1, 4, 3], f32>
    """

    name = "ge.transpose"

    input = operand_def(GeTensorType)
    perm = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `perm` $perm attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        perm = prop_ints(properties, "perm")
        if sorted(perm) != list(range(x.rank)):
            raise VerifyException(f"{cls.name}: perm {perm} is not a permutation of the {x.rank} "
                                  f"dimensions of {format_shape(x)}")
        return [x.with_dims([x.dims[p] for p in perm])]


@irdl_op_definition
class ConcatOp(ShapedOp):
    """The operands joined along `axis`; other dimensions must agree. The `axis` range is the sum
    of the operands' ranges.

        %y = ge.concat %a, %b axis 1 : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 1:4], f32>) -> !ge.tensor<[-1, 4:7], f32>
    """

    name = "ge.concat"

    inputs = var_operand_def(GeTensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$inputs `axis` $axis attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        if not operand_types:
            raise VerifyException(f"{cls.name}: needs at least one operand")
        first = operand_types[0]
        require_same_element_types(cls.name, operand_types)
        for i, t in enumerate(operand_types):
            if t.rank != first.rank:
                raise VerifyException(f"{cls.name}: operand {i} {format_shape(t)} has rank {t.rank} but operand 0 "
                                      f"{format_shape(first)} has rank {first.rank}")
        axis = normalize_axis(cls.name, prop_int(properties, "axis"), first)
        dims = list(first.dims)
        for i, t in enumerate(operand_types[1:], 1):
            for d in range(first.rank):
                if d != axis:
                    dims[d] = intersect_dims(cls.name, f"operand {i} {format_shape(t)} differs from "
                                              f"{format_shape(first)} in dimension {d}", dims[d], t.dims[d])
        dims[axis] = dim_sum([t.dims[axis] for t in operand_types])
        return [first.with_dims(dims)]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        known = known_operands(operand_values, len(operand_types))
        if None in known or any(t.rank != 1 for t in operand_types):
            return ()
        return [tuple(v for values in known for v in values)]


@irdl_op_definition
class SplitOp(ShapedOp):
    """The input cut along `axis` into pieces of `sizes`; one size may be -1 (the rest).

        %a, %b = ge.split %x axis 1 sizes [1, -1] : !ge.tensor<[2, 5], f32> -> !ge.tensor<[2, 1], f32>, !ge.tensor<[2, 4], f32>
    """

    name = "ge.split"

    input = operand_def(GeTensorType)
    axis = prop_def(IntegerAttr[I64])
    sizes = prop_def(DenseArrayBase.constr(i64))
    outputs = var_result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `axis` $axis `sizes` $sizes attr-dict `:` type($input) `->` type($outputs)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        axis = normalize_axis(cls.name, prop_int(properties, "axis"), x)
        sizes = prop_ints(properties, "sizes")
        if not sizes:
            raise VerifyException(f"{cls.name}: sizes must not be empty")
        if any(s < -1 for s in sizes) or sizes.count(-1) > 1:
            raise VerifyException(f"{cls.name}: sizes must be >= 0 with at most one -1, got {sizes}")
        known = sum(s for s in sizes if s != -1)
        total = x.dims[axis]
        if -1 in sizes:
            if total.hi is not None and total.hi < known:
                raise VerifyException(f"{cls.name}: sizes {sizes} need at least {known} elements but "
                                      f"dimension {axis} of {format_shape(x)} is {total}")
            rest = dim_shift(total, -known)
        elif not total.contains(known):
            raise VerifyException(f"{cls.name}: sizes {sizes} sum to {known} but dimension {axis} of "
                                  f"{format_shape(x)} is {total}")
        pieces = [rest if s == -1 else DimRange.fixed(s) for s in sizes]
        return [x.with_dims([*x.dims[:axis], piece, *x.dims[axis + 1:]]) for piece in pieces]


@irdl_op_definition
class SliceOp(ShapedOp):
    """Elements `starts[i]:ends[i]:steps[i]` along `axes[i]`, as ONNX Slice (negative indices
    count from the end, bounds clamp, steps may be negative).

        %y = ge.slice %x starts [1] ends [-1] axes [1] steps [1] : !ge.tensor<[2, 1:10], f32> -> !ge.tensor<[2, 0:8], f32>
    """

    name = "ge.slice"

    input = operand_def(GeTensorType)
    starts = prop_def(DenseArrayBase.constr(i64))
    ends = prop_def(DenseArrayBase.constr(i64))
    axes = prop_def(DenseArrayBase.constr(i64))
    steps = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `starts` $starts `ends` $ends `axes` $axes `steps` $steps attr-dict `:` "
                       "type($input) `->` type($result)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        dims = list(x.dims)
        for axis, start, end, step in slice_params(cls.name, x, properties):
            dims[axis] = slice_dim(dims[axis], start, end, step)
        return [x.with_dims(dims)]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        (x,) = operand_types
        (known,) = known_operands(operand_values, 1)
        if known is None or x.rank != 1:
            return ()
        ((_, start, end, step),) = slice_params(cls.name, x, properties)
        return [tuple(known[slice_bounds(len(known), start, end, step)])]


@irdl_op_definition
class GatherOp(ShapedOp):
    """Entries of `input` along `axis` at `indices` (i32 or i64; negative counts from the end).
    The result shape is `input[:axis] + indices + input[axis + 1:]`.

        %y = ge.gather %x, %i axis 0 : (!ge.tensor<[100, 16], f32>, !ge.tensor<[-1, 8], i64>) -> !ge.tensor<[-1, 8, 16], f32>
    """

    name = "ge.gather"

    input = operand_def(GeTensorType)
    indices = operand_def(GeTensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `,` $indices `axis` $axis attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        x, indices = operand_types
        require_index(cls.name, indices, "indices")
        axis = normalize_axis(cls.name, prop_int(properties, "axis"), x)
        return [x.with_dims([*x.dims[:axis], *indices.dims, *x.dims[axis + 1:]])]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        x, indices = operand_types
        known, positions = known_operands(operand_values, 2)
        if known is None or positions is None or x.rank != 1 or not all(p.is_fixed for p in positions):
            return ()
        picked = []
        for p in positions:
            if not -len(known) <= p.lo < len(known):
                raise VerifyException(f"{cls.name}: index {p.lo} is out of range for {format_shape(x)}")
            picked.append(known[p.lo])
        return [tuple(picked)]


SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")
"""How `ge.scatter_elements` combines an update with the element it lands on ("none": replaces it)."""


@irdl_op_definition
class ScatterElementsOp(ShapedOp):
    """`data` with `updates` written along `axis` (as ONNX ScatterElements): update u lands at u's
    position with its `axis` coordinate replaced by `indices[u]` (negative counts from the end),
    replacing the element there (`reduction "none"`; of duplicates, the last in row-major order
    wins) or combined with it by "add", "mul", "max" or "min". An index out of range fails the run.

        %y = ge.scatter_elements %x, %i, %u axis 1 reduction "add" : (!ge.tensor<[3, 5], f32>, !ge.tensor<[3, 2], i64>, !ge.tensor<[3, 2], f32>) -> !ge.tensor<[3, 5], f32>
    """

    name = "ge.scatter_elements"

    data = operand_def(GeTensorType)
    indices = operand_def(GeTensorType)
    updates = operand_def(GeTensorType)
    axis = prop_def(IntegerAttr[I64])
    reduction = prop_def(StringAttr)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$data `,` $indices `,` $updates `axis` $axis `reduction` $reduction attr-dict `:` "
                       "functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        data, indices, updates = operand_types
        require_index(cls.name, indices, "indices")
        require_same_element_types(cls.name, (data, updates), "data and updates")
        reduction = properties["reduction"].data
        if reduction not in SCATTER_REDUCTIONS:
            raise VerifyException(f"{cls.name}: reduction must be one of {', '.join(SCATTER_REDUCTIONS)}, "
                                  f"got '{reduction}'")
        if reduction != "none":
            require_number(cls.name, data, f"data combined by '{reduction}'")
        if not indices.rank == updates.rank == data.rank:
            raise VerifyException(f"{cls.name}: indices and updates must have the rank of data, got "
                                  f"{format_shape(indices)} and {format_shape(updates)} for {format_shape(data)}")
        axis = normalize_axis(cls.name, prop_int(properties, "axis"), data)
        for d, (i, u, x) in enumerate(zip(indices.dims, updates.dims, data.dims)):
            intersect_dims(cls.name, f"indices and updates differ in dimension {d}", i, u)
            if d != axis and x.hi is not None and i.lo > x.hi:
                raise VerifyException(f"{cls.name}: indices {format_shape(indices)} exceed data "
                                      f"{format_shape(data)} in dimension {d}, which is not the axis")
        return [data]


@irdl_op_definition
class SqueezeOp(ShapedOp):
    """The input without the size-1 dimensions `axes`.

        %y = ge.squeeze %x axes [1] : !ge.tensor<[-1, 1, 4], f32> -> !ge.tensor<[-1, 4], f32>
    """

    name = "ge.squeeze"

    input = operand_def(GeTensorType)
    axes = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `axes` $axes attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        axes = normalize_axes(cls.name, prop_ints(properties, "axes"), x)
        for a in axes:
            if not x.dims[a].contains(1):
                raise VerifyException(f"{cls.name}: dimension {a} of {format_shape(x)} is {x.dims[a]}, not 1")
        return [x.with_dims([d for i, d in enumerate(x.dims) if i not in axes])]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        return known_operands(operand_values, 1)


@irdl_op_definition
class UnsqueezeOp(ShapedOp):
    """The input with size-1 dimensions inserted so that they sit at `axes` of the result.

        %y = ge.unsqueeze %x axes [0, -1] : !ge.tensor<[3], f32> -> !ge.tensor<[1, 3, 1], f32>
    """

    name = "ge.unsqueeze"

    input = operand_def(GeTensorType)
    axes = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `axes` $axes attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        raw = prop_ints(properties, "axes")
        axes = set(normalize_axes(cls.name, raw, x, extra=len(raw)))
        rest = iter(x.dims)
        return [x.with_dims([DimRange.fixed(1) if i in axes else next(rest) for i in range(x.rank + len(axes))])]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        result_rank = operand_types[0].rank + len(prop_ints(properties, "axes"))
        return known_operands(operand_values, 1) if result_rank <= 1 else ()


_PAD_MODES = ("constant", "reflect", "edge")


@irdl_op_definition
class PadOp(ShapedOp):
    """The input padded by `pads` ([begin of each dimension..., end of each dimension...], as
    ONNX; negative entries crop) with `value` (mode "constant") or mirrored ("reflect") or
    repeated ("edge") elements.

        %y = ge.pad %x pads [0, 1, 0, 1] mode "constant" value 0.0 : !ge.tensor<[2, 3], f32> -> !ge.tensor<[2, 5], f32>
    """

    name = "ge.pad"

    input = operand_def(GeTensorType)
    pads = prop_def(DenseArrayBase.constr(i64))
    mode = prop_def(StringAttr)
    value = prop_def(FloatAttr[Float64Type])
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `pads` $pads `mode` $mode `value` $value attr-dict `:` type($input) `->` "
                       "type($result)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        pads = prop_ints(properties, "pads")
        mode = properties["mode"].data
        if mode not in _PAD_MODES:
            raise VerifyException(f"{cls.name}: mode must be one of {', '.join(_PAD_MODES)}, got '{mode}'")
        check_count(cls.name, "pads", pads, 2 * x.rank)
        dims = []
        for axis, d in enumerate(x.dims):
            delta = pads[axis] + pads[x.rank + axis]
            if d.hi is not None and d.hi + delta < 0:
                raise VerifyException(f"{cls.name}: pads {pads} crop {-delta} elements from dimension {axis} "
                                      f"of {format_shape(x)}, which has at most {d.hi}")
            dims.append(dim_shift(d, delta))
        return [x.with_dims(dims)]


@irdl_op_definition
class FlattenOp(ShapedOp):
    """The input as a matrix: dimensions before `axis` make the rows, the rest the columns;
    `axis` is in [-rank, rank], a negative one counting from the end (as ONNX Flatten).

        %y = ge.flatten %x axis 1 : !ge.tensor<[-1, 8, 4, 4], f32> -> !ge.tensor<[-1, 128], f32>
    """

    name = "ge.flatten"

    input = operand_def(GeTensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `axis` $axis attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        axis = prop_int(properties, "axis")
        if not -x.rank <= axis <= x.rank:
            raise VerifyException(f"{cls.name}: axis {axis} is out of range for {format_shape(x)} "
                                  f"(valid: {-x.rank}..{x.rank})")
        axis = axis + x.rank if axis < 0 else axis
        return [x.with_dims([element_range(x.dims[:axis]), element_range(x.dims[axis:])])]


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


class _RetypeOp(ShapedOp):
    """An element-wise op giving its input the element type `to`; the shape and format stay."""

    input = operand_def(GeTensorType)
    to = prop_def(TypeAttribute)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

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


@irdl_op_definition
class ShapeOp(ShapedOp):
    """The input's dimensions as a rank-1 i64 tensor. Its values are known as ranges (those of
    the input's dimensions), which lets shape arithmetic fold when the shape is fixed.

        %s = ge.shape %x : !ge.tensor<[-1, 3, 224, 224], f32> -> !ge.tensor<[4], i64>
    """

    name = "ge.shape"

    input = operand_def(GeTensorType)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        return [GeTensorType([DimRange.fixed(x.rank)], i64)]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        return [tuple(operand_types[0].dims)]


@irdl_op_definition
class ResizeBilinearOp(ShapedOp):
    """Bilinear resize of the two spatial dimensions of an NCHW input to [height, width] given
    either as the `size` property or as a rank-1 i32/i64 operand of 2 elements. Source
    coordinates follow `align_corners` (corner pixels aligned), `half_pixel_centers`, or neither
    (asymmetric). With a size operand the output size is that operand's known values, if any.

        %y = ge.resize_bilinear %x, %hw align_corners : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32>, !ge.tensor<[2], i32>) -> !ge.tensor<[1, 3, -1, -1], f32>
        %z = ge.resize_bilinear %x size [224, 224] half_pixel_centers : (!ge.tensor<[1, 3, -1, -1], f32>) -> !ge.tensor<[1, 3, 224, 224], f32>
    """

    name = "ge.resize_bilinear"

    input = operand_def(GeTensorType)
    size_input = opt_operand_def(GeTensorType)
    size = opt_prop_def(DenseArrayBase.constr(i64))
    align_corners = opt_prop_def(UnitAttr)
    half_pixel_centers = opt_prop_def(UnitAttr)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input (`,` $size_input^)? (`size` $size^)? (`align_corners` $align_corners^)? "
                       "(`half_pixel_centers` $half_pixel_centers^)? attr-dict `:` "
                       "functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        x, *size_input = operand_types
        require_float(cls.name, x, "input")
        require_rank(cls.name, x, 4)
        require_image_format(cls.name, x)
        if prop_flag(properties, "align_corners") and prop_flag(properties, "half_pixel_centers"):
            raise VerifyException(f"{cls.name}: align_corners and half_pixel_centers exclude each other")
        if bool(size_input) == ("size" in properties):
            raise VerifyException(f"{cls.name}: give the output size either as the size property or as "
                                  "a size operand (exactly one)")
        if size_input:
            return [x.with_dims([*x.dims[:2], *cls._sizes_from_operand(size_input[0], operand_values)])]
        size = prop_ints(properties, "size")
        check_count(cls.name, "size", size, 2)
        check_min(cls.name, "size", size, 1)
        return [x.with_dims([*x.dims[:2], *(DimRange.fixed(s) for s in size)])]

    @classmethod
    def _sizes_from_operand(cls, t: GeTensorType, operand_values) -> list[DimRange]:
        require_index(cls.name, t, "size operand")
        if t.rank != 1 or not t.dims[0].contains(2):
            raise VerifyException(f"{cls.name}: size operand must have shape [2], got {format_shape(t)}")
        known = known_operands(operand_values, 2)[1]
        if known is None or len(known) != 2:
            return [DimRange.unknown(), DimRange.unknown()]
        return [DimRange(max(v.lo, 0), v.hi) for v in known]


_RESIZE_MODES = ("nearest", "linear", "cubic")
_RESIZE_COORDINATES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                       "tf_crop_and_resize")
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _check_choices(op_name: str, properties: Mapping[str, Attribute], choices: Mapping[str, Sequence[str]]) -> None:
    """Each of these string properties that is present has one of its allowed values."""
    for key, allowed in choices.items():
        if key in properties and properties[key].data not in allowed:
            raise VerifyException(f"{op_name}: {key} must be one of {', '.join(allowed)}, got '{properties[key].data}'")


@irdl_op_definition
class ResizeOp(ShapedOp):
    """ONNX Resize of the input's `axes`: `mode` nearest, linear or cubic interpolation at the
    source coordinates `coordinate_transformation_mode` gives (as ONNX). The output sizes of those
    axes are the `sizes` operand (one entry per axis, adjusted by `keep_aspect_ratio_policy`) or
    floor(size * scale) for the `scales` operand; with both, `sizes` gives the output sizes and
    `scales` the coordinate scales. `roi` ([starts..., ends...] per axis) is the crop of
    "tf_crop_and_resize", whose points outside the input are `extrapolation_value`. The options
    of one mode (`nearest_mode`, `cubic_coeff_a`, `antialias`) are refused with another.

        %y = ge.resize %x sizes %s axes [2, 3] mode "cubic" coordinates "half_pixel" cubic_coeff_a -0.5 exclude_outside : !ge.tensor<[1, 3, 4, 4], f32> sizes !ge.tensor<[2], i64> -> !ge.tensor<[1, 3, -1, -1], f32>
    """

    name = "ge.resize"

    input = operand_def(GeTensorType)
    roi = opt_operand_def(GeTensorType)
    scales = opt_operand_def(GeTensorType)
    sizes = opt_operand_def(GeTensorType)
    axes = prop_def(DenseArrayBase.constr(i64))
    mode = prop_def(StringAttr)
    coordinate_transformation_mode = prop_def(StringAttr)
    nearest_mode = opt_prop_def(StringAttr)
    cubic_coeff_a = opt_prop_def(FloatAttr[Float64Type])
    exclude_outside = opt_prop_def(UnitAttr)
    antialias = opt_prop_def(UnitAttr)
    extrapolation_value = opt_prop_def(FloatAttr[Float64Type])
    keep_aspect_ratio_policy = opt_prop_def(StringAttr)
    result = result_def(GeTensorType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    assembly_format = ("$input (`roi` $roi^)? (`scales` $scales^)? (`sizes` $sizes^)? `axes` $axes `mode` $mode "
                       "`coordinates` $coordinate_transformation_mode (`nearest_mode` $nearest_mode^)? "
                       "(`cubic_coeff_a` $cubic_coeff_a^)? (`exclude_outside` $exclude_outside^)? "
                       "(`antialias` $antialias^)? (`extrapolation_value` $extrapolation_value^)? "
                       "(`keep_aspect_ratio_policy` $keep_aspect_ratio_policy^)? attr-dict `:` type($input) "
                       "(`roi` type($roi)^)? (`scales` type($scales)^)? (`sizes` type($sizes)^)? `->` type($result)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x, roi, scales, sizes), positions = cls._operand_groups(operand_types, properties)
        require_float(cls.name, x, "input")
        axes = normalize_axes(cls.name, prop_ints(properties, "axes"), x)
        cls._check_options(properties, roi is not None)
        for what, t, count in (("roi", roi, 2 * len(axes)), ("scales", scales, len(axes)), ("sizes", sizes, len(axes))):
            if t is not None and (t.rank != 1 or not t.dims[0].contains(count)):
                raise VerifyException(f"{cls.name}: {what} must have shape [{count}] (axes {axes}), got "
                                      f"{format_shape(t)}")
        if roi is not None:
            require_float(cls.name, roi, "roi")
        if scales is not None:
            require_float(cls.name, scales, "scales")
        if sizes is not None:
            require_index(cls.name, sizes, "sizes")
        elif scales is None:
            raise VerifyException(f"{cls.name}: needs a scales or a sizes operand")
        if "keep_aspect_ratio_policy" in properties and (sizes is None or scales is not None):
            raise VerifyException(f"{cls.name}: keep_aspect_ratio_policy needs sizes and no scales")
        dims = list(x.dims)
        known = known_operands(operand_values, len(operand_types))[positions[3]] if sizes is not None else None
        for axis, dim in zip(axes, cls._resized_dims(x, axes, properties, known)):
            dims[axis] = dim
        return [x.with_dims(dims)]

    @staticmethod
    def _operand_groups(operand_types, properties) -> tuple[list[GeTensorType | None], list[int | None]]:
        """input, roi, scales and sizes (None where absent), and their positions in the operands, as
        the operand segment sizes tell (the builder passes them like the parser does)."""
        segments = prop_ints(properties, AttrSizedOperandSegments.attribute_name)
        positions, position = [], 0
        for count in segments:
            positions.append(position if count else None)
            position += count
        return [None if p is None else operand_types[p] for p in positions], positions

    @classmethod
    def _check_options(cls, properties, has_roi: bool) -> None:
        mode = properties["mode"].data
        transform = properties["coordinate_transformation_mode"].data
        _check_choices(cls.name, properties, {"mode": _RESIZE_MODES, "coordinate_transformation_mode": _RESIZE_COORDINATES,
                                              "nearest_mode": _NEAREST_MODES, "keep_aspect_ratio_policy": ASPECT_POLICIES})
        for key, needed in (("nearest_mode", mode == "nearest"), ("cubic_coeff_a", mode == "cubic"),
                            ("antialias", mode != "nearest"), ("extrapolation_value", transform == "tf_crop_and_resize")):
            if key in properties and not needed:
                raise VerifyException(f"{cls.name}: {key} does not apply to mode '{mode}' with coordinates "
                                      f"'{transform}'")
        if has_roi != (transform == "tf_crop_and_resize"):
            raise VerifyException(f"{cls.name}: a roi operand goes with coordinates 'tf_crop_and_resize' (and only "
                                  "with them)")

    @classmethod
    def _resized_dims(cls, x: GeTensorType, axes: list[int], properties,
                      known: ValueRanges | None) -> list[DimRange]:
        """The resized axes' sizes: the known sizes (as given, or under the aspect policy when every
        input size is fixed), else unknown."""
        if known is None or len(known) != len(axes):
            return [DimRange.unknown()] * len(axes)
        policy = properties.get("keep_aspect_ratio_policy")
        if policy is None or policy.data == "stretch":
            return [DimRange(max(v.lo, 0), v.hi) for v in known]
        in_sizes = [x.dims[a] for a in axes]
        if not all(d.is_fixed for d in (*known, *in_sizes)) or min(d.lo for d in in_sizes) < 1:
            return [DimRange.unknown()] * len(axes)
        out, _ = resize_plan([d.lo for d in in_sizes], [d.lo for d in known], policy=policy.data)
        return [DimRange.fixed(n) for n in out]


_GRID_SAMPLE_MODES = ("linear", "nearest", "cubic")
_GRID_PADDING_MODES = ("zeros", "border", "reflection")


@irdl_op_definition
class GridSampleOp(ShapedOp):
    """ONNX GridSample: the [N, C, D1, ..., Dk] input sampled at the points of the
    [N, H1, ..., Hm, k] `grid` (coordinates in [-1, 1], the last one along D1... reversed: x first),
    by `mode` linear, nearest or cubic interpolation; `padding_mode` says what points outside the
    input read (zeros, the border, or the input reflected), `align_corners` whether -1 and 1 are
    the centers of the corner pixels (else their outer edges). The result is [N, C, H1, ..., Hm].

        %y = ge.grid_sample %x, %grid mode "linear" padding "zeros" align_corners : (!ge.tensor<[1, 3, 4, 4], f32>, !ge.tensor<[1, 6, 6, 2], f32>) -> !ge.tensor<[1, 3, 6, 6], f32>
    """

    name = "ge.grid_sample"

    input = operand_def(GeTensorType)
    grid = operand_def(GeTensorType)
    mode = prop_def(StringAttr)
    padding_mode = prop_def(StringAttr)
    align_corners = opt_prop_def(UnitAttr)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `,` $grid `mode` $mode `padding` $padding_mode (`align_corners` $align_corners^)? "
                       "attr-dict `:` functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        x, grid = operand_types
        require_float(cls.name, x, "input")
        require_float(cls.name, grid, "grid")
        _check_choices(cls.name, properties, {"mode": _GRID_SAMPLE_MODES, "padding_mode": _GRID_PADDING_MODES})
        if x.rank < 3 or grid.rank != x.rank:
            raise VerifyException(f"{cls.name}: input {format_shape(x)} and grid {format_shape(grid)} must have "
                                  "one rank, at least 3")
        batch = intersect_dims(cls.name, f"grid {format_shape(grid)} must have the batch of input "
                                         f"{format_shape(x)}", grid.dims[0], x.dims[0])
        intersect_dims(cls.name, f"grid {format_shape(grid)} must end in {x.rank - 2} coordinates",
                       grid.dims[-1], DimRange.fixed(x.rank - 2))
        return [x.with_dims([batch, x.dims[1], *grid.dims[1:-1]])]


@irdl_op_definition
class ExpandOp(ShapedOp):
    """The input broadcast (numpy's rules, as ONNX Expand) against the static `shape`: a 1 in
    `shape` keeps the input's dimension, and the result has the larger rank of the two.

        %y = ge.expand %x shape [2, 1, 4] : !ge.tensor<[-1, 1], f32> -> !ge.tensor<[2, -1, 4], f32>
    """

    name = "ge.expand"

    input = operand_def(GeTensorType)
    shape = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `shape` $shape attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        shape = prop_ints(properties, "shape")
        check_min(cls.name, "shape", shape, 0)
        dims = broadcast_dims(f"{cls.name}: input", x.dims, [DimRange.fixed(s) for s in shape])
        return [x.with_dims(dims)]


@irdl_op_definition
class TileOp(ShapedOp):
    """The input repeated `repeats[i]` times along each dimension i (as ONNX Tile).

        %y = ge.tile %x repeats [1, 3] : !ge.tensor<[-1, 2], f32> -> !ge.tensor<[-1, 6], f32>
    """

    name = "ge.tile"

    input = operand_def(GeTensorType)
    repeats = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `repeats` $repeats attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        repeats = prop_ints(properties, "repeats")
        check_count(cls.name, "repeats", repeats, x.rank)
        check_min(cls.name, "repeats", repeats, 0)
        return [x.with_dims([element_range([d, DimRange.fixed(r)]) for d, r in zip(x.dims, repeats)])]


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


@irdl_op_definition
class TriluOp(ShapedOp):
    """The upper (`upper`) or lower triangle of the last two dimensions, the rest zeros: element
    (i, j) is kept when `j - i >= k` (upper) or `j - i <= k` (lower), as ONNX Trilu.

        %y = ge.trilu %x k 1 upper : !ge.tensor<[-1, 4, 5], f32>
    """

    name = "ge.trilu"

    T: ClassVar = VarConstraint("T", base(GeTensorType))
    input = operand_def(T)
    k = prop_def(IntegerAttr[I64])
    upper = opt_prop_def(UnitAttr)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input `k` $k (`upper` $upper^)? attr-dict `:` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        if x.rank < 2:
            raise VerifyException(f"{cls.name}: input must have rank >= 2, got {format_shape(x)}")
        return [x]


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

GE = Dialect("ge", [GraphOp, OutputOp, DataOp, ConstOp, AddOp, SubOp, MulOp, ReluOp, MatMulOp,
                    ReshapeOp, VariableOp, IdentityOp, DivOp, PowOp, MaximumOp, MinimumOp, SqrtOp, ExpOp,
                    LogOp, TanhOp, SigmoidOp, GeluOp, ErfOp, BatchMatMulOp, GemmOp, Conv2DOp, MaxPoolOp,
                    AvgPoolOp, GlobalAvgPoolOp, BatchNormOp, LayerNormOp, SoftmaxOp, TransposeOp, ConcatOp,
                    SplitOp, SliceOp, GatherOp, SqueezeOp, UnsqueezeOp, PadOp, FlattenOp, ReduceSumOp,
                    ReduceMeanOp, ReduceMaxOp, CastOp, BitCastOp, ShapeOp, ResizeBilinearOp, ResizeOp, GridSampleOp,
                    EqualOp, LessOp, GreaterOp, LessEqualOp, GreaterEqualOp, LogicalAndOp,
                    LogicalOrOp, LogicalXorOp, BitwiseAndOp, BitwiseOrOp, BitwiseXorOp,
                    BitShiftOp, ModOp, PReluOp, SelectOp, LogicalNotOp, BitwiseNotOp, NegOp,
                    AbsOp, SignOp, ReciprocalOp, FloorOp, CeilOp, RoundOp, SinOp, CosOp, TanOp,
                    AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, SoftplusOp,
                    SoftsignOp, MishOp, HardSwishOp, IsNanOp, IsInfOp, LeakyReluOp, EluOp, CeluOp,
                    ThresholdedReluOp, SeluOp, HardSigmoidOp, ShrinkOp,
                    ExpandOp, TileOp, LogSoftmaxOp, ReduceProdOp, ReduceMinOp, ReduceL1Op, ReduceL2Op,
                    ReduceSumSquareOp, ReduceLogSumOp, ReduceLogSumExpOp, ArgMaxOp, ArgMinOp, TopKOp,
                    InstanceNormOp, LrnOp, ConvTransposeOp, TriluOp, CumSumOp, CumProdOp,
                    ScatterElementsOp], [GeTensorType, SlotAttr])
