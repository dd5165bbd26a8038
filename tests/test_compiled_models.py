"""Whole ONNX models, imported and compiled, on the reference kernels and on IREE's CPU backend,
checked against onnxruntime (the oracle): an MLP, a small CNN and a transformer block, each through
`dfir.compile` / `dfir.load`, and the CNN through the FlowGraph path users take (a saved model and
a compile config declaring a batch range with `ge.inputShape`)."""
from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import given, settings, strategies as st
from onnx import TensorProto, helper, numpy_helper

import dfir
import dfir.dataflow as df
from dfir.core.errors import GeError
from dfir.ge.graph import Graph
from dfir.om.plan import Plan
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om

BACKENDS = ("reference", "iree-cpu")
WAIT_MS = 60_000
S, D, H = 16, 32, 2  # the transformer block: sequence length, model width, heads


def _model(name: str, nodes: list, x_dims: list, y_dims: list, weights: dict, opset: int = 18) -> onnx.ModelProto:
    """A model of one float input `x` and one float output `y`; `weights` are its initializers."""
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_dims)],
                              [numpy_helper.from_array(array, n) for n, array in weights.items()])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(proto)
    return proto


def _scaled(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Normal weights scaled by 1/sqrt(fan-in), so activations stay near unit size."""
    return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]) or 1)).astype(np.float32)


def mlp() -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    n = helper.make_node
    nodes = [n("Gemm", ["x", "w1", "b1"], ["h1"], transB=1), n("Relu", ["h1"], ["a1"]),
             n("Gemm", ["a1", "w2", "b2"], ["h2"], transB=1), n("Relu", ["h2"], ["a2"]),
             n("Gemm", ["a2", "w3", "b3"], ["h3"], transB=1), n("Softmax", ["h3"], ["y"])]
    sizes = {"w1": (64, 48), "b1": (64,), "w2": (32, 64), "b2": (32,), "w3": (10, 32), "b3": (10,)}
    return _model("mlp", nodes, ["N", 48], ["N", 10], {k: _scaled(rng, *s) for k, s in sizes.items()})


def cnn() -> onnx.ModelProto:
    """3x16x16 images: two conv-relu-maxpool blocks, a global average pool and a dense layer."""
    rng = np.random.default_rng(2)
    n = helper.make_node
    nodes, weights, x = [], {}, "x"
    for i, (cin, cout) in enumerate([(3, 8), (8, 16)]):
        nodes += [n("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], pads=[1, 1, 1, 1]), n("Relu", [f"c{i}"], [f"r{i}"]),
                  n("MaxPool", [f"r{i}"], [f"p{i}"], kernel_shape=[2, 2], strides=[2, 2])]
        weights |= {f"w{i}": _scaled(rng, cout, cin, 3, 3), f"b{i}": _scaled(rng, cout)}
        x = f"p{i}"
    nodes += [n("GlobalAveragePool", [x], ["g"]), n("Flatten", ["g"], ["f"]),
              n("Gemm", ["f", "wd", "bd"], ["y"], transB=1)]
    weights |= {"wd": _scaled(rng, 10, 16), "bd": _scaled(rng, 10)}
    return _model("cnn", nodes, ["N", 3, 16, 16], ["N", 10], weights)


def transformer_block() -> onnx.ModelProto:
    """Pre-norm attention (H heads of D/H) with a residual, then a pre-norm Gelu MLP with a residual."""
    rng = np.random.default_rng(3)
    n, dh = helper.make_node, D // H
    nodes = [n("LayerNormalization", ["x", "g1", "b1"], ["ln1"], axis=-1, epsilon=1e-5)]
    for p, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):  # k comes transposed
        nodes += [n("MatMul", ["ln1", f"w{p}"], [p]), n("Reshape", [p, "heads"], [f"{p}h"]),
                  n("Transpose", [f"{p}h"], [f"{p}t"], perm=perm)]
    nodes += [n("MatMul", ["qt", "kt"], ["scores"]), n("Div", ["scores", "sqrt_dh"], ["scaled"]),
              n("Softmax", ["scaled"], ["attn"], axis=-1), n("MatMul", ["attn", "vt"], ["ctx"]),
              n("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]), n("Reshape", ["ctx_t", "merged"], ["ctx_m"]),
              n("MatMul", ["ctx_m", "wo"], ["o"]), n("Add", ["x", "o"], ["r1"]),
              n("LayerNormalization", ["r1", "g2", "b2"], ["ln2"], axis=-1, epsilon=1e-5),
              n("MatMul", ["ln2", "w1"], ["h"]), n("Gelu", ["h"], ["a"]), n("MatMul", ["a", "w2"], ["m"]),
              n("Add", ["r1", "m"], ["y"])]
    weights = {w: _scaled(rng, D, D).T.copy() for w in ("wq", "wk", "wv", "wo")}
    weights |= {"w1": _scaled(rng, 4 * D, D).T.copy(), "w2": _scaled(rng, D, 4 * D).T.copy(),
                "heads": np.array([0, S, H, dh], np.int64), "merged": np.array([0, S, D], np.int64),
                "sqrt_dh": np.array(np.sqrt(dh), np.float32)}
    for i in (1, 2):
        weights |= {f"g{i}": (1 + 0.1 * rng.standard_normal(D)).astype(np.float32),
                    f"b{i}": (0.1 * rng.standard_normal(D)).astype(np.float32)}
    return _model("block", nodes, ["N", S, D], ["N", S, D], weights, opset=20)


MODELS = {"mlp": (mlp, (3, 48)), "cnn": (cnn, (2, 3, 16, 16)), "transformer_block": (transformer_block, (2, S, D))}


def onnxruntime_result(proto: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def assert_matches_onnxruntime(result: np.ndarray, proto: onnx.ModelProto, x: np.ndarray) -> None:
    expected = onnxruntime_result(proto, x)
    assert result.shape == expected.shape and result.dtype == expected.dtype
    np.testing.assert_allclose(result, expected, rtol=1e-4, atol=1e-5)


def graph_backends(om: bytes) -> list[str]:
    model = read_om(om).models[0]
    return [g.backend for g in Plan.from_json(model.partition(PartitionType.FLOW_MODEL).data).ge_graphs]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", MODELS)
def test_an_imported_model_computes_what_onnxruntime_does(name, backend):
    build, shape = MODELS[name]
    proto = build()
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    om = dfir.compile(Graph.from_onnx(proto), {"dfir.ge.backend": backend}).om
    assert graph_backends(om) == [backend]
    with dfir.load(om) as model:
        assert model.feed_data([x]) == 0
        outputs, _, ret = model.fetch_data(timeout=WAIT_MS)
    assert ret == 0
    assert_matches_onnxruntime(outputs[0].numpy(), proto, x)


@pytest.fixture(scope="module")
def cnn_flow(tmp_path_factory):
    """The CNN saved as a file, in a FlowGraph whose compile config declares batches 1 to 8 and
    iree-cpu; compiled and loaded once (on its first feed) for every test that uses it."""
    folder = tmp_path_factory.mktemp("cnn_flow")
    proto = cnn()
    onnx.save(proto, folder / "cnn.onnx")
    config = folder / "cnn.json"
    config.write_text(json.dumps({"build_options": {"ge.inputShape": "x:1~8,3,16,16",
                                                    "dfir.ge.backend": "iree-cpu"}}))
    data = df.FlowData(name="images")
    point = df.GraphProcessPoint(df.Framework.ONNX, str(folder / "cnn.onnx"), compile_config_path=str(config))
    flow_graph = df.FlowGraph([point.fnode(1, 1, name="classify")(data)], name="classifier")
    yield flow_graph, data, proto
    df.finalize()


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 8), seed=st.integers(0, 2**32 - 1))
def test_a_flow_graph_runs_a_saved_model_on_every_batch_its_range_allows(cnn_flow, batch, seed):
    flow_graph, data, proto = cnn_flow
    x = np.random.default_rng(seed).standard_normal((batch, 3, 16, 16)).astype(np.float32)
    assert flow_graph.feed_data({data: x}) == 0
    outputs, _, ret = flow_graph.fetch_data(timeout=WAIT_MS)
    assert ret == 0
    assert_matches_onnxruntime(outputs[0].numpy(), proto, x)
    assert graph_backends(flow_graph.compile().om) == ["iree-cpu"]


@pytest.mark.parametrize("batch", [0, 9, 64])
def test_a_batch_outside_the_declared_range_is_refused(cnn_flow, batch):
    flow_graph, data, proto = cnn_flow
    ret = flow_graph.feed_data({data: np.zeros((batch, 3, 16, 16), np.float32)})
    assert (ret, ret.message) == (145021, f"input 'images' is DT_FLOAT [{batch}, 3, 16, 16], but it feeds input 0 of "
                                          "GE graph cnn (node classify), which takes DT_FLOAT [1~8, 3, 16, 16]")
    x = np.ones((8, 3, 16, 16), np.float32)  # the model still runs the batches it takes
    assert flow_graph.feed_data({data: x}) == 0
    outputs, _, ret = flow_graph.fetch_data(timeout=WAIT_MS)
    assert ret == 0
    assert_matches_onnxruntime(outputs[0].numpy(), proto, x)
