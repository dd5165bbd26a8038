"""Normalization kernels and softmax."""
from __future__ import annotations

import numpy as np
from dfir.runtime.kernels.kernel import Kernel


def _batch_norm(args, attrs):
    x, scale, offset, mean, variance = args
    shape = (1, -1) + (1,) * (x.ndim - 2)
    factor = scale / np.sqrt(variance + variance.dtype.type(attrs["epsilon"]))
    return ((x - mean.reshape(shape)) * factor.reshape(shape) + offset.reshape(shape),)


def _layer_norm(args, attrs):
    x, scale, *bias = args
    axes = tuple(range(attrs["axis"] % x.ndim, x.ndim))
    centered = x - x.mean(axis=axes, keepdims=True)
    variance = np.mean(centered * centered, axis=axes, keepdims=True)
    y = centered / np.sqrt(variance + x.dtype.type(attrs["epsilon"])) * scale
    return (y + bias[0] if bias else y,)


def _softmax(args, attrs):
    (x,) = args
    exps = np.exp(x - x.max(axis=attrs["axis"], keepdims=True))
    return (exps / exps.sum(axis=attrs["axis"], keepdims=True),)


KERNELS: dict[str, Kernel] = {
    "batch_norm": _batch_norm,
    "layer_norm": _layer_norm,
    "softmax": _softmax,
}
