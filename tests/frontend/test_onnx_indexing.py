"""ONNX reads and writes at computed positions (GatherND, ScatterElements and Scatter, ScatterND,
TensorScatter, ReverseSequence, OneHot) and LpNormalization, against onnxruntime; their refusals,
and an index out of range failing the run rather than touching a neighbouring element."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import dfir
from dfir.ge.error import GeError
from dfir.ge.graph import Graph

from onnx_models import RNG, model, reference, run_reference, tensor_info

REDUCTIONS = ["none", "add", "mul", "max", "min"]
ELEM = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
        np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL}


def one_node(op: str, feeds: dict[str, np.ndarray], opset: int = 18, weights=(), order=None,
             **attrs) -> onnx.ModelProto:
    """A model of one `op` node over `feeds` (graph inputs, in order) and `weights` (name, array),
    in that order or the node input `order`; its output typed by ONNX shape inference (or, where
    that fails on shapes the op refuses, a float vector)."""
    node = helper.make_node(op, order or [*feeds, *(name for name, _ in weights)], ["y"], **attrs)
    inputs = [tensor_info(name, list(a.shape), ELEM[a.dtype]) for name, a in feeds.items()]
    initializers = [numpy_helper.from_array(a, name) for name, a in weights]
    proto = model([node], inputs, [], initializers, opset=opset)
    try:
        typed = {vi.name: vi for vi in onnx.shape_inference.infer_shapes(proto, strict_mode=True).graph.value_info}
    except onnx.shape_inference.InferenceError:
        typed = {}
    output = typed.get("y", tensor_info("y", ["n"]))
    output.type.tensor_type.shape.SetInParent()  # a scalar's empty shape is still a shape
    proto.graph.output.append(output)
    return proto


def onnx_reference(proto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """onnx's own reference evaluator, for the forms onnxruntime has no kernel for."""
    return ReferenceEvaluator(proto).run(None, feeds)


def assert_matches_onnxruntime(proto, feeds: dict[str, np.ndarray], expected_by=reference) -> None:
    (want,) = expected_by(proto, feeds)
    (got,) = run_reference(Graph.from_onnx(proto), *feeds.values())
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def failure(proto, feeds: dict[str, np.ndarray]) -> str:
    """What the failed run of `proto` says (the run must fail)."""
    with dfir.load(dfir.compile(Graph.from_onnx(proto), {"dfir.ge.backend": "reference"}).om) as runtime:
        runtime.feed_data(list(feeds.values()))
        _, _, ret = runtime.fetch_data(timeout=5000)
    assert ret != 0
    return ret.message


def refusal(proto) -> str:
    with pytest.raises(GeError) as caught:
        Graph.from_onnx(proto)
    return str(caught.value)


def distinct_rows(count: int, extent: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).permutation(extent)[:count]


# --- GatherND ------------------------------------------------------------------------------------------

@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_gather_nd_matches_onnxruntime(data):
    batch_dims = data.draw(st.integers(0, 1))
    shape = data.draw(st.lists(st.integers(1, 3), min_size=batch_dims + 1, max_size=4))
    k = data.draw(st.integers(1, len(shape) - batch_dims))
    middle = data.draw(st.lists(st.integers(1, 3), max_size=2))
    addressed = shape[batch_dims:batch_dims + k]
    indices = np.stack([RNG.integers(-e, e, [*shape[:batch_dims], *middle]) for e in addressed], -1)
    feeds = {"x": RNG.standard_normal(shape).astype(np.float32), "i": indices.astype(np.int64)}
    assert_matches_onnxruntime(one_node("GatherND", feeds, batch_dims=batch_dims), feeds)


@pytest.mark.parametrize("bad", [[0, 2], [-3, 0]])
def test_a_gather_nd_index_out_of_range_fails_the_run(bad):
    feeds = {"x": np.arange(4, dtype=np.float32).reshape(2, 2), "i": np.array([[1, 1], bad], np.int64)}
    assert failure(one_node("GatherND", feeds), feeds).endswith("gather: index 4 is out of range for dimension 0 "
                                                                "of [4, 1]")


