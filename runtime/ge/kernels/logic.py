"""Comparison, logic and bitwise kernels, `select`, and the float tests (`is_nan`, `is_inf`)."""
from __future__ import annotations

import numpy as np

from dfir.runtime.ge.kernels.kernel import Kernel


def _ufunc(function) -> Kernel:
    """The kernel applying a numpy ufunc to the op's operands (broadcasting as numpy does)."""
    return lambda args, attrs: (function(*args),)


def _bit_shift(args, attrs):
    x, shift = args
    # C (and so numpy, on some platforms) leaves shifts outside [0, bit width) undefined: define them.
    too_far = (shift < 0) | (shift >= x.dtype.itemsize * 8)
    safe = np.where(too_far, 0, shift).astype(x.dtype, copy=False)
    if attrs["direction"] == "left":
        return (np.where(too_far, x.dtype.type(0), np.left_shift(x, safe)),)
    overflow = np.where(x < 0, x.dtype.type(-1), x.dtype.type(0)) if x.dtype.kind == "i" else x.dtype.type(0)
    return (np.where(too_far, overflow, np.right_shift(x, safe)),)


def _select(args, attrs):
    condition, x, y = args
    return (np.where(condition, x, y),)


def _is_inf(args, attrs):
    (x,) = args
    positive = np.isposinf(x) if attrs.get("detect_positive") else np.zeros(x.shape, bool)
    negative = np.isneginf(x) if attrs.get("detect_negative") else np.zeros(x.shape, bool)
    return (positive | negative,)


KERNELS: dict[str, Kernel] = {
    "equal": _ufunc(np.equal),
    "less": _ufunc(np.less),
    "greater": _ufunc(np.greater),
    "less_equal": _ufunc(np.less_equal),
    "greater_equal": _ufunc(np.greater_equal),
    "logical_and": _ufunc(np.logical_and),
    "logical_or": _ufunc(np.logical_or),
    "logical_xor": _ufunc(np.logical_xor),
    "logical_not": _ufunc(np.logical_not),
    "bitwise_and": _ufunc(np.bitwise_and),
    "bitwise_or": _ufunc(np.bitwise_or),
    "bitwise_xor": _ufunc(np.bitwise_xor),
    "bitwise_not": _ufunc(np.invert),
    "bit_shift": _bit_shift,
    "select": _select,
    "is_nan": _ufunc(np.isnan),
    "is_inf": _is_inf,
}
