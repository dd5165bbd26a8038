"""Classic CNN architectures as older exporters saved them (opsets 8 to 12, with the op forms of
those opsets: BatchNormalization's `spatial`, Unsqueeze's and Pad's attributes, Upsample, a
batch-keeping Reshape through Shape -> Gather -> Unsqueeze -> Concat) import as shipped, compile,
run and match onnxruntime running the same file; so do the nine classic CNNs the onnx package
ships (`onnx/backend/test/data/light`, weights given as ConstantOfShape fills, the largest of
which run as `ge.expand`s)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dfir
from dfir.ge.graph import Graph

RNG = np.random.default_rng(11)
OPSETS = [8, 9, 10, 11, 12]


class Net:
    """A model under construction: nodes and weights, with fresh names for both."""

    def __init__(self, opset: int):
        self.opset = opset
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []

    def node(self, op: str, inputs: list[str], **attrs) -> str:
        name = f"{op.lower()}{len(self.nodes)}"
        self.nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def weight(self, array: np.ndarray) -> str:
        name = f"w{len(self.weights)}"
        self.weights.append(numpy_helper.from_array(array, name))
        return name

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, pad: int = 0, group: int = 1) -> str:
        w = (RNG.standard_normal((cout, cin // group, k, k)) / np.sqrt(cin // group * k * k)).astype(np.float32)
        b = (RNG.standard_normal(cout) * 0.1).astype(np.float32)
        return self.node("Conv", [x, self.weight(w), self.weight(b)], kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4, group=group)

    def batch_norm(self, x: str, channels: int) -> str:
        params = [RNG.uniform(0.5, 1.5, channels), RNG.standard_normal(channels) * 0.1,
                  RNG.standard_normal(channels) * 0.1, RNG.uniform(0.5, 1.5, channels)]
        old = {"spatial": 1} if self.opset < 9 else {}  # BatchNormalization-7's attribute
        return self.node("BatchNormalization", [x, *(self.weight(p.astype(np.float32)) for p in params)],
                         epsilon=1e-3, momentum=0.9, **old)

    def conv_bn_relu(self, x: str, cin: int, cout: int, k: int, stride: int = 1, pad: int = 0, group: int = 1) -> str:
        return self.node("Relu", [self.batch_norm(self.conv(x, cin, cout, k, stride, pad, group), cout)])

    def dense(self, x: str, fan_in: int, fan_out: int) -> str:
        w = (RNG.standard_normal((fan_out, fan_in)) / np.sqrt(fan_in)).astype(np.float32)
        return self.node("Gemm", [x, self.weight(w), self.weight(np.zeros(fan_out, np.float32))], transB=1)

    def view_batch(self, x: str) -> str:
        """x.view(x.size(0), -1) as exporters wrote it."""
        batch = self.node("Gather", [self.node("Shape", [x]), self.weight(np.array(0, np.int64))], axis=0)
        if self.opset < 13:
            batch = self.node("Unsqueeze", [batch], axes=[0])
        target = self.node("Concat", [batch, self.weight(np.array([-1], np.int64))], axis=0)
        return self.node("Reshape", [x, target])

    def pad(self, x: str, pads: list[int]) -> str:
        if self.opset < 11:
            return self.node("Pad", [x], pads=pads, mode="constant", value=0.0)
        return self.node("Pad", [x, self.weight(np.array(pads, np.int64))], mode="constant")

    def upsample2x(self, x: str) -> str:
        scales = np.array([1, 1, 2, 2], np.float32)
        if self.opset < 9:
            return self.node("Upsample", [x], mode="linear", scales=scales.tolist())
        if self.opset < 10:
            return self.node("Upsample", [x, self.weight(scales)], mode="linear")
        if self.opset < 11:
            return self.node("Resize", [x, self.weight(scales)], mode="linear")
        return self.node("Resize", [x, self.weight(np.zeros(0, np.float32)), self.weight(scales)], mode="linear",
                         coordinate_transformation_mode="asymmetric")

    def model(self, name: str, shape: list, output: str, classes: int) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", *shape])],
                                  [helper.make_tensor_value_info(output, TensorProto.FLOAT, ["N", classes])],
                                  self.weights)
        proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  ir_version=min(7, onnx.IR_VERSION))
        onnx.checker.check_model(proto)
        return proto


def lenet(opset: int) -> onnx.ModelProto:
    n = Net(opset)
    h = n.node("MaxPool", [n.node("Relu", [n.conv("x", 1, 6, 5, pad=2)])], kernel_shape=[2, 2], strides=[2, 2])
    h = n.node("MaxPool", [n.node("Relu", [n.conv(h, 6, 16, 5)])], kernel_shape=[2, 2], strides=[2, 2])
    h = n.node("Relu", [n.dense(n.view_batch(h), 16 * 5 * 5, 120)])
    return n.model("lenet", [1, 28, 28], n.node("Softmax", [n.dense(h, 120, 10)], axis=1), 10)


def vgg(opset: int) -> onnx.ModelProto:
    n = Net(opset)
    h = n.conv_bn_relu(n.conv_bn_relu("x", 3, 8, 3, pad=1), 8, 8, 3, pad=1)
    h = n.node("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = n.node("MaxPool", [n.node("Relu", [n.conv(h, 8, 16, 3, pad=1)])], kernel_shape=[2, 2], strides=[2, 2])
    h = n.node("Relu", [n.dense(n.node("Flatten", [h], axis=1), 16 * 4 * 4, 32)])
    return n.model("vgg", [3, 16, 16], n.dense(h, 32, 10), 10)


def resnet(opset: int) -> onnx.ModelProto:
    n = Net(opset)
    stem = n.node("MaxPool", [n.conv_bn_relu("x", 3, 8, 7, stride=2, pad=3)], kernel_shape=[3, 3], strides=[2, 2],
                  pads=[1, 1, 1, 1])
    body = n.batch_norm(n.conv(n.conv_bn_relu(stem, 8, 8, 3, pad=1), 8, 8, 3, pad=1), 8)
    block = n.node("Relu", [n.node("Add", [body, stem])])
    down = n.batch_norm(n.conv(n.conv_bn_relu(block, 8, 16, 3, stride=2, pad=1), 16, 16, 3, pad=1), 16)
    projection = n.batch_norm(n.conv(block, 8, 16, 1, stride=2), 16)
    h = n.node("GlobalAveragePool", [n.node("Relu", [n.node("Add", [down, projection])])])
    return n.model("resnet", [3, 32, 32], n.dense(n.node("Flatten", [h]), 16, 10), 10)


def squeezenet(opset: int) -> onnx.ModelProto:
    n = Net(opset)
    h = n.node("MaxPool", [n.node("Relu", [n.conv("x", 3, 16, 3, stride=2)])], kernel_shape=[3, 3], strides=[2, 2],
               ceil_mode=1) if opset >= 10 else n.node("MaxPool", [n.node("Relu", [n.conv("x", 3, 16, 3, stride=2)])],
                                                      kernel_shape=[3, 3], strides=[2, 2])
    squeeze = n.node("Relu", [n.conv(h, 16, 4, 1)])
    fire = n.node("Concat", [n.node("Relu", [n.conv(squeeze, 4, 8, 1)]), n.node("Relu", [n.conv(squeeze, 4, 8, 3, pad=1)])],
                  axis=1)
    h = n.node("AveragePool", [fire], kernel_shape=[2, 2], strides=[2, 2])
    h = n.node("GlobalAveragePool", [n.node("Relu", [n.conv(h, 16, 10, 1)])])
    return n.model("squeezenet", [3, 33, 33], n.node("Softmax", [n.node("Flatten", [h])], axis=1), 10)


def mobilenet(opset: int) -> onnx.ModelProto:
    n = Net(opset)
    h = n.conv_bn_relu(n.pad("x", [0, 0, 1, 1, 0, 0, 1, 1]), 3, 8, 3, stride=2)
    depthwise = n.conv_bn_relu(h, 8, 8, 3, pad=1, group=8)
    pointwise = n.conv_bn_relu(depthwise, 8, 16, 1)
    low = n.conv_bn_relu(pointwise, 16, 16, 3, stride=2, pad=1, group=16)
    merged = n.node("Concat", [pointwise, n.upsample2x(low)], axis=1)
    h = n.node("GlobalAveragePool", [n.conv_bn_relu(merged, 32, 16, 1)])
    return n.model("mobilenet", [3, 16, 16], n.dense(n.view_batch(h), 16, 10), 10)


MODELS = {"lenet": (lenet, [1, 28, 28]), "vgg": (vgg, [3, 16, 16]), "resnet": (resnet, [3, 32, 32]),
          "squeezenet": (squeezenet, [3, 33, 33]), "mobilenet": (mobilenet, [3, 16, 16])}


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("architecture", MODELS)
def test_classic_cnn_saved_at_an_old_opset_matches_onnxruntime(architecture, opset, tmp_path):
    build, shape = MODELS[architecture]
    proto = build(opset)
    path = tmp_path / f"{architecture}.onnx"
    onnx.save(proto, path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    with dfir.load(dfir.compile(Graph.from_onnx(path), {"dfir.ge.backend": "reference"}).om) as model:
        for batch in (1, 3):
            x = RNG.standard_normal((batch, *shape)).astype(np.float32)
            model.feed_data([x])
            outputs, _, ret = model.fetch_data(timeout=20000)
            assert ret == 0
            np.testing.assert_allclose(outputs[0].numpy(), session.run(None, {"x": x})[0], rtol=1e-4, atol=1e-5)


LIGHT = sorted((Path(onnx.__file__).parent / "backend" / "test" / "data" / "light").glob("light_*.onnx"))


def test_the_onnx_package_ships_nine_classic_cnns():
    assert [p.stem.removeprefix("light_") for p in LIGHT] == [
        "bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet", "squeezenet",
        "vgg19", "zfnet512"]


@pytest.mark.parametrize("path", LIGHT, ids=[p.stem for p in LIGHT])
def test_a_classic_cnn_of_the_onnx_package_matches_onnxruntime(path):
    """Each imports as shipped; the fills too large to fold (AlexNet's, VGG-19's and ZFNet-512's
    fully connected weights) become a const of one value expanded at run time."""
    graph = Graph.from_onnx(path)
    large = {"light_bvlc_alexnet": 1, "light_vgg19": 1, "light_zfnet512": 1}  # fc6: over 2^24 elements
    assert str(graph.to_ir()).count(" = ge.expand ") == large.get(path.stem, 0)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feed = session.get_inputs()[0]
    x = RNG.random([d if isinstance(d, int) else 1 for d in feed.shape], np.float32)
    with dfir.load(dfir.compile(graph, {"dfir.ge.backend": "reference"}).om) as model:
        model.feed_data([x])
        outputs, _, ret = model.fetch_data(timeout=120000)
    assert ret == 0
    np.testing.assert_allclose(outputs[0].numpy(), session.run(None, {feed.name: x})[0], rtol=1e-4, atol=1e-6)