@pytest.mark.parametrize("shapes, batch_dims, message", [
    (([2, 2], [2, 3]), 0, "indices [2, 3] must end in a tuple of 1..2 entries after 0 batch dimensions"),
    (([2, 2], [3, 1]), 1, "the 1 batch dimensions of data [2, 2] and indices [3, 1] differ"),
    (([-1, 2], [2, 1]), 0, "data and indices shapes must be fixed, got data [-1, 2]"),
])
def test_gather_nd_refusals(shapes, batch_dims, message):
    node = helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=batch_dims)
    proto = model([node], [tensor_info("x", ["n" if d == -1 else d for d in shapes[0]]),
                           tensor_info("i", shapes[1], TensorProto.INT64)], [tensor_info("y", ["n"])], opset=13)
    assert refusal(proto) == f"onnx=net; node=#0; GatherND: {message}"


# --- ScatterElements and Scatter -------------------------------------------------------------------------

@settings(max_examples=10, deadline=None)
@given(reduction=st.sampled_from(REDUCTIONS), axis=st.integers(-2, 1), seed=st.integers(0, 2**16))
def test_scatter_elements_matches_onnxruntime(reduction, axis, seed):
    rng = np.random.default_rng(seed)
    shape, updated = [4, 3], [3, 2]
    extent = shape[axis]
    if reduction == "none":  # one update per element: which of several wins is not defined by ONNX
        indices = np.argsort(rng.random(shape), axis=axis)[:updated[0], :updated[1]]
    else:
        indices = rng.integers(-extent, extent, updated)
    feeds = {"x": rng.integers(-5, 5, shape).astype(np.float32), "i": np.ascontiguousarray(indices, np.int64),
             "u": rng.integers(-5, 5, updated).astype(np.float32)}
    assert_matches_onnxruntime(one_node("ScatterElements", feeds, axis=axis, reduction=reduction), feeds)


def test_the_old_scatter_op_is_converted_to_scatter_elements():
    feeds = {"x": np.zeros((3, 3), np.float32), "i": np.array([[1, 0, 2], [0, 2, 1]], np.int64),
             "u": np.arange(6, dtype=np.float32).reshape(2, 3)}
    (y,) = run_reference(Graph.from_onnx(one_node("Scatter", feeds, opset=10, axis=0)), *feeds.values())
    np.testing.assert_array_equal(y, [[3, 1, 0], [0, 0, 5], [0, 4, 2]])


def test_a_scatter_elements_index_out_of_range_fails_the_run():
    feeds = {"x": np.zeros((1, 5), np.float32), "i": np.array([[1, 5]], np.int64), "u": np.ones((1, 2), np.float32)}
    assert failure(one_node("ScatterElements", feeds, axis=1), feeds).endswith(
        "scatter_elements: index 5 is out of range for dimension 1 of [1, 5]")


# --- ScatterND -------------------------------------------------------------------------------------------

