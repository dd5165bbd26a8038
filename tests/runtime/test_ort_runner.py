"""The onnxruntime runner's own checks: the external data an ONNX model reads must be weights of
its plan entry."""
from __future__ import annotations

import pytest
from onnx import TensorProto, helper

from dfir.core.errors import GeError
from dfir.om.plan import GeGraph, GeInput
from dfir.runtime.ge.ort_runner import OrtGraphRunner


def test_external_data_that_names_no_weight_of_the_entry_is_refused():
    bogus = TensorProto(name="bogus", data_type=TensorProto.FLOAT, dims=[2])
    bogus.data_location = TensorProto.EXTERNAL
    bogus.external_data.add(key="location", value="WEIGHTS_DATA")
    graph = helper.make_graph([helper.make_node("Add", ["x", "bogus"], ["output_0"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("output_0", TensorProto.FLOAT, None)], [bogus])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    entry = GeGraph("g", (GeInput("x", 0, "DT_FLOAT", (2,), ((2, 2),), 0),), (), (0,), backend="onnxruntime",
                    executable=0)
    with pytest.raises(GeError) as caught:
        OrtGraphRunner(entry, model.SerializeToString(), None)
    assert caught.value.error_message == ("the graph's ONNX model reads external data 'bogus', which is not one "
                                          "of its 0 weights")
    assert caught.value.context == {"graph": "g"}


def test_a_model_onnxruntime_cannot_load_is_a_ge_error_naming_the_graph():
    entry = GeGraph("g", (GeInput("x", 0, "DT_FLOAT", (2,), ((2, 2),), 0),), (), (0,), backend="onnxruntime",
                    executable=0)
    with pytest.raises(GeError) as caught:
        OrtGraphRunner(entry, b"not an onnx model", None)
    assert caught.value.error_message.startswith("onnxruntime cannot load the graph's ONNX model: ")
    assert caught.value.context == {"graph": "g"}
