"""`GraphProcessPoint(Framework.TENSORFLOW, "model.pb", load_params)`: a frozen TensorFlow graph
converted by tf2onnx (`dfir.frontend.ge.tensorflow_import`); MindSpore graphs refused."""
from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

import dfir.dataflow as df
from dfir.core.errors import GeError
from dfir.frontend.ge import tensorflow_import
from tensorflow_helpers import ADD, needs_tensorflow, write_frozen_graph


@pytest.fixture(scope="module")
def add_pb(tmp_path_factory) -> str:
    return write_frozen_graph(tmp_path_factory.mktemp("tf") / "add.pb", ADD)


@pytest.fixture(scope="module")
def two_outputs_pb(tmp_path_factory) -> str:
    """x, y (float32 [2]) -> sub = x - y and mul = x * y, both left unconsumed."""
    return write_frozen_graph(tmp_path_factory.mktemp("tf") / "two.pb", """
        x = v1.placeholder(tf.float32, shape=[2], name="x")
        y = v1.placeholder(tf.float32, shape=[2], name="y")
        tf.subtract(x, y, name="sub")
        tf.multiply(x, y, name="mul")
    """)


def run_graph(pp, *arrays):
    """Feed `arrays` to a FlowGraph of one node running `pp`; the fetched outputs as arrays."""
    data = [df.FlowData() for _ in arrays]
    node = df.FlowNode(input_num=len(arrays), output_num=len(pp.graph._outputs))
    node.add_process_point(pp)
    outputs = node(*data)
    graph = df.FlowGraph(list(outputs) if isinstance(outputs, (list, tuple)) else [outputs])
    assert graph.feed_data(dict(zip(data, arrays))) == 0
    tensors, _, ret = graph.fetch_data()
    assert ret == 0
    return [t.numpy() for t in tensors]


def test_ges_sample_graph_with_its_int32_compile_config(tmp_path, add_pb):
    config = tmp_path / "add_graph.json"
    config.write_text(json.dumps({"build_options": {}, "inputs_tensor_desc": [
        {"data_type": "DT_INT32", "shape": [3]}, {"data_type": "DT_INT32", "shape": [3]}]}))
    pp = df.GraphProcessPoint(df.Framework.TENSORFLOW, add_pb,
                              load_params={"input_data_names": "Placeholder,Placeholder_1"},
                              compile_config_path=str(config))
    [out] = run_graph(pp, np.ones([3], np.int32), np.array([1, 2, 3], np.int32))
    assert out.dtype == np.int32 and out.tolist() == [2, 3, 4]


def test_without_a_config_the_graph_keeps_its_float_inputs(add_pb):
    pp = df.GraphProcessPoint(df.Framework.TENSORFLOW, add_pb)
    [out] = run_graph(pp, np.array([0.5, 1, 2], np.float32), np.array([1, 2, 3], np.float32))
    assert out.dtype == np.float32 and out.tolist() == [1.5, 3, 5]


def test_the_graph_is_named_after_the_file_and_its_inputs_after_the_placeholders(add_pb):
    path = add_pb
    graph = tensorflow_import.tensorflow_graph(path, {}).to_ir()
    assert graph.sym_name.data == "add"
    assert [d.data_name.data for d in graph.data_ops] == ["Placeholder", "Placeholder_1"]
    assert tensorflow_import.tensorflow_graph(path, {"output": "adder"}).to_ir().sym_name.data == "adder"


def test_a_conversion_is_done_once_per_file_content_and_params(add_pb, monkeypatch):
    path = add_pb
    tensorflow_import.tensorflow_graph(path, {})
    monkeypatch.setattr(tensorflow_import.subprocess, "run", None)  # a second conversion would fail
    assert tensorflow_import.tensorflow_graph(path, {}).to_ir().sym_name.data == "add"


def test_input_data_names_orders_the_inputs(two_outputs_pb):
    pp = df.GraphProcessPoint(df.Framework.TENSORFLOW, two_outputs_pb,
                              load_params={"input_data_names": "y,x", "ge.outputNodeName": "sub:0"})
    [out] = run_graph(pp, np.array([1, 2], np.float32), np.array([10, 20], np.float32))
    assert out.tolist() == [9, 18]  # x - y with x = input 1


def test_the_outputs_are_the_unconsumed_nodes_in_file_order_unless_chosen(two_outputs_pb):
    path = two_outputs_pb
    x, y = np.array([3, 4], np.float32), np.array([1, 2], np.float32)
    sub, mul = run_graph(df.GraphProcessPoint(df.Framework.TENSORFLOW, path), x, y)
    assert (sub.tolist(), mul.tolist()) == ([2, 2], [3, 8])
    chosen = df.GraphProcessPoint(df.Framework.TENSORFLOW, path, load_params={"ge.outputNodeName": "mul:0;sub:0"})
    assert [o.tolist() for o in run_graph(chosen, x, y)] == [[3, 8], [2, 2]]


