"""Contraction kernels: matmul, batch_matmul, gemm."""
from __future__ import annotations

import numpy as np
from dfir.runtime.ge.kernels.kernel import Kernel


def _matmul(args, attrs):
    return (np.matmul(args[0], args[1]),)


def _batch_matmul(args, attrs):
    x, y = args
    x = np.swapaxes(x, -1, -2) if attrs.get("adj_x") else x
    y = np.swapaxes(y, -1, -2) if attrs.get("adj_y") else y
    return (np.matmul(x, y),)


def _gemm(args, attrs):
    a, b, *c = args
    a = a.T if attrs.get("trans_a") else a
    b = b.T if attrs.get("trans_b") else b
    product = _scaled(a @ b, attrs["alpha"])
    return (product + _scaled(c[0], attrs["beta"]) if c else product,)


def _scaled(x: np.ndarray, factor: float) -> np.ndarray:
    """`factor * x` in x's dtype (no promotion to float64 for a Python float)."""
    return x if factor == 1.0 else x * x.dtype.type(factor)


KERNELS: dict[str, Kernel] = {
    "matmul": _matmul,
    "batch_matmul": _batch_matmul,
    "gemm": _gemm,
}
