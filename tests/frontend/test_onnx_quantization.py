"""ONNX quantization imported as compositions (QuantizeLinear, DequantizeLinear, MatMulInteger,
QLinearMatMul) and BitCast as `ge.bitcast`, against onnxruntime and exact values; the refusals."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from dfir.ge.error import GeError
from dfir.ge.graph import Graph

from onnx_models import model, reference, run_reference, tensor_info

_ELEM = {np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8,
         np.dtype(np.uint16): TensorProto.UINT16, np.dtype(np.int16): TensorProto.INT16,
         np.dtype(np.int32): TensorProto.INT32, np.dtype(np.float32): TensorProto.FLOAT,
         np.dtype(np.float16): TensorProto.FLOAT16}


def single_node(op: str, inputs: dict[str, np.ndarray], output: str, output_elem: int, opset: int = 21,
                weights: dict[str, np.ndarray] | None = None, shape=None, **attrs):
    """A model of one `op` node fed `inputs` (graph inputs) and `weights` (initializers), in that
    order; its output has `shape` (by default the first input's)."""
    names = [*inputs, *(weights or {})]
    node = helper.make_node(op, names, [output], name=op.lower(), **attrs)
    infos = [tensor_info(n, list(a.shape), _ELEM[a.dtype]) for n, a in inputs.items()]
    inits = [numpy_helper.from_array(a, n) for n, a in (weights or {}).items()]
    shape = list(next(iter(inputs.values())).shape) if shape is None else shape
    return model([node], infos, [tensor_info(output, shape, output_elem)], inits, opset=opset)


def assert_matches_onnxruntime(proto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    (want,) = reference(proto, inputs)
    (got,) = run_reference(Graph.from_onnx(proto), *inputs.values())
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    return [got]


def _range(dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


# --- QuantizeLinear ---------------------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(dtype=st.sampled_from([np.uint8, np.int8, np.uint16, np.int16]), mode=st.sampled_from(["tensor", "axis", "block"]),
       spread=st.sampled_from([1.0, 100.0, 1e5]), seed=st.integers(0, 2**16))
def test_quantize_linear_matches_onnxruntime(dtype, mode, spread, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((3, 4, 5)) * spread).astype(np.float32)
    param_shape = {"tensor": (), "axis": (4,), "block": (3, 2, 5)}[mode]
    scale = rng.uniform(0.05, 2.0, param_shape).astype(np.float32)
    low, high = _range(dtype)
    zero_point = rng.integers(low, high, param_shape, endpoint=True).astype(dtype)
    attrs = {"axis": 1, **({"block_size": 2} if mode == "block" else {})}
    proto = single_node("QuantizeLinear", {"x": x, "scale": scale, "zero_point": zero_point}, "y",
                        _ELEM[np.dtype(dtype)], **attrs)
    assert_matches_onnxruntime(proto, {"x": x, "scale": scale, "zero_point": zero_point})


def test_quantize_linear_rounds_halves_to_even_and_saturates():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 300.0, -300.0, 127.5], np.float32)
    proto = single_node("QuantizeLinear", {"x": x}, "y", TensorProto.INT8,
                        weights={"scale": np.array(1.0, np.float32), "zero_point": np.array(0, np.int8)})
    (got,) = run_reference(Graph.from_onnx(proto), x)
    np.testing.assert_array_equal(got, np.array([0, 2, 2, 0, -2, 127, -128, 127], np.int8))


def test_quantize_linear_without_zero_point_gives_uint8_or_the_output_dtype():
    x = np.array([-1.0, 0.4, 3.6, 400.0], np.float32)
    scale = np.array(1.0, np.float32)
    plain = single_node("QuantizeLinear", {"x": x, "scale": scale}, "y", TensorProto.UINT8)
    assert run_reference(Graph.from_onnx(plain), x, scale)[0].tolist() == [0, 0, 4, 255]
    typed = single_node("QuantizeLinear", {"x": x, "scale": scale}, "y", TensorProto.INT16,
                        output_dtype=TensorProto.INT16)
    (got,) = assert_matches_onnxruntime(typed, {"x": x, "scale": scale})
    assert got.tolist() == [-1, 0, 4, 400]


def test_quantize_linear_of_half_inputs_divides_in_half():
    x = np.array([1000.3, -2.51, 7.49, 30000.0], np.float16)
    scale = np.array(0.5, np.float16)
    proto = single_node("QuantizeLinear", {"x": x, "scale": scale}, "y", TensorProto.UINT16,
                        weights={"zero_point": np.array(30000, np.uint16)})
    (got,) = run_reference(Graph.from_onnx(proto), x, scale)
    expected = np.clip(np.rint(x / scale).astype(np.int32) + 30000, 0, 65535).astype(np.uint16)
    np.testing.assert_array_equal(got, expected)