@pytest.mark.parametrize("params, message", [
    ({"input_data_names": "Placeholder"}, "input 'Placeholder_1' is not in load param input_data_names 'Placeholder'"),
    ({"input_data_names": "Placeholder,Placeholder_1,z"},
     "load param input_data_names names 'z', which is not a Placeholder of the graph (its Placeholders: "
     "Placeholder, Placeholder_1)"),
    ({"input_data_names": "Placeholder,Placeholder"}, "load param input_data_names names 'Placeholder' twice"),
    ({"ge.outputNodeName": "add"}, "load param ge.outputNodeName entry 'add' must have the form node:index"),
    ({"ge.outputNodeName": "nope:0"}, "load param ge.outputNodeName names node 'nope', which is not in the graph"),
    ({"ge.outputNodeName": "add:1"}, "load param ge.outputNodeName names output 1 of node 'add', which has 1 outputs"),
    ({"input_shape": "Placeholder:3"}, "load param 'input_shape' is not supported: give the input shapes in the "
     "compile config (inputs_tensor_desc or build_options ge.inputShape)"),
    ({"enable_scope_fusion_passes": "x"}, "load param 'enable_scope_fusion_passes' is not supported: dfir runs no "
     "TensorFlow scope fusion passes"),
    ({"input_names": "a"}, "load param 'input_names' is not a TensorFlow parser param; expected input_data_names, "
     "ge.outputNodeName or output"),
    ({"output": 3}, "load param 'output' must be a str, got int"),
])
def test_bad_load_params_are_refused(request, params, message):
    needs_tensorflow()
    path = request.getfixturevalue("add_pb")
    with pytest.raises(GeError) as error:
        df.GraphProcessPoint(df.Framework.TENSORFLOW, path, load_params=params)
    assert error.value.error_message == f"GraphProcessPoint: TENSORFLOW graph file '{path}': {message}"


def test_a_file_that_is_not_a_graph_def_is_refused(tmp_path):
    needs_tensorflow()
    path = tmp_path / "model.pb"
    path.write_bytes(b"\xff\xfe not a protobuf")
    with pytest.raises(GeError) as error:
        df.GraphProcessPoint(df.Framework.TENSORFLOW, str(path))
    assert error.value.error_message.startswith(
        f"GraphProcessPoint: TENSORFLOW graph file '{path}' is not a binary TensorFlow GraphDef (.pb): ")


def test_a_missing_file_is_refused(tmp_path):
    needs_tensorflow()
    path = str(tmp_path / "none.pb")
    with pytest.raises(GeError) as error:
        df.GraphProcessPoint(df.Framework.TENSORFLOW, path)
    assert error.value.error_message == (f"GraphProcessPoint: TENSORFLOW graph file '{path}' cannot be read: "
                                         "No such file or directory")


def test_without_the_extra_the_file_is_refused_naming_it(monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "tf2onnx" else real_find_spec(name, *a))
    with pytest.raises(GeError) as error:
        df.GraphProcessPoint(df.Framework.TENSORFLOW, "model.pb")
    assert error.value.error_message == ("GraphProcessPoint: TENSORFLOW graph file 'model.pb' needs tf2onnx to be "
                                         "converted to ONNX: pip install 'dfir[tensorflow]'")


def test_a_mindspore_graph_is_refused_naming_onnx_export():
    with pytest.raises(GeError) as error:
        df.GraphProcessPoint(df.Framework.MINDSPORE, "net.air")
    assert error.value.error_message == (
        "GraphProcessPoint: MINDSPORE graph file 'net.air' cannot be loaded: dfir does not read MindSpore graphs "
        "(.air, .mindir); export the network to ONNX (mindspore.export(net, input, file_name=..., "
        "file_format='ONNX')) and load it with Framework.ONNX")


def test_an_empty_graph_file_is_refused(tmp_path):
    needs_tensorflow()
    path = tmp_path / "empty.pb"
    path.write_bytes(b"")
    with pytest.raises(GeError) as error:
        df.GraphProcessPoint(df.Framework.TENSORFLOW, str(path))
    assert error.value.error_message == f"GraphProcessPoint: TENSORFLOW graph file '{path}' holds no TensorFlow graph nodes"


def test_a_graph_without_outputs_is_refused(tmp_path):
    path = write_frozen_graph(tmp_path / "inputs.pb", 'v1.placeholder(tf.float32, shape=[3], name="x")')
    with pytest.raises(GeError) as error:
        df.GraphProcessPoint(df.Framework.TENSORFLOW, path)
    assert error.value.error_message == (f"GraphProcessPoint: TENSORFLOW graph file '{path}': the graph has no output "
                                         "(no node's output is left unconsumed)")


def test_a_failed_conversion_process_is_an_error_with_its_stderr(add_pb, monkeypatch):
    monkeypatch.setattr(tensorflow_import, "CONVERTER", "dfir.no_such_converter")
    with pytest.raises(GeError) as error:
        tensorflow_import.tensorflow_graph(add_pb, {"output": "crashing"})
    message = error.value.error_message
    assert message.startswith(f"GraphProcessPoint: TENSORFLOW graph file '{add_pb}': the conversion process "
                              "failed with exit status 1:\n")
    assert message.endswith("No module named dfir.no_such_converter")
