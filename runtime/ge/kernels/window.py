"""Sliding-window kernels over N, C and any number of spatial dimensions: convolution and pooling."""
from __future__ import annotations

import functools
import itertools
import math
from typing import Any, Mapping, Sequence

import numpy as np
from dfir.runtime.ge.kernels.kernel import Kernel

from dfir.core.errors import GeError
from dfir.core.shape_arith import Window


def _window_layout(size: int, window: Window, ceil_mode: bool) -> tuple[int, int]:
    """(window count, extra end padding the count needs) along one axis (`Window.count`,
    `Window.overhang`)."""
    if window.padded(size) < window.extent:
        raise GeError(f"an input dimension of {size} (padded {window.padded(size)}) is smaller than the window "
                      f"extent {window.extent}")
    return window.count(size, ceil_mode), window.overhang(size, ceil_mode)


def _windows(x: np.ndarray, attrs: Mapping[str, Any], kernel: Sequence[int], fill: float,
             extra_fill: float | None = None) -> tuple[np.ndarray, list[tuple[slice, ...]]]:
    """`x` (N, C, spatial...) padded with `fill` (and the extra end padding of `ceil_mode` with
    `extra_fill`, by default `fill` too), and per kernel tap (row-major) the slices that pick, for
    every output position at once, the padded element under that tap: `padded[:, :, *slices]`."""
    pads, ceil_mode = attrs["pads"], attrs.get("ceil_mode", False)
    windows = [Window(k, stride, dilation, pads[2 * i], pads[2 * i + 1])
               for i, (k, stride, dilation) in enumerate(zip(kernel, attrs["strides"], attrs["dilations"]))]
    counts, extras = zip(*(_window_layout(size, w, ceil_mode) for size, w in zip(x.shape[2:], windows)))
    padded = np.pad(x, [(0, 0), (0, 0), *((w.pad_begin, w.pad_end) for w in windows)], constant_values=fill)
    if any(extras):
        padded = np.pad(padded, [(0, 0), (0, 0), *((0, e) for e in extras)],
                        constant_values=fill if extra_fill is None else extra_fill)
    taps = [tuple(slice(t * w.dilation, t * w.dilation + (count - 1) * w.stride + 1, w.stride)
                  for t, w, count in zip(tap, windows, counts))
            for tap in itertools.product(*(range(k) for k in kernel))]
    return padded, taps


def _conv2d(args, attrs):
    """im2col: the windows as rows of a matrix per group, then one batched matrix product."""
    x, w, *bias = args
    groups, (m, per_group, *kernel) = attrs["groups"], w.shape
    padded, taps = _windows(x, attrs, kernel, 0)
    columns = np.stack([padded[(..., *tap)] for tap in taps], axis=-1)  # [N, C, *out, K]
    n, out, k = columns.shape[0], columns.shape[2:-1], columns.shape[-1]
    positions = math.prod(out)
    columns = columns.reshape(n, groups, per_group, positions, k).transpose(0, 1, 3, 2, 4)
    columns = columns.reshape(n, groups, positions, per_group * k)
    filters = w.reshape(groups, m // groups, per_group * k).transpose(0, 2, 1)
    y = np.matmul(columns, filters).transpose(0, 1, 3, 2).reshape(n, m, *out)
    if bias:
        y = y + bias[0].reshape(1, m, *[1] * len(out))
    return (y.astype(x.dtype, copy=False),)


def _max_pool(args, attrs):
    (x,) = args
    # A window wholly in padding gives the lowest finite value, as onnxruntime does.
    lowest = (np.finfo if np.issubdtype(x.dtype, np.floating) else np.iinfo)(x.dtype).min
    padded, taps = _windows(x, attrs, attrs["kernel"], lowest)
    return (functools.reduce(np.maximum, (padded[(..., *tap)] for tap in taps)),)


def _avg_pool(args, attrs):
    (x,) = args
    padded, taps = _windows(x, attrs, attrs["kernel"], 0)
    sums = functools.reduce(np.add, (padded[(..., *tap)] for tap in taps))
    # The divisor of each window: its input positions, plus its explicit padding when that counts
    # (never the extra padding of ceil_mode).
    ones = np.ones((1, 1, *x.shape[2:]), x.dtype)
    inside, _ = _windows(ones, attrs, attrs["kernel"], 1 if attrs.get("count_include_pad") else 0, 0)
    counts = functools.reduce(np.add, (inside[(..., *tap)] for tap in taps))
    with np.errstate(invalid="ignore"):  # a dilated window wholly in uncounted padding: 0 / 0, NaN
        return ((sums / counts).astype(x.dtype, copy=False),)


def _global_avg_pool(args, attrs):
    (x,) = args
    return (x.mean(axis=tuple(range(2, x.ndim)), keepdims=True),)


def _conv_transpose(args, attrs):
    """Each filter position adds its product with the input, at stride steps, into the full output
    (a loop over the filter's positions, not over pixels); then `pads` crop or extend it."""
    x, w, *bias = args
    groups, pads, strides, dilations = attrs["groups"], attrs["pads"], attrs["strides"], attrs["dilations"]
    n, channels, *sizes = x.shape
    _, per_group, *kernel = w.shape
    xg = x.reshape(n, groups, channels // groups, *sizes)
    wg = w.reshape(groups, channels // groups, per_group, *kernel)
    full = np.zeros((n, groups, per_group, *(s * (size - 1) + d * (k - 1) + 1 + e for s, size, d, k, e in
                                            zip(strides, sizes, dilations, kernel, attrs["output_padding"]))),
                    x.dtype)
    for tap in itertools.product(*(range(k) for k in kernel)):
        at = tuple(slice(t * d, t * d + s * (size - 1) + 1, s) for t, d, s, size in zip(tap, dilations, strides, sizes))
        full[(..., *at)] += np.einsum("ngc...,gcm->ngm...", xg, wg[(..., *tap)])
    full = full.reshape(n, groups * per_group, *full.shape[3:])
    begins, ends = pads[0::2], pads[1::2]
    full = np.pad(full, [(0, 0), (0, 0), *((max(0, -b), max(0, -e)) for b, e in zip(begins, ends))])
    y = full[(slice(None), slice(None), *(slice(max(0, b), size - max(0, e))
                                          for b, e, size in zip(begins, ends, full.shape[2:])))]
    return (y + bias[0].reshape(1, -1, *[1] * len(sizes)) if bias else y,)


KERNELS: dict[str, Kernel] = {
    "conv2d": _conv2d,
    "conv_transpose": _conv_transpose,
    "max_pool": _max_pool,
    "avg_pool": _avg_pool,
    "global_avg_pool": _global_avg_pool,
}
