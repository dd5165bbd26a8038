"""Resize kernels: bilinear resizing of NCHW images."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from dfir.runtime.kernels.kernel import Kernel

from dfir.core.errors import GeError


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
    "resize_bilinear": _resize_bilinear,
}
