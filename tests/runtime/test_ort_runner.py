"""The onnxruntime runner's own checks, and the weights it hands onnxruntime: exactly the
entry's `external_weights`, which compiling records from the exported model."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import dfir
import dfir.data_type as dt
from dfir.core.errors import GeError
from dfir.ge.graph import Graph
from dfir.om.plan import GeGraph, GeInput, Plan, external_weight_name
from dfir.om.schema import PartitionType
from dfir.runtime.ge.ort_runner import OrtGraphRunner
from dfir.runtime.om import read_om


def _entry(**fields) -> GeGraph:
    return GeGraph("g", (GeInput("x", 0, "DT_FLOAT", (2,), ((2, 2),), 0),), (), (0,), backend="onnxruntime",
                   executable=0, **fields)


def test_external_data_the_entry_does_not_list_is_refused_by_onnxruntime_naming_the_graph():
    bogus = TensorProto(name="bogus", data_type=TensorProto.FLOAT, dims=[2])
    bogus.data_location = TensorProto.EXTERNAL
    bogus.external_data.add(key="location", value="WEIGHTS_DATA")
    graph = helper.make_graph([helper.make_node("Add", ["x", "bogus"], ["output_0"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("output_0", TensorProto.FLOAT, None)], [bogus])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(GeError) as caught:
        OrtGraphRunner(_entry(), model.SerializeToString(), None)
    assert caught.value.error_message.startswith("onnxruntime cannot load the graph's ONNX model: ")
    assert caught.value.context == {"graph": "g"}


def test_an_external_weight_the_entry_does_not_have_is_a_plan_error():
    with pytest.raises(GeError) as caught:
        GeGraph.from_json(_entry(external_weights=(0,)).to_json(), "plan.ge_graphs[0]")
    assert caught.value.error_message == "plan.ge_graphs[0].external_weights[0]: 0 is out of range [0, 0)"


def test_a_compiled_entry_lists_the_weights_its_model_reads_as_external_data():
    g = Graph("affine")
    x = g.data(0, shape=[2, 3], dtype=dt.DT_FLOAT, name="x")
    w, b = np.arange(12, dtype=np.float32).reshape(3, 4), np.ones(4, np.float32)
    g.set_outputs([g.add(g.matmul(x, g.const(w)), g.const(b))])
    model_om = read_om(dfir.compile(g, {"dfir.ge.backend": "onnxruntime"}).om).models[0]
    entry = Plan.from_json(model_om.partition(PartitionType.FLOW_MODEL).data).ge_graphs[0]
    executable = model_om.partitions_of(PartitionType.GE_EXECUTABLE)[entry.executable]
    model = onnx.load_model_from_string(bytes(executable.data))
    external = [t.name for t in model.graph.initializer if t.data_location == TensorProto.EXTERNAL]
    assert [external_weight_name(k) for k in entry.external_weights] == external and len(external) == 2
    with dfir.load(dfir.compile(g, {"dfir.ge.backend": "onnxruntime"}).om) as loaded:
        feed = np.ones((2, 3), np.float32)
        assert loaded.feed_data([feed]) == 0
        outputs, _, ret = loaded.fetch_data(timeout=5000)
    assert ret == 0 and np.allclose(outputs[0].numpy(), feed @ w + b)


def test_a_model_onnxruntime_cannot_load_is_a_ge_error_naming_the_graph():
    with pytest.raises(GeError) as caught:
        OrtGraphRunner(_entry(), b"not an onnx model", None)
    assert caught.value.error_message.startswith("onnxruntime cannot load the graph's ONNX model: ")
    assert caught.value.context == {"graph": "g"}
