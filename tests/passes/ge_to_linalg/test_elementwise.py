"""Element-wise lowerings against the reference kernels, through IREE on the host CPU."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dfir.core import data_type as dt
from dfir.frontend.ge.graph import Graph
from ge_lowering import assert_lowering_matches, converted, lowered_outputs, reference_outputs

_DTYPES = {np.float32: dt.DT_FLOAT, np.float64: dt.DT_DOUBLE, np.int32: dt.DT_INT32, np.int64: dt.DT_INT64,
           np.uint8: dt.DT_UINT8, np.float16: dt.DT_FLOAT16}


def _binary_graph(kind: str, shapes, dtype) -> Graph:
    g = Graph(f"{kind}_graph")
    x = g.data(0, [-1, *shapes[0][1:]], _DTYPES[dtype], name="x")
    y = g.data(1, list(shapes[1]), _DTYPES[dtype], name="y")
    g.set_outputs([getattr(g, kind)(x, y)])
    return g


def _values(rng, shape, dtype, positive=False):
    if np.dtype(dtype).kind == "f":
        data = rng.uniform(0.5 if positive else -3, 3, shape)
    else:
        data = rng.integers(1 if positive else (0 if np.dtype(dtype).kind == "u" else -50), 50, shape)
    return data.astype(dtype)


@pytest.mark.parametrize("kind", ["add", "sub", "mul", "div", "maximum", "minimum"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float64])
def test_binary_ops_broadcast_like_numpy(kind, dtype):
    rng = np.random.default_rng(0)
    g = _binary_graph(kind, [(3, 4), (4,)], dtype)
    x, y = _values(rng, (3, 4), dtype), _values(rng, (4,), dtype, positive=kind == "div")
    assert_lowering_matches(g, [x, y])


def test_integer_division_truncates_toward_zero():
    g = _binary_graph("div", [(2, 3), (3,)], np.int32)
    x = np.array([[7, -7, 7], [-7, 0, 5]], np.int32)
    y = np.array([2, 2, -2], np.int32)
    assert_lowering_matches(g, [x, y])


@given(rows=st.integers(1, 6), cols=st.integers(1, 5), broadcast_rows=st.booleans())
@settings(max_examples=5, deadline=None)
def test_add_with_size_one_dims_broadcasts(rows, cols, broadcast_rows):
    g = Graph("bcast")
    x = g.data(0, [-1, cols], dt.DT_FLOAT, name="x")
    y = g.data(1, [1, cols] if broadcast_rows else [cols], dt.DT_FLOAT, name="y")
    g.set_outputs([g.add(x, y)])
    rng = np.random.default_rng(rows)
    assert_lowering_matches(g, [rng.random((rows, cols), np.float32),
                                rng.random((1, cols) if broadcast_rows else (cols,), np.float32)])


@pytest.mark.parametrize("kind", ["relu", "sqrt", "exp", "log", "tanh", "sigmoid", "erf", "gelu", "identity"])
def test_unary_ops_match_the_reference(kind):
    g = Graph(kind)
    x = g.data(0, [-1, 5], dt.DT_FLOAT, name="x")
    g.set_outputs([getattr(g, kind)(x)])
    values = np.linspace(-4, 4, 15, dtype=np.float32).reshape(3, 5)
    if kind in ("sqrt", "log"):
        values = np.abs(values) + 0.1
    assert_lowering_matches(g, [values], rtol=1e-5, atol=1e-6)


def test_gelu_tanh_approximation():
    g = Graph("gelu_tanh")
    x = g.data(0, [4], dt.DT_FLOAT, name="x")
    g.set_outputs([g.gelu(x, approximate="tanh")])
    assert_lowering_matches(g, [np.array([-3, -0.5, 0.5, 3], np.float32)])


def test_sigmoid_saturates_without_overflow():
    g = Graph("sig")
    x = g.data(0, [4], dt.DT_FLOAT, name="x")
    g.set_outputs([g.sigmoid(x)])
    assert_lowering_matches(g, [np.array([-1000, -50, 50, 1000], np.float32)])


def test_relu_of_integers():
    g = Graph("irelu")
    x = g.data(0, [4], dt.DT_INT64, name="x")
    g.set_outputs([g.relu(x)])
    assert_lowering_matches(g, [np.array([-5, 0, 3, -1], np.int64)])


@pytest.mark.parametrize("source,target", [
    (np.float32, np.int32), (np.int32, np.float32), (np.float32, np.float64), (np.float64, np.float16),
    (np.int64, np.int8), (np.int8, np.int64), (np.uint8, np.int32), (np.float32, np.bool_),
    (np.int32, np.bool_), (np.bool_, np.float32), (np.float32, np.uint8)])
def test_cast_converts_as_numpy_astype(source, target):
    g = Graph("cast")
    x = g.data(0, [6], dt.from_numpy(np.dtype(source)), name="x")
    g.set_outputs([g.cast(x, dt.from_numpy(np.dtype(target)))])
    values = np.array([0, 1, 2, 3, 0, 5]).astype(source)
    assert_lowering_matches(g, [values])


def test_bool_constants_lower_through_bytes():
    g = Graph("bools")
    x = g.data(0, [3], dt.DT_BOOL, name="x")
    c = g.const(np.array([True, False, True]))
    g.set_outputs([g.cast(g.add(g.cast(x, dt.DT_INT32), g.cast(c, dt.DT_INT32)), dt.DT_INT32)])
    assert_lowering_matches(g, [np.array([True, True, False])])


def test_integer_pow_has_no_lowering():
    g = _binary_graph("pow", [(2, 2), (2,)], np.int32)
    module = converted(g, backend="auto")
    (graph,) = module.ops
    assert graph.backend.data == "reference"
    assert graph.attributes["backend_fallback"].data == "ge.pow 'pow_0': no integer form for element type i32"


def test_float_pow_matches():
    g = _binary_graph("pow", [(2, 2), (2,)], np.float32)
    assert_lowering_matches(g, [np.array([[1, 2], [3, 4]], np.float32), np.array([0.5, 2], np.float32)])


def test_math_functions_match_the_reference():
    g = Graph("math")
    x = g.data(0, [-1, 6], dt.DT_FLOAT, name="x")
    u = g.data(1, [6], dt.DT_FLOAT, name="u")  # inside (-1, 1)
    g.set_outputs([g.neg(x), g.abs(x), g.sign(x), g.reciprocal(x), g.floor(x), g.ceil(x), g.round(x),
                   g.sin(x), g.cos(x), g.tan(u), g.asin(u), g.acos(u), g.atan(x), g.sinh(x), g.cosh(x), g.asinh(x),
                   g.acosh(g.add(g.abs(x), g.const(np.float32(1.0)))), g.atanh(u), g.trilu(x, -1, upper=False)])
    x_values = np.float32([[0.5, 1.5, 2.5, -0.5, -2.5, 0.0], [-0.0, 3.7, -3.2, np.nan, 1e-3, -4.0]])
    assert_lowering_matches(g, [x_values, np.float32([-0.9, -0.5, 0.1, 0.3, 0.6, 0.99])], rtol=1e-5, atol=1e-6)


def test_integer_math_and_remainders_match_the_reference():
    g = Graph("integer_math")
    a = g.data(0, [-1, 5], dt.DT_INT32, name="a")
    b = g.data(1, [5], dt.DT_INT32, name="b")
    p = g.data(2, [5], dt.DT_UINT16, name="p")
    g.set_outputs([g.neg(a), g.abs(a), g.sign(a), g.neg(p), g.abs(p), g.sign(p),
                   g.mod(a, b), g.mod(a, b, fmod=True), g.mod(p, g.const(np.uint16([3, 0, 7, 1, 65535]))),
                   g.mod(p, g.const(np.uint16(6)), fmod=True), g.trilu(a, 2), g.trilu(a)])
    a_values = np.int32([[7, -7, 7, -7, -2**31], [0, 13, -13, 5, 2**31 - 1]])
    assert_lowering_matches(g, [a_values, np.int32([3, 3, -3, 0, -1]), np.uint16([0, 1, 65535, 300, 9])])


def test_float_mod_has_no_lowering():
    g = Graph("float_mod")
    x = g.data(0, [2], dt.DT_FLOAT, name="x")
    g.set_outputs([g.mod(x, x, fmod=True, name="m")])
    (graph,) = converted(g, backend="auto").ops
    assert graph.backend.data == "reference"
    assert graph.attributes["backend_fallback"].data == (
        "ge.mod 'm': no float remainder in upstream arith as xDSL has it (element type f32)")


@pytest.mark.parametrize("source, target, values", [
    (dt.DT_FLOAT, dt.DT_INT32, np.array([[1.0, -0.0, np.inf], [np.nan, -2.5, 3e38]], np.float32)),
    (dt.DT_INT64, dt.DT_DOUBLE, np.array([[-1, 7, 1 << 62]], np.int64)),
    (dt.DT_INT8, dt.DT_UINT8, np.array([[-128, 0, 127]], np.int8)),
    (dt.DT_BOOL, dt.DT_UINT8, np.array([[True, False, True]])),
    (dt.DT_UINT16, dt.DT_FLOAT16, np.array([[0x3C00, 0x7BFF, 0x8001]], np.uint16)),
])
def test_bitcast_keeps_the_bits(source, target, values):
    g = Graph("bitcast")
    g.set_outputs([g.bitcast(g.data(0, [-1, 3], source, name="x"), target)])
    got, want = lowered_outputs(g, [values]), reference_outputs(g, [values])
    assert got[0].dtype == want[0].dtype
    np.testing.assert_array_equal(got[0].view(np.uint8), want[0].view(np.uint8))


def test_quantization_compositions_lower_exactly():
    """QuantizeLinear (blocked), DequantizeLinear (per axis) and QLinearMatMul as imported."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(5)
    weights = {"qs": rng.uniform(0.05, 1.0, (3, 2)).astype(np.float32),
               "qz": rng.integers(0, 255, (3, 2)).astype(np.uint8),
               "ds": rng.uniform(0.05, 1.0, 4).astype(np.float32), "dz": rng.integers(0, 255, 4).astype(np.uint8),
               "s": np.array(0.03, np.float32), "z": np.array(7, np.uint8), "ys": np.array(0.2, np.float32)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "qs", "qz"], ["q"], axis=1, block_size=2),
             helper.make_node("DequantizeLinear", ["q", "ds", "dz"], ["d"], axis=1),
             helper.make_node("QLinearMatMul", ["q", "s", "z", "b", "s", "z", "ys", "z"], ["m"])]
    graph = helper.make_graph(nodes, "quantized", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4]),
                                                   helper.make_tensor_value_info("b", TensorProto.UINT8, [4, 2])],
                              [helper.make_tensor_value_info(n, t, shape) for n, t, shape in
                               (("q", TensorProto.UINT8, [3, 4]), ("d", TensorProto.FLOAT, [3, 4]),
                                ("m", TensorProto.UINT8, [3, 2]))],
                              [numpy_helper.from_array(v, k) for k, v in weights.items()])
    g = Graph.from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))
    inputs = [(rng.standard_normal((3, 4)) * 60).astype(np.float32), rng.integers(0, 255, (4, 2)).astype(np.uint8)]
    got, want = lowered_outputs(g, inputs), reference_outputs(g, inputs)
    for lowered, reference in zip(got, want, strict=True):
        np.testing.assert_array_equal(lowered, reference)
