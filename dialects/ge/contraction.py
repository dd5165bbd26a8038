"""Matrix products: `ge.matmul`, `ge.batch_matmul`, `ge.gemm`."""
from __future__ import annotations

from xdsl.dialects.builtin import Float64Type, FloatAttr, UnitAttr
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, prop_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dfir.dialects.ge.base import ShapedOp
from dfir.dialects.ge_shapes import (broadcast_dims, format_shape, prop_flag, require_rank, require_same_element_type,
                                     require_same_element_types)
from dfir.dialects.ge_types import GeTensorType

__all__ = ["BatchMatMulOp", "GemmOp", "MatMulOp", "OPS"]


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


OPS = (MatMulOp, BatchMatMulOp, GemmOp)
"""The family's ops, in the order they were added."""
