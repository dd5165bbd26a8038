"""ONNX import end to end: models built with onnx.helper, imported, compiled to an .om, loaded
with dfir.load and run, against onnxruntime; shape arithmetic folded at import; every import
error with its message; GraphProcessPoint(Framework.ONNX, path) inside a FlowGraph."""
from __future__ import annotations

import inspect

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.ge.error import GeError
from dfir.ge.graph import Graph

from onnx_models import RNG, ints, model, reference, tensor_info, weight


def mlp() -> onnx.ModelProto:
    """x [N, 16] -> MatMul + Add -> Relu -> Gemm -> Softmax; N is dynamic."""
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
             helper.make_node("Add", ["h", "b1"], ["hb"], name="bias1"),
             helper.make_node("Relu", ["hb"], ["a"], name="act"),
             helper.make_node("Gemm", ["a", "w2", "b2"], ["logits"], name="fc2", transB=1),
             helper.make_node("Softmax", ["logits"], ["y"], name="softmax")]
    weights = [weight("w1", (16, 32)), weight("b1", (32,)), weight("w2", (10, 32)), weight("b2", (10,))]
    return model(nodes, [tensor_info("x", ["batch", 16])], [tensor_info("y", ["batch", 10])], weights, name="mlp")


def cnn() -> onnx.ModelProto:
    """x [N, 3, 16, 16] -> conv/bn/relu/pool -> grouped conv -> global pool -> view(N, -1) -> Gemm."""
    nodes = [helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"], name="bn1"),
             helper.make_node("Relu", ["bn"], ["r1"], name="relu1"),
             helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "c2w"], ["c2"], name="conv2", pads=[1, 1, 1, 1], strides=[2, 2], group=2),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
             helper.make_node("Shape", ["gap"], ["shape"], name="shape"),
             helper.make_node("Gather", ["shape", "zero"], ["batch"], name="batch", axis=0),
             helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"], name="batch1"),
             helper.make_node("Concat", ["batch1", "minus_one"], ["target"], name="target", axis=0),
             helper.make_node("Reshape", ["gap", "target"], ["flat"], name="flatten"),
             helper.make_node("Gemm", ["flat", "fcw", "fcb"], ["y"], name="fc", transB=1)]
    variance = numpy_helper.from_array(RNG.uniform(0.5, 1.5, 8).astype(np.float32), "bn_v")
    weights = [weight("c1w", (8, 3, 3, 3)), weight("c1b", (8,)), weight("bn_s", (8,)), weight("bn_b", (8,)),
               weight("bn_m", (8,)), variance, weight("c2w", (16, 4, 3, 3)), weight("fcw", (10, 16)),
               weight("fcb", (10,)), numpy_helper.from_array(np.array(0, np.int64), "zero"),
               ints("axes0", [0]), ints("minus_one", [-1])]
    return model(nodes, [tensor_info("x", ["N", 3, 16, 16])], [tensor_info("y", ["N", 10])], weights, name="cnn")


# --- whole models ----------------------------------------------------------------------------------

@pytest.mark.parametrize("build, shape", [(mlp, (16,)), (cnn, (3, 16, 16))], ids=["mlp", "cnn"])
def test_imported_model_compiles_loads_and_matches_onnxruntime(build, shape, tmp_path):
    proto = build()
    path = tmp_path / "model.onnx"
    onnx.save(proto, path)
    compiled = dfir.compile(Graph.from_onnx(path))
    with dfir.load(compiled.om) as runtime:
        assert runtime.input_names == ["x"]
        for batch in (1, 3, 8):
            x = RNG.standard_normal((batch, *shape)).astype(np.float32)
            runtime.feed_data([x])
            outputs, _, ret = runtime.fetch_data(timeout=5000)
            assert ret == 0
            np.testing.assert_allclose(outputs[0].numpy(), reference(proto, {"x": x})[0], rtol=1e-4, atol=1e-5)


def test_view_of_the_own_batch_folds_into_a_reshape():
    ir = str(Graph.from_onnx(cnn()).to_ir())
    assert 'ge.reshape %gap to [0, -1] {name = "flatten"} : !ge.tensor<[-1, 16, 1, 1], f32> -> !ge.tensor<[-1, 16], f32>' in ir
    assert "ge.shape" not in ir and "ge.gather" not in ir and "ge.concat" not in ir


