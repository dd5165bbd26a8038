"""Reduction kernels over axes, arg-reductions and top-k.

Over no elements a reduction gives its identity (ONNX): 0 for sums, 1 for a product, the lowest
value for a maximum, the largest for a minimum, -inf for a log of a sum."""
from __future__ import annotations

import numpy as np
from dfir.runtime.ge.kernels.kernel import Kernel

from dfir.core.errors import GeError


def _reduce_sum(args, attrs):
    (x,) = args
    return (np.sum(x, axis=tuple(attrs["axes"]), keepdims=attrs.get("keep_dims", False), dtype=x.dtype),)


def _reduce_mean(args, attrs):
    (x,) = args
    mean = np.mean(x, axis=tuple(attrs["axes"]), keepdims=attrs.get("keep_dims", False))
    return (np.asarray(mean).astype(x.dtype, copy=False),)


def _reduce_max(args, attrs):
    (x,) = args
    return (np.max(x, axis=tuple(attrs["axes"]), keepdims=attrs.get("keep_dims", False), initial=_extreme(x, -1)),)


def _extreme(x: np.ndarray, sign: int):
    """The lowest (sign -1) or largest (sign 1) value of `x`'s dtype."""
    if x.dtype.kind == "f":
        return x.dtype.type(sign * np.inf)
    if x.dtype.kind == "b":
        return sign > 0
    info = np.iinfo(x.dtype)
    return info.max if sign > 0 else info.min


def _over_axes(reduction):
    """A kernel applying `reduction(x, axes, keepdims)`, its result in `x`'s dtype."""
    def kernel(args, attrs):
        (x,) = args
        result = reduction(x, tuple(attrs["axes"]), attrs.get("keep_dims", False))
        return (np.asarray(result).astype(x.dtype, copy=False),)
    return kernel


def _log_sum_exp(x, axes, keepdims):
    peak = np.max(x, axis=axes, keepdims=True, initial=-np.inf)
    peak = np.where(np.isfinite(peak), peak, x.dtype.type(0))
    total = np.log(np.sum(np.exp(x - peak), axis=axes, keepdims=True)) + peak
    return total if keepdims else np.squeeze(total, axis=axes)


def _arg_reduce(pick):
    def kernel(args, attrs):
        (x,) = args
        axis = attrs["axis"] % x.ndim
        if x.shape[axis] == 0:
            raise GeError(f"arg reduction over dimension {axis} of {list(x.shape)}, which is empty")
        if attrs.get("select_last_index", False):
            position = x.shape[axis] - 1 - pick(np.flip(x, axis), axis=axis)
        else:
            position = pick(x, axis=axis)
        position = position.astype(np.int64)
        return (np.expand_dims(position, axis) if attrs.get("keep_dims", False) else position,)
    return kernel


def _top_k(args, attrs):
    """Stable order: equal values keep their positions' order."""
    (x,) = args
    axis, k = attrs["axis"] % x.ndim, attrs["k"]
    if k > x.shape[axis]:
        raise GeError(f"top_k: k {k} exceeds dimension {axis} of {list(x.shape)}")
    if attrs.get("largest", False):
        # Ascending stable order of the flipped axis, reversed: descending values, ties by position.
        flipped = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
        order = x.shape[axis] - 1 - np.flip(flipped, axis)
    else:
        order = np.argsort(x, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis).astype(np.int64)
    return np.take_along_axis(x, indices, axis=axis), indices


def _cumulative(running, identity: int):
    """A running sum or product kernel: `running(x, axis, dtype)` along the axis, from the end with
    `reverse`, shifted one place (`identity` first) with `exclusive`."""
    def kernel(args, attrs):
        (x,) = args
        axis = attrs["axis"] % x.ndim
        reverse = attrs.get("reverse", False)
        y = np.flip(x, axis) if reverse else x
        totals = running(y, axis=axis, dtype=x.dtype)
        if attrs.get("exclusive", False) and x.shape[axis]:
            before = [(0, 0)] * x.ndim
            before[axis] = (1, 0)
            totals = np.pad(np.take(totals, np.arange(x.shape[axis] - 1), axis=axis), before,
                            constant_values=identity)
        return (np.flip(totals, axis) if reverse else totals,)
    return kernel


KERNELS: dict[str, Kernel] = {
    "reduce_sum": _reduce_sum,
    "reduce_mean": _reduce_mean,
    "reduce_max": _reduce_max,
    "reduce_prod": _over_axes(lambda x, axes, keep: np.prod(x, axis=axes, keepdims=keep, dtype=x.dtype)),
    "reduce_min": _over_axes(lambda x, axes, keep: np.min(x, axis=axes, keepdims=keep, initial=_extreme(x, 1))),
    "reduce_l1": _over_axes(lambda x, axes, keep: np.sum(np.abs(x), axis=axes, keepdims=keep, dtype=x.dtype)),
    "reduce_l2": _over_axes(lambda x, axes, keep: np.sqrt(np.sum(np.square(x), axis=axes, keepdims=keep,
                                                                 dtype=x.dtype))),
    "reduce_sum_square": _over_axes(lambda x, axes, keep: np.sum(np.square(x), axis=axes, keepdims=keep,
                                                                 dtype=x.dtype)),
    "reduce_log_sum": _over_axes(lambda x, axes, keep: np.log(np.sum(x, axis=axes, keepdims=keep, dtype=x.dtype))),
    "reduce_log_sum_exp": _over_axes(_log_sum_exp),
    "arg_max": _arg_reduce(np.argmax),
    "arg_min": _arg_reduce(np.argmin),
    "top_k": _top_k,
    "cum_sum": _cumulative(np.cumsum, 0),
    "cum_prod": _cumulative(np.cumprod, 1),
}
