"""The comparison, logic, bitwise, math and activation ops against onnxruntime (one-node ONNX
models, dfir's reference kernels), over the dtypes ONNX allows them; the ONNX forms that map onto
other ops (Clip, Sum, Mean, CastLike, Dropout); and the errors of the builder and the importer."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import TensorProto, helper

import dfir
import dfir.data_type as dt
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from test_ge import EXAMPLES, F32, check, node, onnx_model, rng, run_graph

NUMERIC = [np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
           np.uint32, np.uint64]


def values(shape, dtype, seed: int = 0, low: int = -5, high: int = 5) -> np.ndarray:
    """Small values of `dtype` (non-negative for unsigned types), with repeats so that ties occur."""
    if np.dtype(dtype) == np.bool_:
        return np.asarray(rng(seed).integers(0, 2, shape).astype(bool))
    low = max(low, 0) if np.dtype(dtype).kind == "u" else low
    data = np.asarray(rng(seed).integers(low, high, shape))
    return np.asarray(data / 2 if np.dtype(dtype).kind == "f" else data, dtype)


# --- comparisons, logic, bitwise -------------------------------------------------------------------

COMPARISONS = [(op, dtype) for op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual")
               for dtype in NUMERIC] + [("Equal", np.bool_)]


@pytest.mark.parametrize("op, dtype", COMPARISONS, ids=[f"{op}-{np.dtype(d).name}" for op, d in COMPARISONS])
def test_comparisons_match_onnxruntime(op, dtype):
    inputs = {"a": values((3, 4), dtype, 1), "b": values((4,), dtype, 2)}
    (got,) = check(onnx_model([node(op, ["a", "b"])], inputs), inputs)
    assert got.dtype == np.bool_


def test_float_comparisons_with_nan_are_false():
    inputs = {"a": np.float32([np.nan, 1.0, np.nan]), "b": np.float32([np.nan, np.nan, 0.0])}
    for op in ("Equal", "Less", "GreaterOrEqual"):
        (got,) = check(onnx_model([node(op, ["a", "b"])], inputs), inputs)
        assert not got.any()


@EXAMPLES
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
       op=st.sampled_from(["And", "Or", "Xor"]), seed=st.integers(0, 2**16))
def test_logical_ops_broadcast_like_onnxruntime(shapes, op, seed):
    a, b = shapes.input_shapes
    inputs = {"a": values(a, np.bool_, seed), "b": values(b, np.bool_, seed + 1)}
    check(onnx_model([node(op, ["a", "b"])], inputs), inputs)


def test_not_matches_onnxruntime():
    inputs = {"a": values((2, 3, 4), np.bool_)}
    check(onnx_model([node("Not", ["a"])], inputs, dynamic=True), inputs)


@EXAMPLES
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=4),
       dtype=st.sampled_from([np.float32, np.int64, np.uint8]), seed=st.integers(0, 2**16))
def test_where_broadcasts_all_three_operands(shapes, dtype, seed):
    c, x, y = shapes.input_shapes
    inputs = {"c": values(c, np.bool_, seed), "x": values(x, dtype, seed + 1), "y": values(y, dtype, seed + 2)}
    check(onnx_model([node("Where", ["c", "x", "y"])], inputs), inputs)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
def test_bitwise_ops_match_onnxruntime(op, dtype):
    inputs = {"a": values((3, 4), dtype, 1, -100, 100), "b": values((4,), dtype, 2, -100, 100)}
    check(onnx_model([node(op, ["a", "b"])], inputs), inputs)


def test_bitwise_not_matches_onnxruntime():
    for dtype in (np.int32, np.uint8, np.uint64):
        inputs = {"a": values((3, 4), dtype, 1, -100, 100)}
        check(onnx_model([node("BitwiseNot", ["a"])], inputs), inputs)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift_matches_onnxruntime(direction, dtype):
    inputs = {"a": values((2, 4), dtype, 1, 0, 255), "b": np.array([0, 1, 3, 7], dtype)}
    check(onnx_model([node("BitShift", ["a", "b"], direction=direction)], inputs), inputs)


def test_shifts_by_the_bit_width_or_more_are_defined():
    g = Graph("shifts")
    x = g.data(0, [4], dt.DT_INT8, name="x")
    n = g.data(1, [4], dt.DT_INT8, name="n")
    g.set_outputs([g.bit_shift(x, n, "left"), g.bit_shift(x, n, "right")])
    (left, right), _ = run_graph(g, [np.int8([1, -3, 5, -128]), np.int8([8, 9, 1, 7])])
    assert left.tolist() == [0, 0, 10, 0] and right.tolist() == [0, -1, 2, -1]


@pytest.mark.parametrize("op", ["IsNaN", "IsInf"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_float_tests_match_onnxruntime(op, dtype):
    inputs = {"x": np.array([1.0, np.nan, np.inf, -np.inf, 0.0, -2.5], dtype)}
    check(onnx_model([node(op, ["x"])], inputs, opset=20), inputs)


@pytest.mark.parametrize("positive, negative", [(1, 0), (0, 1), (0, 0)])
def test_is_inf_detects_the_signs_asked_for(positive, negative):
    inputs = {"x": np.float32([np.inf, -np.inf, np.nan, 3.0])}
    model = onnx_model([node("IsInf", ["x"], detect_positive=positive, detect_negative=negative)], inputs)
    (got,) = check(model, inputs)
    assert got.tolist() == [bool(positive), bool(negative), False, False]


# --- math functions --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int32, np.int64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", ["Neg", "Abs", "Sign"])
def test_signed_math_matches_onnxruntime(op, dtype):
    inputs = {"x": values((3, 5), dtype, 4)}
    check(onnx_model([node(op, ["x"])], inputs, dynamic=True), inputs)


def test_abs_and_sign_of_unsigned_integers():
    inputs = {"x": values((3, 5), np.uint16, 4, 0, 9)}
    check(onnx_model([node("Abs", ["x"])], inputs), inputs)
    check(onnx_model([node("Sign", ["x"])], inputs), inputs)


def test_round_halves_to_even_and_floor_and_ceil():
    inputs = {"x": np.float32([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6, 0.0])}
    (rounded,) = check(onnx_model([node("Round", ["x"])], inputs), inputs)
    assert rounded.tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 2.0, -3.0, 0.0]
    check(onnx_model([node("Floor", ["x"])], inputs), inputs)
    check(onnx_model([node("Ceil", ["x"])], inputs), inputs)


TRIGONOMETRY = [("Sin", -4.0, 4.0), ("Cos", -4.0, 4.0), ("Tan", -1.4, 1.4), ("Asin", -0.99, 0.99),
                ("Acos", -0.99, 0.99), ("Atan", -5.0, 5.0), ("Sinh", -4.0, 4.0), ("Cosh", -4.0, 4.0),
                ("Asinh", -5.0, 5.0), ("Acosh", 1.0, 6.0), ("Atanh", -0.99, 0.99), ("Reciprocal", 0.5, 4.0)]


@pytest.mark.parametrize("op, low, high", TRIGONOMETRY, ids=[t[0] for t in TRIGONOMETRY])
def test_float_math_matches_onnxruntime(op, low, high):
    inputs = {"x": rng(5).uniform(low, high, (4, 6)).astype(np.float32)}
    check(onnx_model([node(op, ["x"])], inputs, dynamic=True), inputs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fmod", [0, 1])
def test_integer_mod_takes_the_sign_of_the_divisor_or_with_fmod_the_dividend(fmod, dtype):
    inputs = {"a": values((3, 4), dtype, 1, -20, 20), "b": values((4,), dtype, 2, -7, 7) | dtype(1)}
    check(onnx_model([node("Mod", ["a", "b"], fmod=fmod)], inputs), inputs)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_float_mod_matches_onnxruntime(dtype):
    inputs = {"a": np.array([5.5, -5.5, 5.5, -5.5, 0.0], dtype), "b": np.array([2.0, 2.0, -2.0, -2.0, 3.0], dtype)}
    check(onnx_model([node("Mod", ["a", "b"], fmod=1)], inputs), inputs)
    g = Graph("floored")
    ge_dtype = dt.from_numpy(np.dtype(dtype))
    a, b = g.data(0, [5], ge_dtype, name="a"), g.data(1, [5], ge_dtype, name="b")
    g.set_outputs([g.mod(a, b)])
    (got,), _ = run_graph(g, [inputs["a"], inputs["b"]])
    assert got.tolist() == [1.5, 0.5, -0.5, -1.5, 0.0]


def test_integer_mod_by_zero_is_zero():
    g = Graph("by_zero")
    a, b = g.data(0, [3], dt.DT_INT32, name="a"), g.data(1, [3], dt.DT_INT32, name="b")
    g.set_outputs([g.mod(a, b), g.mod(a, b, fmod=True)])
    (floored, truncated), _ = run_graph(g, [np.int32([7, -7, -2**31]), np.int32([0, 0, -1])])
    assert floored.tolist() == truncated.tolist() == [0, 0, 0]


@pytest.mark.parametrize("k", [None, 0, 2, -1, -5, 9])
@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_matches_onnxruntime(upper, k):
    inputs = {"x": values((2, 4, 6), np.float32, 5)}
    weights = {} if k is None else {"k": np.array(k, np.int64)}
    model = onnx_model([node("Trilu", ["x", *weights], upper=upper)], inputs, weights, dynamic=True)
    check(model, inputs)


def test_trilu_of_integers_and_with_k_from_shapes():
    inputs = {"x": values((3, 5), np.int64, 6, -100, 100)}
    nodes = [node("Shape", ["x"], ["shape"]), node("Gather", ["shape", "zero"], ["k"]),
             helper.make_node("Trilu", ["x", "k"], ["y"], name="trilu")]
    check(onnx_model(nodes, inputs, {"zero": np.array(0, np.int64)}), inputs)


def test_trilu_with_a_k_input_is_refused():
    inputs = {"x": values((3, 5), np.float32, 6), "k": np.array(1, np.int64)}
    assert _import_error(onnx_model([node("Trilu", ["x", "k"])], inputs)) == (
        "onnx=g; node=trilu; Trilu: k (input 'k') must be known when the model is imported: a constant, or computed "
        "from shapes; it is the model input 'k': give its value with Graph.from_onnx(..., constant_inputs={'k': ...})")


# --- activations -----------------------------------------------------------------------------------

ACTIVATIONS = [("LeakyRelu", {}), ("LeakyRelu", {"alpha": 0.3}), ("Elu", {}), ("Elu", {"alpha": 0.5}),
               ("Celu", {}), ("Celu", {"alpha": 2.0}), ("Selu", {}), ("Selu", {"alpha": 2.0, "gamma": 3.0}),
               ("ThresholdedRelu", {}), ("ThresholdedRelu", {"alpha": 0.5}), ("HardSigmoid", {}),
               ("HardSigmoid", {"alpha": 0.5, "beta": 0.6}), ("HardSwish", {}), ("Shrink", {}),
               ("Shrink", {"bias": 1.5, "lambd": 1.0}), ("Softplus", {}), ("Softsign", {}), ("Mish", {})]


@pytest.mark.parametrize("op, attrs", ACTIVATIONS, ids=[f"{op}{attrs}" for op, attrs in ACTIVATIONS])
def test_activations_match_onnxruntime(op, attrs):
    inputs = {"x": rng(6).uniform(-4, 4, (3, 16)).astype(np.float32)}
    check(onnx_model([node(op, ["x"], **attrs)], inputs, dynamic=True), inputs, rtol=1e-5, atol=1e-6)


def test_softplus_does_not_overflow():
    inputs = {"x": np.float32([-100.0, 0.0, 100.0])}
    (got,) = check(onnx_model([node("Softplus", ["x"])], inputs), inputs)
    assert got.tolist() == pytest.approx([0.0, np.log(2.0), 100.0])


def test_activations_keep_float16():
    inputs = {"x": rng(6).uniform(-4, 4, (3, 8)).astype(np.float16)}
    for op in ("LeakyRelu", "Elu", "HardSigmoid", "HardSwish"):
        check(onnx_model([node(op, ["x"])], inputs), inputs, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("slope_shape", [(), (1,), (5,), (3, 1, 1), (4, 5)])
def test_prelu_broadcasts_the_slope(slope_shape):
    inputs = {"x": rng(7).uniform(-3, 3, (2, 3, 4, 5)).astype(np.float32)}
    slope = {"slope": rng(8).uniform(0, 1, slope_shape).astype(np.float32)}
    check(onnx_model([node("PRelu", ["x", "slope"])], inputs, slope), inputs)


def test_prelu_of_integers():
    inputs = {"x": values((2, 5), np.int32, 3), "slope": np.int32([1, 2, 3, 4, 5])}
    check(onnx_model([node("PRelu", ["x", "slope"])], inputs), inputs)


# --- forms that map onto other ops -----------------------------------------------------------------

@pytest.mark.parametrize("bounds", [("lo", "hi"), ("lo", ""), ("", "hi"), ("", "")])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8], ids=lambda d: np.dtype(d).name)
def test_clip_with_either_bound_matches_onnxruntime(bounds, dtype):
    inputs = {"x": values((3, 4), dtype, 2, -9, 9)}
    weights = {"lo": np.array(1, dtype), "hi": np.array(3, dtype)}
    check(onnx_model([node("Clip", ["x", *bounds])], inputs, {k: v for k, v in weights.items() if k in bounds}),
          inputs)


def test_clip_bounds_may_be_inputs():
    inputs = {"x": floats_between(-3, 3), "lo": np.array(-1.0, np.float32), "hi": np.array(0.5, np.float32)}
    check(onnx_model([node("Clip", ["x", "lo", "hi"])], inputs), inputs)


def floats_between(low: float, high: float) -> np.ndarray:
    return rng(9).uniform(low, high, (3, 4)).astype(np.float32)


@pytest.mark.parametrize("op", ["Sum", "Mean", "Max", "Min"])
def test_variadic_ops_broadcast_every_input(op):
    inputs = {"a": floats_between(-2, 2), "b": np.float32([1.0, -1.0, 0.5, 2.0]), "c": np.float32([[0.25]] * 3)}
    check(onnx_model([node(op, ["a", "b", "c"])], inputs), inputs)
    check(onnx_model([node(op, ["a"])], {"a": inputs["a"]}), {"a": inputs["a"]})


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64], ids=lambda d: np.dtype(d).name)
def test_max_and_min_of_integers(dtype):
    inputs = {"a": values((3, 4), dtype, 1), "b": values((4,), dtype, 2)}
    for op in ("Max", "Min"):
        check(onnx_model([node(op, ["a", "b"])], inputs), inputs)


@pytest.mark.parametrize("source, like", [(np.float32, np.float16), (np.float64, np.int32), (np.int64, np.float32)])
def test_cast_like_casts_to_the_type_of_its_second_input(source, like):
    inputs = {"x": values((2, 3), source, 3)}
    weights = {"like": np.zeros(1, like)}
    (got,) = check(onnx_model([node("CastLike", ["x", "like"])], inputs, weights), inputs)
    assert got.dtype == like


def test_cast_like_of_an_input_tensor():
    inputs = {"x": floats_between(-2, 2), "like": np.zeros((1,), np.int32)}
    (got,) = check(onnx_model([node("CastLike", ["x", "like"])], inputs), inputs)
    assert got.dtype == np.int32


def test_dropout_at_inference_is_the_identity_with_an_all_true_mask():
    inputs = {"x": floats_between(-2, 2)}
    weights = {"ratio": np.float32(0.7), "training": np.bool_(False)}
    model = onnx_model([node("Dropout", ["x", "ratio", "training"], ["y", "mask"])], inputs, weights)
    y, mask = check(model, inputs)
    assert np.array_equal(y, inputs["x"]) and mask.dtype == np.bool_ and mask.all()
    check(onnx_model([node("Dropout", ["x"])], inputs, dynamic=True), inputs)


def test_comparisons_and_where_of_known_values_fold_at_import():
    """A Reshape target computed with Equal and Where from constants is known when imported."""
    inputs = {"x": floats_between(-1, 1).reshape(12)}
    nodes = [node("Equal", ["target", "zero"], ["is_zero"]), node("Not", ["is_zero"], ["kept"]),
             node("Where", ["kept", "target", "fill"], ["shape"]), node("Reshape", ["x", "shape"], ["y"])]
    weights = {"target": np.array([0, 4], np.int64), "zero": np.array(0, np.int64), "fill": np.array([3, 3], np.int64)}
    model = onnx_model(nodes, inputs, weights)
    (got,) = check(model, inputs)
    assert got.shape == (3, 4)
    assert [op.name for op in Graph.from_onnx(model).to_ir().block.ops] == ["ge.data", "ge.reshape", "ge.output"]


# --- errors ----------------------------------------------------------------------------------------

def _import_error(model) -> str:
    with pytest.raises(GeError) as info:
        Graph.from_onnx(model)
    return str(info.value)


def test_dropout_in_training_mode_is_refused():
    inputs = {"x": floats_between(-2, 2)}
    model = onnx_model([node("Dropout", ["x", "ratio", "training"])], inputs,
                       {"ratio": np.float32(0.5), "training": np.bool_(True)})
    assert _import_error(model) == "onnx=g; node=dropout; Dropout: training_mode true is not supported (inference only)"


def test_dropout_with_a_training_mode_input_is_refused():
    inputs = {"x": floats_between(-2, 2), "ratio": np.float32(0.5), "training": np.bool_(False)}
    model = onnx_model([node("Dropout", ["x", "ratio", "training"])], inputs)
    assert _import_error(model) == (
        "onnx=g; node=dropout; Dropout: training_mode (input 'training') must be known when the model is "
        "imported: a constant, or computed from shapes; it is the model input 'training': give its value with "
        "Graph.from_onnx(..., constant_inputs={'training': ...})")


def test_dropout_mask_of_a_dynamic_shape_is_refused():
    inputs = {"x": floats_between(-2, 2)}
    model = onnx_model([node("Dropout", ["x"], ["y", "mask"])], inputs, dynamic=True)
    assert _import_error(model) == ("onnx=g; node=dropout; Dropout: the mask output needs a static input shape, "
                                    "got [-1, -1]")


def test_bit_shift_with_an_unknown_direction_is_refused():
    inputs = {"a": np.uint8([1, 2])}
    model = onnx_model([node("BitShift", ["a", "a"], direction="LEFT")], inputs)
    model.graph.node[0].attribute[0].s = b"UP"
    assert _import_error(model) == "onnx=g; node=bitshift; BitShift: direction must be LEFT or RIGHT, got 'UP'"


def test_a_float_only_op_on_integers_names_the_node():
    graph = helper.make_graph([node("Shrink", ["x"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.INT32, [2])],
                              [helper.make_tensor_value_info("y0", TensorProto.INT32, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    message = re.sub(r"; at=[^;]*", "", _import_error(model))
    assert message == "graph=g; node=shrink; ge.shrink: operand must have a floating-point element type, got i32"


BUILD_ERRORS = [
    (lambda g, x, b: g.equal(x, b), "graph=g; node=equal_0; ge.equal: element types differ: lhs f32, rhs i1"),
    (lambda g, x, b: g.logical_and(x, x),
     "graph=g; node=logical_and_0; ge.logical_and: lhs must have element type i1, got f32"),
    (lambda g, x, b: g.logical_not(x),
     "graph=g; node=logical_not_0; ge.logical_not: operand must have element type i1, got f32"),
    (lambda g, x, b: g.bitwise_or(x, x),
     "graph=g; node=bitwise_or_0; ge.bitwise_or: lhs must have an integer element type, got f32"),
    (lambda g, x, b: g.bitwise_and(b, b),
     "graph=g; node=bitwise_and_0; ge.bitwise_and: lhs must have an integer element type, got i1"),
    (lambda g, x, b: g.bitwise_not(b),
     "graph=g; node=bitwise_not_0; ge.bitwise_not: operand must have an integer element type, got i1"),
    (lambda g, x, b: g.bit_shift(x, x, "up"),
     "graph=g; node=bit_shift_0; ge.bit_shift: direction must be one of left, right, got 'up'"),
    (lambda g, x, b: g.bit_shift(x, x, 1), "graph=g; bit_shift direction must be a str, got 1"),
    (lambda g, x, b: g.select(x, x, x),
     "graph=g; node=select_0; ge.select: condition must have element type i1, got f32"),
    (lambda g, x, b: g.select(b, x, b), "graph=g; node=select_0; ge.select: element types differ: lhs f32, rhs i1"),
    (lambda g, x, b: g.select(g.const(np.ones((2,), bool)), x, x),
     "graph=g; node=select_0; ge.select: shapes [2] and [3, 4] do not broadcast: dimension 1 is 2 vs 4"),
    (lambda g, x, b: g.is_nan(b),
     "graph=g; node=is_nan_0; ge.is_nan: operand must have a floating-point element type, got i1"),
    (lambda g, x, b: g.is_inf(x, detect_positive=1), "graph=g; is_inf detect_positive must be a bool, got 1"),
    (lambda g, x, b: g.mod(b, b), "graph=g; node=mod_0; ge.mod: lhs must have a numeric element type, got i1"),
    (lambda g, x, b: g.neg(b), "graph=g; node=neg_0; ge.neg: operand must have a numeric element type, got i1"),
    (lambda g, x, b: g.floor(b),
     "graph=g; node=floor_0; ge.floor: operand must have a floating-point element type, got i1"),
    (lambda g, x, b: g.leaky_relu(x, alpha="0.1"), "graph=g; leaky_relu alpha must be a number, got '0.1'"),
    (lambda g, x, b: g.celu(x, alpha=0.0), "graph=g; node=celu_0; ge.celu: alpha must not be 0"),
    (lambda g, x, b: g.prelu(x, g.const(np.ones((2, 3, 4), np.float32))),
     "graph=g; node=prelu_0; ge.prelu: slope [2, 3, 4] does not broadcast to the input [3, 4]"),
    (lambda g, x, b: g.prelu(b, b), "graph=g; node=prelu_0; ge.prelu: input must have a numeric element type, got i1"),
    (lambda g, x, b: g.trilu(b), "graph=g; node=trilu_0; ge.trilu: input must have rank >= 2, got [4]"),
    (lambda g, x, b: g.trilu(x, k=0.5), "graph=g; trilu k must be an int, got 0.5"),
]


@pytest.mark.parametrize("build, message", BUILD_ERRORS, ids=[m.split("; ")[-1][:60] for _, m in BUILD_ERRORS])
def test_builder_errors_name_the_node_the_op_and_the_numbers(build, message):
    g = Graph("g")
    x = g.data(0, [3, 4], F32, name="x")
    b = g.data(1, [4], dt.DT_BOOL, name="b")
    with pytest.raises(GeError) as info:
        build(g, x, b)
    line = build.__code__.co_firstlineno
    text = str(info.value).replace(f"; at=test_ge_elementwise.py:{line}", "")
    assert f"at=test_ge_elementwise.py:{line}" not in text and text == message


# --- whole pipeline --------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", ["reference", "iree-cpu"])
def test_a_model_of_the_new_ops_compiles_loads_and_matches_onnxruntime(backend):
    """Planned arena (reference) or an IREE executable: a gated activation with a mask."""
    nodes = [node("Greater", ["x", "threshold"], ["above"]), node("HardSwish", ["x"], ["swish"]),
             node("LeakyRelu", ["x"], ["leaky"], alpha=0.2), node("Where", ["above", "swish", "leaky"], ["gated"]),
             node("Clip", ["gated", "lo", "hi"], ["clipped"]), node("Not", ["above"], ["below"]),
             node("Cast", ["below"], ["mask"], to=TensorProto.FLOAT), node("Mul", ["clipped", "mask"], ["y"])]
    inputs = {"x": floats_between(-4, 4)}
    weights = {"threshold": np.float32([0.5, -0.5, 0.0, 1.0]), "lo": np.array(-0.5, np.float32),
               "hi": np.array(2.5, np.float32)}
    model = onnx_model(nodes, inputs, weights, dynamic=True)
    compiled = dfir.compile(Graph.from_onnx(model), options={"dfir.ge.backend": backend})
    with dfir.load(compiled.om) as runtime:
        for rows in (1, 5):
            x = rng(rows).uniform(-4, 4, (rows, 4)).astype(np.float32)
            runtime.feed_data([x])
            outputs, _, ret = runtime.fetch_data(timeout=5000)
            assert ret == 0
            expected = check(model, {"x": x})[0]
            np.testing.assert_allclose(outputs[0].numpy(), expected, rtol=1e-5, atol=1e-6)


# --- bit casts -----------------------------------------------------------------------------------

@pytest.mark.parametrize("source, target, message", [
    (dt.DT_FLOAT, dt.DT_INT64, r"ge.bitcast: f32 has 32 bits and i64 64; a bit cast needs equal widths"),
    (dt.DT_UINT8, dt.DT_BOOL, r"ge.bitcast: ui8 cannot be read as i1, whose bytes must be 0 or 1"),
])
def test_bitcast_refusals(source, target, message):
    g = Graph("g")
    with pytest.raises(GeError, match=message):
        g.bitcast(g.data(0, [3], source, name="x"), target)


@given(hnp.arrays(np.float32, hnp.array_shapes(max_dims=3, max_side=4)))
def test_the_bitcast_kernel_views_the_bytes(x):
    g = Graph("g")
    g.set_outputs([g.bitcast(g.data(0, list(x.shape), F32, name="x"), dt.DT_UINT32)])
    (got,), _ = run_graph(g, [x])
    np.testing.assert_array_equal(got, x.view(np.uint32))