def test_graph_name_inputs_and_weights(tmp_path):
    path = tmp_path / "classifier.onnx"
    onnx.save(mlp(), path)
    g = Graph.from_onnx(path)
    assert g.name == "classifier" and Graph.from_onnx(mlp()).name == "mlp"
    assert Graph.from_onnx(path, name="other").name == "other"
    assert [(i.name, i.dtype, i.shape) for i in g.inputs] == [("x", dt.DT_FLOAT, [-1, 16])]
    ir = str(g.to_ir())
    assert '%w1 = ge.const dense<"0x' in ir and '{name = "w1"}' in ir
    assert '%fc2 = ge.gemm %act, %w2, %b2 alpha 1.000000e+00 beta 1.000000e+00 trans_b {name = "fc2"}' in ir


def test_constants_shared_and_dead_nodes_dropped():
    nodes = [helper.make_node("Add", ["x", "c"], ["a"], name="first"),
             helper.make_node("Mul", ["a", "c"], ["y"], name="second"),
             helper.make_node("Exp", ["x"], ["unused"], name="dead")]
    g = Graph.from_onnx(model(nodes, [tensor_info("x", [3])], [tensor_info("y", [3])], [weight("c", (3,))]))
    ops = [line.split("=")[1].split()[0] for line in str(g.to_ir()).splitlines() if " = ge." in line]
    assert ops == ["ge.data", "ge.const", "ge.add", "ge.mul"]


def test_outputs_may_be_inputs_constants_or_known_shapes():
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="s"),
             helper.make_node("Identity", ["c"], ["k"], name="k")]
    proto = model(nodes, [tensor_info("x", ["N", 3])],
                  [tensor_info("x", ["N", 3]), tensor_info("s", [2], TensorProto.INT64), tensor_info("k", [2])],
                  [weight("c", (2,))])
    g = Graph.from_onnx(proto)
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    compiled = dfir.compile(g)
    with dfir.load(compiled.om) as runtime:
        runtime.feed_data([x])
        outputs, _, ret = runtime.fetch_data(timeout=5000)
    expected = reference(proto, {"x": x})
    assert ret == 0 and [o.numpy().tolist() for o in outputs] == [e.tolist() for e in expected]
    assert "ge.shape %x" in str(g.to_ir())


def test_seed_resize_to_a_size_from_an_input():
    """The seed's resize_bilinear(x, hw) as exported: sizes = Concat(Shape(x)[:2], Cast(hw))."""
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Slice", ["shape", "start", "stop"], ["nc"], name="nc"),
             helper.make_node("Cast", ["hw"], ["hw64"], name="hw64", to=TensorProto.INT64),
             helper.make_node("Concat", ["nc", "hw64"], ["sizes"], name="sizes", axis=0),
             helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize", mode="linear",
                              coordinate_transformation_mode="align_corners")]
    proto = model(nodes, [tensor_info("x", [1, 3, "h", "w"]), tensor_info("hw", [2], TensorProto.INT32)],
                  [tensor_info("y", [1, 3, "H", "W"])], [ints("start", [0]), ints("stop", [2])])
    g = Graph.from_onnx(proto)
    with dfir.load(dfir.compile(g).om) as runtime:
        for h, w, out in ((5, 7, (9, 4)), (12, 3, (6, 10))):
            x = RNG.standard_normal((1, 3, h, w)).astype(np.float32)
            hw = np.array(out, np.int32)
            runtime.feed_data([x, hw])
            outputs, _, ret = runtime.fetch_data(timeout=5000)
            assert ret == 0 and outputs[0].numpy().shape == (1, 3, *out)
            np.testing.assert_allclose(outputs[0].numpy(), reference(proto, {"x": x, "hw": hw})[0], rtol=1e-5, atol=1e-5)


# --- GraphProcessPoint -------------------------------------------------------------------------------

def test_graph_process_point_reads_an_onnx_file_inside_a_flow_graph(tmp_path):
    proto = mlp()
    path = tmp_path / "mlp.onnx"
    onnx.save(proto, path)

    @df.pyflow
    def scale(a):
        return a * 2

    x = df.FlowData()
    pp = df.GraphProcessPoint(df.Framework.ONNX, str(path), load_params={"k": "v"}, compile_config_path="")
    assert pp.graph.name == "mlp" and pp.load_params == {"k": "v"} and pp.compile_config_path == ""
    flow = df.FlowGraph([pp.fnode(1, 1, name="classifier")(scale.fnode()(x))])
    batch = RNG.standard_normal((4, 16)).astype(np.float32)
    flow.feed_data({x: batch})
    outputs, _, ret = flow.fetch_data(timeout=5000)
    assert ret == 0
    np.testing.assert_allclose(outputs[0].numpy(), reference(proto, {"x": 2 * batch})[0], rtol=1e-4, atol=1e-5)


