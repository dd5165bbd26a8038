"""Resize kernels: bilinear resizing of NCHW images, ONNX Resize (`resize`) of any axes, and ONNX
GridSample (`grid_sample`).

`resize` is separable: each resized axis in turn is a matrix product with an [out, in] matrix
of interpolation weights, built from the taps and weights each output position reads (edge
taps clamped to the input, as ONNX pads with the edge). "tf_crop_and_resize" positions whose
source lies outside the input become `extrapolation_value`. `grid_sample` sums, over every
combination of one tap per spatial axis, the input gathered at those taps times their weights.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Mapping

import numpy as np
from dfir.runtime.ge.kernels.kernel import Kernel

from dfir.core.errors import GeError
from dfir.core.resize_sizes import resize_plan


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


def _resize(args, attrs):
    x, roi, scales, sizes = _resize_operands(args, attrs["operandSegmentSizes"])
    axes = [a % x.ndim for a in attrs["axes"]]
    in_sizes = [x.shape[a] for a in axes]
    if min(in_sizes, default=1) < 1:
        raise GeError(f"resize: the resized dimensions {axes} of input {list(x.shape)} must not be empty")
    if scales is not None and not np.all(scales > 0):
        raise GeError(f"resize: scales must be > 0, got {scales.tolist()}")
    if sizes is not None and not np.all(sizes >= 0):
        raise GeError(f"resize: sizes must be >= 0, got {sizes.tolist()}")
    out, factors = resize_plan(in_sizes, None if sizes is None else [int(v) for v in sizes],
                               None if scales is None else [float(s) for s in scales],
                               attrs.get("keep_aspect_ratio_policy", "stretch"))
    y = x.astype(np.float64)
    for i, axis in enumerate(axes):
        crop = None if roi is None else (float(roi[i]), float(roi[len(axes) + i]))
        if factors[i] == 1.0 and out[i] == y.shape[axis] and crop in (None, (0.0, 1.0)):
            continue
        weights, outside = _axis_weights(y.shape[axis], out[i], factors[i], crop, attrs)
        y = np.moveaxis(np.tensordot(weights, np.moveaxis(y, axis, 0), axes=1), 0, axis)
        if outside is not None:
            y[(slice(None),) * axis + (outside,)] = attrs.get("extrapolation_value", 0.0)
    return (y.astype(x.dtype),)


def _resize_operands(args, segments) -> list[np.ndarray | None]:
    """input, roi, scales, sizes (None where absent), from the op's operand segment sizes."""
    rest = iter(args[1:])
    return [args[0], *(next(rest).reshape(-1) if count else None for count in segments[1:])]


def _axis_weights(size: int, out: int, scale: float, crop: tuple[float, float] | None,
                  attrs: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray | None]:
    """The [out, size] weights of one axis, and (tf_crop_and_resize) which outputs lie outside."""
    transform = attrs["coordinate_transformation_mode"]
    source = _source_coordinates(np.arange(out, dtype=np.float64), size, out, scale, crop, transform)
    taps, weights = _taps(source, scale, attrs)
    if attrs.get("exclude_outside"):
        weights = np.where((taps >= 0) & (taps < size), weights, 0.0)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    matrix = np.zeros((out, size))
    np.add.at(matrix, (np.arange(out)[:, None], np.clip(taps, 0, size - 1)), weights)
    outside = (source < 0) | (source > size - 1) if transform == "tf_crop_and_resize" else None
    return matrix, outside


def _source_coordinates(p: np.ndarray, size: int, out: int, scale: float, crop: tuple[float, float] | None,
                        transform: str) -> np.ndarray:
    """The input coordinate each output position `p` samples (ONNX's coordinate transforms, which
    use the scaled length `scale * size` rather than the rounded `out`)."""
    length = scale * size
    if transform == "align_corners":
        return np.zeros_like(p) if length == 1 else p * (size - 1) / (length - 1)
    if transform == "asymmetric":
        return p / scale
    if transform == "tf_crop_and_resize":
        start, end = crop
        span = np.full_like(p, (end - start) * (size - 1) / 2) if length == 1 else \
            p * (end - start) * (size - 1) / (length - 1)
        return span + start * (size - 1)
    if transform == "pytorch_half_pixel" and length == 1:
        return np.zeros_like(p)  # as the ONNX spec and onnxruntime (onnx's reference takes -0.5)
    offset = size / 2 * (1 - out / length) if transform == "half_pixel_symmetric" else 0.0
    return offset + (p + 0.5) / scale - 0.5