# --- DequantizeLinear -------------------------------------------------------------------------

@settings(max_examples=12, deadline=None)
@given(dtype=st.sampled_from([np.uint8, np.int8, np.uint16, np.int16, np.int32]),
       mode=st.sampled_from(["tensor", "axis", "block"]), seed=st.integers(0, 2**16))
def test_dequantize_linear_matches_onnxruntime(dtype, mode, seed):
    rng = np.random.default_rng(seed)
    low, high = _range(dtype) if dtype != np.int32 else (-1 << 20, 1 << 20)
    x = rng.integers(low, high, (3, 5, 2), endpoint=True).astype(dtype)
    param_shape = {"tensor": (), "axis": (5,), "block": (3, 3, 2)}[mode]
    scale = rng.uniform(0.01, 2.0, param_shape).astype(np.float32)
    zero_point = rng.integers(low, high, param_shape, endpoint=True).astype(dtype)
    attrs = {"axis": 1, **({"block_size": 2} if mode == "block" else {})}
    proto = single_node("DequantizeLinear", {"x": x, "scale": scale, "zero_point": zero_point}, "y",
                        TensorProto.FLOAT, **attrs)
    assert_matches_onnxruntime(proto, {"x": x, "scale": scale, "zero_point": zero_point})


def test_dequantize_linear_values_and_half_scales():
    x = np.array([0, 3, 128, 255], np.uint8)
    proto = single_node("DequantizeLinear", {"x": x}, "y", TensorProto.FLOAT16,
                        weights={"scale": np.array(0.5, np.float16), "zero_point": np.array(128, np.uint8)})
    (got,) = run_reference(Graph.from_onnx(proto), x)
    assert got.dtype == np.float16 and got.tolist() == [-64.0, -62.5, 0.0, 63.5]


# --- integer and quantized-linear matmuls -----------------------------------------------------

@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("shapes", [((4, 3), (3, 2)), ((2, 4, 3), (3, 5)), ((3,), (3, 2))])
def test_matmul_integer_accumulates_in_int32(dtype, shapes):
    rng = np.random.default_rng(3)
    low, high = _range(dtype)
    a, b = (rng.integers(low, high, s, endpoint=True).astype(dtype) for s in shapes)
    zeros = {"a_zero_point": np.array(low + 7, dtype), "b_zero_point": np.full(shapes[1][-1], high - 9, dtype)}
    proto = single_node("MatMulInteger", {"a": a, "b": b, **zeros}, "y", TensorProto.INT32, opset=10,
                        shape=list(np.matmul(a, b).shape))
    (got,) = assert_matches_onnxruntime(proto, {"a": a, "b": b, **zeros})
    expected = np.matmul(a.astype(np.int64) - zeros["a_zero_point"], b.astype(np.int64) - zeros["b_zero_point"])
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=10, deadline=None)
@given(dtype=st.sampled_from([np.uint8, np.int8]), scale_type=st.sampled_from([np.float32, np.float16]),
       seed=st.integers(0, 2**16))
def test_qlinear_matmul_matches_onnxruntime(dtype, scale_type, seed):
    rng = np.random.default_rng(seed)
    low, high = _range(dtype)
    a, b = rng.integers(low, high, (2, 3, 8), endpoint=True).astype(dtype), \
        rng.integers(low, high, (8, 4), endpoint=True).astype(dtype)
    weights = {"a_scale": np.array([0.02], scale_type), "a_zero_point": np.array([low + 100], dtype),
               "b_scale": np.array([0.01], scale_type), "b_zero_point": np.array([low + 120], dtype),
               "y_scale": np.array([rng.uniform(0.05, 0.5)], scale_type),
               "y_zero_point": np.array([low + 128], dtype)}
    ordered = ["a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"]
    node = helper.make_node("QLinearMatMul", ordered, ["y"], name="qlinear")
    proto = model([node], [tensor_info("a", [2, 3, 8], _ELEM[np.dtype(dtype)]),
                           tensor_info("b", [8, 4], _ELEM[np.dtype(dtype)])],
                  [tensor_info("y", [2, 3, 4], _ELEM[np.dtype(dtype)])],
                  [numpy_helper.from_array(v, k) for k, v in weights.items()], opset=21)
    (got,) = run_reference(Graph.from_onnx(proto), a, b)
    (exact,) = ReferenceEvaluator(proto).run(None, {"a": a, "b": b})
    assert got.dtype == exact.dtype
    np.testing.assert_array_equal(got, exact)
    # onnxruntime requantizes in float32, the ONNX reference in float64: a half may round apart.
    (runtime,) = reference(proto, {"a": a, "b": b})
    assert np.abs(got.astype(np.int32) - runtime).max() <= 1


