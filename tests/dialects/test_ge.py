"""Every ge op against onnxruntime, its shape function over ranges, and its error messages.

Each op runs as a one-node ONNX model with random inputs: onnxruntime computes the expected
outputs; dfir imports the model, lowers the graph and runs it with the reference kernels. Every
result must match within float tolerance and lie inside the type the shape function inferred
(exactly that type when the inputs are static). Ops ONNX spells differently (batch_matmul's
adjoints, variables) run against an equivalent ONNX model.
"""
from __future__ import annotations

import math

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, StringAttr, UnitAttr, f32, f64, i32, i64
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

import dfir.data_type as dt
from dfir.dialects import ge
from dfir.dialects.ge_types import DimRange, GeTensorType
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.lowering.ge_graph import lower_ge_graph
from dfir.runtime.ge.graph_runner import GeGraphRunner
from dfir.runtime.ge.kernels import KERNELS

F32 = dt.DT_FLOAT
EXAMPLES = settings(max_examples=20, deadline=None)


# --- harness -------------------------------------------------------------------------------------

def onnx_model(nodes: list[onnx.NodeProto], inputs: dict[str, np.ndarray],
               weights: dict[str, np.ndarray] | None = None, opset: int = 18,
               dynamic: bool | set[str] = False) -> onnx.ModelProto:
    """A model running `nodes` on `inputs` (static shapes, or dynamic dimensions for all inputs or
    the `dynamic` ones) with `weights` as initializers; its outputs are the last node's, typed by
    ONNX shape inference."""
    def info(name, array):
        unknown = dynamic is True or (dynamic and name in dynamic)
        shape = [f"{name}_{i}" for i in range(array.ndim)] if unknown else list(array.shape)
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), shape)
    initializers = [numpy_helper.from_array(a, n) for n, a in (weights or {}).items()]
    graph = helper.make_graph(nodes, "g", [info(n, a) for n, a in inputs.items()], [], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    typed = {vi.name: vi for vi in onnx.shape_inference.infer_shapes(model, strict_mode=True).graph.value_info}
    model.graph.output.extend(typed[o] for o in nodes[-1].output if o)
    return model


def onnxruntime_outputs(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, inputs)


def pack(weights: list[np.ndarray], align: int = 64) -> tuple[list[dict], bytes]:
    """Weight arrays laid out as a WEIGHTS_DATA partition."""
    buffer, descs = bytearray(), []
    for array in weights:
        buffer += bytes(-len(buffer) % align)
        descs.append({"offset": len(buffer), "size": array.nbytes, "dtype": dt.from_numpy(array.dtype).name,
                      "shape": list(array.shape)})
        buffer += array.tobytes()
    return descs, bytes(buffer)


def run_graph(graph: Graph, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], list[GeTensorType]]:
    """The graph's outputs from the reference kernels, and their inferred types."""
    graph_op = graph.to_ir()
    entry, weights = lower_ge_graph(graph_op)
    entry["weights"], buffer = pack(weights)
    return GeGraphRunner(entry, buffer).run(inputs), [v.type for v in graph_op.output_op.outputs]


def check(model: onnx.ModelProto, inputs: dict[str, np.ndarray], rtol: float = 1e-5, atol: float = 1e-5,
          graph: Graph | None = None) -> list[np.ndarray]:
    """dfir (the imported model, or `graph`) agrees with onnxruntime; results fit their types."""
    expected = onnxruntime_outputs(model, inputs)
    graph = graph or Graph.from_onnx(model)
    got, types = run_graph(graph, [inputs[i.name] for i in graph.inputs])
    static = all(d != -1 for i in graph.inputs for d in i.shape)
    for result, reference, t in zip(got, expected, types, strict=True):
        assert result.dtype == reference.dtype and result.shape == reference.shape
        np.testing.assert_allclose(result, reference, rtol=rtol, atol=atol)
        assert len(t.dims) == result.ndim and all(d.contains(s) for d, s in zip(t.dims, result.shape))
        if static:
            assert t.shape == list(result.shape)
    return got


def node(op_type: str, inputs: list[str], outputs: int | list[str] = 1, **attrs) -> onnx.NodeProto:
    names = [f"y{i}" for i in range(outputs)] if isinstance(outputs, int) else outputs
    return helper.make_node(op_type, inputs, names, name=op_type.lower(), **attrs)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def floats(shape, seed: int = 0, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return rng(seed).uniform(low, high, shape).astype(np.float32)


# --- element-wise ----------------------------------------------------------------------------------

@EXAMPLES
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
       op=st.sampled_from(["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"]), seed=st.integers(0, 2**16))
def test_binary_ops_broadcast_like_onnxruntime(shapes, op, seed):
    lhs_shape, rhs_shape = shapes.input_shapes
    low = 0.5 if op == "Pow" else -2.0
    inputs = {"a": floats(lhs_shape, seed, low), "b": floats(rhs_shape, seed + 1, 0.5, 2.0)}
    check(onnx_model([node(op, ["a", "b"])], inputs), inputs)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_division_truncates_like_onnxruntime(dtype):
    inputs = {"a": np.array([7, -7, 7, -7, 0, 9], dtype), "b": np.array([2, 2, -2, -2, 3, 3], dtype)}
    (got,) = check(onnx_model([node("Div", ["a", "b"])], inputs), inputs)
    assert got.tolist() == [3, -3, -3, 3, 0, 3]


def test_variadic_max_and_min_chain_binary_ops():
    inputs = {"a": floats((2, 3)), "b": floats((3,), 1), "c": floats((2, 1), 2)}
    check(onnx_model([node("Max", ["a", "b", "c"])], inputs), inputs)
    check(onnx_model([node("Min", ["a"])], {"a": inputs["a"]}), {"a": inputs["a"]})


def test_pow_casts_an_exponent_of_another_type():
    inputs = {"a": floats((3, 4), low=0.5)}
    model = onnx_model([node("Pow", ["a", "e"])], inputs, {"e": np.array(3, np.int64)})
    check(model, inputs)


UNARY = [("Sqrt", 0.01, 4.0), ("Exp", -3.0, 3.0), ("Log", 0.01, 4.0), ("Tanh", -4.0, 4.0),
         ("Sigmoid", -30.0, 30.0), ("Erf", -4.0, 4.0), ("Relu", -2.0, 2.0), ("Identity", -2.0, 2.0)]


