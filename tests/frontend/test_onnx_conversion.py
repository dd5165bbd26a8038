"""Opset conversion and shape inference at ONNX import: a model of opset 1 to 12 is converted to
the opset the importer reads (with a note saying so), keeps its meaning (Upsample and Resize-10
keep their coordinate mapping), and a node the converter cannot convert is a GeError naming it;
inferred shapes let shape arithmetic across tensors of one batch fold."""
from __future__ import annotations

import logging

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from dfir.frontend.ge.onnx import READ_OPSET
from dfir.frontend.ge.onnx.conversion import converted
from dfir.ge.error import GeError
from dfir.ge.graph import Graph

from onnx_models import RNG, ints, model, reference, run_reference, tensor_info, weight


def test_an_old_model_is_converted_and_the_log_says_from_which_opset(caplog):
    nodes = [helper.make_node("Unsqueeze", ["x"], ["u"], name="u", axes=[1]),  # axes attribute: opset < 13
             helper.make_node("Squeeze", ["u"], ["s"], name="s", axes=[1]),
             helper.make_node("ReduceSum", ["s"], ["y"], name="sum", axes=[1], keepdims=0)]
    proto = model(nodes, [tensor_info("x", ["N", 4])], [tensor_info("y", ["N"])], opset=9, name="old")
    with caplog.at_level(logging.WARNING, logger="dfir.onnx"):
        graph = Graph.from_onnx(proto)
    assert caplog.messages == [f"ONNX model 'old': converted from opset 9 to opset {READ_OPSET} (onnx.version_converter)"]
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(run_reference(graph, x)[0], reference(proto, {"x": x})[0], rtol=1e-6)


def test_a_current_model_is_not_converted(caplog):
    proto = model([helper.make_node("Relu", ["x"], ["y"])], [tensor_info("x", [2])], [tensor_info("y", [2])])
    with caplog.at_level(logging.INFO, logger="dfir.onnx"):
        Graph.from_onnx(proto)
    assert caplog.messages == []


def upsample(opset: int, mode: str):
    """x [1, 2, 3, 4] upsampled 2x by Upsample (opset 8 and 9) or Resize-10."""
    scales = np.array([1, 1, 2, 2], np.float32)
    if opset == 8:
        node, weights = helper.make_node("Upsample", ["x"], ["y"], mode=mode, scales=scales.tolist()), []
    else:
        node = helper.make_node("Upsample" if opset == 9 else "Resize", ["x", "scales"], ["y"], mode=mode)
        weights = [numpy_helper.from_array(scales, "scales")]
    return model([node], [tensor_info("x", [1, 2, 3, 4])], [tensor_info("y", [1, 2, 6, 8])], weights, opset=opset)


@pytest.mark.parametrize("opset", [8, 9, 10])
@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_upsample_and_resize_10_keep_their_coordinates_when_converted(opset, mode):
    """The converter leaves Resize-11's defaults (half_pixel, round_prefer_floor) on what it
    converts; the conversion restores the old mapping: asymmetric, nearest rounding down."""
    proto = upsample(opset, mode)
    result = converted(proto, "up")
    (resize,) = [n for n in result.graph.node if n.op_type == "Resize"]
    attrs = {a.name: helper.get_attribute_value(a) for a in resize.attribute}
    assert attrs["coordinate_transformation_mode"] == b"asymmetric" and attrs["nearest_mode"] == b"floor"
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(reference(result, {"x": x})[0], reference(proto, {"x": x})[0])


@pytest.mark.parametrize("opset", [8, 9, 10])
def test_linear_upsample_runs_as_resize_bilinear(opset):
    proto = upsample(opset, "linear")
    graph = Graph.from_onnx(proto)
    assert "ge.resize_bilinear %x size [6, 8] {" in str(graph.to_ir())
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(run_reference(graph, x)[0], reference(proto, {"x": x})[0], rtol=1e-5, atol=1e-6)


def test_a_node_the_converter_cannot_convert_is_named():
    params = [weight(n, (2,)) for n in ("scale", "bias", "mean")] + [numpy_helper.from_array(np.ones(2, np.float32), "var")]
    nodes = [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn",
                              spatial=0)]
    proto = model(nodes, [tensor_info("x", [1, 2, 3, 3])], [tensor_info("y", [1, 2, 3, 3])], params, opset=8,
                  name="per_pixel")
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert str(info.value) == (f"ONNX model 'per_pixel' cannot be converted from opset 8 to {READ_OPSET}: "
                               "BatchNormalization (node 'bn'): Attribute spatial must have value 1")


def test_a_model_without_default_domain_ops_lists_its_ops():
    nodes = [helper.make_node("Binarizer", ["x"], ["y"], name="bin", domain="ai.onnx.ml")]
    graph = helper.make_graph(nodes, "ml", [tensor_info("x", [2])], [tensor_info("y", [2])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("ai.onnx.ml", 3)])
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert str(info.value) == "ONNX model 'ml' has ops dfir does not support: ai.onnx.ml.Binarizer (node 'bin')"


