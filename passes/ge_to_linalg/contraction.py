"""Matrix products: `ge.matmul` / `ge.batch_matmul` / `ge.gemm` as `linalg.matmul` (2-D,
untransposed), `linalg.batch_matmul` (3-D, equal static batch, untransposed; IREE's importer's
form) or else a contraction `linalg.generic` (batch dimensions broadcast as numpy's `matmul`;
`adj_x` / `adj_y` swap an operand's loops in its indexing map), accumulating into zeros.

A Gemm's `trans_b` weight (the classifier of a CNN) stays a generic contraction reading the
weight as [n, k]: IREE generalizes named contractions, and the three forms ran alike (IREE 3.13,
[M, 512] x [1000, 512]^T, one thread; default and `tiled` variants): M = 32 generic 1.22 / 0.82 ms,
`linalg.matmul` with transposed indexing maps 1.34 / 0.82, `linalg.transpose` + `linalg.matmul`
1.13 / 0.86; M = 1 all 0.43-0.60 ms. (xDSL's custom printer also drops a matmul's indexing maps.) `ge.gemm` scales
the product and adds the scaled `c` (broadcast) in one element-wise `linalg.generic`, in the
element type as the reference does (an integer `alpha` / `beta` truncates toward zero).

    %y = ge.matmul %x, %w : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
  ==>
    %zero = linalg.fill ins(%c0 : f32) outs(%empty : tensor<?x2xf32>) -> tensor<?x2xf32>
    %y = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x2xf32>) outs(%zero : tensor<?x2xf32>)

    %y = ge.gemm %a, %b, %c alpha 2.0 beta 1.0 trans_b : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[8, 4], f32>, !ge.tensor<[8], f32>) -> !ge.tensor<[-1, 8], f32>
  ==>
    %p = linalg.generic {indexing_maps = [(m, n, k) -> (m, k), (m, n, k) -> (n, k), (m, n, k) -> (m, n)], ...}
    %y = linalg.generic {indexing_maps = [(m, n) -> (m, n), (m, n) -> (n), (m, n) -> (m, n)], ...} ins(%p, %c) {
      ^bb0(%pv: f32, %cv: f32, %out: f32):  yield %pv * 2.0 + %cv
    }
"""
from __future__ import annotations

from typing import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from dfir.dialects import ge
from dfir.dialects.upstream import BatchMatmulOp
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
    if rank == lhs_rank == rhs_rank == 3 and not (lhs_transposed or rhs_transposed) and _same_batch(lhs, rhs):
        return builder.add(BatchMatmulOp([lhs, rhs], [zero])).results[0]
    batch, m, n, k = rank - 2, rank - 2, rank - 1, rank
    lhs_map = _operand_map(lhs, batch, result_sizes, (k, m) if lhs_transposed else (m, k))
    rhs_map = _operand_map(rhs, batch, result_sizes, (n, k) if rhs_transposed else (k, n))
    output_map = AffineMap(rank + 1, 0, tuple(AffineExpr.dimension(d) for d in range(rank)))
    return builder.generic([(lhs, lhs_map), (rhs, rhs_map)], zero, ["parallel"] * rank + ["reduction"],
                           lambda b, x, y, acc: multiply_add(b, element_type, x, y, acc), output_map)


def _same_batch(lhs: SSAValue, rhs: SSAValue) -> bool:
    """The operands' batch dimensions are equal without broadcasting (static and equal)."""
    a, b = lhs.type.get_shape()[0], rhs.type.get_shape()[0]
    return a == b != DYNAMIC_INDEX


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


def _result_sizes(builder: FuncBuilder, op: Operation, lhs_transposed: bool = False,
                  rhs_transposed: bool = False) -> list[Size]:
    """The result's sizes: static ones from its type, dynamic ones from the operand they come from."""
    lhs, rhs = builder.value(op.operands[0]), builder.value(op.operands[1])
    result = op.results[0].type
    rank = result.rank
    sizes: list[Size] = []
    for axis, dim in enumerate(result.dims):
        if dim.is_fixed:
            sizes.append(dim.lo)
        elif axis == rank - 1:
            sizes.append(builder.dim(rhs, _rank(rhs) - (2 if rhs_transposed else 1)))
        elif axis == rank - 2:
            sizes.append(builder.dim(lhs, _rank(lhs) - (1 if lhs_transposed else 2)))
        else:
            source = lhs if axis - (rank - _rank(lhs)) >= 0 and lhs.type.get_shape()[axis - (rank - _rank(lhs))] != 1 else rhs
            sizes.append(builder.dim(source, axis - (rank - _rank(source))))
    return sizes


def _matmul(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    return [_product(builder, op, False, False)]


def _batch_matmul(builder: FuncBuilder, op: ge.BatchMatMulOp) -> list[SSAValue]:
    return [_product(builder, op, op.adj_x is not None, op.adj_y is not None)]


def _product(builder: FuncBuilder, op: Operation, lhs_transposed: bool, rhs_transposed: bool) -> SSAValue:
    lhs, rhs = builder.value(op.operands[0]), builder.value(op.operands[1])
    return contract(builder, lhs, rhs, _result_sizes(builder, op, lhs_transposed, rhs_transposed),
                    op.results[0].type.element_type, lhs_transposed, rhs_transposed)


def _gemm(builder: FuncBuilder, op: ge.GemmOp) -> list[SSAValue]:
    element_type = op.result.type.element_type
    product = _product(builder, op, op.trans_a is not None, op.trans_b is not None)
    alpha, beta = op.alpha.value.data, op.beta.value.data
    if op.c is None and alpha == 1.0:
        return [product]
    operands = [product] if op.c is None else [product, builder.value(op.c)]

    def body(b: Body, p: SSAValue, *c: SSAValue) -> SSAValue:
        scaled = _scaled(b, element_type, p, alpha)
        return scaled if not c else _add(b, element_type, scaled, _scaled(b, element_type, c[0], beta))
    return [builder.elementwise(operands, op.result.type, body)]


def _scaled(b: Body, element_type: Attribute, x: SSAValue, factor: float) -> SSAValue:
    """`factor * x` in x's type (numpy's `x * x.dtype.type(factor)`)."""
    if factor == 1.0:
        return x
    constant = b.constant(factor if is_float(element_type) else int(factor), element_type)
    return b.add(arith.MulfOp(x, constant) if is_float(element_type) else arith.MuliOp(x, constant))


def _add(b: Body, element_type: Attribute, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.add(arith.AddfOp(x, y) if is_float(element_type) else arith.AddiOp(x, y))


LOWERINGS = {ge.MatMulOp: _matmul, ge.BatchMatMulOp: _batch_matmul, ge.GemmOp: _gemm}