def _taps(source: np.ndarray, scale: float, attrs: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The input positions each output reads ([out, k], possibly outside the input) and their weights."""
    below = np.floor(source)
    fraction = source - below
    if attrs["mode"] == "nearest":
        up = _ROUNDS_UP[attrs.get("nearest_mode", "round_prefer_floor")](fraction) & (fraction > 0)
        return (below + up).astype(np.intp)[:, None], np.ones((len(source), 1))
    cubic = attrs["mode"] == "cubic"
    stretch = min(scale, 1.0) if attrs.get("antialias") else 1.0
    reach = math.ceil((2 if cubic else 1) / stretch)
    taps = below.astype(np.intp)[:, None] + np.arange(1 - reach, reach + 1)
    distance = np.abs(taps - source[:, None]) * stretch
    weights = _cubic(distance, attrs.get("cubic_coeff_a", -0.75)) if cubic else np.maximum(1 - distance, 0.0)
    if attrs.get("antialias"):
        weights = weights / weights.sum(axis=1, keepdims=True)
    return taps, weights


_ROUNDS_UP = {"round_prefer_floor": lambda f: f > 0.5, "round_prefer_ceil": lambda f: f >= 0.5,
              "floor": lambda f: np.zeros_like(f, dtype=bool), "ceil": lambda f: f > 0}


def _cubic(d: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with coefficient `a` at distances `d` >= 0."""
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def _grid_sample(args, attrs):
    x, grid = args
    spatial = x.shape[2:]
    points = grid.astype(np.float64)[..., ::-1]  # the grid lists x (the last axis) first
    taps = [_grid_taps(points[..., axis], size, attrs) for axis, size in enumerate(spatial)]
    batch = np.arange(x.shape[0]).reshape(-1, *([1] * (grid.ndim - 2)))
    y = np.zeros((x.shape[0], *grid.shape[1:-1], x.shape[1]))
    for combination in itertools.product(*taps):
        weight = np.prod([w for _, w in combination], axis=0)
        y += x[(batch, slice(None), *(i for i, _ in combination))] * weight[..., None]
    return (np.moveaxis(y, -1, 1).astype(x.dtype),)


def _grid_taps(point: np.ndarray, size: int, attrs: Mapping[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Along one axis: the (input index, weight) pairs each sampled point reads, after padding."""
    align = bool(attrs.get("align_corners"))
    low, high = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    source = (point + 1) / 2 * (size - 1) if align else ((point + 1) * size - 1) / 2
    mode, padding = attrs["mode"], attrs["padding_mode"]
    if mode == "nearest":
        source = np.rint(source)  # ties to even, as PyTorch
    outside = (source < low) | (source > high)
    if padding == "border":
        source = np.where(outside, np.clip(source, 0, size - 1), source)
    elif padding == "reflection":
        source = np.where(outside, _reflect(source, low, high), source)
    if mode == "nearest":
        return [_padded_tap(np.trunc(source), np.ones_like(source), size, padding, low, high)]
    below = np.floor(source)
    t = source - below
    if mode == "linear":
        offsets, weights = (0, 1), (1 - t, t)
    else:
        offsets, weights = (-1, 0, 1, 2), _cubic(np.abs(np.stack([t + 1, t, 1 - t, 2 - t])), -0.75)
    return [_padded_tap(below + o, w, size, padding, low, high) for o, w in zip(offsets, weights)]


def _padded_tap(index: np.ndarray, weight: np.ndarray, size: int, padding: str, low: float,
                high: float) -> tuple[np.ndarray, np.ndarray]:
    """An index that may lie outside the input, as an index inside it and its weight: zeros
    padding drops it, border clamps it, reflection mirrors it."""
    if padding == "zeros":
        weight = np.where((index >= 0) & (index < size), weight, 0.0)
    elif padding == "reflection":
        index = np.trunc(_reflect(index, low, high))
    return np.clip(index, 0, size - 1).astype(np.intp), weight


def _reflect(v: np.ndarray, low: float, high: float) -> np.ndarray:
    """`v` reflected at `low` and `high` until it lies between them."""
    span = high - low
    if span <= 0:
        return np.full_like(v, low)
    beyond = np.where(v < low, low - v, v - high)
    flips, rest = np.divmod(beyond, span)
    from_low, from_high = low + rest, high - rest
    even = flips % 2 == 0
    reflected = np.where(v < low, np.where(even, from_low, from_high), np.where(even, from_high, from_low))
    return np.where((v < low) | (v > high), reflected, v)


KERNELS: dict[str, Kernel] = {
    "resize_bilinear": _resize_bilinear,
    "resize": _resize,
    "grid_sample": _grid_sample,
}
