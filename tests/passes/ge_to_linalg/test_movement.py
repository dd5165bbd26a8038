"""Data movement lowerings against the reference kernels, through IREE on the host CPU."""
from __future__ import annotations

import numpy as np
import pytest

from dfir.core import data_type as dt
from dfir.frontend.ge.graph import Graph
from ge_lowering import assert_lowering_matches, codegen_text, converted, lowered_outputs


def _unary(build, shape, dtype=dt.DT_FLOAT) -> Graph:
    g = Graph("movement")
    x = g.data(0, list(shape), dtype, name="x")
    outputs = build(g, x)
    g.set_outputs(outputs if isinstance(outputs, list) else [outputs])
    return g


def _arange(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)


@pytest.mark.parametrize("declared,shape,target", [
    ([-1, 3, 4], (2, 3, 4), [0, -1]),
    ([-1, 3, 4], (2, 3, 4), [-1, 2, 6]),
    ([-1, 8, 1, 1], (3, 8, 1, 1), [0, -1]),
    ([-1, 6], (2, 6), [-1]),
    ([-1, 4], (3, 4), [-1, 3, 2]),
    ([-1], (8,), [-1, 4]),
    ([2, 3, 4], (2, 3, 4), [4, 6]),
    ([1, 1], (1, 1), []),
    ([-1, -1, 4], (2, 3, 4), [0, -1, 2]),
    ([-1, -1], (4, 3), [2, 0, -1]),
])
def test_reshape_copies_and_infers_dims(declared, shape, target):
    assert_lowering_matches(_unary(lambda g, x: g.reshape(x, target), declared), [_arange(shape)])


@pytest.mark.parametrize("build", [lambda g, x: g.reshape(x, [0, -1]), lambda g, x: g.flatten(x, -1),
                                   lambda g, x: g.flatten(x, 1)])
def test_regrouping_reshape_is_one_collapse(build):
    text = codegen_text(converted(_unary(build, [-1, 3, 4])))
    assert text.count("tensor.collapse_shape") == 1 and "tensor.expand_shape" not in text


@pytest.mark.parametrize("axis", [0, 1, 2, -1, 3])
def test_flatten(axis):
    assert_lowering_matches(_unary(lambda g, x: g.flatten(x, axis), [-1, 3, 4]), [_arange((2, 3, 4))])


def test_unsqueeze_of_a_scalar():
    assert_lowering_matches(_unary(lambda g, x: g.unsqueeze(x, [0, 1]), []), [np.array(2.5, np.float32)])


def test_squeeze_of_a_dynamic_dim():
    assert_lowering_matches(_unary(lambda g, x: g.squeeze(x, [0]), [-1, 4]), [_arange((1, 4))])


def test_squeeze_and_unsqueeze():
    g = _unary(lambda g, x: [g.squeeze(x, [1, -1]), g.unsqueeze(x, [0, -1])], [-1, 1, 4, 1])
    assert_lowering_matches(g, [_arange((3, 1, 4, 1))])


@pytest.mark.parametrize("perm", [[0, 2, 1], [2, 0, 1]])
def test_transpose(perm):
    assert_lowering_matches(_unary(lambda g, x: g.transpose(x, perm), [-1, 3, 4]), [_arange((2, 3, 4))])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis):
    g = Graph("concat")
    a = g.data(0, [-1, 3], dt.DT_INT32, name="a")
    b = g.data(1, [-1, 3], dt.DT_INT32, name="b")
    g.set_outputs([g.concat([a, b, a], axis)])
    assert_lowering_matches(g, [_arange((2, 3), np.int32), _arange((2, 3), np.int32) + 100])


def test_concat_of_dynamic_and_static_operands():
    g = Graph("concat")
    a = g.data(0, [-1, 3], dt.DT_FLOAT, name="a")
    b = g.data(1, [2, 3], dt.DT_FLOAT, name="b")
    g.set_outputs([g.concat([a, b], 1)])
    assert_lowering_matches(g, [_arange((2, 3)), _arange((2, 3)) + 10])


