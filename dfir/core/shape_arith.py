"""Integer shape arithmetic: ONNX slice bounds, sliding-window output sizes, element counts, and
interval arithmetic over ranges of sizes or values.

The `ge` dialect's shape functions (`dfir.dialects.ge_shapes`) compute with ranges and the numpy
reference kernels (`dfir.runtime.ge.kernels`) with concrete sizes; both use these functions, so each
rule is written once. Pure Python ints: no xDSL, no numpy.

A range is a `Bounds` pair `(lo, hi)`: every integer from `lo` to `hi` inclusive, `hi` None for
no upper bound. `DimRange` is a NamedTuple of these two fields, so it is a `Bounds` as it is:

    >>> range_mul((2, 3), (4, None))
    (8, None)
    >>> slice_length(10, 1, -1, 2), slice_length_range((1, 10), 1, -1, 1)
    (4, (0, 8))
    >>> Window(kernel=3, stride=2, dilation=1, pad_begin=1, pad_end=1).count(32, ceil_mode=False)
    16
"""
from __future__ import annotations

import math
from typing import Iterable, NamedTuple, Sequence

__all__ = ["Bounds", "SIZE_LIMIT", "Window", "element_count", "product_range", "range_add", "range_div",
           "range_max", "range_min", "range_mul", "range_sub", "shift_range", "slice_bounds", "slice_length",
           "slice_length_range", "sum_range"]

Bounds = tuple[int, int | None]
"""`(lo, hi)`: the integers from `lo` to `hi` inclusive; `hi` None means no upper bound."""

SIZE_LIMIT = 2 ** 48
"""Larger than any dimension a tensor can have (in elements)."""


def element_count(sizes: Iterable[int]) -> int:
    """How many elements a tensor of these dimensions holds (1 for a scalar)."""
    return math.prod(sizes)


# Ranges -----------------------------------------------------------------------------------------

def product_range(ranges: Sequence[Bounds]) -> Bounds:
    """The range of the product of non-negative ranges (a tensor's element count)."""
    his = [hi for _, hi in ranges]
    return math.prod(lo for lo, _ in ranges), None if None in his else math.prod(his)


def sum_range(ranges: Sequence[Bounds]) -> Bounds:
    his = [hi for _, hi in ranges]
    return sum(lo for lo, _ in ranges), None if None in his else sum(his)


def shift_range(sizes: Bounds, delta: int) -> Bounds:
    """The range of `size + delta` over sizes in `sizes`, clipped at 0."""
    lo, hi = sizes
    return max(0, lo + delta), None if hi is None else max(0, hi + delta)


def range_add(a: Bounds, b: Bounds) -> Bounds:
    return a[0] + b[0], None if a[1] is None or b[1] is None else a[1] + b[1]


def range_sub(a: Bounds, b: Bounds) -> Bounds | None:
    """`a - b`; None (unknown) when `b` has no upper bound."""
    if b[1] is None:
        return None
    return a[0] - b[1], None if a[1] is None else a[1] - b[0]


def range_mul(a: Bounds, b: Bounds) -> Bounds | None:
    """`a * b`; None (unknown) when a negative bound meets an unbounded range."""
    (a_lo, a_hi), (b_lo, b_hi) = a, b
    if a_lo >= 0 and b_lo >= 0:
        return a_lo * b_lo, None if a_hi is None or b_hi is None else a_hi * b_hi
    if a_hi is None or b_hi is None:
        return None
    corners = [x * y for x in (a_lo, a_hi) for y in (b_lo, b_hi)]
    return min(corners), max(corners)


def range_div(a: Bounds, b: Bounds) -> Bounds | None:
    """Integer division (truncating, as GE) of a non-negative range by a fixed positive divisor;
    None (unknown) for any other operands."""
    (a_lo, a_hi), (b_lo, b_hi) = a, b
    if not (b_lo == b_hi and b_lo > 0 and a_lo >= 0):
        return None
    return a_lo // b_lo, None if a_hi is None else a_hi // b_lo


def range_max(a: Bounds, b: Bounds) -> Bounds:
    return max(a[0], b[0]), None if a[1] is None or b[1] is None else max(a[1], b[1])


def range_min(a: Bounds, b: Bounds) -> Bounds:
    his = [hi for hi in (a[1], b[1]) if hi is not None]
    return min(a[0], b[0]), min(his) if his else None