@pytest.mark.parametrize("op, low, high", UNARY, ids=[u[0] for u in UNARY])
def test_unary_ops_match_onnxruntime(op, low, high):
    inputs = {"x": rng(3).uniform(low, high, (4, 5, 6)).astype(np.float32)}
    check(onnx_model([node(op, ["x"])], inputs, dynamic=True), inputs, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_onnxruntime(approximate):
    inputs = {"x": floats((3, 64), low=-6.0, high=6.0)}
    check(onnx_model([node("Gelu", ["x"], approximate=approximate)], inputs, opset=20), inputs, atol=2e-6)


def test_erf_in_double_precision():
    x = np.linspace(-7, 7, 1001)
    expected = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(KERNELS["erf"]([x], {})[0], expected, rtol=0, atol=1e-14)


# --- matrix products ---------------------------------------------------------------------------------

@EXAMPLES
@given(batch=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3),
       m=st.integers(1, 4), k=st.integers(1, 5), n=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_matmul_matches_onnxruntime(batch, m, k, n, seed):
    inputs = {"a": floats((*batch.input_shapes[0], m, k), seed), "b": floats((*batch.input_shapes[1], k, n), seed + 1)}
    check(onnx_model([node("MatMul", ["a", "b"])], inputs), inputs)


@pytest.mark.parametrize("lhs, rhs", [((4,), (4, 3)), ((2, 3, 4), (4,)), ((4,), (4,))])
def test_matmul_of_vectors_matches_onnxruntime(lhs, rhs):
    inputs = {"a": floats(lhs), "b": floats(rhs, 1)}
    check(onnx_model([node("MatMul", ["a", "b"])], inputs), inputs)


@pytest.mark.parametrize("adj_x, adj_y", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_matmul_adjoints_match_transpose_and_matmul(adj_x, adj_y):
    a, b = floats((2, 3, 4)), floats((1, 4, 5), 1)
    a_in = np.swapaxes(a, -1, -2).copy() if adj_x else a
    b_in = np.swapaxes(b, -1, -2).copy() if adj_y else b
    nodes = [node("Transpose", ["a"], ["at"], perm=[0, 2, 1]) if adj_x else node("Identity", ["a"], ["at"]),
             helper.make_node("Transpose" if adj_y else "Identity", ["b"], ["bt"], **({"perm": [0, 2, 1]} if adj_y else {})),
             node("MatMul", ["at", "bt"])]
    g = Graph("batch_matmul")
    x, y = g.data(0, list(a_in.shape), F32, name="a"), g.data(1, list(b_in.shape), F32, name="b")
    g.set_outputs([g.batch_matmul(x, y, adj_x=adj_x, adj_y=adj_y)])
    inputs = {"a": a_in, "b": b_in}
    check(onnx_model(nodes, inputs), inputs, graph=g)


@pytest.mark.parametrize("trans_a, trans_b, alpha, beta, c_shape",
                         [(0, 0, 1.0, 1.0, (5,)), (1, 0, 0.5, 2.0, (3, 5)), (0, 1, 1.0, 1.0, None),
                          (1, 1, -1.5, 0.25, (3, 1)), (0, 0, 2.0, 1.0, ())])
def test_gemm_matches_onnxruntime(trans_a, trans_b, alpha, beta, c_shape):
    a = floats((4, 3) if trans_a else (3, 4))
    b = floats((5, 4) if trans_b else (4, 5), 1)
    weights = {"b": b} | ({} if c_shape is None else {"c": floats(c_shape, 2)})
    gemm = node("Gemm", ["a", "b"] + ([] if c_shape is None else ["c"]), transA=trans_a, transB=trans_b,
                alpha=alpha, beta=beta)
    check(onnx_model([gemm], {"a": a}, weights), {"a": a})


# --- convolution and pooling ---------------------------------------------------------------------------

@st.composite
def windows(draw, max_kernel: int = 3, pool: bool = False, spatial: int | None = 2):
    """(input shape, kernel, strides, pads as ONNX [begins..., ends...], dilations) that fit over
    `spatial` dimensions (None: 1 to 3 of them); a pool's pads stay below its kernel, as
    onnxruntime requires."""
    spatial = spatial or draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, max_kernel)) for _ in range(spatial)]
    dilations = [draw(st.integers(1, 2)) for _ in range(spatial)]
    extents = [d * (k - 1) + 1 for k, d in zip(kernel, dilations)]
    limits = kernel if pool else extents
    pads = [draw(st.integers(0, n - 1)) for n in limits] + [draw(st.integers(0, n - 1)) for n in limits]
    largest = 9 if spatial < 3 else 6
    sizes = [draw(st.integers(max(1, e - pads[i] - pads[i + spatial]), max(largest, e)))
             for i, e in enumerate(extents)]
    strides = [draw(st.integers(1, 3)) for _ in range(spatial)]
    return sizes, kernel, strides, pads, dilations


@EXAMPLES
@given(window=windows(spatial=None), groups=st.sampled_from([1, 2]), per_group=st.integers(1, 2),
       bias=st.booleans(), seed=st.integers(0, 2**16))
def test_conv_matches_onnxruntime(window, groups, per_group, bias, seed):
    sizes, kernel, strides, pads, dilations = window
    inputs = {"x": floats((2, groups * per_group, *sizes), seed)}
    weights = {"w": floats((2 * groups, per_group, *kernel), seed + 1)} | ({"b": floats((2 * groups,), seed + 2)} if bias else {})
    conv = node("Conv", ["x", *weights], strides=strides, pads=pads, dilations=dilations, group=groups)
    check(onnx_model([conv], inputs, weights), inputs, atol=1e-4)


@pytest.mark.parametrize("sizes, kernel, attrs, zeros", [
    ((5, 6), (3, 2), dict(pads=[1, 0, 1, 1], strides=[2, 1]), "both"), ((7,), (3,), dict(dilations=[2]), "x"),
    ((4, 4), (2, 2), dict(group=2), "none"), ((4, 5), (2, 3), dict(pads=[0, 1, 1, 0]), "per channel")])
def test_conv_integer_matches_onnxruntime(sizes, kernel, attrs, zeros):
    """Exact int32 results of uint8 inputs minus their zero points (per output channel for w)."""
    inputs = {"x": rng(1).integers(0, 256, (1, 2, *sizes)).astype(np.uint8)}
    weights = {"w": rng(2).integers(0, 256, (4, 2 // attrs.get("group", 1), *kernel)).astype(np.uint8)}
    weights |= {"x_zero": np.array(131, np.uint8)} if zeros != "none" else {}
    weights |= {"w_zero": np.array(97, np.uint8)} if zeros in ("both", "per channel") else {}
    if zeros == "per channel":  # onnxruntime takes one w zero point only: onnx's reference checks this
        weights["w_zero"] = rng(3).integers(0, 256, 4).astype(np.uint8)
    conv = node("ConvInteger", ["x", "w", *(["x_zero"] if zeros != "none" else []),
                                *(["w_zero"] if "w_zero" in weights else [])], **attrs)
    model = onnx_model([conv], inputs, weights)
    if zeros != "per channel":
        check(model, inputs, rtol=0, atol=0)
        return
    (expected,) = ReferenceEvaluator(model).run(None, inputs)
    (got,), _ = run_graph(Graph.from_onnx(model), [inputs["x"]])
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
def test_conv_auto_pad_matches_onnxruntime(auto_pad):
    inputs = {"x": floats((1, 2, 7, 6))}
    weights = {"w": floats((3, 2, 3, 2), 1)}
    check(onnx_model([node("Conv", ["x", "w"], auto_pad=auto_pad, strides=[2, 1])], inputs, weights), inputs)


@EXAMPLES
@given(window=windows(pool=True, spatial=None), ceil_mode=st.booleans(), seed=st.integers(0, 2**16))
def test_max_pool_matches_onnxruntime(window, ceil_mode, seed):
    sizes, kernel, strides, pads, dilations = window
    inputs = {"x": floats((1, 2, *sizes), seed)}
    pool = node("MaxPool", ["x"], kernel_shape=kernel, strides=strides, pads=pads, dilations=dilations,
                ceil_mode=int(ceil_mode))
    check(onnx_model([pool], inputs), inputs)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_integer_max_pool_matches_onnxruntime(dtype):
    inputs = {"x": rng(5).integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (1, 2, 5, 6), endpoint=True).astype(dtype)}
    pool = node("MaxPool", ["x"], kernel_shape=[3, 3], strides=[2, 1], pads=[1, 1, 1, 1], ceil_mode=1)
    check(onnx_model([pool], inputs), inputs)


@EXAMPLES
@given(window=windows(pool=True, spatial=None), ceil_mode=st.booleans(), count_include_pad=st.booleans(),
       seed=st.integers(0, 2**16))
def test_avg_pool_matches_onnxruntime(window, ceil_mode, count_include_pad, seed):
    sizes, kernel, strides, pads, _ = window
    inputs = {"x": floats((1, 2, *sizes), seed)}
    pool = node("AveragePool", ["x"], kernel_shape=kernel, strides=strides, pads=pads, ceil_mode=int(ceil_mode),
                count_include_pad=int(count_include_pad))
    check(onnx_model([pool], inputs), inputs)


@EXAMPLES
@given(window=windows(pool=True, spatial=None), p=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_lp_pool_matches_onnxruntime(window, p, seed):
    sizes, kernel, strides, pads, dilations = window
    inputs = {"x": floats((1, 2, *sizes), seed)}
    pool = node("LpPool", ["x"], kernel_shape=kernel, strides=strides, pads=pads, dilations=dilations, p=p)
    check(onnx_model([pool], inputs), inputs, rtol=1e-4, atol=1e-5)


def test_lp_pool_refuses_ceil_mode():
    model = onnx_model([node("LpPool", ["x"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)],
                       {"x": floats((1, 2, 5, 5))})
    with pytest.raises(GeError, match=r"node=lppool; LpPool: ceil_mode 1 is not supported$"):
        Graph.from_onnx(model)


@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 2, 4, 3), (1, 2, 3, 4, 2)])
def test_global_max_pool_matches_onnxruntime(shape):
    inputs = {"x": floats(shape)}
    check(onnx_model([node("GlobalMaxPool", ["x"])], inputs), inputs)


def test_global_avg_pool_matches_onnxruntime():
    inputs = {"x": floats((2, 3, 5, 4))}
    check(onnx_model([node("GlobalAveragePool", ["x"])], inputs, dynamic=True), inputs)


# --- normalization ---------------------------------------------------------------------------------

def test_batch_norm_matches_onnxruntime():
    inputs = {"x": floats((2, 3, 4, 5))}
    weights = {"scale": floats((3,), 1), "bias": floats((3,), 2), "mean": floats((3,), 3),
               "var": floats((3,), 4, 0.5, 2.0)}
    check(onnx_model([node("BatchNormalization", ["x", *weights], epsilon=1e-3)], inputs, weights), inputs)


@pytest.mark.parametrize("axis, scale_shape, bias", [(-1, (6,), True), (1, (4, 6), False), (1, (1, 6), True)])
def test_layer_norm_matches_onnxruntime(axis, scale_shape, bias):
    inputs = {"x": floats((2, 4, 6))}
    weights = {"scale": floats(scale_shape, 1)} | ({"bias": floats(scale_shape, 2)} if bias else {})
    check(onnx_model([node("LayerNormalization", ["x", *weights], axis=axis)], inputs, weights), inputs, atol=1e-4)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_matches_onnxruntime(axis):
    inputs = {"x": floats((3, 4, 5), low=-10.0, high=10.0)}
    check(onnx_model([node("Softmax", ["x"], axis=axis)], inputs), inputs)


# --- data movement ----------------------------------------------------------------------------------

@pytest.mark.parametrize("target, dynamic", [([0, -1], False), ([-1, 5], True), ([2, 0, 2, -1], False)])
def test_reshape_matches_onnxruntime(target, dynamic):
    inputs = {"x": floats((4, 3, 5))}
    model = onnx_model([node("Reshape", ["x", "shape"])], inputs, {"shape": np.array(target, np.int64)},
                       dynamic=dynamic)
    check(model, inputs)


@EXAMPLES
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=4), data=st.data())
def test_transpose_matches_onnxruntime(shape, data):
    perm = data.draw(st.permutations(range(len(shape))))
    inputs = {"x": floats(shape)}
    check(onnx_model([node("Transpose", ["x"], perm=list(perm))], inputs), inputs)
    check(onnx_model([node("Transpose", ["x"])], inputs), inputs)