def test_shape_inference_failing_on_a_valid_model_falls_back_with_a_note(caplog):
    """onnx's strict inference fails inside MeanVarianceNormalization's function body; the model
    still imports, with the shapes lenient inference gives."""
    proto = model([helper.make_node("MeanVarianceNormalization", ["x"], ["y"], name="mvn")],
                  [tensor_info("x", [1, 2, 3, 3])], [tensor_info("y", [1, 2, 3, 3])], opset=13, name="mvn")
    with caplog.at_level(logging.WARNING, logger="dfir.onnx"):
        graph = Graph.from_onnx(proto)
    assert len(caplog.messages) == 1 and caplog.messages[0].startswith(
        "ONNX model 'mvn': shape inference failed ([ShapeInferenceError] Inference error(s): ")
    assert caplog.messages[0].endswith("; importing with the shapes it could infer")
    assert graph.num_outputs == 1


def test_one_batch_size_named_by_shape_inference_folds_across_tensors():
    """view(y, x.size(0), -1) with y another tensor of the same batch N: the batch entry is y's
    own dimension 0, so the Reshape keeps it (0) and infers the rest (-1)."""
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu"),
             helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Gather", ["shape", "zero"], ["batch"], name="batch", axis=0),
             helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"], name="batch1"),
             helper.make_node("Concat", ["batch1", "minus_one"], ["target"], name="target", axis=0),
             helper.make_node("Reshape", ["y", "target"], ["flat"], name="flatten")]
    proto = model(nodes, [tensor_info("x", ["N", 2, "H", 3])], [tensor_info("flat", ["N", "M"])],
                  [numpy_helper.from_array(np.array(0, np.int64), "zero"), ints("axes0", [0]), ints("minus_one", [-1])])
    graph = Graph.from_onnx(proto)
    assert 'ge.reshape %relu to [0, -1] {name = "flatten"}' in str(graph.to_ir())
    x = RNG.standard_normal((4, 2, 5, 3)).astype(np.float32)
    np.testing.assert_array_equal(run_reference(graph, x)[0], reference(proto, {"x": x})[0])


def test_a_dimension_fixed_by_shape_inference_is_a_number():
    """Reshape to a constant shape fixes dimensions dfir's types leave open (a shape known
    only from its product): Shape of the result folds to numbers."""
    nodes = [helper.make_node("Reshape", ["x", "to"], ["r"], name="r"),
             helper.make_node("Shape", ["r"], ["shape"], name="shape"),
             helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill",
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [2.0]))]
    proto = model(nodes, [tensor_info("x", [2, 6])], [tensor_info("y", [3, 4])], [ints("to", [3, 4])])
    ir = str(Graph.from_onnx(proto).to_ir())
    assert '%y = ge.const dense<2.000000e+00> : tensor<3x4xf32> {name = "y"}' in ir


def per_channel(opset: int) -> tuple:
    """PRelu(x + b) with b added along axis 1 (Add's `broadcast` and `axis`, opsets 1 to 6) and the
    PRelu slope one per channel (axis 1, as PRelu up to opset 6 reads it), x of shape [2, 3, 4]."""
    add = {"broadcast": 1, "axis": 1}
    if opset < 6:
        add["consumed_inputs"] = [0, 0]  # Add-1's legacy attribute
    nodes = [helper.make_node("Add", ["x", "b"], ["s"], name="add", **add),
             helper.make_node("PRelu", ["s", "slope"], ["y"], name="prelu")]
    b = np.array([0.5, -1.0, 2.0], np.float32)
    slope = np.array([0.1, 0.2, 0.3], np.float32)
    proto = model(nodes, [tensor_info("x", [2, 3, 4])], [tensor_info("y", [2, 3, 4])],
                  [numpy_helper.from_array(b, "b"), numpy_helper.from_array(slope, "slope")], opset=opset, name="old")
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    s = x + b[:, None]
    return proto, x, np.where(s < 0, s * slope[:, None], s)


@pytest.mark.parametrize("opset", [1, 5, 6])
def test_a_model_of_opset_1_to_6_is_converted_and_keeps_its_per_channel_forms(opset, caplog):
    proto, x, expected = per_channel(opset)
    with caplog.at_level(logging.WARNING, logger="dfir.onnx"):
        graph = Graph.from_onnx(proto)
    assert caplog.messages == [f"ONNX model 'old': converted from opset {opset} to opset {READ_OPSET} "
                               "(onnx.version_converter)"]
    np.testing.assert_allclose(run_reference(graph, x)[0], expected, rtol=1e-6)


def test_a_second_input_broadcast_along_an_axis_is_aligned_before_conversion():
    """b [3] added along axis 1 of x [2, 3, 4], and PRelu-6's slope [3], become [3, 1] (an
    Unsqueeze) for opset 7's numpy broadcasting; the Add no longer says `axis`."""
    result = converted(per_channel(6)[0], "old")
    named = [(n.op_type, n.name, [a.name for a in n.attribute]) for n in result.graph.node if n.op_type != "Constant"]
    assert named == [("Unsqueeze", "add/aligned", []), ("Add", "add", []), ("Unsqueeze", "prelu/aligned", []),
                     ("PRelu", "prelu", [])]


def test_a_dimension_the_converter_names_is_no_change_of_interface():
    """The converter names an unnamed output dimension (`unk__0`): the model still imports."""
    proto = model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [tensor_info("x", [2, None])],
                  [tensor_info("y", [2, None])], opset=12, name="open")
    graph = Graph.from_onnx(proto)
    x = RNG.standard_normal((2, 5)).astype(np.float32)
    np.testing.assert_array_equal(run_reference(graph, x)[0], np.maximum(x, 0))
