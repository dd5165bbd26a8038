"""Activation kernels with parameters (`alpha`, `beta`...) and the smooth activations
(softplus, softsign, mish, hard_swish), in the input's float type as ONNX defines them."""
from __future__ import annotations

import numpy as np

from dfir.runtime.ge.kernels.kernel import Kernel


def _param(x: np.ndarray, attrs, name: str):
    """A float attribute as a scalar of the input's type (so float16 stays float16)."""
    return x.dtype.type(attrs[name])


def _leaky_relu(args, attrs):
    (x,) = args
    return (np.where(x < 0, x * _param(x, attrs, "alpha"), x),)


def _elu(args, attrs):
    (x,) = args
    return (np.where(x > 0, x, _param(x, attrs, "alpha") * np.expm1(np.minimum(x, 0))),)


def _celu(args, attrs):
    (x,) = args
    alpha = _param(x, attrs, "alpha")
    return (np.maximum(x, 0) + np.minimum(0, alpha * np.expm1(np.minimum(x, 0) / alpha)),)


def _selu(args, attrs):
    (x,) = args
    alpha, gamma = _param(x, attrs, "alpha"), _param(x, attrs, "gamma")
    return (gamma * np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))),)


def _thresholded_relu(args, attrs):
    (x,) = args
    return (np.where(x > _param(x, attrs, "alpha"), x, x.dtype.type(0)),)


def _hard_sigmoid(args, attrs):
    (x,) = args
    return (np.clip(_param(x, attrs, "alpha") * x + _param(x, attrs, "beta"), 0, 1).astype(x.dtype, copy=False),)


def _hard_swish(args, attrs):
    (x,) = args
    return (x * np.clip(x / x.dtype.type(6) + x.dtype.type(0.5), 0, 1).astype(x.dtype, copy=False),)


def _shrink(args, attrs):
    (x,) = args
    bias, lambd = _param(x, attrs, "bias"), _param(x, attrs, "lambd")
    return (np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, x.dtype.type(0))),)


def _softplus(args, attrs):
    (x,) = args
    return (np.logaddexp(x.dtype.type(0), x),)


def _softsign(args, attrs):
    (x,) = args
    return (x / (1 + np.abs(x)),)


def _mish(args, attrs):
    (x,) = args
    return (x * np.tanh(np.logaddexp(x.dtype.type(0), x)),)


def _prelu(args, attrs):
    x, slope = args
    return (np.where(x < 0, x * slope, x),)


KERNELS: dict[str, Kernel] = {
    "leaky_relu": _leaky_relu,
    "elu": _elu,
    "celu": _celu,
    "selu": _selu,
    "thresholded_relu": _thresholded_relu,
    "hard_sigmoid": _hard_sigmoid,
    "hard_swish": _hard_swish,
    "shrink": _shrink,
    "softplus": _softplus,
    "softsign": _softsign,
    "mish": _mish,
    "prelu": _prelu,
}