def test_concat_matches_onnxruntime():
    inputs = {"a": floats((2, 1, 3)), "b": floats((2, 4, 3), 1)}
    weights = {"c": floats((2, 2, 3), 2)}
    check(onnx_model([node("Concat", ["a", "b", "c"], axis=-2)], inputs, weights), inputs)


@pytest.mark.parametrize("sizes, outputs, attrs", [([1, 3, 2], 3, {}), (None, 3, {"num_outputs": 3}),
                                                   (None, 2, {"num_outputs": 2})])
def test_split_matches_onnxruntime(sizes, outputs, attrs):
    inputs = {"x": floats((2, 6 if outputs == 3 else 5))}
    weights = {} if sizes is None else {"split": np.array(sizes, np.int64)}
    check(onnx_model([node("Split", ["x", *weights], outputs, axis=1, **attrs)], inputs, weights), inputs)


@EXAMPLES
@given(size=st.integers(0, 7), start=st.integers(-9, 9), end=st.integers(-9, 9) | st.sampled_from([2**63 - 1, -2**63]),
       step=st.sampled_from([1, 2, 3, -1, -2]), dynamic=st.booleans())
def test_slice_matches_onnxruntime(size, start, end, step, dynamic):
    # onnxruntime reads an INT_MAX end with a negative step as "through index 0"; the ONNX spec
    # (and ONNX shape inference) clamps it to size - 1, as dfir does.
    assume(not (step < 0 and end == 2**63 - 1))
    inputs = {"x": floats((3, size))}
    weights = {"starts": np.array([start]), "ends": np.array([end]), "axes": np.array([-1]), "steps": np.array([step])}
    check(onnx_model([node("Slice", ["x", *weights])], inputs, weights, dynamic=dynamic), inputs)


def test_slice_without_axes_and_steps():
    inputs = {"x": floats((5, 6))}
    weights = {"starts": np.array([1, -4]), "ends": np.array([4, 100])}
    check(onnx_model([node("Slice", ["x", *weights])], inputs, weights), inputs)


@pytest.mark.parametrize("axis, indices", [(0, [[0, -1], [2, 1]]), (1, [3, 0, -2]), (2, 1)])
def test_gather_matches_onnxruntime(axis, indices):
    inputs = {"x": floats((3, 4, 5)), "i": np.array(indices, np.int64)}
    check(onnx_model([node("Gather", ["x", "i"], axis=axis)], inputs), inputs)


def test_gather_of_constant_indices_and_int32_indices():
    inputs = {"x": floats((3, 4))}
    check(onnx_model([node("Gather", ["x", "i"], axis=1)], inputs, {"i": np.array([1, 1, 3], np.int32)}), inputs)


@pytest.mark.parametrize("axes", [[1], [1, -1], None])
def test_squeeze_matches_onnxruntime(axes):
    inputs = {"x": floats((2, 1, 3, 1))}
    weights = {} if axes is None else {"axes": np.array(axes, np.int64)}
    check(onnx_model([node("Squeeze", ["x", *weights])], inputs, weights), inputs)


@pytest.mark.parametrize("axes", [[0], [1, -1], [0, 3, 4]])
def test_unsqueeze_matches_onnxruntime(axes):
    inputs = {"x": floats((2, 3))}
    weights = {"axes": np.array(axes, np.int64)}
    check(onnx_model([node("Unsqueeze", ["x", "axes"])], inputs, weights, dynamic=True), inputs)


@pytest.mark.parametrize("mode, pads, value", [("constant", [0, 1, 2, 0], 1.5), ("constant", [1, -1, 0, 2], None),
                                               ("reflect", [1, 2, 1, 0], None), ("edge", [2, 0, 0, 3], None)])
def test_pad_matches_onnxruntime(mode, pads, value):
    inputs = {"x": floats((3, 4))}
    weights = {"pads": np.array(pads, np.int64)} | ({} if value is None else {"value": np.array(value, np.float32)})
    check(onnx_model([node("Pad", ["x", *weights], mode=mode)], inputs, weights), inputs)


def test_pad_with_axes():
    inputs = {"x": floats((2, 3, 4))}
    weights = {"pads": np.array([1, 2, 0, 1], np.int64), "value": np.array(-1.0, np.float32),
               "axes": np.array([2, 0], np.int64)}
    check(onnx_model([node("Pad", ["x", *weights])], inputs, weights), inputs)


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1])
def test_flatten_matches_onnxruntime(axis):
    inputs = {"x": floats((2, 3, 4))}
    check(onnx_model([node("Flatten", ["x"], axis=axis)], inputs), inputs)


@EXAMPLES
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=4), data=st.data(),
       op=st.sampled_from(["ReduceSum", "ReduceMean", "ReduceMax"]), keepdims=st.booleans())