@settings(max_examples=10, deadline=None)
@given(reduction=st.sampled_from(REDUCTIONS), k=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_scatter_nd_matches_onnxruntime(reduction, k, seed):
    rng = np.random.default_rng(seed)
    shape = [3, 2, 4]
    count = 3
    flat = distinct_rows(count, int(np.prod(shape[:k])), seed) if reduction == "none" else \
        rng.integers(0, int(np.prod(shape[:k])), count)
    indices = np.stack(np.unravel_index(flat, shape[:k]), -1)
    indices = np.where(rng.random(indices.shape) < 0.5, indices - np.array(shape[:k]), indices)  # some from the end
    feeds = {"x": rng.integers(-5, 5, shape).astype(np.float32), "i": indices.astype(np.int64),
             "u": rng.integers(-5, 5, [count, *shape[k:]]).astype(np.float32)}
    assert_matches_onnxruntime(one_node("ScatterND", feeds, reduction=reduction), feeds)


@pytest.mark.parametrize("bad", [[2, 0], [0, -3]])
def test_a_scatter_nd_index_out_of_range_fails_the_run(bad):
    feeds = {"x": np.zeros((2, 2), np.float32), "i": np.array([bad], np.int64), "u": np.ones(1, np.float32)}
    assert failure(one_node("ScatterND", feeds), feeds).endswith(
        "scatter_elements: index 4 is out of range for dimension 0 of [4, 1]")


def test_scatter_nd_refuses_updates_of_another_shape():
    feeds = {"x": np.zeros((2, 3), np.float32), "i": np.zeros((2, 1), np.int64), "u": np.ones((2, 2), np.float32)}
    assert refusal(one_node("ScatterND", feeds)) == (
        "onnx=net; node=#0; ScatterND: updates must have shape [2, 3] (indices [2, 1], data [2, 3]), got [2, 2]")


# --- TensorScatter ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode, starts", [("linear", [0, 2]), ("circular", [3, 1]), ("circular", [2, 0])])
def test_tensor_scatter_matches_onnxruntime(mode, starts):
    feeds = {"cache": RNG.standard_normal((2, 3, 4, 2)).astype(np.float32),
             "update": RNG.standard_normal((2, 3, 2, 2)).astype(np.float32), "w": np.array(starts, np.int64)}
    assert_matches_onnxruntime(one_node("TensorScatter", feeds, opset=24, mode=mode), feeds)


def test_tensor_scatter_without_write_indices_writes_at_the_start_of_axis_1():
    feeds = {"cache": np.zeros((2, 3, 2), np.float32), "update": np.ones((2, 2, 2), np.float32)}
    (y,) = run_reference(Graph.from_onnx(one_node("TensorScatter", feeds, opset=24, axis=1)), *feeds.values())
    np.testing.assert_array_equal(y[:, :2], 1)
    np.testing.assert_array_equal(y[:, 2], 0)


def test_a_linear_tensor_scatter_past_the_cache_fails_the_run():
    feeds = {"cache": np.zeros((1, 3, 1), np.float32), "update": np.ones((1, 2, 1), np.float32),
             "w": np.array([2], np.int64)}
    assert failure(one_node("TensorScatter", feeds, opset=24), feeds).endswith(
        "scatter_elements: index 3 is out of range for dimension 1 of [1, 3, 1]")


@pytest.mark.parametrize("attrs, message", [
    ({"mode": "ring"}, "mode must be 'linear' or 'circular', got 'ring'"),
    ({"axis": 0}, "axis 0 is the batch axis; the sequence axis must come after it"),
    ({"axis": -1}, "update [1, 2, 1] must match past_cache [1, 3, 1] outside axis 2"),
])
def test_tensor_scatter_refusals(attrs, message):
    feeds = {"cache": np.zeros((1, 3, 1), np.float32), "update": np.ones((1, 2, 1), np.float32)}
    proto = one_node("TensorScatter", feeds, opset=24, **attrs)
    assert refusal(proto) == f"onnx=net; node=#0; TensorScatter: {message}"


# --- ReverseSequence -------------------------------------------------------------------------------------

@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 4), time=st.integers(1, 5), time_major=st.booleans(), seed=st.integers(0, 2**16))
def test_reverse_sequence_matches_onnxruntime(batch, time, time_major, seed):
    rng = np.random.default_rng(seed)
    shape = [time, batch, 2] if time_major else [batch, time, 2]
    feeds = {"x": rng.standard_normal(shape).astype(np.float32), "lens": rng.integers(1, time + 1, batch)}
    axes = {"batch_axis": 1, "time_axis": 0} if time_major else {"batch_axis": 0, "time_axis": 1}
    assert_matches_onnxruntime(one_node("ReverseSequence", feeds, opset=13, **axes), feeds)


def test_a_sequence_longer_than_the_time_axis_fails_the_run():
    feeds = {"x": np.zeros((3, 2), np.float32), "lens": np.array([3, 4], np.int64)}
    assert failure(one_node("ReverseSequence", feeds, opset=13), feeds).endswith(
        "gather: index 6 is out of range for dimension 0 of [6]")


def test_reverse_sequence_along_one_axis_is_refused():
    feeds = {"x": np.zeros((3, 2), np.float32), "lens": np.array([3, 3], np.int64)}
    assert refusal(one_node("ReverseSequence", feeds, opset=13, batch_axis=0, time_axis=0)) == (
        "onnx=net; node=#0; ReverseSequence: batch_axis and time_axis must differ, both are 0")


