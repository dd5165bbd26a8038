"""Normalization kernels and softmax."""
from __future__ import annotations

import numpy as np
from dfir.runtime.ge.kernels.kernel import Kernel


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


def _log_softmax(args, attrs):
    (x,) = args
    shifted = x - x.max(axis=attrs["axis"], keepdims=True)
    return (shifted - np.log(np.exp(shifted).sum(axis=attrs["axis"], keepdims=True)),)


def _instance_norm(args, attrs):
    x, scale, bias = args
    axes = tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    centered = x - x.mean(axis=axes, keepdims=True)
    variance = np.mean(centered * centered, axis=axes, keepdims=True)
    normalized = centered / np.sqrt(variance + x.dtype.type(attrs["epsilon"]))
    return (normalized * scale.reshape(shape) + bias.reshape(shape),)


def _lrn(args, attrs):
    """The window over channels c - (size - 1) // 2 .. c + size // 2 (clipped), as a sum of
    `size` shifted slices of the zero-padded squares."""
    (x,) = args
    size, channels = attrs["size"], x.shape[1]
    widths = [(0, 0), ((size - 1) // 2, size // 2)] + [(0, 0)] * (x.ndim - 2)
    squares = np.pad(np.square(x), widths)
    window = sum(squares[:, i:i + channels] for i in range(size))
    scale = x.dtype.type(attrs["bias"]) + x.dtype.type(attrs["alpha"] / size) * window
    return ((x / scale ** x.dtype.type(attrs["beta"])).astype(x.dtype, copy=False),)


KERNELS: dict[str, Kernel] = {
    "batch_norm": _batch_norm,
    "layer_norm": _layer_norm,
    "softmax": _softmax,
    "log_softmax": _log_softmax,
    "instance_norm": _instance_norm,
    "lrn": _lrn,
}
