"""dfir.core.shape_arith: ONNX slice bounds against Python's and numpy's slicing, window counts
against an enumeration of the windows, and every range rule against the values it bounds."""
from __future__ import annotations

import doctest
import itertools
import operator

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dfir.core import shape_arith
from dfir.core.shape_arith import (SIZE_LIMIT, Window, element_count, product_range, range_add, range_div,
                                   range_max, range_min, range_mul, range_sub, shift_range, slice_bounds,
                                   slice_length, slice_length_range, sum_range)

sizes = st.integers(0, 40)
indices = st.integers(-60, 60) | st.sampled_from([2 ** 63 - 1, -2 ** 63])  # ONNX's "to the end" bounds
steps = st.integers(-5, 5).filter(bool)


def test_the_examples_of_the_module_docstring_hold():
    assert doctest.testmod(shape_arith).failed == 0


# -- slices -----------------------------------------------------------------------------------------

def python_slice(size: int, start: int, end: int, step: int) -> slice:
    """The Python slice that picks what ONNX Slice picks. ONNX clamps a negative step's start to
    [0, size - 1] where Python lets it fall to -1 (nothing): as Python slicing from -size on."""
    return slice(max(start, -size) if step < 0 else start, end, step)


@given(size=sizes, start=indices, end=indices, step=steps)
def test_slice_bounds_pick_what_python_slicing_picks(size, start, end, step):
    picked = list(range(size))[slice_bounds(size, start, end, step)]
    assert picked == list(range(*python_slice(size, start, end, step).indices(size)))
    assert picked == np.arange(size)[python_slice(size, start, end, step)].tolist()
    assert picked == np.arange(size)[slice_bounds(size, start, end, step)].tolist()


@given(size=sizes, start=indices, end=indices, step=steps)
def test_slice_length_counts_what_the_bounds_pick(size, start, end, step):
    assert slice_length(size, start, end, step) == len(range(size)[slice_bounds(size, start, end, step)])


def test_slice_bounds_follow_onnx():
    data = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])  # the examples of ONNX's Slice operator
    assert data[slice_bounds(2, 1, 2, 1), slice_bounds(4, 0, 3, 2)].tolist() == [[5, 7]]
    assert data[slice_bounds(2, 0, -1, 1), slice_bounds(4, 1, 1000, 1)].tolist() == [[2, 3, 4]]
    values = list(range(4))
    assert values[slice_bounds(4, -1, -2 ** 63, -1)] == [3, 2, 1, 0]  # INT64_MIN: through index 0
    assert values[slice_bounds(4, -100, 2, -1)] == []  # the start clamps to 0, below the end
    assert values[slice_bounds(4, -100, -100, -1)] == [0]  # where Python's [-100:-100:-1] is []


@settings(max_examples=300)
@given(lo=st.integers(0, 30), width=st.integers(0, 30), start=indices, end=indices, step=steps)
def test_slice_length_range_is_the_exact_range_over_a_bounded_range(lo, width, start, end, step):
    lengths = [slice_length(size, start, end, step) for size in range(lo, lo + width + 1)]
    assert slice_length_range((lo, lo + width), start, end, step) == (min(lengths), max(lengths))


@settings(max_examples=300)
@given(lo=st.integers(0, 30), start=indices, end=indices, step=steps)
def test_slice_length_range_bounds_an_unbounded_range(lo, start, end, step):
    low, high = slice_length_range((lo, None), start, end, step)
    lengths = [slice_length(size, start, end, step) for size in range(lo, lo + 200)]
    assert low == min(lengths)
    if high is None:  # no upper bound: the length keeps growing with the size
        assert slice_length(SIZE_LIMIT, start, end, step) > max(lengths)
    else:  # the length is constant past the last breakpoint (all below 200 here)
        assert high == max(lengths) >= slice_length(SIZE_LIMIT, start, end, step)


# -- windows ----------------------------------------------------------------------------------------

@st.composite
def windows(draw):
    kernel, dilation = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    extent = dilation * (kernel - 1) + 1
    pads = st.integers(0, extent - 1)  # as pooling requires; convolution has no ceil_mode
    return Window(kernel, draw(st.integers(1, 4)), dilation, draw(pads), draw(pads))


def enumerated_windows(window: Window, size: int, ceil_mode: bool) -> list[int]:
    """The start of every window, one stride at a time: the windows inside the padded axis, and
    with `ceil_mode` the one that overlaps its end, when it starts inside the input or its begin
    padding."""
    span = window.padded(size) - window.extent  # the last start inside the padded axis
    starts = []
    for start in itertools.count(0, window.stride):
        if start <= span or (ceil_mode and start < span + window.stride and start < size + window.pad_begin):
            starts.append(start)
        else:
            return starts