def test_reductions_match_onnxruntime(shape, data, op, keepdims):
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), unique_by=lambda a: a % len(shape)))
    inputs = {"x": floats(shape)}
    weights = {"axes": np.array(axes, np.int64)} if axes else {}
    check(onnx_model([node(op, ["x", *weights], keepdims=int(keepdims))], inputs, weights), inputs)


def test_reduction_with_axes_attribute_and_noop():
    inputs = {"x": floats((2, 3))}
    check(onnx_model([node("ReduceMean", ["x"], axes=[1])], inputs, opset=13), inputs)
    check(onnx_model([node("ReduceSum", ["x"], noop_with_empty_axes=1)], inputs), inputs)


@pytest.mark.parametrize("source, target", [(np.float32, np.int32), (np.int64, np.float32), (np.float32, np.bool_),
                                            (np.int32, np.int64), (np.float32, np.float16)])
def test_cast_matches_onnxruntime(source, target):
    inputs = {"x": (floats((3, 4), low=-5, high=5) * 3).astype(source)}
    to = helper.np_dtype_to_tensor_dtype(np.dtype(target))
    check(onnx_model([node("Cast", ["x"], to=to)], inputs), inputs)


def test_shape_of_a_dynamic_input_runs():
    inputs = {"x": floats((2, 3, 4))}
    (got,) = check(onnx_model([node("Shape", ["x"])], inputs, dynamic=True), inputs)
    assert got.tolist() == [2, 3, 4]
    check(onnx_model([node("Shape", ["x"], start=1, end=-1)], inputs, dynamic=True), inputs)


# --- resize ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("transform", ["align_corners", "half_pixel", "asymmetric", "pytorch_half_pixel"])
@pytest.mark.parametrize("sizes", [[2, 3, 7, 5], [2, 3, 3, 8]])
def test_resize_to_sizes_matches_onnxruntime(transform, sizes):
    inputs = {"x": floats((2, 3, 4, 6))}
    weights = {"sizes": np.array(sizes, np.int64)}
    resize = node("Resize", ["x", "", "", "sizes"], mode="linear", coordinate_transformation_mode=transform)
    check(onnx_model([resize], inputs, weights), inputs)


def test_resize_by_scales_matches_onnxruntime():
    inputs = {"x": floats((1, 2, 3, 4))}
    weights = {"scales": np.array([1, 1, 2, 0.5], np.float32)}
    resize = node("Resize", ["x", "", "scales"], mode="linear")
    check(onnx_model([resize], inputs, weights), inputs)


def test_resize_to_sizes_from_an_input_matches_onnxruntime():
    """The seed's resize_bilinear: the output size is a graph input (here with axes [2, 3])."""
    inputs = {"x": floats((1, 3, 5, 4)), "hw": np.array([9, 2], np.int64)}
    resize = node("Resize", ["x", "", "", "hw"], mode="linear", coordinate_transformation_mode="align_corners",
                  axes=[2, 3])
    check(onnx_model([resize], inputs, dynamic={"x"}), inputs)


def test_resize_with_a_tensor_size_in_the_builder():
    g = Graph("resize")
    x = g.data(0, [1, 2, -1, -1], F32, name="x")
    hw = g.data(1, [2], dt.DT_INT32, name="hw")
    g.set_outputs([g.resize_bilinear(x, hw, half_pixel_centers=True)])
    image = floats((1, 2, 3, 5))
    (got,), (t,) = run_graph(g, [image, np.array([6, 4], np.int32)])
    assert got.shape == (1, 2, 6, 4) and str(t) == "!ge.tensor<[1, 2, -1, -1], f32>"
    model = onnx_model([node("Resize", ["x", "", "", "sizes"], mode="linear")], {"x": image},
                       {"sizes": np.array([1, 2, 6, 4], np.int64)})
    np.testing.assert_allclose(got, onnxruntime_outputs(model, {"x": image})[0], rtol=1e-5, atol=1e-6)


# --- variables -------------------------------------------------------------------------------------

def test_variable_runs_as_its_value_and_is_marked_in_the_plan():
    g = Graph("variables")
    x = g.data(0, [2], F32, name="x")
    g.set_outputs([g.add(x, g.variable(np.float32([1.5, -2.0]), name="bias"))])
    entry, weights = lower_ge_graph(g.to_ir())
    assert entry["ops"][0] == {"op": "const", "name": "bias", "inputs": [], "outputs": [1],
                               "attrs": {"weight": 0, "variable": "bias"}}
    (got,), _ = run_graph(g, [np.float32([1, 1])])
    assert got.tolist() == [2.5, -1.0]


# --- shape functions over ranges ----------------------------------------------------------------------

def tensor(dims: str, element: str = "f32") -> GeTensorType:
    """A type from its spelling: tensor("[1, 1:8, -1]")."""
    ctx = Context()
    ctx.load_dialect(ge.GE)
    return Parser(ctx, f"!ge.tensor<{dims}, {element}>").parse_type()


def properties(**values) -> dict:
    """Op properties from plain values: lists are i64 arrays, True a set flag, a type attribute itself."""
    def one(value):
        if isinstance(value, bool):
            return UnitAttr()
        if isinstance(value, list):
            return DenseArrayBase.from_list(i64, value)
        if isinstance(value, int):
            return IntegerAttr(value, i64)
        if isinstance(value, float):
            return FloatAttr(value, f64)
        return StringAttr(value) if isinstance(value, str) else value
    return {k: one(v) for k, v in values.items() if v is not False}


def inferred(op_class, operand_types, values=None, **props) -> str:
    return ", ".join(str(t) for t in op_class.infer_types(operand_types, properties(**props), values))


