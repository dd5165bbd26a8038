"""Sliding-window kernels over NCHW: convolution and pooling."""
from __future__ import annotations

import functools
from typing import Any, Mapping, Sequence

import numpy as np
from dfir.runtime.kernels.kernel import Kernel

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
             extra_fill: float | None = None) -> tuple[np.ndarray, list[tuple[slice, slice]]]:
    """NCHW `x` padded with `fill` (and the extra end padding of `ceil_mode` with `extra_fill`,
    by default `fill` too), and per kernel tap (row-major) the slices that pick, for every output
    position at once, the padded element under that tap: `padded[:, :, rows, columns]`."""
    top, bottom, left, right = attrs["pads"]
    (sh, sw), (dh, dw) = attrs["strides"], attrs["dilations"]
    ceil_mode = attrs.get("ceil_mode", False)
    oh, extra_h = _window_layout(x.shape[2], Window(kernel[0], sh, dh, top, bottom), ceil_mode)
    ow, extra_w = _window_layout(x.shape[3], Window(kernel[1], sw, dw, left, right), ceil_mode)
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    if extra_h or extra_w:
        padded = np.pad(padded, ((0, 0), (0, 0), (0, extra_h), (0, extra_w)),
                        constant_values=fill if extra_fill is None else extra_fill)
    taps = [(slice(i * dh, i * dh + (oh - 1) * sh + 1, sh), slice(j * dw, j * dw + (ow - 1) * sw + 1, sw))
            for i in range(kernel[0]) for j in range(kernel[1])]
    return padded, taps


def _conv2d(args, attrs):
    """im2col: the windows as rows of a matrix per group, then one batched matrix product."""
    x, w, *bias = args
    groups, (m, per_group, kh, kw) = attrs["groups"], w.shape
    padded, taps = _windows(x, attrs, (kh, kw), 0)
    columns = np.stack([padded[:, :, rows, cols] for rows, cols in taps], axis=-1)  # [N, C, OH, OW, K]
    n, _, oh, ow, k = columns.shape
    columns = columns.reshape(n, groups, per_group, oh * ow, k).transpose(0, 1, 3, 2, 4)
    columns = columns.reshape(n, groups, oh * ow, per_group * k)
    filters = w.reshape(groups, m // groups, per_group * k).transpose(0, 2, 1)
    y = np.matmul(columns, filters).transpose(0, 1, 3, 2).reshape(n, m, oh, ow)
    if bias:
        y = y + bias[0].reshape(1, m, 1, 1)
    return (y.astype(x.dtype, copy=False),)


def _max_pool(args, attrs):
    (x,) = args
    # A window wholly in padding gives the lowest finite value, as onnxruntime does.
    padded, taps = _windows(x, attrs, attrs["kernel"], np.finfo(x.dtype).min)
    return (functools.reduce(np.maximum, (padded[:, :, rows, cols] for rows, cols in taps)),)


def _avg_pool(args, attrs):
    (x,) = args
    padded, taps = _windows(x, attrs, attrs["kernel"], 0)
    sums = functools.reduce(np.add, (padded[:, :, rows, cols] for rows, cols in taps))
    # The divisor of each window: its input positions, plus its explicit padding when that counts
    # (never the extra padding of ceil_mode).
    ones = np.ones((1, 1, *x.shape[2:]), x.dtype)
    inside, _ = _windows(ones, attrs, attrs["kernel"], 1 if attrs.get("count_include_pad") else 0, 0)
    counts = functools.reduce(np.add, (inside[:, :, rows, cols] for rows, cols in taps))
    with np.errstate(invalid="ignore"):  # a dilated window wholly in uncounted padding: 0 / 0, NaN
        return ((sums / counts).astype(x.dtype, copy=False),)


def _global_avg_pool(args, attrs):
    (x,) = args
    return (x.mean(axis=tuple(range(2, x.ndim)), keepdims=True),)


def _conv_transpose(args, attrs):
    """Each filter position adds its product with the input, at stride steps, into the full output
    (a loop over the kH * kW positions, not over pixels); then `pads` crop or extend it."""
    x, w, *bias = args
    groups, (top, bottom, left, right) = attrs["groups"], attrs["pads"]
    (sh, sw), (dh, dw), (eh, ew) = attrs["strides"], attrs["dilations"], attrs["output_padding"]
    n, channels, h, width = x.shape
    _, per_group, kh, kw = w.shape
    xg = x.reshape(n, groups, channels // groups, h, width)
    wg = w.reshape(groups, channels // groups, per_group, kh, kw)
    full = np.zeros((n, groups, per_group, sh * (h - 1) + dh * (kh - 1) + 1 + eh,
                     sw * (width - 1) + dw * (kw - 1) + 1 + ew), x.dtype)
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (h - 1) + 1, sh)
            cols = slice(j * dw, j * dw + sw * (width - 1) + 1, sw)
            full[..., rows, cols] += np.einsum("ngchw,gcm->ngmhw", xg, wg[..., i, j])
    full = full.reshape(n, groups * per_group, *full.shape[3:])
    full = np.pad(full, [(0, 0), (0, 0), (max(0, -top), max(0, -bottom)), (max(0, -left), max(0, -right))])
    y = full[:, :, max(0, top):full.shape[2] - max(0, bottom), max(0, left):full.shape[3] - max(0, right)]
    return (y + bias[0].reshape(1, -1, 1, 1) if bias else y,)


KERNELS: dict[str, Kernel] = {
    "conv2d": _conv2d,
    "conv_transpose": _conv_transpose,
    "max_pool": _max_pool,
    "avg_pool": _avg_pool,
    "global_avg_pool": _global_avg_pool,
}
