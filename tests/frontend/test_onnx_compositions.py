"""ONNX ops imported as compositions of existing graph ops, against onnxruntime: LayerNormalization
with its Mean and InvStdDev outputs, RMSNormalization (opset 23) and GatherElements."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from dfir.ge.error import GeError
from dfir.ge.graph import Graph

from onnx_models import RNG, model, reference, run_reference, tensor_info, weight

SHAPE = [2, 3, 4]


def layer_norm_model(axis: int, outputs=("Y", "Mean", "InvStdDev"), elem=TensorProto.FLOAT, with_bias: bool = True,
                     **attrs):
    rank = len(SHAPE)
    stats_shape = SHAPE[:axis % rank] + [1] * (rank - axis % rank)
    inputs = ["x", "scale", "bias"] if with_bias else ["x", "scale"]
    node = helper.make_node("LayerNormalization", inputs, list(outputs), axis=axis, **attrs)
    infos = [tensor_info(name, SHAPE if name == "Y" else stats_shape,
                         elem if name == "Y" else TensorProto.FLOAT) for name in outputs if name]
    return model([node], [tensor_info("x", SHAPE, elem)], infos,
                 [weight(name, SHAPE[axis % rank:]) for name in inputs[1:]], opset=17)


def rms_norm_model(axis: int, **attrs):
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], axis=axis, **attrs)
    return model([node], [tensor_info("x", SHAPE)], [tensor_info("y", SHAPE)],
                 [weight("scale", SHAPE[axis % len(SHAPE):])], opset=23)


def assert_matches_onnxruntime(proto, x: np.ndarray, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    expected = reference(proto, {"x": x})
    actual = run_reference(Graph.from_onnx(proto), x)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@settings(max_examples=6, deadline=None)
@given(axis=st.integers(-3, 2), epsilon=st.sampled_from([1e-5, 1e-2, 0.5]))
def test_layer_norm_mean_and_inv_std_dev_match_onnxruntime(axis, epsilon):
    x = RNG.standard_normal(SHAPE).astype(np.float32)
    assert_matches_onnxruntime(layer_norm_model(axis, epsilon=epsilon), x)


@pytest.mark.parametrize("outputs, with_bias", [(("Y", "", "InvStdDev"), True), (("Y", "Mean"), False)])
def test_layer_norm_with_some_statistics_or_no_bias_matches_onnxruntime(outputs, with_bias):
    x = RNG.standard_normal(SHAPE).astype(np.float32)
    assert_matches_onnxruntime(layer_norm_model(1, outputs=outputs, with_bias=with_bias), x)


def test_layer_norm_statistics_of_half_inputs_are_computed_in_the_stash_type():
    x = (RNG.standard_normal(SHAPE) * 3 + 1).astype(np.float16)
    proto = layer_norm_model(-1, elem=TensorProto.FLOAT16)
    proto.graph.initializer[0].CopyFrom(helper.make_tensor("scale", TensorProto.FLOAT16, [4], np.ones(4, np.float16)))
    proto.graph.initializer[1].CopyFrom(helper.make_tensor("bias", TensorProto.FLOAT16, [4], np.zeros(4, np.float16)))
    expected = reference(proto, {"x": x})
    actual = run_reference(Graph.from_onnx(proto), x)
    assert [a.dtype for a in actual] == [np.float16, np.float32, np.float32]
    for got, want in zip(actual, expected):
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


@settings(max_examples=6, deadline=None)
@given(axis=st.integers(-3, 2), epsilon=st.sampled_from([1e-5, 1e-2, 0.5]))
def test_rms_norm_matches_onnxruntime(axis, epsilon):
    x = RNG.standard_normal(SHAPE).astype(np.float32)
    assert_matches_onnxruntime(rms_norm_model(axis, epsilon=epsilon), x)


def test_rms_norm_is_x_over_its_root_mean_square_times_scale():
    x = np.array([[3.0, 4.0], [1.0, 1.0]], np.float32)
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], epsilon=0.0)
    proto = model([node], [tensor_info("x", [2, 2])], [tensor_info("y", [2, 2])],
                  [helper.make_tensor("scale", TensorProto.FLOAT, [2], [1.0, 2.0])], opset=23)
    (y,) = run_reference(Graph.from_onnx(proto), x)
    root_mean_square = np.sqrt([[12.5], [1.0]]).astype(np.float32)
    np.testing.assert_allclose(y, x / root_mean_square * [1.0, 2.0], rtol=1e-6)


@pytest.mark.parametrize("build, message", [
    (lambda: rms_norm_model(3), "RMSNormalization: axis 3 is out of range for rank 3"),
    (lambda: layer_norm_model(-4), "LayerNormalization: axis -4 is out of range for rank 3"),
])
def test_an_axis_out_of_range_is_refused(build, message):
    with pytest.raises(GeError) as caught:
        Graph.from_onnx(build())
    assert str(caught.value) == f"onnx=net; node=#0; {message}"


def test_a_stash_type_dfir_has_no_type_for_is_refused():
    with pytest.raises(GeError) as caught:
        Graph.from_onnx(rms_norm_model(-1, stash_type=TensorProto.STRING))
    assert str(caught.value) == ("onnx=net; node=#0; RMSNormalization: the stash_type has element type STRING, "
                                 "which GE tensors cannot hold")


def gather_elements_model(data_shape, index_shape, axis: int, index_elem=TensorProto.INT64):
    node = helper.make_node("GatherElements", ["x", "indices"], ["y"], axis=axis)
    return model([node], [tensor_info("x", data_shape), tensor_info("indices", index_shape, index_elem)],
                 [tensor_info("y", index_shape)], opset=13)


@settings(max_examples=8, deadline=None)
@given(data_shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_gather_elements_matches_onnxruntime(data_shape, data):
    axis = data.draw(st.integers(-len(data_shape), len(data_shape) - 1))
    index_shape = [data.draw(st.integers(1, extent)) for extent in data_shape]
    index_shape[axis] = data.draw(st.integers(1, 5))
    index_dtype = data.draw(st.sampled_from([np.int64, np.int32]))
    extent = data_shape[axis]
    indices = RNG.integers(-extent, extent, index_shape).astype(index_dtype)
    x = RNG.standard_normal(data_shape).astype(np.float32)
    elem = TensorProto.INT64 if index_dtype == np.int64 else TensorProto.INT32
    proto = gather_elements_model(data_shape, index_shape, axis, elem)
    (want,) = reference(proto, {"x": x, "indices": indices})
    (got,) = run_reference(Graph.from_onnx(proto), x, indices)
    np.testing.assert_array_equal(got, want)


def test_gather_elements_picks_along_the_axis():
    x = np.array([[1, 2], [3, 4]], np.float32)
    indices = np.array([[0, 0], [1, -2]], np.int64)
    (y,) = run_reference(Graph.from_onnx(gather_elements_model([2, 2], [2, 2], 1)), x, indices)
    np.testing.assert_array_equal(y, [[1, 1], [4, 3]])


@pytest.mark.parametrize("data_shape, index_shape, axis, message", [
    (["n", 2], [1, 2], 0, "data and indices shapes must be fixed, got [-1, 2] and [1, 2]"),
    ([2, 2], [1, 2], 2, "axis 2 is out of range for rank 2"),
])
def test_gather_elements_refusals(data_shape, index_shape, axis, message):
    with pytest.raises(GeError) as caught:
        Graph.from_onnx(gather_elements_model(data_shape, index_shape, axis))
    assert str(caught.value) == f"onnx=net; node=#0; GatherElements: {message}"


@pytest.mark.parametrize("bad", [2, -3])
def test_a_gather_elements_index_out_of_range_fails_the_run_instead_of_reading_a_neighbour(bad):
    proto = gather_elements_model([2, 2], [1, 2], 1)
    x = np.array([[1, 2], [3, 4]], np.float32)
    with pytest.raises(AssertionError, match=r"^-?\d+$"):
        run_reference(Graph.from_onnx(proto), x, np.array([[0, bad]], np.int64))