CONV = dict(strides=[1, 1], pads=[1, 1, 1, 1], dilations=[1, 1], groups=1)
RANGE_CASES = [
    ("conv keeps a padded range", ge.Conv2DOp, ["[1, 3, 1:1728, -1]", "[8, 3, 3, 3]"], CONV,
     "!ge.tensor<[1, 8, 1:1728, 1:-1], f32>"),
    ("conv with stride 2 and dilation 2", ge.Conv2DOp, ["[-1, 4, 5:40, 9]", "[6, 2, 3, 3]"],
     dict(strides=[2, 2], pads=[0, 0, 1, 1], dilations=[2, 1], groups=2), "!ge.tensor<[-1, 6, 1:18, 5], f32>"),
    ("conv of a range reaching below the kernel", ge.Conv2DOp, ["[1, 3, 0:10, 5]", "[8, 3, 3, 3]"],
     dict(CONV, pads=[0, 0, 0, 0]), "!ge.tensor<[1, 8, 1:8, 3], f32>"),
    ("max pool rounds up with ceil_mode", ge.MaxPoolOp, ["[1, 2, 5:9, 1:-1]"],
     dict(kernel=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], dilations=[1, 1], ceil_mode=True),
     "!ge.tensor<[1, 2, 3:5, 1:-1], f32>"),
    ("avg pool floors", ge.AvgPoolOp, ["[1, 2, 5:9, 4]"],
     dict(kernel=[3, 3], strides=[2, 2], pads=[1, 1, 0, 0], dilations=[1, 1]), "!ge.tensor<[1, 2, 3:5, 1], f32>"),
    ("global pool", ge.GlobalAvgPoolOp, ["[-1, 8, 1:7, 7, 3]"], {}, "!ge.tensor<[-1, 8, 1, 1, 1], f32>"),
    ("concat sums the axis and narrows the others", ge.ConcatOp, ["[-1, 3, 1:4]", "[2:6, 1:-1, 2:8]"],
     dict(axis=1), "!ge.tensor<[2:6, 4:-1, 2:4], f32>"),
    ("split takes the rest of a range", ge.SplitOp, ["[4:10, 3]"], dict(axis=0, sizes=[3, -1]),
     "!ge.tensor<[3, 3], f32>, !ge.tensor<[1:7, 3], f32>"),
    ("slice of a range", ge.SliceOp, ["[2, 1:10]"], dict(starts=[1], ends=[-1], axes=[1], steps=[1]),
     "!ge.tensor<[2, 0:8], f32>"),
    ("slice to the end of an unbounded dimension", ge.SliceOp, ["[3:-1]"],
     dict(starts=[-3], ends=[2**63 - 1], axes=[0], steps=[1]), "!ge.tensor<[3], f32>"),
    ("reversed slice of an unbounded dimension", ge.SliceOp, ["[2:-1]"],
     dict(starts=[-1], ends=[-2**63], axes=[0], steps=[-2]), "!ge.tensor<[1:-1], f32>"),
    ("reshape copies cancel out of the -1", ge.ReshapeOp, ["[-1, 8, 1, 1]"], dict(shape=[0, -1]),
     "!ge.tensor<[-1, 8], f32>"),
    ("reshape divides a range", ge.ReshapeOp, ["[2:4, 6]"], dict(shape=[3, -1]), "!ge.tensor<[3, 4:8], f32>"),
    ("pad shifts a range and crops", ge.PadOp, ["[1:5, 4]"], dict(pads=[2, -1, 1, 0], mode="constant", value=0.0),
     "!ge.tensor<[4:8, 3], f32>"),
    ("flatten multiplies ranges", ge.FlattenOp, ["[2:3, 4, 1:5]"], dict(axis=-1), "!ge.tensor<[8:12, 1:5], f32>"),
    ("gather inserts the indices' dimensions", ge.GatherOp, ["[10, 1:4, 2]", "[-1, 3]:i64"], dict(axis=1),
     "!ge.tensor<[10, -1, 3, 2], f32>"),
    ("reduce keeps ranges it does not reduce", ge.ReduceMeanOp, ["[1:4, -1, 3]"], dict(axes=[-1], keep_dims=True),
     "!ge.tensor<[1:4, -1, 1], f32>"),
    ("transpose permutes ranges", ge.TransposeOp, ["[1:4, -1, 3]"], dict(perm=[2, 0, 1]),
     "!ge.tensor<[3, 1:4, -1], f32>"),
    ("squeeze a range holding 1", ge.SqueezeOp, ["[0:2, 3]"], dict(axes=[0]), "!ge.tensor<[3], f32>"),
    ("unsqueeze at both ends", ge.UnsqueezeOp, ["[1:4]"], dict(axes=[0, -1]), "!ge.tensor<[1, 1:4, 1], f32>"),
    ("batch matmul broadcasts batch ranges", ge.BatchMatMulOp, ["[1:3, 4, 8]", "[2:5, 5, 8]"], dict(adj_y=True),
     "!ge.tensor<[2:5, 4, 5], f32>"),
    ("gemm transposes", ge.GemmOp, ["[4, -1]", "[8, 4]"], dict(alpha=1.0, beta=1.0, trans_a=True, trans_b=True),
     "!ge.tensor<[-1, 8], f32>"),
    ("shape is the rank", ge.ShapeOp, ["[1:4, -1, 3]"], {}, "!ge.tensor<[3], i64>"),
    ("cast changes the element type only", ge.CastOp, ["[1:4, -1]"], dict(to=i32), "!ge.tensor<[1:4, -1], i32>"),
    ("resize to a constant size", ge.ResizeBilinearOp, ["[1, 3, 1:1728, 1:1728]"], dict(size=[224, 320]),
     "!ge.tensor<[1, 3, 224, 320], f32>"),
    ("resize to an unknown tensor size", ge.ResizeBilinearOp, ["[1, 3, 1:1728, 1:1728]", "[2]:i32"],
     dict(align_corners=True), "!ge.tensor<[1, 3, -1, -1], f32>"),
]


@pytest.mark.parametrize("what, op_class, operands, props, expected", RANGE_CASES, ids=[c[0] for c in RANGE_CASES])
def test_shape_functions_over_ranges(what, op_class, operands, props, expected):
    types = [tensor(*o.rsplit(":", 1)) if o.endswith(("i32", "i64")) else tensor(o) for o in operands]
    assert inferred(op_class, types, **props) == expected


def test_resize_size_from_known_values():
    x = tensor("[1, 3, 1:1728, 1:1728]")
    values = [None, (DimRange(2, 4), DimRange(100, 100))]
    assert inferred(ge.ResizeBilinearOp, [x, tensor("[2]", "i64")], values) == "!ge.tensor<[1, 3, 2:4, 100], f32>"


@st.composite
def sized_dim(draw, low: int = 0, high: int = 12):
    """A dimension range and a size inside it (an unbounded range draws sizes up to `high`)."""
    lo = draw(st.integers(low, high))
    hi = draw(st.none() | st.integers(lo, high))
    return DimRange(lo, hi), draw(st.integers(lo, high if hi is None else hi))


def assert_within(result_types, outputs):
    for t, array in zip(result_types, outputs, strict=True):
        assert t.rank == array.ndim and all(d.contains(s) for d, s in zip(t.dims, array.shape)), (t, array.shape)


@EXAMPLES
@given(window=windows(), h=sized_dim(1, 9), w=sized_dim(1, 9), op=st.sampled_from(["conv2d", "max_pool", "avg_pool"]),
       ceil_mode=st.booleans())
def test_window_shape_functions_contain_every_run(window, h, w, op, ceil_mode):
    """Soundness: whatever sizes the ranges allow (and a window fits), the kernel's result lies
    inside the inferred ranges."""
    _, kernel, strides, pads, dilations = window
    attrs = dict(strides=strides, pads=[pads[0], pads[2], pads[1], pads[3]], dilations=dilations)
    (h_range, h_size), (w_range, w_size) = h, w
    extents = [d * (k - 1) + 1 for k, d in zip(kernel, dilations)]
    assume(h_size + pads[0] + pads[2] >= extents[0] and w_size + pads[1] + pads[3] >= extents[1])
    x = GeTensorType([DimRange.fixed(1), DimRange.fixed(2), h_range, w_range], f32)
    if op == "conv2d":
        operands, attrs = [x, tensor(f"[3, 2, {kernel[0]}, {kernel[1]}]")], dict(attrs, groups=1)
        arrays = [floats((1, 2, h_size, w_size)), floats((3, 2, *kernel), 1)]
    else:
        if any(p >= e for p, e in zip(pads, extents + extents)):
            return
        operands, attrs = [x], dict(attrs, kernel=kernel, ceil_mode=ceil_mode)
        arrays = [floats((1, 2, h_size, w_size))]
    op_class = {"conv2d": ge.Conv2DOp, "max_pool": ge.MaxPoolOp, "avg_pool": ge.AvgPoolOp}[op]
    assert_within(op_class.infer_types(operands, properties(**attrs)), KERNELS[op](arrays, attrs))


@EXAMPLES
@given(dim=sized_dim(), start=st.integers(-14, 14) | st.sampled_from([2**63 - 1, -2**63]),
       end=st.integers(-14, 14) | st.sampled_from([2**63 - 1, -2**63]), step=st.sampled_from([1, 2, 5, -1, -3]))
def test_slice_shape_function_contains_every_run(dim, start, end, step):
    (d, size) = dim
    attrs = dict(starts=[start], ends=[end], axes=[0], steps=[step])
    result = ge.SliceOp.infer_types([GeTensorType([d], f32)], properties(**attrs))
    assert_within(result, KERNELS["slice"]([np.zeros(size, np.float32)], attrs))


@EXAMPLES
@given(dims=st.lists(sized_dim(1, 5), min_size=1, max_size=3), data=st.data())
def test_reshape_and_flatten_shape_functions_contain_every_run(dims, data):
    ranges, sizes = [d for d, _ in dims], [s for _, s in dims]
    x = GeTensorType(ranges, f32)
    copies = data.draw(st.integers(0, len(dims) - 1))
    target = [0] * copies + [-1]
    array = np.zeros(sizes, np.float32)
    assert_within(ge.ReshapeOp.infer_types([x], properties(shape=target)), KERNELS["reshape"]([array], {"shape": target}))
    axis = data.draw(st.integers(-len(dims), len(dims)))
    assert_within(ge.FlattenOp.infer_types([x], properties(axis=axis)), KERNELS["flatten"]([array], {"axis": axis}))