@given(window=windows(), size=st.integers(0, 40), ceil_mode=st.booleans())
def test_window_count_is_the_number_of_windows_that_fit(window, size, ceil_mode):
    if window.padded(size) < window.extent:
        return
    starts = enumerated_windows(window, size, ceil_mode)
    assert window.count(size, ceil_mode) == len(starts)
    assert window.overhang(size, ceil_mode) == max(0, starts[-1] + window.extent - window.padded(size))
    if not ceil_mode:
        assert window.overhang(size, ceil_mode) == 0


def test_window_count_follows_the_pooling_formula():
    # PyTorch's MaxPool2d: floor((size + pads - dilation * (kernel - 1) - 1) / stride + 1).
    assert Window(3, 2, 1, 1, 1).count(224, ceil_mode=False) == 112
    assert Window(2, 2, 1, 0, 0).count(5, ceil_mode=False) == 2
    assert Window(2, 2, 1, 0, 0).count(5, ceil_mode=True) == 3
    assert Window(2, 2, 1, 0, 0).overhang(5, ceil_mode=True) == 1
    assert Window(3, 1, 2, 0, 0).extent == 5


@given(window=windows(), lo=st.integers(0, 30), width=st.integers(0, 30) | st.none(), ceil_mode=st.booleans())
def test_window_count_range_covers_the_sizes_one_window_fits(window, lo, width, ceil_mode):
    hi = None if width is None else lo + width
    fitting = [s for s in range(lo, lo + 31 if hi is None else hi + 1) if window.padded(s) >= window.extent]
    counts = window.count_range((lo, hi), ceil_mode)
    if not fitting:
        assert counts is None or hi is None
        return
    assert counts[0] == window.count(fitting[0], ceil_mode)
    assert counts[1] == (None if hi is None else window.count(fitting[-1], ceil_mode))


# -- ranges -----------------------------------------------------------------------------------------

bounded = st.tuples(st.integers(-6, 6), st.integers(0, 6)).map(lambda t: (t[0], t[0] + t[1]))
sizes_range = st.tuples(st.integers(0, 6), st.integers(0, 6)).map(lambda t: (t[0], t[0] + t[1]))


def values(bounds):
    lo, hi = bounds
    return range(lo, hi + 1)


def exact(combine, a, b):
    results = [combine(x, y) for x, y in itertools.product(values(a), values(b))]
    return min(results), max(results)


@given(a=bounded, b=bounded)
def test_range_rules_give_the_exact_range_of_bounded_operands(a, b):
    assert range_add(a, b) == exact(operator.add, a, b)
    assert range_sub(a, b) == exact(operator.sub, a, b)
    assert range_mul(a, b) == exact(operator.mul, a, b)
    assert range_max(a, b) == exact(max, a, b)
    assert range_min(a, b) == exact(min, a, b)


@given(a=sizes_range, divisor=st.integers(1, 5))
def test_range_div_truncates_a_non_negative_range_by_a_fixed_divisor(a, divisor):
    assert range_div(a, (divisor, divisor)) == exact(lambda x, y: int(x / y), a, (divisor, divisor))
    assert range_div(a, (divisor, divisor + 1)) is None  # the divisor must be fixed
    assert range_div((-1, a[1]), (divisor, divisor)) is None  # and the dividend non-negative


def test_range_rules_with_unbounded_operands():
    assert range_add((1, None), (2, 3)) == (3, None)
    assert range_sub((5, 9), (1, None)) is None and range_sub((5, None), (1, 2)) == (3, None)
    assert range_mul((2, None), (3, 4)) == (6, None) and range_mul((-1, 2), (0, None)) is None
    assert range_div((7, None), (2, 2)) == (3, None)
    assert range_max((1, None), (4, 5)) == (4, None)
    assert range_min((1, None), (4, 5)) == (1, 5) and range_min((1, None), (0, None)) == (0, None)


@given(ranges=st.lists(sizes_range, max_size=3), delta=st.integers(-8, 8))
def test_sums_products_and_shifts_of_size_ranges(ranges, delta):
    combos = list(itertools.product(*(values(r) for r in ranges)))
    assert sum_range(ranges) == (min(map(sum, combos)), max(map(sum, combos)))
    assert product_range(ranges) == (min(map(element_count, combos)), max(map(element_count, combos)))
    for r in ranges:
        shifted = [max(0, s + delta) for s in values(r)]
        assert shift_range(r, delta) == (min(shifted), max(shifted))
    assert product_range([(2, 3), (0, None)]) == (0, None) and sum_range([(2, 3), (1, None)]) == (3, None)
    assert element_count([]) == 1 and element_count((2, 3, 4)) == 24
