"""Matrix product exports: MatMul and Gemm (runtime/ge/kernels/contraction.py)."""
from __future__ import annotations

from dfir.lowering.onnx_export.builder import Builder, Export
from dfir.om.plan import GeOp


def _batch_matmul(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    operands = [_swap_last_two(b, v) if op.attrs.get(flag) else v for v, flag in zip(x, ("adj_x", "adj_y"))]
    return [b.node("MatMul", operands)]


def _swap_last_two(b: Builder, value: str) -> str:
    rank = b.rank(value)
    return b.node("Transpose", [value], perm=[*range(rank - 2), rank - 1, rank - 2])


def _gemm(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    return [b.node("Gemm", x, alpha=float(op.attrs["alpha"]), beta=float(op.attrs["beta"]),
                   transA=int(bool(op.attrs.get("trans_a"))), transB=int(bool(op.attrs.get("trans_b"))))]


EXPORTS: dict[str, Export] = {
    "matmul": lambda b, op, x: [b.node("MatMul", x)],
    "batch_matmul": _batch_matmul,
    "gemm": _gemm,
}