# --- known values (shape arithmetic) -------------------------------------------------------------------

def test_builder_knows_shape_arithmetic_and_sizes_a_resize_with_it():
    g = Graph("known")
    x = g.data(0, [1, 3, 8, 6], F32, name="x")
    y = g.data(1, [1, 3, -1, -1], F32, name="y")
    shape = g.shape(x)
    hw = g.slice(shape, [2], [4])
    doubled = g.mul(hw, g.const(np.array([2, 1], np.int64)))
    batch = g.squeeze(g.gather(shape, g.const(np.array([0], np.int64))), [0])
    assert shape.known == tuple(DimRange.fixed(s) for s in (1, 3, 8, 6))
    assert doubled.known == (DimRange.fixed(16), DimRange.fixed(6)) and batch.known == (DimRange.fixed(1),)
    resized = g.resize_bilinear(y, g.cast(doubled, dt.DT_INT32))
    assert str(resized.type) == "!ge.tensor<[1, 3, 16, 6], f32>"
    g.set_outputs([resized, g.unsqueeze(batch, [0])])
    image, other = floats((1, 3, 8, 6)), floats((1, 3, 4, 4), 1)
    (got, b), _ = run_graph(g, [image, other])
    assert got.shape == (1, 3, 16, 6) and b.tolist() == [1]


def test_known_values_of_dynamic_dimensions_are_ranges():
    g = Graph("ranges")
    x = g.data(0, [-1, 4], F32, name="x")
    shape = g.shape(x)
    total = g.mul(g.gather(shape, g.const(np.array(0, np.int64))), g.const(np.array(4, np.int64)))
    assert shape.known == (DimRange.unknown(), DimRange.fixed(4)) and total.known == (DimRange(0, None),)
    rows = g.concat([g.const(np.array([2], np.int64)), g.slice(shape, [0], [1])], 0)
    assert rows.known == (DimRange.fixed(2), DimRange.unknown())
    assert g.sub(g.const(np.array([5], np.int64)), g.slice(shape, [1], [2])).known == (DimRange.fixed(1),)
    assert g.div(g.slice(shape, [1], [2]), g.const(np.array([3], np.int64))).known == (DimRange.fixed(1),)
    assert g.maximum(g.const(np.array([5], np.int64)), g.slice(shape, [1], [2])).known == (DimRange.fixed(5),)
    assert g.shape(g.data(1, [2], dt.DT_INT32)).known == (DimRange.fixed(2),)
    assert g.data(2, [2], dt.DT_INT32).known is None and g.const(np.float32([1.0])).known is None


# --- errors -------------------------------------------------------------------------------------------

