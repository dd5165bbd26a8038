"""Comparison, logic, bitwise, select and float-test lowerings against the reference kernels,
through IREE on the host CPU; few graphs, many ops each (one IREE compile per graph)."""
from __future__ import annotations

import numpy as np

from dfir.core import data_type as dt
from dfir.frontend.ge.graph import Graph
from ge_lowering import assert_lowering_matches


def test_float_comparisons_logic_select_and_tests_match():
    g = Graph("float_logic")
    x = g.data(0, [-1, 4], dt.DT_FLOAT, name="x")
    y = g.data(1, [4], dt.DT_FLOAT, name="y")
    less, greater, equal = g.less(x, y), g.greater(x, y), g.equal(x, y)
    special = g.div(x, g.sub(y, y))  # +-inf and NaN (0 / 0)
    g.set_outputs([equal, less, greater, g.less_equal(x, y), g.greater_equal(x, y),
                   g.logical_and(less, greater), g.logical_or(less, equal), g.logical_xor(less, g.less_equal(x, y)),
                   g.logical_not(less), g.select(less, x, y), g.select(greater, g.const(np.float32(7.0)), x),
                   g.is_nan(special), g.is_inf(special), g.is_inf(special, detect_negative=False),
                   g.is_inf(special, detect_positive=False), g.is_inf(special, False, False)])
    x_values = np.float32([[1.0, -2.0, np.nan, 0.0], [2.5, 2.5, 3.0, -1.0], [0.0, 1.0, -3.0, 2.0]])
    assert_lowering_matches(g, [x_values, np.float32([1.0, 2.5, np.nan, 0.0])])


def test_integer_comparisons_bitwise_and_shifts_match():
    g = Graph("int_logic")
    a = g.data(0, [-1, 4], dt.DT_INT32, name="a")
    b = g.data(1, [4], dt.DT_INT32, name="b")
    p = g.data(2, [-1, 4], dt.DT_UINT8, name="p")
    q = g.data(3, [4], dt.DT_UINT8, name="q")
    f = g.data(4, [4], dt.DT_BOOL, name="f")
    not_f = g.logical_not(f)
    g.set_outputs([g.less(a, b), g.greater_equal(p, q), g.greater(p, q), g.less_equal(a, b),
                   g.equal(f, not_f), g.less(f, not_f), g.greater(f, not_f),
                   g.bitwise_and(a, b), g.bitwise_or(p, q), g.bitwise_xor(a, b), g.bitwise_not(p), g.bitwise_not(a),
                   g.bit_shift(p, q, "left"), g.bit_shift(p, q, "right"), g.bit_shift(a, g.abs(b), "right"),
                   g.bit_shift(a, b, "left"), g.select(f, a, b), g.select(g.less(a, b), p, q)])
    a_values = np.int32([[-2**31, 5, -7, 9], [3, -3, 100, -100], [0, 1, -1, 2**31 - 1]])
    p_values = np.uint8([[255, 1, 128, 7], [0, 3, 200, 9], [17, 255, 0, 1]])
    assert_lowering_matches(g, [a_values, np.int32([3, -3, 0, 40]), p_values, np.uint8([1, 0, 9, 7]),
                                np.array([True, False, True, False])])
