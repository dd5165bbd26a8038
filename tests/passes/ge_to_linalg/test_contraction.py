"""Matrix product lowerings (batch_matmul, gemm) against the reference kernels, through IREE."""
from __future__ import annotations

import numpy as np
import pytest

from dfir.core import data_type as dt
from dfir.frontend.ge.graph import Graph
from ge_lowering import assert_lowering_matches


@pytest.mark.parametrize("adj_x,adj_y", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_matmul_transposes_and_broadcasts_batch_dims(adj_x, adj_y):
    g = Graph("bmm")
    x = g.data(0, [-1, 3, 4] if not adj_x else [-1, 4, 3], dt.DT_FLOAT, name="x")
    y = g.data(1, [1, 4, 5] if not adj_y else [1, 5, 4], dt.DT_FLOAT, name="y")
    g.set_outputs([g.batch_matmul(x, y, adj_x=adj_x, adj_y=adj_y)])
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((2, 4, 3) if adj_x else (2, 3, 4)).astype(np.float32)
    ys = rng.standard_normal((1, 5, 4) if adj_y else (1, 4, 5)).astype(np.float32)
    assert_lowering_matches(g, [xs, ys])


def test_batch_matmul_of_integers_with_dynamic_rows():
    g = Graph("ibmm")
    x = g.data(0, [2, -1, 3], dt.DT_INT32, name="x")
    y = g.data(1, [2, 3, 2], dt.DT_INT32, name="y")
    g.set_outputs([g.batch_matmul(x, y, adj_y=False)])
    rng = np.random.default_rng(2)
    assert_lowering_matches(g, [rng.integers(-9, 9, (2, 5, 3)).astype(np.int32),
                                rng.integers(-9, 9, (2, 3, 2)).astype(np.int32)])


@pytest.mark.parametrize("c_shape", [None, (), (6,), (1, 6), (-1, 1), (-1, 6)])
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, True)])
def test_gemm_scales_and_adds_broadcast_c(c_shape, trans_a, trans_b):
    g = Graph("gemm")
    a = g.data(0, [4, -1] if trans_a else [-1, 4], dt.DT_FLOAT, name="a")
    b = g.data(1, [6, 4] if trans_b else [4, 6], dt.DT_FLOAT, name="b")
    rng = np.random.default_rng(3)
    rows = 3
    inputs = [rng.standard_normal((4, rows) if trans_a else (rows, 4)).astype(np.float32),
              rng.standard_normal((6, 4) if trans_b else (4, 6)).astype(np.float32)]
    c = None
    if c_shape is not None:
        c = g.data(2, list(c_shape), dt.DT_FLOAT, name="c")
        inputs.append(rng.standard_normal([rows if s == -1 else s for s in c_shape]).astype(np.float32))
    g.set_outputs([g.gemm(a, b, c, alpha=0.5, beta=-2.0, trans_a=trans_a, trans_b=trans_b)])
    assert_lowering_matches(g, inputs)


def test_integer_gemm_truncates_alpha_and_beta():
    g = Graph("igemm")
    a = g.data(0, [2, 3], dt.DT_INT32, name="a")
    b = g.data(1, [3, 2], dt.DT_INT32, name="b")
    c = g.data(2, [2], dt.DT_INT32, name="c")
    g.set_outputs([g.gemm(a, b, c, alpha=2.7, beta=-1.5)])
    rng = np.random.default_rng(4)
    assert_lowering_matches(g, [rng.integers(-9, 9, (2, 3)).astype(np.int32),
                                rng.integers(-9, 9, (3, 2)).astype(np.int32), np.array([5, -7], np.int32)])