BUILD_ERRORS = [
    (lambda g, x: g.div(x, g.const(np.ones(4, np.int32))),
     'graph=g; node=div_0; ge.div: element types differ: lhs f32, rhs i32'),
    (lambda g, x: g.sqrt(g.const(np.ones(3, np.int32))),
     'graph=g; node=sqrt_0; ge.sqrt: operand must have a floating-point element type, got i32'),
    (lambda g, x: g.gelu(x, approximate="fast"),
     "graph=g; node=gelu_0; ge.gelu: approximate must be one of none, tanh, got 'fast'"),
    (lambda g, x: g.gelu(x, approximate=1),
     'graph=g; gelu approximate must be a str, got 1'),
    (lambda g, x: g.batch_matmul(x, g.const(np.ones((2, 3, 5, 4), np.float32))),
     'graph=g; node=batch_matmul_0; ge.batch_matmul: inner dimensions differ: lhs [2, 3, 4, 4] contributes 4, rhs [2, 3, 5, 4] contributes 5'),
    (lambda g, x: g.batch_matmul(g.const(np.ones(3, np.float32)), x),
     'graph=g; node=batch_matmul_0; ge.batch_matmul: lhs must have rank >= 2, got [3]'),
    (lambda g, x: g.batch_matmul(x, x, adj_x=1),
     'graph=g; batch_matmul adj_x must be a bool, got 1'),
    (lambda g, x: g.gemm(x, x),
     'graph=g; node=gemm_0; ge.gemm: a must have rank 2, got [2, 3, 4, 4]'),
    (lambda g, x: g.gemm(g.const(np.ones((2, 3), np.float32)), g.const(np.ones((4, 5), np.float32))),
     'graph=g; node=gemm_0; ge.gemm: inner dimensions differ: a [2, 3] contributes 3, b [4, 5] contributes 4'),
    (lambda g, x: g.gemm(g.const(np.ones((2, 3), np.float32)), g.const(np.ones((3, 5), np.float32)), g.const(np.ones((4,), np.float32))),
     'graph=g; node=gemm_0; ge.gemm: c [2, 5] and [4] do not broadcast: dimension 1 is 5 vs 4'),
    (lambda g, x: g.gemm(g.const(np.ones((2, 3), np.float32)), g.const(np.ones((3, 5), np.float32)), g.const(np.ones((1, 2, 5), np.float32))),
     'graph=g; node=gemm_0; ge.gemm: c [1, 2, 5] does not broadcast to the result [2, 5]'),
    (lambda g, x: g.gemm(g.const(np.ones((2, 3), np.float32)), g.const(np.ones((3, 5), np.float32)), alpha="1"),
     "graph=g; gemm alpha must be a number, got '1'"),
    (lambda g, x: g.conv2d(g.const(np.ones((3, 4), np.float32)), g.const(np.ones((2, 3), np.float32))),
     'graph=g; node=conv2d_0; ge.conv2d: input must have rank >= 3 (N, C and spatial dimensions), got [3, 4]'),
    (lambda g, x: g.conv2d(g.const(np.ones((1, 3, 4), np.float32)), g.const(np.ones((2, 3, 1, 1), np.float32))),
     'graph=g; node=conv2d_0; ge.conv2d: filter must have rank 3, got [2, 3, 1, 1]'),
    (lambda g, x: g.conv2d(x, g.const(np.ones((2, 3, 1), np.float32))),
     'graph=g; node=conv2d_0; ge.conv2d: filter must have rank 4, got [2, 3, 1]'),
    (lambda g, x: g.conv2d(g.data(1, [1, 4, 4, 3], F32, format="NHWC"), g.const(np.ones((2, 3, 1, 1), np.float32))),
     'graph=g; node=conv2d_0; ge.conv2d: input format NHWC is not supported, expected NCHW or ND'),
    (lambda g, x: g.conv2d(x, g.const(np.ones((4, 3, 3, 3), np.float32)), strides=[1]),
     'graph=g; conv2d strides must be a list of 2 ints, got [1]'),
    (lambda g, x: g.conv2d(x, g.const(np.ones((4, 3, 3, 3), np.float32)), strides=[0, 1]),
     'graph=g; node=conv2d_0; ge.conv2d: strides must be >= 1, got [0, 1]'),
    (lambda g, x: g.conv2d(x, g.const(np.ones((4, 3, 3, 3), np.float32)), pads=[0, -1, 0, 0]),
     'graph=g; node=conv2d_0; ge.conv2d: pads must be >= 0, got [0, -1, 0, 0]'),
    (lambda g, x: g.conv2d(x, g.const(np.ones((4, 3, 3, 3), np.float32)), dilations=[1, 0]),
     'graph=g; node=conv2d_0; ge.conv2d: dilations must be >= 1, got [1, 0]'),
    (lambda g, x: g.conv2d(x, g.const(np.ones((4, 3, 3, 3), np.float32)), groups=0),
     'graph=g; node=conv2d_0; ge.conv2d: groups must be >= 1, got 0'),
    (lambda g, x: g.conv2d(x, g.const(np.ones((4, 3, 3, 3), np.float32)), groups=1.0),
     'graph=g; conv2d groups must be an int, got 1.0'),
    (lambda g, x: g.conv2d(x, g.data(1, [4, 3, -1, 3], F32)),
     'graph=g; node=conv2d_0; ge.conv2d: filter spatial dimensions must be fixed, got [4, 3, -1, 3]'),
    (lambda g, x: g.conv2d(x, g.const(np.ones((4, 2, 3, 3), np.float32))),
     'graph=g; node=conv2d_0; ge.conv2d: input [2, 3, 4, 4] has 3 channels but filter [4, 2, 3, 3] with groups 1 expects 2'),
    (lambda g, x: g.conv2d(x, g.const(np.ones((3, 1, 3, 3), np.float32)), groups=2),
     'graph=g; node=conv2d_0; ge.conv2d: filter [3, 1, 3, 3] has 3 output channels, which is not a multiple of groups 2'),
    (lambda g, x: g.conv2d(x, g.const(np.ones((4, 3, 3, 3), np.float32)), g.const(np.ones(3, np.float32))),
     'graph=g; node=conv2d_0; ge.conv2d: bias [3] must have one entry per output channel: 3 vs 4'),
    (lambda g, x: g.conv2d(x, g.const(np.ones((4, 3, 5, 3), np.float32))),
     'graph=g; node=conv2d_0; ge.conv2d: input [2, 3, 4, 4] is too small: dimension 2 with padding is at most 4, but the window spans 5'),
    (lambda g, x: g.conv2d(x, g.const(np.ones((4, 3, 3, 3), np.int32))),
     'graph=g; node=conv2d_0; ge.conv2d: operands must share one element type, got f32, i32'),
    (lambda g, x: g.max_pool(x, [2]),
     'graph=g; max_pool kernel must be a list of 2 ints, got [2]'),
    (lambda g, x: g.max_pool(x, [0, 2]),
     'graph=g; node=max_pool_0; ge.max_pool: kernel must be >= 1, got [0, 2]'),
    (lambda g, x: g.max_pool(x, [2, 2], pads=[2, 0, 0, 0]),
     'graph=g; node=max_pool_0; ge.max_pool: pads [2, 0, 0, 0] must be smaller than the window extent 2'),
    (lambda g, x: g.avg_pool(x, [5, 1]),
     'graph=g; node=avg_pool_0; ge.avg_pool: input [2, 3, 4, 4] is too small: dimension 2 with padding is at most 4, but the window spans 5'),
    (lambda g, x: g.avg_pool(x, [2, 2], count_include_pad="yes"),
     "graph=g; avg_pool count_include_pad must be a bool, got 'yes'"),
    (lambda g, x: g.global_avg_pool(g.const(np.ones((2, 3), np.float32))),
     'graph=g; node=global_avg_pool_0; ge.global_avg_pool: input must have rank >= 3, got [2, 3]'),
    (lambda g, x: g.batch_norm(g.const(np.ones(3, np.float32)), *[g.const(np.ones(3, np.float32)) for _ in range(4)]),
     'graph=g; node=batch_norm_0; ge.batch_norm: input must have rank >= 2, got [3]'),
    (lambda g, x: g.batch_norm(x, *[g.const(np.ones(4, np.float32)) for _ in range(4)]),
     'graph=g; node=batch_norm_0; ge.batch_norm: scale [4] must have one entry per channel of the input [2, 3, 4, 4]: 4 vs 3'),
    (lambda g, x: g.batch_norm(x, *[g.const(np.ones((3, 1), np.float32)) for _ in range(4)]),
     'graph=g; node=batch_norm_0; ge.batch_norm: scale must have rank 1, got [3, 1]'),
    (lambda g, x: g.layer_norm(x, g.const(np.ones(4, np.float32)), axis=4),
     'graph=g; node=layer_norm_0; ge.layer_norm: axis 4 is out of range for [2, 3, 4, 4] (valid: -4..3)'),
    (lambda g, x: g.layer_norm(x, g.const(np.ones(3, np.float32))),
     'graph=g; node=layer_norm_0; ge.layer_norm: scale [3] does not broadcast to the normalized dimensions [4]'),
    (lambda g, x: g.layer_norm(x, g.const(np.ones(4, np.float32)), g.const(np.ones((2, 4), np.float32)), axis=-1),
     'graph=g; node=layer_norm_0; ge.layer_norm: bias [2, 4] does not broadcast to the normalized dimensions [4]'),
    (lambda g, x: g.softmax(x, axis=-5),
     'graph=g; node=softmax_0; ge.softmax: axis -5 is out of range for [2, 3, 4, 4] (valid: -4..3)'),
    (lambda g, x: g.softmax(g.const(np.ones(3, np.int64))),
     'graph=g; node=softmax_0; ge.softmax: input must have a floating-point element type, got i64'),
    (lambda g, x: g.softmax(x, axis=1.5),
     'graph=g; softmax axis must be an int, got 1.5'),
    (lambda g, x: g.transpose(x, [0, 1, 1, 2]),
     'graph=g; node=transpose_0; ge.transpose: perm [0, 1, 1, 2] is not a permutation of the 4 dimensions of [2, 3, 4, 4]'),
    (lambda g, x: g.transpose(x, [0, 1]),
     'graph=g; node=transpose_0; ge.transpose: perm [0, 1] is not a permutation of the 4 dimensions of [2, 3, 4, 4]'),
    (lambda g, x: g.concat([], 0),
     'graph=g; node=concat_0; ge.concat: needs at least one operand'),
    (lambda g, x: g.concat(x, 0),
     'graph=g; concat inputs must be a list of values, got Value'),
    (lambda g, x: g.concat([x, g.const(np.ones((2, 3), np.float32))], 0),
     'graph=g; node=concat_0; ge.concat: operand 1 [2, 3] has rank 2 but operand 0 [2, 3, 4, 4] has rank 4'),
    (lambda g, x: g.concat([x, g.const(np.ones((2, 3, 5, 4), np.float32))], 1),
     'graph=g; node=concat_0; ge.concat: operand 1 [2, 3, 5, 4] differs from [2, 3, 4, 4] in dimension 2: 4 vs 5'),
    (lambda g, x: g.concat([x, g.const(np.ones((2, 3, 4, 4), np.int32))], 1),
     'graph=g; node=concat_0; ge.concat: operands must share one element type, got f32, i32'),
    (lambda g, x: g.concat([x, x], 4),
     'graph=g; node=concat_0; ge.concat: axis 4 is out of range for [2, 3, 4, 4] (valid: -4..3)'),
    (lambda g, x: g.split(x, []),
     'graph=g; node=split_0; ge.split: sizes must not be empty'),
    (lambda g, x: g.split(x, [1, -1, -1]),
     'graph=g; node=split_0; ge.split: sizes must be >= 0 with at most one -1, got [1, -1, -1]'),
    (lambda g, x: g.split(x, [1, -2]),
     'graph=g; node=split_0; ge.split: sizes must be >= 0 with at most one -1, got [1, -2]'),
    (lambda g, x: g.split(x, [1, 2], axis=2),
     'graph=g; node=split_0; ge.split: sizes [1, 2] sum to 3 but dimension 2 of [2, 3, 4, 4] is 4'),
    (lambda g, x: g.split(x, [3, 2, -1], axis=2),
     'graph=g; node=split_0; ge.split: sizes [3, 2, -1] need at least 5 elements but dimension 2 of [2, 3, 4, 4] is 4'),
    (lambda g, x: g.slice(x, [0], [1], axes=[0, 1]),
     'graph=g; node=slice_0; ge.slice: starts [0] and axes [0, 1] differ in length'),
    (lambda g, x: g.slice(x, [0], [1], steps=[0]),
     'graph=g; node=slice_0; ge.slice: steps must not be 0, got [0]'),
    (lambda g, x: g.slice(x, [0, 0], [1, 1], axes=[1, -3]),
     'graph=g; node=slice_0; ge.slice: axes [1, -3] name axis 1 more than once'),
    (lambda g, x: g.slice(x, [0], [1], axes=[4]),
     'graph=g; node=slice_0; ge.slice: axis 4 is out of range for [2, 3, 4, 4] (valid: -4..3)'),
    (lambda g, x: g.gather(x, g.const(np.ones(2, np.float32))),
     'graph=g; node=gather_0; ge.gather: indices must have element type i32 or i64, got f32'),
    (lambda g, x: g.gather(x, g.const(np.ones(2, np.int64)), axis=4),
     'graph=g; node=gather_0; ge.gather: axis 4 is out of range for [2, 3, 4, 4] (valid: -4..3)'),
    (lambda g, x: g.squeeze(x, [1]),
     'graph=g; node=squeeze_0; ge.squeeze: dimension 1 of [2, 3, 4, 4] is 3, not 1'),
    (lambda g, x: g.unsqueeze(x, [5]),
     'graph=g; node=unsqueeze_0; ge.unsqueeze: axis 5 is out of range for [2, 3, 4, 4] (valid: -5..4)'),
    (lambda g, x: g.unsqueeze(x, [0, -6]),
     'graph=g; node=unsqueeze_0; ge.unsqueeze: axes [0, -6] name axis 0 more than once'),
    (lambda g, x: g.pad(x, [1, 1]),
     'graph=g; node=pad_0; ge.pad: pads must have 8 entries, got [1, 1]'),
    (lambda g, x: g.pad(x, [0] * 8, mode="wrap"),
     "graph=g; node=pad_0; ge.pad: mode must be one of constant, reflect, edge, got 'wrap'"),
    (lambda g, x: g.pad(x, [0, 0, 0, 0, 0, 0, -5, -2]),
     'graph=g; node=pad_0; ge.pad: pads [0, 0, 0, 0, 0, 0, -5, -2] crop 5 elements from dimension 2 of [2, 3, 4, 4], which has at most 4'),
    (lambda g, x: g.pad(x, [0] * 8, value="0"),
     "graph=g; pad value must be a number, got '0'"),
    (lambda g, x: g.flatten(x, 5),
     'graph=g; node=flatten_0; ge.flatten: axis 5 is out of range for [2, 3, 4, 4] (valid: -4..4)'),
    (lambda g, x: g.reduce_sum(x, [1, -3]),
     'graph=g; node=reduce_sum_0; ge.reduce_sum: axes [1, -3] name axis 1 more than once'),
    (lambda g, x: g.reduce_max(x, [4]),
     'graph=g; node=reduce_max_0; ge.reduce_max: axis 4 is out of range for [2, 3, 4, 4] (valid: -4..3)'),
    (lambda g, x: g.reduce_mean(x, [1], keep_dims=None),
     'graph=g; reduce_mean keep_dims must be a bool, got None'),
    (lambda g, x: g.cast(x, dt.DT_STRING),
     'graph=g; data type DT_STRING cannot be a ge tensor element type, expected one of DT_FLOAT, DT_FLOAT16, DT_BF16, DT_DOUBLE, DT_BOOL, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64'),
    (lambda g, x: g.resize_bilinear(x, [4]),
     'graph=g; node=resize_bilinear_0; ge.resize_bilinear: size must have 2 entries, got [4]'),
    (lambda g, x: g.resize_bilinear(x, [0, 4]),
     'graph=g; node=resize_bilinear_0; ge.resize_bilinear: size must be >= 1, got [0, 4]'),
    (lambda g, x: g.resize_bilinear(x, [4, 4], align_corners=True, half_pixel_centers=True),
     'graph=g; node=resize_bilinear_0; ge.resize_bilinear: align_corners and half_pixel_centers exclude each other'),
    (lambda g, x: g.resize_bilinear(x, g.const(np.ones(2, np.float32))),
     'graph=g; node=resize_bilinear_0; ge.resize_bilinear: size operand must have element type i32 or i64, got f32'),
    (lambda g, x: g.resize_bilinear(x, g.const(np.ones(3, np.int32))),
     'graph=g; node=resize_bilinear_0; ge.resize_bilinear: size operand must have shape [2], got [3]'),
    (lambda g, x: g.resize_bilinear(g.const(np.ones((3, 4, 4), np.float32)), [2, 2]),
     'graph=g; node=resize_bilinear_0; ge.resize_bilinear: input must have rank 4, got [3, 4, 4]'),
    (lambda g, x: g.resize_bilinear(g.const(np.ones((1, 3, 4, 4), np.int32)), [2, 2]),
     'graph=g; node=resize_bilinear_0; ge.resize_bilinear: input must have a floating-point element type, got i32'),
    (lambda g, x: g.variable(np.ones(2), name=""),
     "graph=g; variable name must be a non-empty str, got ''"),
    (lambda g, x: g.identity([x]),
     'graph=g; identity: operand 0 must be a Value of this graph, got list'),
]