# --- BitCast ------------------------------------------------------------------------------------

@pytest.mark.parametrize("values, to", [
    (np.array([1.0, -0.0, np.inf], np.float32), TensorProto.INT32),
    (np.array([[-1, 7], [0, 1 << 62]], np.int64), TensorProto.DOUBLE),
    (np.array([-128, 0, 127], np.int8), TensorProto.UINT8),
    (np.array([True, False], np.bool_), TensorProto.UINT8),
    (np.array(3.5, np.float32), TensorProto.UINT32),
])
def test_bitcast_keeps_the_bits(values, to):
    g = Graph.from_onnx(model([helper.make_node("BitCast", ["x"], ["y"], to=to)],
                              [tensor_info("x", list(values.shape), helper.np_dtype_to_tensor_dtype(values.dtype))],
                              [tensor_info("y", list(values.shape), to)], opset=26))
    (got,) = run_reference(g, values)
    np.testing.assert_array_equal(got, values.view(helper.tensor_dtype_to_np_dtype(to)))


# --- refusals -----------------------------------------------------------------------------------

def _x(shape=(2, 4), dtype=np.float32):
    return {"x": np.zeros(shape, dtype)}


@pytest.mark.parametrize("op, weights, attrs, message", [
    ("QuantizeLinear", {"s": np.array(1.0, np.float16)}, {},
     r"QuantizeLinear: x is DT_FLOAT and y_scale DT_FLOAT16: without the precision attribute the type of the "
     r"division is ambiguous"),
    ("QuantizeLinear", {"s": np.ones(3, np.float32)}, {},
     r"QuantizeLinear: scale of shape \[3\] is neither a scalar nor a vector along axis 1 of x \[2, 4\]"),
    ("QuantizeLinear", {"s": np.ones((2, 3), np.float32)}, {"block_size": 2},
     r"QuantizeLinear: blocked scale of shape \[2, 3\] does not match x \[2, 4\] in blocks of 2 along axis 1 "
     r"\(expected \[2, 2\]\)"),
    ("QuantizeLinear", {"s": np.ones(4, np.float32)}, {"axis": 2},
     r"QuantizeLinear: axis 2 is out of range for x of rank 2"),
    ("QuantizeLinear", {"s": np.array(1.0, np.float32), "z": np.array(0, np.uint8)},
     {"output_dtype": TensorProto.INT8},
     r"QuantizeLinear: output_dtype INT8 differs from the zero point's type DT_UINT8"),
])
def test_quantize_refusals(op, weights, attrs, message):
    proto = single_node(op, _x(), "y", TensorProto.UINT8, weights=weights, **attrs)
    with pytest.raises(GeError, match=message):
        Graph.from_onnx(proto)


def test_dequantize_refusals():
    mismatched = single_node("DequantizeLinear", _x(dtype=np.uint8), "y", TensorProto.FLOAT,
                             weights={"s": np.array(1.0, np.float32), "z": np.array(0, np.int8)})
    with pytest.raises(GeError, match=r"DequantizeLinear: the zero point is DT_INT8, x is DT_UINT8; they must match"):
        Graph.from_onnx(mismatched)


def test_per_row_zero_points_of_matmul_integer_are_refused():
    proto = single_node("MatMulInteger", {"a": np.zeros((2, 3), np.uint8), "b": np.zeros((3, 2), np.uint8)}, "y",
                        TensorProto.INT32, opset=10, weights={"az": np.zeros(2, np.uint8)}, shape=[2, 2])
    with pytest.raises(GeError, match=r"MatMulInteger: the zero point of a of shape \[2\] is not supported; "
                                      r"expected a scalar"):
        Graph.from_onnx(proto)


# --- integer and quantized-linear convolutions --------------------------------------------------

def _conv_inputs(dtype, seed: int):
    rng = np.random.default_rng(seed)
    low, high = _range(dtype)
    x = rng.integers(low, high, (1, 4, 6, 5), endpoint=True).astype(dtype)
    w = rng.integers(low, high, (6, 2, 3, 2), endpoint=True).astype(dtype)
    return x, w, np.array(low + 11, dtype), rng.integers(low, high, 6, endpoint=True).astype(dtype)


