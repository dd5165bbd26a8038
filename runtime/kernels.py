"""Reference numpy kernels, one small function per GE op (`GeGraphRunner` in ge_runner.py runs them).

A kernel is `kernel(args, attrs) -> tuple of output arrays`: `args` are the op's input arrays in
order, `attrs` the op's plan attributes. `KERNELS` maps a plan op name to its kernel; `const` has
none because the runner binds weights once, when it is built. Kernels never write to their
arguments, so outputs may share memory with inputs or weights. They are vectorized (no Python
loop over elements or pixels); run-time data a kernel cannot take (an index out of range, a
window larger than its padded input) is a GeError saying which.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.core.shape_arith import Window, element_count, slice_bounds

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


def _batch_matmul(args, attrs):
    x, y = args
    x = np.swapaxes(x, -1, -2) if attrs.get("adj_x") else x
    y = np.swapaxes(y, -1, -2) if attrs.get("adj_y") else y
    return (np.matmul(x, y),)


def _gemm(args, attrs):
    a, b, *c = args
    a = a.T if attrs.get("trans_a") else a
    b = b.T if attrs.get("trans_b") else b
    product = _scaled(a @ b, attrs["alpha"])
    return (product + _scaled(c[0], attrs["beta"]) if c else product,)


def _scaled(x: np.ndarray, factor: float) -> np.ndarray:
    """`factor * x` in x's dtype (no promotion to float64 for a Python float)."""
    return x if factor == 1.0 else x * x.dtype.type(factor)


# --- sliding windows: convolution and pooling over NCHW ------------------------------------------

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


# --- normalization ------------------------------------------------------------------------------

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


# --- data movement ------------------------------------------------------------------------------

def _transpose(args, attrs):
    return (np.transpose(args[0], attrs["perm"]),)


def _concat(args, attrs):
    return (np.concatenate(args, axis=attrs["axis"]),)


def _split(args, attrs):
    (x,) = args
    axis, sizes = attrs["axis"] % x.ndim, list(attrs["sizes"])
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[axis] - sum(s for s in sizes if s != -1)
    if min(sizes) < 0 or sum(sizes) != x.shape[axis]:
        raise GeError(f"split: sizes {attrs['sizes']} do not cut dimension {axis} of {list(x.shape)}")
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


def _slice(args, attrs):
    (x,) = args
    index = [slice(None)] * x.ndim
    for axis, start, end, step in zip(attrs["axes"], attrs["starts"], attrs["ends"], attrs["steps"]):
        index[axis % x.ndim] = slice_bounds(x.shape[axis % x.ndim], start, end, step)
    return (x[tuple(index)],)


def _gather(args, attrs):
    x, indices = args
    axis = attrs["axis"] % x.ndim
    size = x.shape[axis]
    outside = (indices < -size) | (indices >= size)
    if outside.any():
        raise GeError(f"gather: index {indices[outside].flat[0]} is out of range for dimension {axis} "
                      f"of {list(x.shape)}")
    return (np.take(x, indices, axis=axis),)


def _squeeze(args, attrs):
    (x,) = args
    axes = tuple(a % x.ndim for a in attrs["axes"])
    for a in axes:
        if x.shape[a] != 1:
            raise GeError(f"squeeze: dimension {a} of {list(x.shape)} is {x.shape[a]}, not 1")
    return (np.squeeze(x, axis=axes),)


def _unsqueeze(args, attrs):
    return (np.expand_dims(args[0], tuple(attrs["axes"])),)


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "edge"}


def _pad(args, attrs):
    (x,) = args
    begins, ends = attrs["pads"][:x.ndim], attrs["pads"][x.ndim:]
    cropped = x[tuple(slice(max(0, -b), size - max(0, -e)) for b, e, size in zip(begins, ends, x.shape))]
    widths = [(max(0, b), max(0, e)) for b, e in zip(begins, ends)]
    mode = _PAD_MODES[attrs["mode"]]
    if mode == "constant":
        return (np.pad(cropped, widths, constant_values=x.dtype.type(attrs["value"])),)
    return (np.pad(cropped, widths, mode=mode),)


def _flatten(args, attrs):
    (x,) = args
    axis = attrs["axis"] + x.ndim if attrs["axis"] < 0 else attrs["axis"]
    return (x.reshape(element_count(x.shape[:axis]), element_count(x.shape[axis:])),)


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


def _cast(args, attrs):
    return (args[0].astype(dt.to_numpy(dt.from_name(attrs["to"]))),)


def _shape(args, attrs):
    return (np.array(args[0].shape, dtype=np.int64),)


# --- resize -------------------------------------------------------------------------------------

def _resize_bilinear(args, attrs):
    x, *size = args
    height, width = (int(v) for v in size[0]) if size else attrs["size"]
    if height < 1 or width < 1:
        raise GeError(f"resize_bilinear: output size must be >= 1, got [{height}, {width}]")
    top, bottom, row_weight = _source_positions(x.shape[2], height, attrs)
    left, right, column_weight = _source_positions(x.shape[3], width, attrs)
    row_weight, column_weight = row_weight[:, None], column_weight
    rows = x[:, :, top, :] * (1 - row_weight) + x[:, :, bottom, :] * row_weight
    y = rows[..., left] * (1 - column_weight) + rows[..., right] * column_weight
    return (y.astype(x.dtype, copy=False),)


def _source_positions(size: int, out: int, attrs: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each output position along one axis: the input positions below and above the point it
    samples, and the weight of the one above."""
    position = np.arange(out, dtype=np.float64)
    if attrs.get("align_corners"):
        source = position * ((size - 1) / (out - 1)) if out > 1 else np.zeros(out)
    elif attrs.get("half_pixel_centers"):
        source = (position + 0.5) * (size / out) - 0.5
    else:
        source = position * (size / out)
    source = np.clip(source, 0, size - 1)
    below = np.floor(source).astype(np.intp)
    return below, np.minimum(below + 1, size - 1), source - below


KERNELS: dict[str, Kernel] = {
    "add": _add, "sub": _sub, "mul": _mul, "relu": _relu, "matmul": _matmul, "reshape": _reshape,
    "identity": _identity, "div": _div, "pow": _pow, "maximum": _maximum, "minimum": _minimum,
    "sqrt": _sqrt, "exp": _exp, "log": _log, "tanh": _tanh, "sigmoid": _sigmoid, "erf": _erf,
    "gelu": _gelu, "batch_matmul": _batch_matmul, "gemm": _gemm, "conv2d": _conv2d,
    "max_pool": _max_pool, "avg_pool": _avg_pool, "global_avg_pool": _global_avg_pool,
    "batch_norm": _batch_norm, "layer_norm": _layer_norm, "softmax": _softmax,
    "transpose": _transpose, "concat": _concat, "split": _split, "slice": _slice, "gather": _gather,
    "squeeze": _squeeze, "unsqueeze": _unsqueeze, "pad": _pad, "flatten": _flatten,
    "reduce_sum": _reduce_sum, "reduce_mean": _reduce_mean, "reduce_max": _reduce_max,
    "cast": _cast, "shape": _shape, "resize_bilinear": _resize_bilinear,
}
