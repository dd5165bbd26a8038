"""Reduction and normalization lowerings against the reference kernels, through IREE on the host CPU."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dfir.core import data_type as dt
from dfir.frontend.ge.graph import Graph
from ge_lowering import assert_lowering_matches, converted


def _values(rng, shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-3, 3, shape).astype(dtype)
    low = 0 if np.dtype(dtype).kind == "u" else -50
    return rng.integers(low, 50, shape).astype(dtype)


@pytest.mark.parametrize("kind", ["reduce_sum", "reduce_mean", "reduce_max"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_reductions_over_negative_axes_keep_dims(kind, dtype):
    g = Graph(kind)
    x = g.data(0, [-1, 3, 4], dt.from_numpy(np.dtype(dtype)), name="x")
    g.set_outputs([getattr(g, kind)(x, [-1, 0], keep_dims=True), getattr(g, kind)(x, [1])])
    assert_lowering_matches(g, [_values(np.random.default_rng(1), (5, 3, 4), dtype)])


@given(axes=st.sets(st.integers(-3, 2), max_size=3), keep=st.booleans(), rows=st.integers(1, 4))
@settings(max_examples=4, deadline=None)
@example(axes={0, 1, 2}, keep=True, rows=1)
def test_reduce_mean_of_any_axes(axes, keep, rows):
    g = Graph("mean")
    x = g.data(0, [-1, 2, 3], dt.DT_FLOAT, name="x")
    g.set_outputs([g.reduce_mean(x, sorted({a % 3 for a in axes}), keep_dims=keep)])
    assert_lowering_matches(g, [_values(np.random.default_rng(rows), (rows, 2, 3), np.float32)])


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int64])
def test_mean_and_sum_accumulate_as_numpy(dtype):
    g = Graph("acc")
    x = g.data(0, [-1, 6], dt.from_numpy(np.dtype(dtype)), name="x")
    g.set_outputs([g.reduce_mean(x, [0, 1]), g.reduce_sum(x, [1], keep_dims=True)])
    rtol = 1e-3 if dtype == np.float16 else 1e-6
    assert_lowering_matches(g, [_values(np.random.default_rng(6), (4, 6), dtype)], rtol=rtol, atol=rtol)


def test_reduce_max_propagates_nan():
    g = Graph("max")
    x = g.data(0, [2, 3], dt.DT_FLOAT, name="x")
    g.set_outputs([g.reduce_max(x, [1])])
    assert_lowering_matches(g, [np.array([[1, np.nan, 3], [-np.inf, -5, -7]], np.float32)])


def test_boolean_reduction_has_no_lowering():
    g = Graph("any")
    x = g.data(0, [2, 3], dt.DT_BOOL, name="x")
    g.set_outputs([g.reduce_max(x, [1])])
    (graph,) = converted(g, backend="auto").ops
    assert graph.backend.data == "reference"
    reason = "ge.reduce_max 'reduce_max_0': boolean reductions have no lowering"
    assert graph.attributes["backend_fallback"].data == reason


def test_global_avg_pool():
    g = Graph("gap")
    x = g.data(0, [-1, 3, 4, 5], dt.DT_FLOAT, name="x")
    g.set_outputs([g.global_avg_pool(x)])
    assert_lowering_matches(g, [_values(np.random.default_rng(2), (2, 3, 4, 5), np.float32)])


@pytest.mark.parametrize("axis", [-1, 1, 0])
def test_softmax(axis):
    g = Graph("softmax")
    x = g.data(0, [-1, 4, 5], dt.DT_FLOAT, name="x")
    g.set_outputs([g.softmax(x, axis)])
    values = _values(np.random.default_rng(3), (2, 4, 5), np.float32)
    values[0, 0, 0] = 80.0
    assert_lowering_matches(g, [values])


@pytest.mark.parametrize("axis,with_bias", [(-1, True), (1, False), (-2, True)])
def test_layer_norm(axis, with_bias):
    g = Graph("ln")
    x = g.data(0, [-1, 4, 6], dt.DT_FLOAT, name="x")
    rng = np.random.default_rng(4)
    scale = g.const(_values(rng, (6,), np.float32))
    bias = g.const(_values(rng, (4, 6) if axis != -1 else (6,), np.float32)) if with_bias else None
    g.set_outputs([g.layer_norm(x, scale, bias, axis=axis, epsilon=1e-3)])
    assert_lowering_matches(g, [_values(rng, (3, 4, 6), np.float32)], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 3, 4, 4), (5, 3)])
def test_batch_norm(shape):
    g = Graph("bn")
    x = g.data(0, [-1, *shape[1:]], dt.DT_FLOAT, name="x")
    rng = np.random.default_rng(5)
    scale, offset, mean = (g.const(_values(rng, (3,), np.float32)) for _ in range(3))
    variance = g.const(rng.uniform(0.5, 2, (3,)).astype(np.float32))
    g.set_outputs([g.batch_norm(x, scale, offset, mean, variance, epsilon=1e-3)])
    assert_lowering_matches(g, [_values(rng, shape, np.float32)])


# --- the other reductions, arg-reductions, top-k and the normalizations -----------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_more_reductions_in_one_graph(dtype):
    g = Graph("reductions")
    x = g.data(0, [-1, 3, 4], dt.from_numpy(np.dtype(dtype)), name="x")
    outputs = [g.reduce_prod(x, [1]), g.reduce_min(x, [0, 2], keep_dims=True), g.reduce_l1(x, [-1]),
               g.reduce_l2(x, [1, 2]), g.reduce_sum_square(x, [0]), g.reduce_min(x, [])]
    if dtype == np.float32:
        outputs += [g.reduce_log_sum(g.exp(x), [1]), g.reduce_log_sum_exp(x, [1, 2], keep_dims=True)]
    g.set_outputs(outputs)
    values = _values(np.random.default_rng(7), (2, 3, 4), dtype)
    if dtype == np.uint8:
        values[0, 0] = [200, 255, 128, 3]  # above the signed range: the unsigned compares matter
    elif dtype == np.int32:
        values = values % 7 - 3  # products stay in range
    assert_lowering_matches(g, [values], rtol=1e-4, atol=1e-5)


def test_log_sum_exp_of_minus_infinity_rows():
    g = Graph("lse")
    x = g.data(0, [2, 3], dt.DT_FLOAT, name="x")
    g.set_outputs([g.reduce_log_sum_exp(x, [1])])
    assert_lowering_matches(g, [np.array([[-np.inf] * 3, [80.0, 80.0, 1.0]], np.float32)])


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_arg_reductions_pick_the_first_or_last_extreme(dtype):
    g = Graph("arg")
    x = g.data(0, [-1, 5], dt.from_numpy(np.dtype(dtype)), name="x")
    g.set_outputs([g.arg_max(x, 1), g.arg_max(x, -1, keep_dims=False, select_last_index=True),
                   g.arg_min(x, 0, keep_dims=False), g.arg_min(x, 1, select_last_index=True)])
    values = np.array([[3, 1, 3, 0, 1], [2, 2, 0, 0, 2], [250, 1, 250, 1, 0]]).astype(dtype)
    assert_lowering_matches(g, [values])


def test_arg_max_finds_the_first_nan():
    g = Graph("nan")
    x = g.data(0, [2, 4], dt.DT_FLOAT, name="x")
    g.set_outputs([g.arg_max(x, 1), g.arg_min(x, 1, select_last_index=True)])
    assert_lowering_matches(g, [np.array([[1, np.nan, 5, np.nan], [1, 5, 5, 0]], np.float32)])


def test_top_k_stays_on_the_reference_backend():
    g = Graph("topk")
    x = g.data(0, [2, 3], dt.DT_FLOAT, name="x")
    g.set_outputs(g.top_k(x, 2))
    (graph,) = converted(g, backend="auto").ops
    assert graph.backend.data == "reference"
    reason = "ge.top_k 'top_k_0': top-k sorts, and upstream linalg has no sort"
    assert graph.attributes["backend_fallback"].data == reason


def test_log_softmax_instance_norm_and_lrn():
    g = Graph("norms")
    x = g.data(0, [-1, 3, 4, 5], dt.DT_FLOAT, name="x")
    rng = np.random.default_rng(8)
    scale, bias = (g.const(_values(rng, (3,), np.float32)) for _ in range(2))
    g.set_outputs([g.log_softmax(x, 1), g.log_softmax(x, -1), g.instance_norm(x, scale, bias, epsilon=1e-3),
                   g.lrn(x, 3, alpha=0.1, beta=0.7, bias=2.0), g.lrn(x, 2)])
    values = _values(rng, (2, 3, 4, 5), np.float32)
    values[0, 0, 0, 0] = 80.0
    assert_lowering_matches(g, [values], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["cum_sum", "cum_prod"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_running_sums_and_products_every_direction(kind, dtype):
    g = Graph(kind)
    x = g.data(0, [-1, 5], dt.from_numpy(np.dtype(dtype)), name="x")
    running = getattr(g, kind)
    g.set_outputs([running(x, 1), running(x, -1, exclusive=True), running(x, 0, reverse=True),
                   running(x, 1, exclusive=True, reverse=True)])
    rng = np.random.default_rng(9)
    values = _values(rng, (3, 5), dtype) if kind == "cum_sum" else rng.integers(1, 4, (3, 5)).astype(dtype)
    assert_lowering_matches(g, [values], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_scatter_elements_every_reduction(reduction, dtype):
    g = Graph("scatter")
    x = g.data(0, [-1, 5], dt.from_numpy(np.dtype(dtype)), name="x")
    i = g.data(1, [-1, 3], dt.DT_INT64, name="i")
    u = g.data(2, [-1, 3], dt.from_numpy(np.dtype(dtype)), name="u")
    g.set_outputs([g.scatter_elements(x, i, u, 1, reduction), g.scatter_elements(x, i, u, -1, reduction)])
    rng = np.random.default_rng(11)
    indices = np.array([[0, -1, 2], [4, 4, -5], [1, 3, 3]], np.int64)  # repeated targets in rows 2 and 3
    assert_lowering_matches(g, [_values(rng, (4, 5), dtype), indices, _values(rng, (3, 3), dtype)],
                            rtol=1e-5, atol=1e-5)


def test_scatter_elements_of_booleans_along_the_first_axis():
    g = Graph("scatter")
    x = g.data(0, [3, 2], dt.DT_BOOL, name="x")
    i = g.data(1, [1, 2], dt.DT_INT32, name="i")
    g.set_outputs([g.scatter_elements(x, i, g.logical_not(g.slice(x, [0], [1])), 0)])
    assert_lowering_matches(g, [np.array([[True, False], [False, False], [True, True]]), np.array([[2, -3]], np.int32)])