_WINDOW = {"pads": [1, 0, 1, 1], "strides": [2, 1], "dilations": [1, 2], "group": 2}


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("per_channel", [False, True])
def test_conv_integer_is_the_onnx_reference(dtype, per_channel):
    x, w, x_zero, w_zero = _conv_inputs(dtype, 4)
    inputs = {"x": x, "w": w, "x_zero_point": x_zero, "w_zero_point": w_zero if per_channel else w_zero[:1]}
    proto = single_node("ConvInteger", inputs, "y", TensorProto.INT32, opset=10, shape=[1, 6, 3, 4], **_WINDOW)
    (want,) = ReferenceEvaluator(proto).run(None, inputs)
    (got,) = run_reference(Graph.from_onnx(proto), *inputs.values())
    np.testing.assert_array_equal(got, want)
    if dtype == np.uint8 and not per_channel:  # what onnxruntime's ConvInteger takes
        assert_matches_onnxruntime(proto, inputs)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qlinear_conv_is_the_onnx_reference(dtype):
    x, w, x_zero, w_zero = _conv_inputs(dtype, 8)
    rng = np.random.default_rng(2)
    inputs = {"x": x, "x_scale": np.array(0.05, np.float32), "x_zero_point": x_zero, "w": w,
              "w_scale": rng.uniform(0.001, 0.01, 6).astype(np.float32), "w_zero_point": np.array(3, dtype),
              "y_scale": np.array(0.7, np.float32), "y_zero_point": np.array(int(x_zero) + 40, dtype),
              "bias": rng.integers(-5000, 5000, 6).astype(np.int32)}
    proto = single_node("QLinearConv", inputs, "y", _ELEM[np.dtype(dtype)], opset=10, shape=[1, 6, 3, 4], **_WINDOW)
    (want,) = ReferenceEvaluator(proto).run(None, inputs)
    (got,) = run_reference(Graph.from_onnx(proto), *inputs.values())
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    (runtime,) = reference(proto, inputs)
    assert np.abs(got.astype(np.int32) - runtime).max() <= 1


def test_a_float_bias_of_qlinear_conv_is_refused():
    x, w, x_zero, _ = _conv_inputs(np.uint8, 1)
    inputs = {"x": x, "x_scale": np.array(0.05, np.float32), "x_zero_point": x_zero, "w": w,
              "w_scale": np.array(0.01, np.float32), "w_zero_point": np.array(3, np.uint8),
              "y_scale": np.array(0.7, np.float32), "y_zero_point": np.array(9, np.uint8),
              "bias": np.zeros(6, np.float32)}
    proto = single_node("QLinearConv", inputs, "y", TensorProto.UINT8, opset=10, shape=[1, 6, 3, 4], **_WINDOW)
    with pytest.raises(GeError, match=r"QLinearConv: the bias is DT_FLOAT; QLinearConv takes an int32 bias"):
        Graph.from_onnx(proto)


_QLINEAR_MATMUL_REST = {"az": np.array([0], np.uint8), "b": np.zeros((4, 3), np.uint8), "bs": np.array([1.0], np.float32),
                        "bz": np.array([0], np.uint8), "ys": np.array([1.0], np.float32), "yz": np.array([0], np.uint8)}


@pytest.mark.parametrize("op, inputs, options, elem, message", [
    ("QuantizeLinear", _x(), {"weights": {"s": np.array(1.0, np.float32)}, "output_dtype": TensorProto.INT32},
     TensorProto.INT32, r"QuantizeLinear: quantizing to DT_INT32 is not supported; supported: DT_UINT8, DT_INT8, "
                        r"DT_UINT16, DT_INT16"),
    ("QuantizeLinear", _x(dtype=np.int32), {"weights": {"s": np.array(1, np.int32)}}, TensorProto.UINT8,
     r"QuantizeLinear: dividing x by y_scale in DT_INT32 is not supported; the division must be in a float type"),
    ("QuantizeLinear", {"x": np.zeros((2, 4), np.float32), "s": np.ones((2, 2), np.float32)},
     {"block_size": 2, "dynamic": True}, TensorProto.UINT8,
     r"QuantizeLinear: blocked scale needs a positive block_size and a fixed axis 1 of x, got block_size 2 and x "
     r"\[-1, -1\]"),
    ("DequantizeLinear", _x(), {"weights": {"s": np.array(1.0, np.float32)}}, TensorProto.FLOAT,
     r"DequantizeLinear: x of type DT_FLOAT cannot be dequantized; supported: DT_UINT8, DT_INT8, DT_UINT16, "
     r"DT_INT16, DT_INT32"),
    ("QLinearMatMul", _x(dtype=np.uint8), {"weights": {"as": np.ones(2, np.float32), **_QLINEAR_MATMUL_REST},
                                           "shape": [2, 3]}, TensorProto.UINT8,
     r"QLinearMatMul: a_scale of shape \[2\] is not supported; expected a scalar"),
])
def test_unsupported_variants_are_refused(op, inputs, options, elem, message):
    options = dict(options)
    dynamic = options.pop("dynamic", False)
    proto = single_node(op, inputs, "y", elem, **options)
    if dynamic:
        for info in proto.graph.input:
            for d in info.type.tensor_type.shape.dim:
                d.dim_param = f"{info.name}_dim"
    with pytest.raises(GeError, match=message):
        Graph.from_onnx(proto)