def test_window_builder_defaults_fit_the_spatial_rank():
    """Left out, strides and dilations are 1 and pads 0 on every spatial axis of the input."""
    g = Graph("g")
    line, volume = g.data(0, [2, 4, 9], F32, name="line"), g.data(1, [1, 2, 5, 6, 7], F32, name="volume")
    assert g.conv2d(line, g.const(np.ones((3, 4, 2), np.float32))).shape == [2, 3, 8]
    assert g.conv_transpose(line, g.const(np.ones((4, 3, 2), np.float32))).shape == [2, 3, 10]
    assert g.max_pool(volume, [2, 3, 1]).shape == [1, 2, 4, 4, 7]
    assert g.avg_pool(volume, [5, 1, 7]).shape == [1, 2, 1, 6, 1]


@pytest.mark.parametrize("build, message", BUILD_ERRORS, ids=[m.split("; ")[-1][:60] for _, m in BUILD_ERRORS])
def test_builder_errors_name_the_node_the_op_and_the_numbers(build, message):
    g = Graph("g")
    x = g.data(0, [2, 3, 4, 4], F32, name="x")
    with pytest.raises(GeError) as info:
        build(g, x)
    line = build.__code__.co_firstlineno
    assert f"at=test_ge.py:{line}" in str(info.value)  # the user's line that called the builder
    assert str(info.value).replace(f"at=test_ge.py:{line}; ", "").replace(f"; at=test_ge.py:{line}", "") == message


def test_verifier_counts_results_against_the_shape_function():
    g = Graph("g")
    x = g.data(0, [4, 2], F32, name="x")
    g.set_outputs(g.split(x, [1, 3]))
    split = list(g.to_ir().block.ops)[1]
    new = ge.SplitOp.build(operands=[split.operands[0]], properties=split.properties,
                           result_types=[[split.results[0].type]])
    with pytest.raises(VerifyException, match=r"^ge.split: 1 results declared, 2 inferred$"):
        new.verify_()


def test_kernels_reject_run_time_data_they_cannot_take():
    with pytest.raises(GeError, match=r"^gather: index 3 is out of range for dimension 0 of \[3\]$"):
        KERNELS["gather"]([np.zeros(3), np.array([0, 3])], {"axis": 0})
    with pytest.raises(GeError, match=r"^squeeze: dimension 0 of \[2, 1\] is 2, not 1$"):
        KERNELS["squeeze"]([np.zeros((2, 1))], {"axes": [0]})
    with pytest.raises(GeError, match=r"^resize_bilinear: output size must be >= 1, got \[0, 4\]$"):
        KERNELS["resize_bilinear"]([np.zeros((1, 1, 2, 2), np.float32), np.array([0, 4])], {})
    with pytest.raises(GeError, match=r"^an input dimension of 2 \(padded 2\) is smaller than the window extent 3$"):
        KERNELS["max_pool"]([np.zeros((1, 1, 2, 2), np.float32)],
                            {"kernel": [3, 3], "strides": [1, 1], "pads": [0, 0, 0, 0], "dilations": [1, 1]})
    with pytest.raises(GeError, match=r"^split: sizes \[1, -1\] do not cut dimension 0 of \[0\]$"):
        KERNELS["split"]([np.zeros(0)], {"axis": 0, "sizes": [1, -1]})
