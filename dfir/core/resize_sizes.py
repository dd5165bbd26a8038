"""The output sizes and scale factors of an ONNX-style resize (`ge.resize`), from the input sizes
of the resized axes and either their target sizes or their scale factors.

The `ge` dialect's shape function and the reference kernel both use `resize_plan`, so the rule is
written once. Pure Python: no xDSL, no numpy.

    >>> resize_plan([4, 6], scales=[0.6, 2.0])
    ([2, 12], [0.6, 2.0])
    >>> resize_plan([4, 6], sizes=[8, 8], policy="not_larger")
    ([5, 8], [1.3333333333333333, 1.3333333333333333])
"""
from __future__ import annotations

import math
from typing import Sequence

__all__ = ["ASPECT_POLICIES", "resize_plan"]

ASPECT_POLICIES = ("stretch", "not_larger", "not_smaller")
"""ONNX Resize's `keep_aspect_ratio_policy` values."""


def resize_plan(in_sizes: Sequence[int], sizes: Sequence[int] | None = None, scales: Sequence[float] | None = None,
                policy: str = "stretch") -> tuple[list[int], list[float]]:
    """The output size and the coordinate scale of each resized axis.

    With `scales`, an axis of size n becomes floor(n * scale) and keeps its scale. With `sizes`,
    "stretch" scales each axis by size / n; "not_larger" and "not_smaller" scale every axis by the
    smallest (largest) of those ratios and round n * scale half up (ONNX's rule). `scales` wins
    when both are given: the sizes are then only the output sizes."""
    if scales is not None:
        out = [math.floor(n * s) for n, s in zip(in_sizes, scales)] if sizes is None else list(sizes)
        return out, [float(s) for s in scales]
    if sizes is None:
        raise ValueError("resize_plan needs sizes or scales")
    ratios = [size / n for size, n in zip(sizes, in_sizes)]
    if policy == "stretch":
        return list(sizes), ratios
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    return [math.floor(n * scale + 0.5) for n in in_sizes], [scale] * len(in_sizes)
