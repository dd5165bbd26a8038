"""Reference numpy kernels, one small function per GE op (`GeGraphRunner` in ge_runner.py runs them).

A kernel is `kernel(args, attrs) -> tuple of output arrays`: `args` are the op's input arrays in
order, `attrs` the op's plan attributes. `KERNELS` maps a plan op name to its kernel; `const` has
none because the runner binds weights once, when it is built. Kernels never write to their
arguments, so outputs may share memory with inputs or weights.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np


__all__ = ["KERNELS", "Kernel"]

Kernel = Callable[[Sequence[np.ndarray], Mapping[str, Any]], tuple[np.ndarray, ...]]


def _add(args, attrs):
    return (np.add(args[0], args[1]),)


def _sub(args, attrs):
    return (np.subtract(args[0], args[1]),)


def _mul(args, attrs):
    return (np.multiply(args[0], args[1]),)


def _relu(args, attrs):
    (x,) = args
    return (np.maximum(x, x.dtype.type(0)),)


def _matmul(args, attrs):
    return (np.matmul(args[0], args[1]),)


def _reshape(args, attrs):
    (x,) = args
    shape = [x.shape[i] if size == 0 else size for i, size in enumerate(attrs["shape"])]
    return (x.reshape(shape),)


KERNELS: dict[str, Kernel] = {
    "add": _add, "sub": _sub, "mul": _mul, "relu": _relu, "matmul": _matmul, "reshape": _reshape,
}
