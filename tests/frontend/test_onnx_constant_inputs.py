"""Model inputs fixed at import (`Graph.from_onnx(..., constant_inputs=...)`): an input that
determines a shape (ReduceSum's axes, Reshape's shape) becomes a weight of the given value, the
model imports and matches onnxruntime fed the same value; a refusal for such an input says how
to fix it; a name the model lacks, or a value of another type or shape, is refused."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from dfir.ge.error import GeError
from dfir.ge.graph import Graph

from onnx_models import RNG, model, reference, run_reference, ints, tensor_info

SHAPE = [2, 3, 4]


def reduce_sum_model(keepdims: int = 1, out_rank: int = 3):
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="sum", keepdims=keepdims)
    return model([node], [tensor_info("x", SHAPE), tensor_info("axes", [None], TensorProto.INT64)],
                 [tensor_info("y", [None] * out_rank)], opset=18)


def reshape_model():
    """Reshape to twice the given shape's last entries: the shape is computed from the input 'half'."""
    nodes = [helper.make_node("Mul", ["half", "two"], ["shape"]),
             helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")]
    return model(nodes, [tensor_info("x", [4, 6]), tensor_info("half", [2], TensorProto.INT64)],
                 [tensor_info("y", [None, None])], [ints("two", [1, 2])], opset=18)


@settings(max_examples=8, deadline=None)
@given(axes=st.lists(st.integers(-3, 2), min_size=1, max_size=2, unique_by=lambda a: a % 3), keepdims=st.integers(0, 1))
def test_fixed_axes_match_onnxruntime_fed_the_same_axes(axes, keepdims):
    proto = reduce_sum_model(keepdims, 3 if keepdims else 3 - len(axes))
    x = RNG.standard_normal(SHAPE).astype(np.float32)
    fixed = np.array(axes, np.int64)
    (want,) = reference(proto, {"x": x, "axes": fixed})
    graph = Graph.from_onnx(proto, constant_inputs={"axes": fixed})
    (got,) = run_reference(graph, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_fixed_input_is_no_longer_an_input_and_the_callers_model_is_unchanged():
    proto = reduce_sum_model()
    graph = Graph.from_onnx(proto, constant_inputs={"axes": np.array([1], np.int64)})
    assert [i.name for i in graph.inputs] == ["x"]
    assert [vi.name for vi in proto.graph.input] == ["x", "axes"] and not proto.graph.initializer


def test_an_input_that_must_be_known_is_named_with_the_fix():
    with pytest.raises(GeError) as error:
        Graph.from_onnx(reduce_sum_model())
    assert str(error.value) == (
        "onnx=net; node=sum; ReduceSum: axes (input 'axes') must be known when the model is imported: a "
        "constant, or computed from shapes; it is the model input 'axes': give its value with "
        "Graph.from_onnx(..., constant_inputs={'axes': ...})")


def test_a_shape_computed_from_an_input_names_that_input_and_folds_once_it_is_fixed():
    with pytest.raises(GeError, match=r"it is computed from the model input 'half': give its value with "
                                      r"Graph\.from_onnx\(\.\.\., constant_inputs=\{'half': \.\.\.\}\)$"):
        Graph.from_onnx(reshape_model())
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    (got,) = run_reference(Graph.from_onnx(reshape_model(), constant_inputs={"half": np.array([3, 4], np.int64)}), x)
    np.testing.assert_array_equal(got, x.reshape(3, 8))


@pytest.mark.parametrize("values, message", [
    ({"axis": np.array([1], np.int64)},
     "ONNX model 'net' has no input 'axis' to make constant; its inputs: 'x', 'axes'"),
    ({"axes": np.array([1], np.int32)},
     r"ONNX model 'net': constant input 'axes' is int32\[1\], but the model declares int64\[\?\]"),
    ({"axes": np.array([[1]], np.int64)},
     r"ONNX model 'net': constant input 'axes' is int64\[1, 1\], but the model declares int64\[\?\]"),
])
def test_a_constant_input_the_model_cannot_take_is_refused(values, message):
    with pytest.raises(GeError, match=f"^{message}$"):
        Graph.from_onnx(reduce_sum_model(), constant_inputs=values)


def test_a_constant_input_of_a_fixed_shape_must_have_that_shape():
    with pytest.raises(GeError, match=r"^ONNX model 'net': constant input 'half' is int64\[3\], but the model "
                                      r"declares int64\[2\]$"):
        Graph.from_onnx(reshape_model(), constant_inputs={"half": np.array([1, 2, 3], np.int64)})