@pytest.mark.parametrize("sizes,axis", [([1, -1], 1), ([2, 1, 2], -1), ([1, -1], 0)])
def test_split(sizes, axis):
    g = _unary(lambda g, x: g.split(x, sizes, axis), [-1, 5])
    assert_lowering_matches(g, [_arange((3, 5))])


@pytest.mark.parametrize("declared", [[6, 7], [-1, 7]])
@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([1], [-1], [0], [1]),
    ([-100, 2], [100, 6], [0, 1], [2, 3]),
    ([-1], [-100], [0], [-1]),
    ([5, 0], [1, 7], [0, -1], [-2, 2]),
    ([4], [2], [0], [1]),
])
def test_slice_clamps_like_onnx(declared, starts, ends, axes, steps):
    g = _unary(lambda g, x: g.slice(x, starts, ends, axes, steps), declared)
    assert_lowering_matches(g, [_arange((6, 7))])


@pytest.mark.parametrize("axis,indices", [(0, [[0, -1], [2, 1]]), (1, [3, -4, 0]), (-1, 2)])
def test_gather_wraps_negative_indices(axis, indices):
    g = Graph("gather")
    x = g.data(0, [-1, 4], dt.DT_FLOAT, name="x")
    i = g.data(1, list(np.shape(indices)), dt.DT_INT64, name="i")
    g.set_outputs([g.gather(x, i, axis)])
    assert_lowering_matches(g, [_arange((3, 4)), np.array(indices, np.int64)])


def test_gather_with_dynamic_indices():
    g = Graph("gather")
    table = g.const(_arange((5, 3)))
    i = g.data(0, [-1], dt.DT_INT32, name="i")
    g.set_outputs([g.gather(table, i, 0)])
    assert_lowering_matches(g, [np.array([4, 0, -2, 1], np.int32)])


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("pads", [[1, 2, 0, 3], [0, -1, 2, 1], [4, 5, 4, 5]])
def test_pad(mode, pads):
    g = _unary(lambda g, x: g.pad(x, pads, mode, 1.5), [-1, 4])
    assert_lowering_matches(g, [_arange((3, 4))])


def test_constant_pad_of_integers():
    g = _unary(lambda g, x: g.pad(x, [1, 0, 0, 2], "constant", 7.0), [2, 3], dt.DT_INT32)
    assert_lowering_matches(g, [_arange((2, 3), np.int32)])


def test_shape_of_dynamic_and_static_input():
    g = _unary(lambda g, x: [g.shape(x), g.shape(g.reshape(x, [0, -1]))], [-1, 3, 4])
    assert_lowering_matches(g, [_arange((5, 3, 4))])


def test_gather_clamps_indices_out_of_range():
    g = Graph("gather")
    x = g.data(0, [3], dt.DT_FLOAT, name="x")
    i = g.data(1, [4], dt.DT_INT64, name="i")
    g.set_outputs([g.gather(x, i, 0)])
    (got,) = lowered_outputs(g, [np.array([10, 20, 30], np.float32), np.array([5, -7, -1, 3], np.int64)])
    np.testing.assert_array_equal(got, [30, 10, 30, 30])


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_expand_and_tile(dtype):
    g = Graph("expand_tile")
    x = g.data(0, [-1, 1, 3], dt.from_numpy(np.dtype(dtype)), name="x")
    g.set_outputs([g.expand(x, [2, 1, 4, 1]), g.expand(x, [3]), g.tile(x, [2, 3, 1]), g.tile(x, [1, 1, 0])])
    assert_lowering_matches(g, [np.arange(6).reshape(2, 1, 3).astype(dtype)])


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_trilu(dtype):
    g = Graph("trilu")
    x = g.data(0, [-1, 3, 5], dt.from_numpy(np.dtype(dtype)), name="x")
    g.set_outputs([g.trilu(x), g.trilu(x, -1, upper=False), g.trilu(x, 2), g.trilu(x, 7, upper=False)])
    values = (np.arange(30).reshape(2, 3, 5) + 1).astype(dtype)
    if dtype == np.float32:
        values[0, 2, 0] = np.inf  # cut out: 0, not inf * 0
    assert_lowering_matches(g, [values])