# --- OneHot ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [-1, 0, 1, -3])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float32])
def test_one_hot_matches_onnx_reference(axis, dtype):
    feeds = {"i": np.array([[0, 2, -1], [5, -4, 1]], dtype), "values": np.array([2, 7], np.float32)}
    proto = one_node("OneHot", feeds, weights=[("depth", np.array(4, np.int64))], order=["i", "depth", "values"],
                     axis=axis)
    assert_matches_onnxruntime(proto, feeds, onnx_reference)  # onnxruntime has int64 indices only


def test_one_hot_depth_fed_at_run_time_is_refused():
    feeds = {"i": np.array([1], np.int64), "depth": np.array(3, np.int64), "values": np.array([0, 1], np.float32)}
    assert refusal(one_node("OneHot", feeds)) == (
        "onnx=net; node=#0; OneHot: depth (input 'depth') must be known when the model is imported: a constant, "
        "or computed from shapes; it is the model input 'depth': give its value with "
        "Graph.from_onnx(..., constant_inputs={'depth': ...})")


@pytest.mark.parametrize("depth, axis, message", [
    (0, -1, "depth must be one value >= 1, got [0]"),
    (3, 2, "axis 2 is out of range for rank 1 + 1"),
])
def test_one_hot_refusals(depth, axis, message):
    feeds = {"i": np.array([1], np.int64), "values": np.array([0, 1], np.float32)}
    proto = one_node("OneHot", feeds, weights=[("depth", np.array(depth, np.int64))],
                     order=["i", "depth", "values"], axis=axis)
    assert refusal(proto) == f"onnx=net; node=#0; OneHot: {message}"


# --- LpNormalization ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_lp_normalization_matches_onnxruntime(p, axis):
    feeds = {"x": RNG.standard_normal((2, 3, 4)).astype(np.float32)}
    assert_matches_onnxruntime(one_node("LpNormalization", feeds, opset=22, p=p, axis=axis), feeds)


def test_lp_normalization_of_zeros_is_zero():
    x = np.array([[0, 0], [3, 4]], np.float32)
    (y,) = run_reference(Graph.from_onnx(one_node("LpNormalization", {"x": x}, opset=22)), x)
    np.testing.assert_allclose(y, [[0, 0], [0.6, 0.8]])


def test_lp_normalization_of_another_p_is_refused():
    assert refusal(one_node("LpNormalization", {"x": np.ones((2, 2), np.float32)}, opset=22, p=3)) == (
        "onnx=net; node=#0; LpNormalization: p must be 1 or 2, got 3")


@pytest.mark.parametrize("op, feeds, opset, attrs, message", [
    ("ReverseSequence", {"x": np.zeros((3, 2), np.float32), "lens": np.array([1, 1], np.int64)}, 13,
     {"time_axis": 5}, "axis 5 is out of range for rank 2"),
    ("OneHot", {"i": np.array([1], np.int64), "values": np.array([0, 1, 2], np.float32)}, 18, {},
     "values must hold [off, on], got shape [3]"),
    ("LpNormalization", {"x": np.ones((2, 2), np.float32)}, 22, {"axis": 2}, "axis 2 is out of range for rank 2"),
])
def test_axis_and_operand_refusals(op, feeds, opset, attrs, message):
    weights, order = ([("depth", np.array(2, np.int64))], ["i", "depth", "values"]) if op == "OneHot" else ((), None)
    proto = one_node(op, feeds, opset=opset, weights=weights, order=order, **attrs)
    assert refusal(proto) == f"onnx=net; node=#0; {op}: {message}"


def test_reverse_sequence_of_a_dynamic_shape_is_refused():
    node = helper.make_node("ReverseSequence", ["x", "lens"], ["y"])
    proto = model([node], [tensor_info("x", ["t", 2]), tensor_info("lens", [2], TensorProto.INT64)],
                  [tensor_info("y", ["t", 2])], opset=13)
    assert refusal(proto) == "onnx=net; node=#0; ReverseSequence: input shapes must be fixed, got input [-1, 2]"