def test_graph_process_point_file_errors(tmp_path):
    with pytest.raises(GeError, match=r"^ONNX model file '.*missing.onnx' does not exist$"):
        df.GraphProcessPoint(df.Framework.ONNX, str(tmp_path / "missing.onnx"))
    with pytest.raises(GeError, match=r"^GraphProcessPoint graph_file must be a path to an ONNX file or a "
                                      r"dfir.ge.graph.Graph, got int$"):
        df.GraphProcessPoint(df.Framework.ONNX, 3)


# --- errors ------------------------------------------------------------------------------------------

def test_unsupported_ops_are_listed_together():
    nodes = [helper.make_node("Unique", ["x"], ["a"], name="unique_1"),
             helper.make_node("Relu", ["a"], ["b"], name="fine"),
             helper.make_node("Bernoulli", ["b"], ["c"]),
             helper.make_node("Unique", ["c"], ["d"], name="unique_2"),
             helper.make_node("NonZero", ["d"], ["e"], name="nonzero"),
             helper.make_node("FusedRelu", ["e"], ["y"], name="fused", domain="com.example")]
    proto = model(nodes, [tensor_info("x", [2])], [tensor_info("y", [2])], name="bad")
    proto.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert str(info.value) == ("ONNX model 'bad' has ops dfir does not support: Unique (nodes 'unique_1', "
                               "'unique_2'), Bernoulli (node #2), NonZero (node 'nonzero'), "
                               "com.example.FusedRelu (node 'fused')")


def test_file_errors(tmp_path):
    with pytest.raises(GeError, match=r"^ONNX model file '.*nothing.onnx' does not exist$"):
        Graph.from_onnx(tmp_path / "nothing.onnx")
    with pytest.raises(GeError, match=r"^ONNX model file '.*' is a directory$"):
        Graph.from_onnx(tmp_path)
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\xff\x00 this is not a protobuf")
    with pytest.raises(GeError, match=r"^ONNX model file '.*garbage.onnx' is not a valid ONNX model: "):
        Graph.from_onnx(garbage)
    with pytest.raises(GeError, match=r"^an ONNX model must be a file path or an onnx.ModelProto, got bytes$"):
        Graph.from_onnx(b"bytes")


def test_model_errors():
    dangling = model([helper.make_node("Relu", ["nowhere"], ["y"])], [tensor_info("x", [2])], [tensor_info("y", [2])],
                     name="dangling")
    with pytest.raises(GeError, match=r"^ONNX model 'dangling' is not a valid ONNX model: .*nowhere"):
        Graph.from_onnx(dangling)
    words = model([helper.make_node("Identity", ["x"], ["y"])], [tensor_info("x", [2], TensorProto.STRING)],
                  [tensor_info("y", [2], TensorProto.STRING)], name="words")
    with pytest.raises(GeError) as info:
        Graph.from_onnx(words)
    assert str(info.value) == "onnx=words; input 'x' has element type STRING, which GE tensors cannot hold"
    sequence = model([helper.make_node("Identity", ["x"], ["y"])],
                     [helper.make_tensor_sequence_value_info("x", TensorProto.FLOAT, [2])],
                     [helper.make_tensor_sequence_value_info("y", TensorProto.FLOAT, [2])], name="sequence")
    with pytest.raises(GeError) as info:
        Graph.from_onnx(sequence)
    assert str(info.value) == "onnx=sequence; input 'x' is a sequence_type, expected a tensor"


