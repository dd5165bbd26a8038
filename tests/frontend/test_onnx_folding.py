"""Folding at ONNX import: any deterministic node whose inputs are constants or static shapes is
computed by onnx's reference implementation (ConstantOfShape, Range, Expand, Tile, Equal, Where,
logic, multi-output ops...), becomes a weight where used, and never reaches the graph; what
cannot be folded and has no converter is refused naming the node and why."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from dfir.frontend.ge.onnx import folding
from dfir.ge.error import GeError
from dfir.ge.graph import Graph

from onnx_models import RNG, ints, model, reference, run_reference, tensor_info


def ge_ops(graph: Graph) -> list[str]:
    return [line.split("=")[1].split()[0] for line in str(graph.to_ir()).splitlines() if " = ge." in line]


def scalar(name: str, value, dtype=np.int64):
    return numpy_helper.from_array(np.array(value, dtype), name)


def test_a_mask_built_from_static_shapes_folds_into_one_weight():
    """x + Where(Equal(Range(0, W) mod 2, 0), Expand(1, Shape(x)), Tile(ConstantOfShape([1, 1]) * -1, ...))."""
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Range", ["zero", "width", "one"], ["columns"], name="columns"),
             helper.make_node("Mod", ["columns", "two"], ["parity"], name="parity"),
             helper.make_node("Equal", ["parity", "zero"], ["even"], name="even"),
             helper.make_node("Expand", ["one_f", "shape"], ["ones"], name="ones"),
             helper.make_node("ConstantOfShape", ["one_by_one"], ["minus"], name="minus",
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [-1.0])),
             helper.make_node("Tile", ["minus", "shape"], ["minuses"], name="minuses"),
             helper.make_node("Where", ["even", "ones", "minuses"], ["mask"], name="mask"),
             helper.make_node("Add", ["x", "mask"], ["y"], name="add")]
    weights = [scalar("zero", 0), scalar("width", 4), scalar("one", 1), scalar("two", 2),
               scalar("one_f", 1.0, np.float32), ints("one_by_one", [1, 1])]
    proto = model(nodes, [tensor_info("x", [3, 4])], [tensor_info("y", [3, 4])], weights)
    graph = Graph.from_onnx(proto)
    assert ge_ops(graph) == ["ge.data", "ge.const", "ge.add"]
    assert '%mask = ge.const dense<[[1.000000e+00, -1.000000e+00, 1.000000e+00, -1.000000e+00], ' in str(graph.to_ir())
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_array_equal(run_reference(graph, x)[0], reference(proto, {"x": x})[0])


def test_every_output_of_a_folded_node_is_known_in_its_inferred_type():
    """TopK of a constant: both outputs folded; the indices are int64 as the model says."""
    nodes = [helper.make_node("TopK", ["c", "k"], ["values", "indices"], name="top"),
             helper.make_node("Cast", ["indices"], ["fi"], name="fi", to=TensorProto.FLOAT),
             helper.make_node("Add", ["values", "fi"], ["vi"], name="vi"),
             helper.make_node("Mul", ["x", "vi"], ["y"], name="mul")]
    weights = [numpy_helper.from_array(np.array([0.5, 3.0, 2.0, 1.0], np.float32), "c"), ints("k", [2])]
    proto = model(nodes, [tensor_info("x", [2])], [tensor_info("y", [2]), tensor_info("indices", [2], TensorProto.INT64)],
                  weights)
    graph = Graph.from_onnx(proto)
    assert ge_ops(graph) == ["ge.data", "ge.const", "ge.mul", "ge.const"]
    x = np.array([1.0, 2.0], np.float32)
    outputs, expected = run_reference(graph, x), reference(proto, {"x": x})
    assert [o.dtype for o in outputs] == [np.float32, np.int64]
    assert [o.tolist() for o in outputs] == [e.tolist() for e in expected] == [[4.0, 8.0], [1, 2]]


@settings(max_examples=25, deadline=None)
@given(start=st.integers(-20, 20), limit=st.integers(-20, 20), delta=st.integers(-5, 5).filter(bool),
       dtype=st.sampled_from([np.int32, np.int64, np.float32]))
def test_range_folds_as_onnx_defines_it(start, limit, delta, dtype):
    nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["r"], name="range"),
             helper.make_node("Shape", ["r"], ["n"], name="n"),
             helper.make_node("Identity", ["r"], ["y"], name="y")]
    weights = [scalar("start", start, dtype), scalar("limit", limit, dtype), scalar("delta", delta, dtype)]
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    proto = model(nodes, [tensor_info("x", [1])], [tensor_info("y", ["L"], elem), tensor_info("n", [1], TensorProto.INT64)],
                  weights)
    graph = Graph.from_onnx(proto)
    assert ge_ops(graph) == ["ge.data", "ge.const", "ge.const"]
    expected = np.arange(start, limit, delta, dtype=dtype)
    assert run_reference(graph, np.zeros(1, np.float32))[0].tolist() == expected.tolist()


def test_random_ops_are_never_folded():
    nodes = [helper.make_node("RandomNormal", [], ["noise"], name="noise", shape=[2]),
             helper.make_node("Add", ["x", "noise"], ["y"], name="add")]
    proto = model(nodes, [tensor_info("x", [2])], [tensor_info("y", [2])])
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert str(info.value) == "ONNX model 'net' has ops dfir does not support: RandomNormal (node 'noise')"


def test_a_node_of_run_time_values_without_a_converter_is_refused_up_front():
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Range", ["zero", "n", "one"], ["y"], name="positions")]
    proto = model(nodes, [tensor_info("x", ["N", 3]), tensor_info("n", [], TensorProto.INT64)],
                  [tensor_info("y", ["L"], TensorProto.INT64)], [scalar("zero", 0), scalar("one", 1)])
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert str(info.value) == ("ONNX model 'net' has ops dfir does not support: Range (node 'positions'); node "
                               "'positions' folds at import when its inputs are known: it is computed from the model "
                               "input 'n': give its value with Graph.from_onnx(..., constant_inputs={'n': ...})")


def test_a_fill_of_a_run_time_shape_is_refused_naming_the_dimensions():
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("ConstantOfShape", ["shape"], ["y"], name="zeros")]
    proto = model(nodes, [tensor_info("x", ["N", 3])], [tensor_info("y", ["N", 3])])
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert str(info.value) == ("onnx=net; node=zeros; ConstantOfShape: the shape (input 'shape') depends on dynamic "
                               "dimensions: [dim(x, 0), 3]")


def test_a_fold_too_large_for_a_weight_is_refused_naming_the_node(monkeypatch):
    monkeypatch.setattr(folding, "MAX_FOLDED_ELEMENTS", 8)
    nodes = [helper.make_node("Range", ["zero", "ten", "one"], ["positions"], name="positions"),
             helper.make_node("Cast", ["positions"], ["y"], name="y", to=TensorProto.FLOAT)]
    proto = model(nodes, [tensor_info("x", [1])], [tensor_info("y", [10])],
                  [scalar("zero", 0), scalar("ten", 10), scalar("one", 1)])
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert str(info.value) == ("onnx=net; node=positions; Range: its result holds more than 8 elements, too many "
                               "to compute at import")


@pytest.mark.parametrize("value", [None, np.array([0.5], np.float32), np.array([7], np.int32)])
def test_a_fill_too_large_to_fold_is_its_value_expanded_at_run_time(monkeypatch, value):
    """ConstantOfShape over the limit (the light CNNs of the onnx package give their weights so)
    is a const of its one value and a ge.expand to the shape, with the default value 0.0."""
    monkeypatch.setattr(folding, "MAX_FOLDED_ELEMENTS", 8)
    attrs = {} if value is None else {"value": numpy_helper.from_array(value, "v")}
    elem = TensorProto.FLOAT if value is None else helper.np_dtype_to_tensor_dtype(value.dtype)
    nodes = [helper.make_node("ConstantOfShape", ["big"], ["fill"], name="fill", **attrs),
             helper.make_node("Add", ["x", "fill"], ["y"], name="add")]
    proto = model(nodes, [tensor_info("x", [3, 3], elem)], [tensor_info("y", [3, 3], elem)], [ints("big", [3, 3])])
    graph = Graph.from_onnx(proto)
    assert ge_ops(graph) == ["ge.data", "ge.const", "ge.expand", "ge.add"]
    x = np.arange(9).reshape(3, 3).astype(value.dtype if value is not None else np.float32)
    np.testing.assert_array_equal(run_reference(graph, x)[0], reference(proto, {"x": x})[0])


def test_a_node_after_a_fold_too_large_is_refused_naming_the_input(monkeypatch):
    """Relu of a constant too large to fold runs as a ge.relu; the Det of it, which only folding
    could compute, then has an input known only at run time."""
    monkeypatch.setattr(folding, "MAX_FOLDED_ELEMENTS", 8)
    nodes = [helper.make_node("Relu", ["c"], ["positive"], name="positive"),
             helper.make_node("Det", ["positive"], ["det"], name="det"),
             helper.make_node("Mul", ["x", "det"], ["y"], name="mul")]
    proto = model(nodes, [tensor_info("x", [1])], [tensor_info("y", [1])],
                  [numpy_helper.from_array(np.eye(3, dtype=np.float32), "c")])
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert str(info.value) == ("onnx=net; node=det; Det: dfir has no converter for this op and computes it at import "
                               "only from constant inputs; 'positive' is known only at run time")


def test_a_fold_that_fails_names_the_node_and_the_failure():
    nodes = [helper.make_node("Range", ["zero", "ten", "zero"], ["r"], name="endless"),
             helper.make_node("Identity", ["r"], ["y"], name="y")]
    proto = model(nodes, [tensor_info("x", [1])], [tensor_info("y", ["L"], TensorProto.INT64)],
                  [scalar("zero", 0), scalar("ten", 10)])
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert re.fullmatch(r"onnx=net; node=endless; Range: cannot be computed at import from its constant inputs: "
                        r"ZeroDivisionError: .+", str(info.value))


def test_a_node_with_a_converter_that_the_reference_cannot_evaluate_is_converted(monkeypatch):
    class Failing:
        def __init__(self, node, opsets):
            pass

        def run(self, outputs, feeds):
            raise ValueError("no kernel")

    monkeypatch.setattr(folding, "ReferenceEvaluator", Failing)
    nodes = [helper.make_node("Relu", ["c"], ["positive"], name="positive"),
             helper.make_node("Mul", ["x", "positive"], ["y"], name="mul")]
    proto = model(nodes, [tensor_info("x", [2])], [tensor_info("y", [2])],
                  [numpy_helper.from_array(np.array([-1.0, 2.0], np.float32), "c")])
    graph = Graph.from_onnx(proto)
    assert ge_ops(graph) == ["ge.data", "ge.const", "ge.relu", "ge.mul"]
    assert run_reference(graph, np.array([3.0, 3.0], np.float32))[0].tolist() == [0.0, 6.0]


def test_an_empty_folded_value_is_an_output_that_runs():
    """Shape with start > end is empty: an empty weight, in a model with no other weights."""
    nodes = [helper.make_node("Shape", ["x"], ["y"], name="shape", start=2, end=1)]
    proto = model(nodes, [tensor_info("x", [3, 4, 5])], [tensor_info("y", [0], TensorProto.INT64)])
    outputs = run_reference(Graph.from_onnx(proto), np.zeros((3, 4, 5), np.float32))
    assert outputs[0].shape == (0,) and outputs[0].dtype == np.int64


def test_a_model_without_inputs_is_refused():
    proto = model([helper.make_node("Constant", [], ["y"], name="c", value_float=1.0)], [], [tensor_info("y", [])],
                  name="constant")
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert str(info.value) == ("onnx=constant; the model has no inputs; a dfir graph runs when fed, so it needs at "
                               "least one")


def test_an_unsupported_cast_target_names_the_node():
    nodes = [helper.make_node("Cast", ["x"], ["y"], name="to_bf16", to=TensorProto.BFLOAT16)]
    proto = model(nodes, [tensor_info("x", [2])], [tensor_info("y", [2], TensorProto.BFLOAT16)])
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert str(info.value) == ("onnx=net; node=to_bf16; Cast: the Cast target has element type BFLOAT16, which GE "
                               "tensors cannot hold")


def test_cast_like_of_a_constant_folds_from_the_element_type_of_a_run_time_tensor():
    """Pad's constant_value is CastLike(-inf as a double, x): it reads only x's element type."""
    nodes = [helper.make_node("CastLike", ["fill", "x"], ["fill_like"], name="fill_like"),
             helper.make_node("Pad", ["x", "pads", "fill_like"], ["y"], name="pad")]
    proto = model(nodes, [tensor_info("x", [2, 3])], [tensor_info("y", [2, 5])],
                  [scalar("fill", -2.5, np.float64), ints("pads", [0, 1, 0, 1])])
    graph = Graph.from_onnx(proto)
    assert "cast" not in ge_ops(graph)
    x = RNG.standard_normal([2, 3]).astype(np.float32)
    (got,) = run_reference(graph, x)
    np.testing.assert_array_equal(got, reference(proto, {"x": x})[0])
