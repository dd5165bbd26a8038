"""The upstream MLIR dialects that lowered GE graphs (`ge.graph`'s `codegen` region) use.

xDSL 0.74's `linalg` lacks three named ops that IREE compiles better than their `linalg.generic`
forms (IREE's own ONNX importer emits them); they are declared here, as xDSL declares its named
ops (hidden region, default indexing maps), and `LINALG` is xDSL's linalg with them added. IREE
parses the text back and builds each named op's region itself (`lowering.iree_executable.custom_form`),
so the regions here are for xDSL's verifier and printer.

`linalg.depthwise_conv_2d_nchw_chw`: one filter per channel, loops (n, oh, ow, c, kh, kw):

    %y = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
           ins(%x, %w : tensor<1x32x10x10xf32>, tensor<32x3x3xf32>) outs(%acc : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>

`linalg.pooling_nchw_sum`: the sum of each window (the second input only gives its shape):

    %y = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
           ins(%x, %taps : tensor<1x8x8x8xf32>, tensor<2x2xf32>) outs(%zeros : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>

`linalg.batch_matmul`: `C[b] += A[b] @ B[b]`, loops (b, m, n, k):

    %y = linalg.batch_matmul ins(%a, %b : tensor<4x8x16xf32>, tensor<4x16x2xf32>) outs(%zeros : tensor<4x8x2xf32>) -> tensor<4x8x2xf32>
"""
from __future__ import annotations

from typing import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import AnyFloat, ArrayAttr
from xdsl.dialects.func import Func
from xdsl.dialects.linalg import Linalg
from xdsl.dialects.linalg.abstract_ops import ConvOperation, NamedOperation, PoolingOperation
from xdsl.dialects.linalg.ops import IteratorTypeAttr, MatmulOp, YieldOp
from xdsl.dialects.math import Math
from xdsl.dialects.tensor import Tensor
from xdsl.ir import BlockArgument, Dialect, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.irdl import irdl_op_definition

from dfir.dialects.iree_util import FLOW, UTIL

__all__ = ["BatchMatmulOp", "DepthwiseConv2DNchwChwOp", "LINALG", "PoolingNchwSumOp", "UPSTREAM_DIALECTS"]


@irdl_op_definition
class DepthwiseConv2DNchwChwOp(ConvOperation):
    """`O[n, c, oh, ow] += I[n, c, oh * sh + kh * dh, ow * sw + kw * dw] * K[c, kh, kw]`."""

    name = "linalg.depthwise_conv_2d_nchw_chw"

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, oh, ow, c, kh, kw = (AffineDimExpr(dim) for dim in range(6))
        stride_h, stride_w = self.strides.get_values()
        dilation_h, dilation_w = self.dilations.get_values()
        return (AffineMap(6, 0, (n, c, oh * stride_h + kh * dilation_h, ow * stride_w + kw * dilation_w)),
                AffineMap(6, 0, (c, kh, kw)),
                AffineMap(6, 0, (n, c, oh, ow)))

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return ArrayAttr((IteratorTypeAttr.parallel(),) * 4 + (IteratorTypeAttr.reduction(),) * 2)


@irdl_op_definition
class PoolingNchwSumOp(PoolingOperation):
    """`O[n, c, oh, ow] += I[n, c, oh * sh + kh * dh, ow * sw + kw * dw]` over the taps (kh, kw)."""

    name = "linalg.pooling_nchw_sum"

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        arg_types = cls.body_arg_types((*inputs, *outputs))
        add = arith.AddfOp if isinstance(arg_types[-1], AnyFloat) else arith.AddiOp

        @Builder.implicit_region(arg_types)
        def hidden_region(args: tuple[BlockArgument, ...]) -> None:
            YieldOp(add(args[2], args[0]))

        return hidden_region

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        n, c, oh, ow, kh, kw = (AffineDimExpr(dim) for dim in range(6))
        stride_h, stride_w = self.strides.get_values()
        dilation_h, dilation_w = self.dilations.get_values()
        return (AffineMap(6, 0, (n, c, oh * stride_h + kh * dilation_h, ow * stride_w + kw * dilation_w)),
                AffineMap(6, 0, (kh, kw)),
                AffineMap(6, 0, (n, c, oh, ow)))


@irdl_op_definition
class BatchMatmulOp(NamedOperation):
    """`C[b, m, n] += A[b, m, k] * B[b, k, n]`."""

    name = "linalg.batch_matmul"

    def __init__(self, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue] = ()):
        super().__init__(ins=inputs, outs=outputs, result_types=[output.type for output in outputs],
                         hidden_region=self.get_hidden_region(inputs, outputs))

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return MatmulOp.get_hidden_region(inputs, outputs)

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        b, m, n, k = (AffineDimExpr(dim) for dim in range(4))
        return (AffineMap(4, 0, (b, m, k)), AffineMap(4, 0, (b, k, n)), AffineMap(4, 0, (b, m, n)))

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return ArrayAttr((IteratorTypeAttr.parallel(),) * 3 + (IteratorTypeAttr.reduction(),))


LINALG = Dialect("linalg", [*Linalg.operations, DepthwiseConv2DNchwChwOp, PoolingNchwSumOp, BatchMatmulOp],
                 [*Linalg.attributes])
"""xDSL's linalg and the named ops above."""

UPSTREAM_DIALECTS = (Arith, Func, LINALG, Math, Tensor, UTIL, FLOW)