NODE_ERRORS = [
    ([helper.make_node("Reshape", ["x", "s"], ["y"], name="r")], [tensor_info("s", [2], TensorProto.INT64)], [],
     "onnx=net; node=r; Reshape: the shape (input 's') must be known when the model is imported: a constant, "
     "or computed from shapes; it is the model input 's': give its value with "
     "Graph.from_onnx(..., constant_inputs={'s': ...})"),
    ([helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Reshape", ["x", "s"], ["y"], name="r2")], [], [],
     None),
    ([helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Slice", ["s", "two", "four"], ["t"]),
      helper.make_node("Reshape", ["x", "t"], ["y"], name="r3")], [], [ints("two", [2]), ints("four", [4])],
     "onnx=net; node=r3; Reshape: the shape [dim(x, 2), dim(x, 3)] has more than one entry known only at run time"),
    ([helper.make_node("Resize", ["x", "", "scales", "sizes"], ["y"], name="both")], [],
     [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"), ints("sizes", [1, 2, 4, 4])],
     "onnx=net; node=both; Resize: needs exactly one of scales and sizes, got both"),
    ([helper.make_node("Resize", ["x"], ["y"], name="neither")], [], [],
     "onnx=net; node=neither; Resize: needs exactly one of scales and sizes, got neither"),
    ([helper.make_node("Resize", ["x", "", "scales"], ["y"], name="aa", antialias=1)], [],
     [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")],
     "onnx=net; node=aa; Resize: antialias applies to modes 'linear' and 'cubic' only, got mode 'nearest'"),
    ([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="crop", mode="linear",
                       coordinate_transformation_mode="tf_crop_and_resize")], [], [ints("sizes", [1, 2, 4, 4])],
     "onnx=net; node=crop; Resize: coordinate_transformation_mode 'tf_crop_and_resize' needs a roi"),
    ([helper.make_node("MaxPool", ["x"], ["y", "i"], name="mp", kernel_shape=[2, 2])], [], [],
     "onnx=net; node=mp; MaxPool: the Indices output is not supported"),
    ([helper.make_node("Pad", ["x", "p"], ["y"], name="wrap", mode="wrap")], [], [ints("p", [0] * 8)],
     "onnx=net; node=wrap; Pad: mode 'wrap' is not supported, expected constant, reflect or edge"),
    ([helper.make_node("Squeeze", ["x"], ["y"], name="sq")], [], [],
     "onnx=net; node=sq; Squeeze: Squeeze without axes needs every dimension fixed, got shape [-1, 2, -1, -1]"),
    ([helper.make_node("Split", ["x"], ["a", "b"], name="sp", axis=2, num_outputs=2)], [], [],
     "onnx=net; node=sp; Split: an even split needs dimension 2 fixed, got shape [-1, 2, -1, -1]"),
    ([helper.make_node("Conv", ["x", "w"], ["y"], name="same", auto_pad="SAME_UPPER")], [], [weight("w", (4, 2, 3, 3))],
     "onnx=net; node=same; Conv: auto_pad SAME_UPPER needs fixed spatial dimensions, got shape [-1, 2, -1, -1]"),
    ([helper.make_node("BatchNormalization", ["x", "p", "p", "p", "p"], ["y", "m", "v"], name="train", training_mode=1)], [],
     [weight("p", (2,))], "onnx=net; node=train; BatchNormalization: training_mode 1 is not supported (inference only)"),
    ([helper.make_node("Reshape", ["x", "nc_rest"], ["f"]), helper.make_node("Conv", ["f", "w"], ["y"], name="c1d")], [],
     [weight("w", (4, 2)), ints("nc_rest", [0, -1])],
     "onnx=net; node=c1d; Conv: the input must have rank >= 3 (N, C and spatial dimensions), got shape [-1, -1]"),
    ([helper.make_node("AveragePool", ["x"], ["y"], name="pads1d", kernel_shape=[2, 2], pads=[1, 1])], [], [],
     "onnx=net; node=pads1d; AveragePool: pads must have 4 entries for a 2-D window, got [1, 1]"),
    ([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Softmax", ["r"], ["y"], name="sm", axis=7)], [], [],
     "graph=net; node=sm; ge.softmax: axis 7 is out of range for [-1, 2, -1, -1] (valid: -4..3)"),
]


@pytest.mark.parametrize("nodes, extra_inputs, initializers, message", NODE_ERRORS,
                         ids=[n[0][-1].name or n[0][-1].op_type for n in NODE_ERRORS])
def test_node_errors_name_the_node(nodes, extra_inputs, initializers, message):
    proto = model(nodes, [tensor_info("x", ["N", 2, "H", "W"]), *extra_inputs],
                  [tensor_info(nodes[-1].output[0], ["a", "b"] if message and nodes[-1].op_type == "Reshape"
                               else ["a", "b", "c", "d"][:3 if nodes[-1].name == "c1d" else 4])], initializers)
    if message is None:  # the input's own dimensions: copies where dynamic, sizes where fixed
        assert "ge.reshape %x to [0, 2, 0, 0]" in str(Graph.from_onnx(proto).to_ir())
        return
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    line = inspect.currentframe().f_lineno - 1
    assert str(info.value).replace(f"at=test_onnx_import.py:{line}; ", "") == message  # the user's line
