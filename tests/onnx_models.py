"""Building ONNX models in tests: tensors, value infos, one-graph models, onnxruntime's answer, and
dfir's (an imported graph compiled for the reference backend and run once)."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import dfir

RNG = np.random.default_rng(7)


def weight(name: str, shape, scale: float = 0.5) -> onnx.TensorProto:
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def ints(name: str, values) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def tensor_info(name: str, shape, elem=TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, initializers=(), opset: int = 18, name: str = "net") -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def reference(proto: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def run_reference(graph, *inputs: np.ndarray) -> list[np.ndarray]:
    """The outputs of `graph` (a `dfir.ge.graph.Graph`) compiled for the reference backend, loaded and fed once."""
    with dfir.load(dfir.compile(graph, {"dfir.ge.backend": "reference"}).om) as runtime:
        runtime.feed_data(list(inputs))
        outputs, _, ret = runtime.fetch_data(timeout=5000)
    assert ret == 0, ret
    return [o.numpy() for o in outputs]
