"""Matrix products: `ge.matmul` as `linalg.matmul` (2-D) or a contraction `linalg.generic`
(batched, batch dimensions broadcast as numpy's `matmul`), accumulating into zeros.

    %y = ge.matmul %x, %w : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
  ==>
    %zero = linalg.fill ins(%c0 : f32) outs(%empty : tensor<?x2xf32>) -> tensor<?x2xf32>
    %y = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x2xf32>) outs(%zero : tensor<?x2xf32>)
"""
from __future__ import annotations

from typing import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from dfir.dialects import ge
from dfir.passes.ge_to_linalg.builder import Body, FuncBuilder, Size, is_float, signless

__all__ = ["LOWERINGS", "contract"]


def multiply_add(b: Body, element_type: Attribute, x: SSAValue, y: SSAValue, acc: SSAValue) -> SSAValue:
    if is_float(element_type):
        return b.add(arith.AddfOp(acc, b.add(arith.MulfOp(x, y))))
    return b.add(arith.AddiOp(acc, b.add(arith.MuliOp(x, y))))


def contract(builder: FuncBuilder, lhs: SSAValue, rhs: SSAValue, result_sizes: Sequence[Size],
             element_type: Attribute, lhs_transposed: bool = False, rhs_transposed: bool = False) -> SSAValue:
    """`lhs @ rhs` over the last two dimensions (each optionally transposed), leading dimensions
    broadcast to `result_sizes[:-2]`; zeros accumulate the products."""
    zero = builder.full(result_sizes, signless(element_type), 0)
    lhs_rank, rhs_rank, rank = _rank(lhs), _rank(rhs), len(result_sizes)
    if rank == lhs_rank == rhs_rank == 2 and not (lhs_transposed or rhs_transposed):
        return builder.add(linalg.MatmulOp([lhs, rhs], [zero], [zero.type])).results[0]
    batch, m, n, k = rank - 2, rank - 2, rank - 1, rank
    lhs_map = _operand_map(lhs, batch, result_sizes, (k, m) if lhs_transposed else (m, k))
    rhs_map = _operand_map(rhs, batch, result_sizes, (n, k) if rhs_transposed else (k, n))
    output_map = AffineMap(rank + 1, 0, tuple(AffineExpr.dimension(d) for d in range(rank)))
    return builder.generic([(lhs, lhs_map), (rhs, rhs_map)], zero, ["parallel"] * rank + ["reduction"],
                           lambda b, x, y, acc: multiply_add(b, element_type, x, y, acc), output_map)


def _operand_map(value: SSAValue, batch: int, result_sizes: Sequence[Size], last_two: tuple[int, int]) -> AffineMap:
    shape = value.type.get_shape()
    leading = len(shape) - 2
    exprs = []
    for axis in range(leading):
        loop = axis + batch - leading
        broadcast = shape[axis] == 1 and result_sizes[loop] != 1
        exprs.append(AffineExpr.constant(0) if broadcast else AffineExpr.dimension(loop))
    exprs.extend(AffineExpr.dimension(d) for d in last_two)
    return AffineMap(batch + 3, 0, tuple(exprs))


def _rank(value: SSAValue) -> int:
    assert isinstance(value.type, TensorType)
    return len(value.type.get_shape())


def _result_sizes(builder: FuncBuilder, op: Operation) -> list[Size]:
    """The result's sizes: static ones from its type, dynamic ones from the operand they come from."""
    lhs, rhs = builder.value(op.operands[0]), builder.value(op.operands[1])
    result = op.results[0].type
    rank = result.rank
    sizes: list[Size] = []
    for axis, dim in enumerate(result.dims):
        if dim.is_fixed:
            sizes.append(dim.lo)
        elif axis == rank - 1:
            sizes.append(builder.dim(rhs, _rank(rhs) - 1))
        elif axis == rank - 2:
            sizes.append(builder.dim(lhs, _rank(lhs) - 2))
        else:
            source = lhs if axis - (rank - _rank(lhs)) >= 0 and lhs.type.get_shape()[axis - (rank - _rank(lhs))] != 1 else rhs
            sizes.append(builder.dim(source, axis - (rank - _rank(source))))
    return sizes


def _matmul(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    lhs, rhs = builder.value(op.operands[0]), builder.value(op.operands[1])
    return [contract(builder, lhs, rhs, _result_sizes(builder, op), op.results[0].type.element_type)]


LOWERINGS = {ge.MatMulOp: _matmul}