# Slices -----------------------------------------------------------------------------------------

def slice_bounds(size: int, start: int, end: int, step: int) -> slice:
    """ONNX Slice along an axis of `size` elements as a Python slice.

    Negative `start` / `end` count from the end; then both clamp to [0, size] for a positive
    step, and to [0, size - 1] (start) and [-1, size - 1] (end, -1 meaning "through index 0",
    which a Python slice spells None) for a negative one. (Python's own clamping differs: it
    lets a negative step's start fall to -1.)
    """
    start = start + size if start < 0 else start
    end = end + size if end < 0 else end
    if step > 0:
        return slice(min(max(start, 0), size), min(max(end, 0), size), step)
    end = min(max(end, -1), size - 1)
    return slice(min(max(start, 0), size - 1), None if end < 0 else end, step)


def slice_length(size: int, start: int, end: int, step: int) -> int:
    """How many elements ONNX Slice keeps from an axis of `size` elements."""
    if size == 0:
        return 0
    bounds = slice_bounds(size, start, end, step)
    stop = -1 if bounds.stop is None else bounds.stop
    return max(0, -(-(stop - bounds.start) // step))


def slice_length_range(sizes: Bounds, start: int, end: int, step: int) -> Bounds:
    """The range of `slice_length` over the sizes in `sizes`.

    The clamped bounds are linear in the size between breakpoints (where a clamp switches or the
    bounds cross: sizes +-start +-end), so the length is monotone between them and its extremes
    lie at the ends of `sizes` or next to a breakpoint. Past the last breakpoint the length is
    constant or grows without bound, which two probes there tell apart. Breakpoints past
    `SIZE_LIMIT` (from ONNX's INT64_MAX "to the end" bounds) are sizes no tensor has.
    """
    lo, hi = sizes
    corners = {a for a in (start, end, start - end, end - start, start + end, -start, -end, -start - end)
               if 0 <= a < SIZE_LIMIT}
    probes = {lo} | {c + k for c in corners for k in (-1, 0, 1)}
    last = max(probes) + 1
    if hi is None:
        probes.add(last)
    else:
        probes = {p for p in probes if p <= hi} | {hi}
    lengths = [slice_length(p, start, end, step) for p in probes if p >= lo]
    unbounded = hi is None and slice_length(last + abs(step), start, end, step) > slice_length(last, start, end, step)
    return min(lengths), None if unbounded else max(lengths)


# Sliding windows (convolution and pooling) ------------------------------------------------------

class Window(NamedTuple):
    """One spatial axis of a sliding window: kernel size, stride, dilation, padding."""

    kernel: int
    stride: int
    dilation: int
    pad_begin: int
    pad_end: int

    @property
    def extent(self) -> int:
        """How many input positions one window spans."""
        return self.dilation * (self.kernel - 1) + 1

    def padded(self, size: int) -> int:
        """The length of an axis of `size` elements with its padding."""
        return size + self.pad_begin + self.pad_end

    def count(self, size: int, ceil_mode: bool) -> int:
        """How many windows fit an axis of `size` elements (its padded length at least `extent`)."""
        span = self.padded(size) - self.extent
        if not ceil_mode:
            return span // self.stride + 1
        count = -(-span // self.stride) + 1
        # As ONNX and PyTorch: the last window must start inside the input or its begin padding.
        return count - 1 if (count - 1) * self.stride >= size + self.pad_begin else count

    def overhang(self, size: int, ceil_mode: bool) -> int:
        """How far the last window reaches past the padded axis: the extra end padding that
        `ceil_mode`'s rounding up needs (0 without it)."""
        last_start = (self.count(size, ceil_mode) - 1) * self.stride
        return max(0, last_start + self.extent - self.padded(size))

    def count_range(self, sizes: Bounds, ceil_mode: bool) -> Bounds | None:
        """The range of `count` over the sizes in `sizes` that one window fits (the count grows
        with the size); None when it fits none of them."""
        lo, hi = sizes
        smallest = max(lo, self.extent - self.pad_begin - self.pad_end)
        if hi is not None and hi < smallest:
            return None
        return self.count(smallest, ceil_mode), None if hi is None else self.count(hi, ceil_mode)
