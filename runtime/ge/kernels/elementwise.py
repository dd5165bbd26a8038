"""Elementwise kernels: arithmetic, math functions, activations and casts."""
from __future__ import annotations

import numpy as np
from dfir.runtime.ge.kernels.kernel import Kernel

from dfir.core import data_type as dt


def _add(args, attrs):
    return (np.add(args[0], args[1]),)


def _sub(args, attrs):
    return (np.subtract(args[0], args[1]),)


def _mul(args, attrs):
    return (np.multiply(args[0], args[1]),)


def _relu(args, attrs):
    (x,) = args
    return (np.maximum(x, x.dtype.type(0)),)


def _identity(args, attrs):
    return (args[0],)


def _div(args, attrs):
    x, y = args
    if np.result_type(x, y).kind in "iu":
        return (_truncated_quotient(x, y),)
    return (np.divide(x, y),)


def _truncated_quotient(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Integer quotient rounded toward zero (GE and ONNX); numpy's `//` rounds down."""
    quotient = np.floor_divide(x, y)
    inexact = (quotient * y != x) & ((x < 0) != (y < 0))
    return quotient + inexact.astype(quotient.dtype)


def _pow(args, attrs):
    return (np.power(args[0], args[1]),)


def _maximum(args, attrs):
    return (np.maximum(args[0], args[1]),)


def _minimum(args, attrs):
    return (np.minimum(args[0], args[1]),)


def _sqrt(args, attrs):
    return (np.sqrt(args[0]),)


def _exp(args, attrs):
    return (np.exp(args[0]),)


def _log(args, attrs):
    return (np.log(args[0]),)


def _tanh(args, attrs):
    return (np.tanh(args[0]),)


def _sigmoid(args, attrs):
    (x,) = args
    # exp(-log(1 + exp(-x))): no overflow for large |x|, unlike 1 / (1 + exp(-x)).
    return (np.exp(-np.logaddexp(x.dtype.type(0), -x)),)


def _erf(args, attrs):
    (x,) = args
    return (_erf_float64(x).astype(x.dtype, copy=False),)


def _erf_float64(x: np.ndarray) -> np.ndarray:
    """The error function in float64, to about the input type's precision.

    Uses erf(z) = 2/sqrt(pi) * exp(-z^2) * sum_n z (2 z^2)^n / (1 * 3 * ... * (2n + 1)) on
    z = |x|: every term is positive, so nothing cancels; past |x| = 6, erf is 1 in float64. The
    loop runs over terms (a few dozen at most), each step on the whole array.
    """
    z = np.minimum(np.abs(np.asarray(x, dtype=np.float64)), 6.0)
    tolerance = np.finfo(x.dtype).eps * 1e-2 if x.dtype.kind == "f" else 1e-17
    term, total, growth = z.copy(), z.copy(), 2.0 * z * z
    n = 0
    while np.any(term > tolerance * total):
        n += 1
        term *= growth / (2 * n + 1)
        total += term
    return np.sign(x) * (2.0 / np.sqrt(np.pi)) * np.exp(-z * z) * total


def _gelu(args, attrs):
    (x,) = args
    if attrs.get("approximate", "none") == "tanh":
        inner = np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)
        return ((0.5 * x * (1.0 + np.tanh(inner))).astype(x.dtype, copy=False),)
    return ((0.5 * x * (1.0 + _erf_float64(x / np.sqrt(2.0)))).astype(x.dtype, copy=False),)


def _mod(args, attrs):
    x, y = args
    with np.errstate(divide="ignore", invalid="ignore"):
        if attrs.get("fmod"):
            return (np.fmod(x, y),)
        return (np.mod(x, y),)


def _math(function) -> Kernel:
    """The kernel applying a numpy ufunc of one operand."""
    return lambda args, attrs: (function(args[0]),)


def _cast(args, attrs):
    return (args[0].astype(dt.to_numpy(dt.from_name(attrs["to"]))),)


def _bitcast(args, attrs):
    """The same bytes viewed as the target type (the verifier checked the widths)."""
    return (args[0].view(dt.to_numpy(dt.from_name(attrs["to"]))),)


KERNELS: dict[str, Kernel] = {
    "add": _add,
    "sub": _sub,
    "mul": _mul,
    "relu": _relu,
    "identity": _identity,
    "div": _div,
    "pow": _pow,
    "maximum": _maximum,
    "minimum": _minimum,
    "sqrt": _sqrt,
    "exp": _exp,
    "log": _log,
    "tanh": _tanh,
    "sigmoid": _sigmoid,
    "erf": _erf,
    "gelu": _gelu,
    "cast": _cast,
    "bitcast": _bitcast,
    "mod": _mod,
    "neg": _math(np.negative),
    "abs": _math(np.abs),
    "sign": _math(np.sign),
    "reciprocal": _math(np.reciprocal),
    "floor": _math(np.floor),
    "ceil": _math(np.ceil),
    "round": _math(np.round),
    "sin": _math(np.sin),
    "cos": _math(np.cos),
    "tan": _math(np.tan),
    "asin": _math(np.arcsin),
    "acos": _math(np.arccos),
    "atan": _math(np.arctan),
    "sinh": _math(np.sinh),
    "cosh": _math(np.cosh),
    "asinh": _math(np.arcsinh),
    "acosh": _math(np.arccosh),
    "atanh": _math(np.arctanh),
}
