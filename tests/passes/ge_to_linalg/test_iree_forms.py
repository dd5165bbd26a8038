"""The forms of IREE's own ONNX importer that the lowering emits (depthwise convolution, 2-D
poolings, batched product, concat): each one is in the text IREE compiles, and computes what
the reference kernels do."""
from __future__ import annotations

import numpy as np
import pytest

from dfir.core import data_type as dt
from dfir.frontend.ge.graph import Graph
from ge_lowering import assert_lowering_matches, codegen_text, converted


def _image(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _ops(g: Graph) -> str:
    return codegen_text(converted(g))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_depthwise_conv2d_is_the_named_depthwise_op(dtype, bias):
    g = Graph("depthwise")
    element = dt.from_numpy(np.dtype(dtype))
    x = g.data(0, [-1, 6, 9, 8], element, name="x")
    w = g.data(1, [6, 1, 3, 2], element, name="w")
    b = g.data(2, [6], element, name="b") if bias else None
    g.set_outputs([g.conv2d(x, w, b, strides=(2, 1), pads=(1, 2, 0, 1), dilations=(1, 2), groups=6)])
    text = _ops(g)
    assert '"linalg.depthwise_conv_2d_nchw_chw"' in text and "conv_2d_ngchw" not in text
    inputs = [_image((2, 6, 9, 8), 0, dtype), _image((6, 1, 3, 2), 1, dtype)] + ([_image((6,), 2, dtype)] if bias else [])
    assert_lowering_matches(g, inputs, rtol=1e-5, atol=1e-5)


def test_a_channel_multiplier_stays_a_grouped_convolution():
    g = Graph("multiplier")
    x = g.data(0, [1, 3, 6, 6], dt.DT_FLOAT, name="x")
    g.set_outputs([g.conv2d(x, g.const(_image((6, 1, 3, 3), 1)), groups=3)])
    text = _ops(g)
    assert '"linalg.conv_2d_ngchw_gfchw"' in text and "depthwise" not in text
    assert_lowering_matches(g, [_image((1, 3, 6, 6))], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pads", [[0, 0, 0, 0], [1, 0, 1, 1]])
def test_2d_poolings_are_the_named_pooling_ops(pads):
    g = Graph("pools")
    x = g.data(0, [-1, 3, 8, 7], dt.DT_FLOAT, name="x")
    g.set_outputs([g.max_pool(x, [3, 2], strides=[2, 2], pads=pads),
                   g.avg_pool(x, [2, 3], strides=[2, 1], pads=pads, dilations=[2, 1])])
    text = _ops(g)
    assert '"linalg.pooling_nchw_max"' in text and '"linalg.pooling_nchw_sum"' in text
    assert ("linalg.index" in text) == any(pads)  # without padding each window divides by its size
    assert_lowering_matches(g, [_image((2, 3, 8, 7))], rtol=1e-5, atol=1e-6)


def test_integer_max_pool_stays_a_generic():
    g = Graph("ipool")
    x = g.data(0, [1, 2, 4, 4], dt.DT_UINT8, name="x")
    g.set_outputs([g.max_pool(x, [2, 2], strides=[2, 2])])
    assert "pooling_nchw_max" not in _ops(g)
    assert_lowering_matches(g, [np.arange(32, dtype=np.uint8).reshape(1, 2, 4, 4) * 7])


def test_batch_matmul_of_equal_static_batches_is_the_named_op():
    g = Graph("bmm")
    a = g.data(0, [3, 4, 8], dt.DT_FLOAT, name="a")
    b = g.data(1, [3, 8, 5], dt.DT_FLOAT, name="b")
    g.set_outputs([g.batch_matmul(a, b)])
    assert '"linalg.batch_matmul"' in _ops(g)
    assert_lowering_matches(g, [_image((3, 4, 8)), _image((3, 8, 5), 1)], rtol=1e-5, atol=1e-5)


def test_concat_is_tensor_concat():
    g = Graph("concat")
    a = g.data(0, [-1, 2, 3], dt.DT_FLOAT, name="a")
    b = g.data(1, [-1, 4, 3], dt.DT_FLOAT, name="b")
    g.set_outputs([g.concat([a, b, a], 1)])
    text = _ops(g)
    assert '"tensor.concat"' in text and "insert_slice" not in text
    assert_lowering_matches(g, [_image((2, 2, 3)), _image((2, 4, 3), 1)])
