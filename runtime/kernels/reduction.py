"""Reduction kernels over axes."""
from __future__ import annotations

import numpy as np
from dfir.runtime.kernels.kernel import Kernel


def _reduce_sum(args, attrs):
    (x,) = args
    return (np.sum(x, axis=tuple(attrs["axes"]), keepdims=attrs.get("keep_dims", False), dtype=x.dtype),)


def _reduce_mean(args, attrs):
    (x,) = args
    mean = np.mean(x, axis=tuple(attrs["axes"]), keepdims=attrs.get("keep_dims", False))
    return (np.asarray(mean).astype(x.dtype, copy=False),)


def _reduce_max(args, attrs):
    (x,) = args
    return (np.max(x, axis=tuple(attrs["axes"]), keepdims=attrs.get("keep_dims", False)),)


KERNELS: dict[str, Kernel] = {
    "reduce_sum": _reduce_sum,
    "reduce_mean": _reduce_mean,
    "reduce_max": _reduce_max,
}
