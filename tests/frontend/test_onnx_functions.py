"""ONNX ops that ONNX defines as functions (and dfir does not map) import as their bodies:
SoftmaxCrossEntropyLoss (a body holding NegativeLogLikelihoodLoss, expanded in turn) against
onnxruntime, Swish against its definition; ops dfir maps are never expanded, and an op whose
body dfir cannot run is refused by its own name."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from dfir.frontend.ge.onnx.conversion import with_inferred_shapes
from dfir.frontend.ge.onnx.functions import expanded
from dfir.frontend.ge.onnx.importer import unsupported_nodes
from dfir.ge.error import GeError
from dfir.ge.graph import Graph

from onnx_models import RNG, ints, model, reference, run_reference, tensor_info, weight


def expand(proto):
    return expanded(with_inferred_shapes(proto, "net"), unsupported_nodes, lambda p: with_inferred_shapes(p, "net"))


def cross_entropy_model(reduction: str, with_weight: bool, ignore_index: int | None = None):
    inputs = ["scores", "labels", "w"] if with_weight else ["scores", "labels"]
    attrs = {"reduction": reduction} | ({} if ignore_index is None else {"ignore_index": ignore_index})
    node = helper.make_node("SoftmaxCrossEntropyLoss", inputs, ["loss"], name="loss", **attrs)
    out_shape = [3, 2] if reduction == "none" else []
    return model([node], [tensor_info("scores", [3, 5, 2]), tensor_info("labels", [3, 2], TensorProto.INT64)],
                 [tensor_info("loss", out_shape)], [weight("w", [5])] if with_weight else [], opset=13)


@settings(max_examples=8, deadline=None)
@given(reduction=st.sampled_from(["none", "sum", "mean"]), with_weight=st.booleans(),
       ignore_index=st.sampled_from([None, 0, 3]))
def test_softmax_cross_entropy_matches_onnxruntime(reduction, with_weight, ignore_index):
    proto = cross_entropy_model(reduction, with_weight, ignore_index)
    scores = RNG.standard_normal([3, 5, 2]).astype(np.float32)
    labels = RNG.integers(0, 5, [3, 2]).astype(np.int64)
    (want,) = reference(proto, {"scores": scores, "labels": labels})
    (got,) = run_reference(Graph.from_onnx(proto), scores, labels)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_bodies_are_expanded_until_no_function_is_left_and_named_after_their_node():
    nodes = expand(cross_entropy_model("mean", with_weight=False)).graph.node
    assert {n.op_type for n in nodes} >= {"LogSoftmax", "GatherElements"}
    assert not {n.op_type for n in nodes} & {"SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss"}
    assert all(n.name.startswith("loss/") for n in nodes)
    inner = {t for n in nodes for t in [*n.input, *n.output]} - {"scores", "labels", "loss", ""}
    assert inner and all(t.startswith("loss/") for t in inner)


def test_ops_dfir_maps_are_not_expanded():
    node = helper.make_node("LayerNormalization", ["x", "scale"], ["y"], name="norm")
    proto = model([node], [tensor_info("x", [2, 4])], [tensor_info("y", [2, 4])], [weight("scale", [4])], opset=17)
    assert [n.op_type for n in expand(proto).graph.node] == ["LayerNormalization"]


def test_swish_matches_onnxruntime_definition():
    node = helper.make_node("Swish", ["x"], ["y"], alpha=0.75)
    proto = model([node], [tensor_info("x", [2, 6])], [tensor_info("y", [2, 6])], opset=24)
    x = RNG.standard_normal([2, 6]).astype(np.float32)
    (got,) = run_reference(Graph.from_onnx(proto), x)
    np.testing.assert_allclose(got, x / (1 + np.exp(-0.75 * x)), rtol=1e-6)


def test_swish_without_alpha_takes_the_schema_default():
    node = helper.make_node("Swish", ["x"], ["y"])
    proto = model([node], [tensor_info("x", [5])], [tensor_info("y", [5])], opset=24)
    x = np.linspace(-3, 3, 5, dtype=np.float32)
    (got,) = run_reference(Graph.from_onnx(proto), x)
    np.testing.assert_allclose(got, x / (1 + np.exp(-x)), rtol=1e-6)


def test_an_op_whose_body_dfir_cannot_build_is_refused_by_its_own_name():
    node = helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="r")
    proto = model([node], [tensor_info(n, [], TensorProto.INT64) for n in ("start", "limit", "delta")],
                  [tensor_info("y", [None], TensorProto.INT64)], opset=18)
    with pytest.raises(GeError, match=r"^ONNX model 'net' has ops dfir does not support: Range \(node 'r'\)$"):
        Graph.from_onnx(proto)


def test_a_node_that_folds_once_inputs_are_fixed_names_them():
    nodes = [helper.make_node("Range", ["zero", "limit", "one"], ["r"], name="r"),
             helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT), helper.make_node("Add", ["x", "rf"], ["y"])]
    proto = model(nodes, [tensor_info("x", [4]), tensor_info("limit", [], TensorProto.INT64)], [tensor_info("y", [4])],
                  [ints("zero", 0), ints("one", 1)], opset=18)
    with pytest.raises(GeError, match=r"^ONNX model 'net' has ops dfir does not support: Range \(node 'r'\); node 'r' "
                                      r"folds at import when its inputs are known: it is computed from the model input "
                                      r"'limit': give its value with Graph\.from_onnx\(\.\.\., "
                                      r"constant_inputs=\{'limit': \.\.\.\}\)$"):
        Graph.from_onnx(proto)
    x = np.ones(4, np.float32)
    (got,) = run_reference(Graph.from_onnx(proto, constant_inputs={"limit": np.array(4, np.int64)}), x)
    np.testing.assert_array_equal(got, [1, 2, 3, 4])
