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

The ops live in one module per op family, the families the ONNX importer, the linalg lowering
(`passes/ge_to_linalg/`), the reference kernels (`runtime/ge/kernels/`) and the ONNX exporter
(`lowering/onnx_export/`) are split by: `activation`, `contraction`, `elementwise`, `logic`,
`movement`, `normalization`, `reduction`, `resize`, `window`; `graph` holds the graph, its output,
inputs and weights, `base` what the tensor ops share and `traits` what passes ask of an op
(`Elementwise`, `View`, `InPlace`). Each family lists its ops in `OPS`; this package re-exports
every op and defines the dialect, so `from dfir.dialects import ge` and `ge.AddOp` are all a user
needs.

Every tensor op derives from `ShapedOp` and owns a *shape function*, `infer_types(operand_types,
properties)`, that returns its result types or raises a VerifyException naming the op and the
shapes. The op's verifier checks that each declared result type is compatible with the inferred
one; the graph builder (`dfir.frontend.ge.graph`) uses the same function to type the ops it
creates. A new op declares itself, its traits and its shape function in its family's module and
joins that family's `OPS`; tests/dialects/test_ge_families.py then asks for its lowering, kernel
and ONNX export. The checks and range arithmetic that shape functions share are in `ge_shapes`,
over the integer rules of `dfir.core.shape_arith`.
"""
from __future__ import annotations

from xdsl.ir import Dialect

from dfir.core.shape_arith import slice_bounds, slice_length
from dfir.dialects.ge import (activation, contraction, elementwise, graph, logic, movement, normalization, reduction,
                              resize, window)
from dfir.dialects.ge.activation import (CeluOp, EluOp, HardSigmoidOp, HardSwishOp, LeakyReluOp, MishOp, PReluOp,
                                         SeluOp, ShrinkOp, SoftplusOp, SoftsignOp, ThresholdedReluOp)
from dfir.dialects.ge.base import LOC_ATTR, ShapedOp
from dfir.dialects.ge.contraction import BatchMatMulOp, GemmOp, MatMulOp
from dfir.dialects.ge.elementwise import (AbsOp, AcoshOp, AcosOp, AddOp, AsinhOp, AsinOp, AtanhOp, AtanOp, BitCastOp,
                                          CastOp, CeilOp, CoshOp, CosOp, DivOp, ErfOp, ExpOp, FloorOp, GeluOp,
                                          IdentityOp, LogOp, MaximumOp, MinimumOp, ModOp, MulOp, NegOp, PowOp,
                                          ReciprocalOp, ReluOp, RoundOp, SigmoidOp, SignOp, SinhOp, SinOp, SqrtOp,
                                          SubOp, TanhOp, TanOp)
from dfir.dialects.ge.graph import (BACKENDS, const_type, ConstOp, ConstValue, DataOp, GraphOp, op_name_of, OutputOp,
                                    REQUESTED_BACKEND_ATTR, VariableOp)
from dfir.dialects.ge.logic import (BitShiftOp, BitwiseAndOp, BitwiseNotOp, BitwiseOrOp, BitwiseXorOp, EqualOp,
                                    GreaterEqualOp, GreaterOp, IsInfOp, IsNanOp, LessEqualOp, LessOp, LogicalAndOp,
                                    LogicalNotOp, LogicalOrOp, LogicalXorOp, SelectOp)
from dfir.dialects.ge.movement import (ConcatOp, ExpandOp, FlattenOp, GatherOp, PadOp, ReshapeOp, ScatterElementsOp,
                                       ShapeOp, SliceOp, SplitOp, SqueezeOp, TileOp, TransposeOp, TriluOp, UnsqueezeOp)
from dfir.dialects.ge.normalization import BatchNormOp, InstanceNormOp, LayerNormOp, LogSoftmaxOp, LrnOp, SoftmaxOp
from dfir.dialects.ge.reduction import (ArgMaxOp, ArgMinOp, CumProdOp, CumSumOp, ReduceL1Op, ReduceL2Op,
                                        ReduceLogSumExpOp, ReduceLogSumOp, ReduceMaxOp, ReduceMeanOp, ReduceMinOp,
                                        ReduceProdOp, ReduceSumOp, ReduceSumSquareOp, TopKOp)
from dfir.dialects.ge.resize import GridSampleOp, ResizeBilinearOp, ResizeOp
from dfir.dialects.ge.traits import Elementwise, InPlace, View
from dfir.dialects.ge.window import AvgPoolOp, Conv2DOp, ConvTransposeOp, GlobalAvgPoolOp, MaxPoolOp
from dfir.dialects.ge_plan_attrs import SlotAttr
from dfir.dialects.ge_shapes import ValueRanges
from dfir.dialects.ge_types import GeTensorType

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
           "ScatterElementsOp", "Elementwise", "InPlace", "View"]

FAMILIES = (activation, contraction, elementwise, logic, movement, normalization, reduction, resize, window)
"""The op families, one module each (`graph` holds the graph itself, its inputs and weights)."""

GE = Dialect("ge", [op for family in (graph, *FAMILIES) for op in family.OPS], [GeTensorType, SlotAttr])
