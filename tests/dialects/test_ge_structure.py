"""The structural, reduction and normalization ops (expand, tile, log_softmax, the reductions
beyond sum/mean/max, arg_max/arg_min, top_k, instance_norm, lrn, and DepthToSpace/SpaceToDepth as
compositions) against onnxruntime, their shape functions over ranges, and their error messages.
The harness is test_ge's: a one-node ONNX model, imported, run on the reference kernels."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.utils.exceptions import VerifyException

import dfir.data_type as dt
from dfir.dialects import ge
from dfir.dialects.ge_types import GeTensorType
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.runtime.ge.kernels import KERNELS
from test_ge import EXAMPLES, check, floats, inferred, node, onnx_model, run_graph, tensor

F32 = dt.DT_FLOAT


def assert_matches_onnx_reference(model: onnx.ModelProto, x: np.ndarray) -> None:
    """For forms onnxruntime does not run: onnx's own reference evaluator computes the expectation."""
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x})
    (got,), _ = run_graph(Graph.from_onnx(model), [x])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def ints_of(shape, dtype, seed: int = 0, low: int = -20, high: int = 20) -> np.ndarray:
    low = max(low, 0) if np.dtype(dtype).kind == "u" else low
    return np.random.default_rng(seed).integers(low, high, shape).astype(dtype)


# --- expand and tile ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, target", [((3, 1), [2, 1, 6]), ((1,), [4]), ((2, 3), [3]), ((4, 1, 2), [1, 5, 1]),
                                           ((1, 2), [0, 2])])
def test_expand_matches_onnxruntime(shape, target):
    inputs = {"x": floats(shape)}
    check(onnx_model([node("Expand", ["x", "shape"])], inputs, {"shape": np.array(target, np.int64)}), inputs)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8, np.bool_])
def test_tile_matches_onnxruntime(dtype):
    inputs = {"x": ints_of((2, 3), dtype) if dtype != np.bool_ else floats((2, 3)) > 0}
    check(onnx_model([node("Tile", ["x", "repeats"])], inputs, {"repeats": np.array([3, 2], np.int64)},
                     dynamic=True), inputs)


# --- log-softmax and the normalizations -----------------------------------------------------------

@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_log_softmax_matches_onnxruntime(axis, dtype):
    inputs = {"x": (floats((3, 4, 5)) * 20).astype(dtype)}
    check(onnx_model([node("LogSoftmax", ["x"], axis=axis)], inputs), inputs)


@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 5)])
def test_instance_norm_matches_onnxruntime(shape):
    inputs = {"x": floats(shape) * 3 + 1}
    weights = {"s": floats((3,), 1), "b": floats((3,), 2)}
    check(onnx_model([node("InstanceNormalization", ["x", "s", "b"], epsilon=1e-3)], inputs, weights,
                     dynamic={"x"}), inputs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("size", [1, 3, 5])
def test_lrn_matches_onnxruntime(size):
    inputs = {"x": floats((2, 6, 3, 3))}
    check(onnx_model([node("LRN", ["x"], size=size, alpha=0.02, beta=0.6, bias=1.5)], inputs), inputs, rtol=1e-4)


def test_lrn_of_an_even_size_follows_the_onnx_formula():
    """onnxruntime takes odd sizes only (and onnx's reference evaluator loops over the batch, not
    the channels): the formula of the ONNX spec, written out, is the expectation."""
    x, size, alpha, beta, bias = floats((2, 5, 2, 2)), 4, 0.5, 0.75, 1.0
    channels = x.shape[1]
    square_sum = np.stack([np.sum(x[:, max(0, c - (size - 1) // 2):min(channels - 1, c + -(-(size - 1) // 2)) + 1] ** 2,
                                  axis=1) for c in range(channels)], axis=1)
    expected = x / (bias + alpha / size * square_sum) ** beta
    g = Graph("g")
    g.set_outputs([g.lrn(g.data(0, list(x.shape), F32, name="x"), size, alpha, beta, bias)])
    (got,), _ = run_graph(g, [x])
    np.testing.assert_allclose(got, expected, rtol=1e-5)


# --- reductions -----------------------------------------------------------------------------------

REDUCTIONS = ["ReduceProd", "ReduceMin", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
              "ReduceLogSumExp"]


@EXAMPLES
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=4), data=st.data(),
       op=st.sampled_from(REDUCTIONS), keepdims=st.booleans())
def test_reductions_match_onnxruntime(shape, data, op, keepdims):
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), unique_by=lambda a: a % len(shape)))
    low = 0.1 if op == "ReduceLogSum" else -2.0
    inputs = {"x": floats(shape, low=low)}
    weights = {"axes": np.array(axes, np.int64)} if axes else {}
    check(onnx_model([node(op, ["x", *weights], keepdims=int(keepdims))], inputs, weights), inputs, rtol=1e-4)


@pytest.mark.parametrize("op, dtype", [(op, dtype) for op in ["ReduceProd", "ReduceMin", "ReduceL1", "ReduceSumSquare",
                                                               "ReduceMax"] for dtype in (np.int32, np.int64)]
                         + [("ReduceMin", np.uint8), ("ReduceMax", np.uint8)])
def test_integer_reductions_match_onnxruntime(op, dtype):
    inputs = {"x": ints_of((3, 4), dtype, low=-4, high=5) if op == "ReduceProd" else ints_of((3, 4), dtype, high=250)}
    check(onnx_model([node(op, ["x", "axes"], keepdims=0)], inputs, {"axes": np.array([1], np.int64)}), inputs)


@pytest.mark.parametrize("op", ["ReduceL1", "ReduceSumSquare", "ReduceLogSumExp"])
def test_noop_with_empty_axes_applies_the_element_function(op):
    inputs = {"x": floats((2, 3))}
    (got,) = check(onnx_model([node(op, ["x"], noop_with_empty_axes=1)], inputs), inputs)
    assert got.shape == (2, 3)


def test_reductions_over_no_elements_give_their_identity():
    x = np.zeros((2, 0, 3), np.float32)
    attrs = {"axes": [1], "keep_dims": False}
    expected = {"reduce_prod": 1, "reduce_min": np.inf, "reduce_max": -np.inf, "reduce_l2": 0,
                "reduce_log_sum": -np.inf, "reduce_log_sum_exp": -np.inf}
    for kind, value in expected.items():
        (got,) = KERNELS[kind]([x], attrs)
        assert got.shape == (2, 3) and got.dtype == np.float32 and (got == value).all(), kind
    (got,) = KERNELS["reduce_min"]([np.zeros((0, 2), np.uint8)], {"axes": [0]})
    assert got.tolist() == [255, 255]


def test_log_sum_exp_is_stable_for_large_inputs():
    (got,) = KERNELS["reduce_log_sum_exp"]([np.array([[1000.0, 1000.0], [-np.inf, -np.inf]], np.float32)],
                                           {"axes": [1]})
    assert got[0] == pytest.approx(1000 + np.log(2)) and got[1] == -np.inf


# --- arg-reductions and top-k ---------------------------------------------------------------------

@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float16])
@pytest.mark.parametrize("axis, keepdims, last", [(0, 1, 0), (-1, 0, 1), (1, 1, 1)])
def test_arg_reductions_match_onnxruntime(op, dtype, axis, keepdims, last):
    inputs = {"x": ints_of((3, 4, 2), dtype, low=0, high=3)}  # few values: many ties
    check(onnx_model([node(op, ["x"], axis=axis, keepdims=keepdims, select_last_index=last)], inputs), inputs)


@pytest.mark.parametrize("largest, axis", [(1, -1), (0, -1), (1, 0), (0, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_top_k_matches_onnxruntime(largest, axis, dtype):
    inputs = {"x": ints_of((4, 5), dtype, low=0, high=4)}  # ties: the lower index comes first
    weights = {"k": np.array([3], np.int64)}
    got = check(onnx_model([node("TopK", ["x", "k"], outputs=["v", "i"], axis=axis, largest=largest)], inputs,
                           weights), inputs)
    assert got[1].dtype == np.int64


def test_top_k_of_uint64_matches_the_onnx_reference():
    x = np.array([[2**63 + 5, 1, 2**63 + 5, 7]], np.uint64)
    model = onnx_model([node("TopK", ["x", "k"], outputs=["v", "i"])], {"x": x}, {"k": np.array([3], np.int64)})
    expected = ReferenceEvaluator(model).run(None, {"x": x})
    got, _ = run_graph(Graph.from_onnx(model), [x])
    assert [a.tolist() for a in got] == [a.tolist() for a in expected] == [[[2**63 + 5, 2**63 + 5, 7]], [[0, 2, 3]]]


def test_top_k_of_k_equal_to_the_dimension_sorts_it():
    g = Graph("g")
    x = g.data(0, [-1, 4], F32, name="x")
    g.set_outputs(g.top_k(x, 4, largest=False))
    (values, indices), types = run_graph(g, [np.array([[3, 1, 2, 1]], np.float32)])
    assert values.tolist() == [[1, 1, 2, 3]] and indices.tolist() == [[1, 3, 2, 0]]
    assert [str(t) for t in types] == ["!ge.tensor<[-1, 4], f32>", "!ge.tensor<[-1, 4], i64>"]


# --- DepthToSpace and SpaceToDepth ----------------------------------------------------------------

@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_matches_onnxruntime(mode):
    inputs = {"x": floats((2, 8, 2, 3))}
    check(onnx_model([node("DepthToSpace", ["x"], blocksize=2, mode=mode)], inputs, dynamic=set()), inputs)


def test_space_to_depth_matches_onnxruntime_with_a_dynamic_batch():
    inputs = {"x": floats((2, 2, 4, 6))}
    model = onnx_model([node("SpaceToDepth", ["x"], blocksize=2)], inputs)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    check(model, inputs)


def test_space_to_depth_crd_mode_matches_the_onnx_reference():
    x = floats((1, 2, 4, 6))
    assert_matches_onnx_reference(onnx_model([node("SpaceToDepth", ["x"], blocksize=2, mode="CRD")], {"x": x}, opset=28), x)


# --- import refusals ------------------------------------------------------------------------------

def _import_error(nodes, inputs, weights=None) -> str:
    with pytest.raises(GeError) as info:
        Graph.from_onnx(onnx_model(nodes, inputs, weights))
    return str(info.value)


def test_refusals_name_the_op_and_the_node():
    x = {"x": floats((1, 8, 2, 2))}
    assert _import_error([node("DepthToSpace", ["x"], blocksize=2)], {"x": floats((1, 6, 2, 2))}) == (
        "onnx=g; node=depthtospace; DepthToSpace: channels 6 are not a multiple of blocksize² = 4")
    assert _import_error([node("SpaceToDepth", ["x"], blocksize=3)], x) == (
        "onnx=g; node=spacetodepth; SpaceToDepth: height 2 and width 2 must be multiples of blocksize 3")
    model = onnx_model([node("DepthToSpace", ["x"], blocksize=2)], x, dynamic=True)
    with pytest.raises(GeError, match=r"^onnx=g; node=depthtospace; DepthToSpace: the input must be NCHW with fixed "
                                      r"C, H and W, got shape \[-1, -1, -1, -1\]$"):
        Graph.from_onnx(model)
    k = {"x": floats((2, 5)), "k": np.array([2], np.int64)}
    assert _import_error([node("TopK", ["x", "k"], outputs=["v", "i"])], k) == (
        "onnx=g; node=topk; TopK: k (input 'k') must be known when the model is imported: a constant, or computed "
        "from shapes; it is the model input 'k': give its value with Graph.from_onnx(..., constant_inputs={'k': ...})")


# --- shape functions and builder errors -----------------------------------------------------------

RANGE_CASES = [
    ("expand broadcasts a range against 1", ge.ExpandOp, ["[1:4, 1]"], dict(shape=[2, 1, 6]), "[2, 1:4, 6]"),
    ("tile multiplies a range", ge.TileOp, ["[1:4, -1]"], dict(repeats=[3, 2]), "[3:12, -1]"),
    ("arg_max drops the axis", ge.ArgMaxOp, ["[1:4, -1, 3]"], dict(axis=-1), "[1:4, -1]"),
    ("arg_min keeps it as 1", ge.ArgMinOp, ["[1:4, -1, 3]"], dict(axis=1, keep_dims=True), "[1:4, 1, 3]"),
    ("top_k fixes the axis to k", ge.TopKOp, ["[-1, 2:9]"], dict(k=2, axis=1), "[-1, 2]"),
]


@pytest.mark.parametrize("what, op_class, operands, props, dims", RANGE_CASES, ids=[c[0] for c in RANGE_CASES])
def test_shape_functions_over_ranges(what, op_class, operands, props, dims):
    assert inferred(op_class, [tensor(o) for o in operands], **props).split(", !")[0].split("<")[1].split("]")[0] + "]" \
        == dims


BUILD_ERRORS = [
    (lambda g, x: g.expand(x, [2, -1]),
     'graph=g; node=expand_0; ge.expand: shape must be >= 0, got [2, -1]'),
    (lambda g, x: g.expand(x, [5, 1, 1]),
     'graph=g; node=expand_0; ge.expand: input [2, 3, 4] and [5, 1, 1] do not broadcast: dimension 0 is 2 vs 5'),
    (lambda g, x: g.tile(x, [1, 2]),
     'graph=g; node=tile_0; ge.tile: repeats must have 3 entries, got [1, 2]'),
    (lambda g, x: g.tile(x, [1, -2, 1]),
     'graph=g; node=tile_0; ge.tile: repeats must be >= 0, got [1, -2, 1]'),
    (lambda g, x: g.log_softmax(x, 3),
     'graph=g; node=log_softmax_0; ge.log_softmax: axis 3 is out of range for [2, 3, 4] (valid: -3..2)'),
    (lambda g, x: g.log_softmax(g.cast(x, dt.DT_INT32)),
     'graph=g; node=log_softmax_0; ge.log_softmax: input must have a floating-point element type, got i32'),
    (lambda g, x: g.reduce_log_sum(g.cast(x, dt.DT_INT32), [0]),
     'graph=g; node=reduce_log_sum_0; ge.reduce_log_sum: input must have a floating-point element type, got i32'),
    (lambda g, x: g.reduce_prod(x, [0, -3]),
     'graph=g; node=reduce_prod_0; ge.reduce_prod: axes [0, -3] name axis 0 more than once'),
    (lambda g, x: g.arg_max(x, -4),
     'graph=g; node=arg_max_0; ge.arg_max: axis -4 is out of range for [2, 3, 4] (valid: -3..2)'),
    (lambda g, x: g.arg_min(x, 0, select_last_index=1),
     'graph=g; arg_min select_last_index must be a bool, got 1'),
    (lambda g, x: g.top_k(x, 5),
     'graph=g; node=top_k_0; ge.top_k: k 5 exceeds dimension 2 of [2, 3, 4]'),
    (lambda g, x: g.top_k(x, -1),
     'graph=g; node=top_k_0; ge.top_k: k must be >= 0, got [-1]'),
    (lambda g, x: g.instance_norm(g.reshape(x, [6, 4]), g.const(np.ones(4, np.float32)), g.const(np.ones(4, np.float32))),
     'graph=g; node=instance_norm_0; ge.instance_norm: input must have rank >= 3, got [6, 4]'),
    (lambda g, x: g.instance_norm(x, g.const(np.ones(2, np.float32)), g.const(np.ones(3, np.float32))),
     'graph=g; node=instance_norm_0; ge.instance_norm: scale [2] must have one entry per channel of the input '
     '[2, 3, 4]: 2 vs 3'),
    (lambda g, x: g.lrn(x, 0),
     'graph=g; node=lrn_0; ge.lrn: size must be >= 1, got [0]'),
    (lambda g, x: g.lrn(g.reshape(x, [24]), 3),
     'graph=g; node=lrn_0; ge.lrn: input must have rank >= 2, got [24]'),
]


@pytest.mark.parametrize("build, message", BUILD_ERRORS, ids=[m.split("; ")[-1][:60] for _, m in BUILD_ERRORS])
def test_builder_errors_name_the_node_the_op_and_the_numbers(build, message):
    g = Graph("g")
    x = g.data(0, [2, 3, 4], F32, name="x")
    with pytest.raises(GeError) as info:
        build(g, x)
    line = build.__code__.co_firstlineno
    at = f"at=test_ge_structure.py:{line}"
    assert at in str(info.value)
    assert str(info.value).replace(f"{at}; ", "").replace(f"; {at}", "") == message


def test_kernels_reject_run_time_data_they_cannot_take():
    with pytest.raises(GeError, match=r"^arg reduction over dimension 1 of \[2, 0\], which is empty$"):
        KERNELS["arg_max"]([np.zeros((2, 0))], {"axis": 1})
    with pytest.raises(GeError, match=r"^top_k: k 3 exceeds dimension 0 of \[2\]$"):
        KERNELS["top_k"]([np.zeros(2)], {"axis": 0, "k": 3})


# --- transposed convolution -----------------------------------------------------------------------

@pytest.mark.parametrize("attrs", [{}, {"strides": [2, 2]}, {"strides": [3, 2], "pads": [1, 2, 0, 1], "dilations": [2, 1]},
                                   {"strides": [2, 2], "output_padding": [1, 0], "group": 2},
                                   {"strides": [2, 2], "output_shape": [6, 9]}, {"strides": [2, 2], "output_shape": [8, 10]},
                                   {"strides": [2, 2], "auto_pad": "SAME_UPPER"},
                                   {"strides": [2, 2], "auto_pad": "SAME_LOWER", "dilations": [2, 2]}])
def test_conv_transpose_matches_onnxruntime(attrs):
    inputs = {"x": floats((2, 4, 3, 4))}
    weights = {"w": floats((4, 3, 3, 3), 1), "b": floats((3 * attrs.get("group", 1),), 2)}
    check(onnx_model([node("ConvTranspose", ["x", "w", "b"], **attrs)], inputs, weights), inputs, rtol=1e-4)


@pytest.mark.parametrize("sizes,kernel,attrs", [
    ((5,), (3,), {"strides": [2], "pads": [1, 0]}),
    ((6,), (2,), {"strides": [3], "output_padding": [1], "group": 2, "dilations": [2]}),
    ((3, 4, 2), (3, 2, 2), {"strides": [2, 1, 2], "pads": [1, 0, 0, 0, 1, 1]}),
    ((2, 3, 3), (2, 2, 3), {"strides": [1, 2, 2], "output_shape": [3, 7, 8], "group": 2}),
])
def test_conv_transpose_in_one_and_three_dimensions_matches_onnxruntime(sizes, kernel, attrs):
    inputs = {"x": floats((1, 4, *sizes))}
    weights = {"w": floats((4, 3, *kernel), 1)}
    check(onnx_model([node("ConvTranspose", ["x", "w"], **attrs)], inputs, weights), inputs, rtol=1e-4)


def test_conv_transpose_errors():
    g = Graph("g")
    x = g.data(0, [1, 4, 3, 3], F32, name="x")
    with pytest.raises(GeError, match=r"ge.conv_transpose: input \[1, 4, 3, 3\] must have one channel per filter "
                                      r"row of \[2, 3, 3, 3\]: 4 vs 2"):
        g.conv_transpose(x, g.const(np.ones((2, 3, 3, 3), np.float32)))
    with pytest.raises(GeError, match=r"ge.conv_transpose: output_padding must be >= 0, got \[-1, 0\]"):
        g.conv_transpose(x, g.const(np.ones((4, 3, 3, 3), np.float32)), output_padding=[-1, 0])
    with pytest.raises(GeError, match=r"ge.conv_transpose: pads \[9, 0, 0, 0\] cut more than the output of "
                                      r"\[1, 4, 3, 3\] spans along dimension 2"):
        g.conv_transpose(x, g.const(np.ones((4, 3, 3, 3), np.float32)), pads=[9, 0, 0, 0])
    model = onnx_model([node("ConvTranspose", ["x", "w"], auto_pad="SAME_UPPER")], {"x": floats((1, 4, 3, 3))},
                       {"w": floats((4, 3, 3, 3))}, dynamic=True)
    with pytest.raises(GeError, match=r"ConvTranspose: output_shape or auto_pad SAME_UPPER needs fixed spatial "
                                      r"dimensions, got shape \[-1, -1, -1, -1\]"):
        Graph.from_onnx(model)


def causal_conv_model(shapes: dict[str, tuple], inputs: list[str], **attrs) -> onnx.ModelProto:
    """One CausalConvWithState node (opset 27) over inputs of `shapes`."""
    (batch, channels, length), k = shapes["x"], shapes["w"][2]
    conv = helper.make_node("CausalConvWithState", inputs, ["y", "state"], name="causal", **attrs)
    infos = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, list(shape)) for n, shape in shapes.items()]
    outputs = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [batch, channels, size])
               for n, size in (("y", length), ("state", k - 1))]
    return helper.make_model(helper.make_graph([conv], "causal", infos, outputs),
                             opset_imports=[helper.make_opsetid("", 27)])


@pytest.mark.parametrize("length, k, bias, past, activation", [
    (8, 4, False, False, None), (8, 4, True, True, "silu"), (1, 4, True, True, None), (2, 5, False, False, "swish"),
    (6, 1, True, False, None)])
def test_causal_conv_with_state_matches_onnx(length, k, bias, past, activation):
    """A depthwise 1-D convolution over the past state joined before the input (onnx's reference:
    onnxruntime has no kernel for it)."""
    arrays = {"x": floats((2, 3, length)), "w": floats((3, 1, k), 1)} | ({"b": floats((3,), 2)} if bias else {}) | \
        ({"past": floats((2, 3, k - 1), 3)} if past else {})
    model = causal_conv_model({n: a.shape for n, a in arrays.items()}, ["x", "w", "b" if bias else "",
                                                                       "past" if past else ""],
                              **({"activation": activation} if activation else {}))
    expected = ReferenceEvaluator(model).run(None, arrays)
    got, _ = run_graph(Graph.from_onnx(model), list(arrays.values()))
    for result, reference in zip(got, expected, strict=True):
        assert result.shape == reference.shape
        np.testing.assert_allclose(result, reference, rtol=1e-5, atol=1e-6)


def test_causal_conv_with_state_refusals():
    model = causal_conv_model({"x": (1, 2, 4), "w": (2, 1, 2)}, ["x", "w"], activation="gelu")
    with pytest.raises(GeError, match=r"node=causal; CausalConvWithState: activation 'gelu' is not one of none, "
                                      r"silu, swish$"):
        Graph.from_onnx(model)
    model = causal_conv_model({"x": (1, "channels", 4), "w": (2, 1, 2)}, ["x", "w"])
    with pytest.raises(GeError, match=r"node=causal; CausalConvWithState: needs an input \[batch, channels, length\] "
                                      r"with fixed channels and a \[channels, 1, k\] weight, got \[1, -1, 4\] and "
                                      r"\[2, 1, 2\]$"):
        Graph.from_onnx(model)


# --- einsum ---------------------------------------------------------------------------------------

EINSUMS = [("ij,jk->ik", [(2, 3), (3, 4)]), ("bij, bjk -> bik", [(5, 2, 3), (5, 3, 4)]), ("i,i", [(5,), (5,)]),
           ("ij->ji", [(3, 4)]), ("ij->i", [(3, 4)]), ("ijk->", [(2, 3, 4)]), ("ij,jk", [(2, 3), (3, 4)]),
           ("...ij,...jk->...ik", [(2, 2, 3), (2, 3, 4)]), ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
           ("ij,ij->ij", [(2, 3), (2, 3)]), ("i,j->ij", [(3,), (4,)]), ("abc,cd->bda", [(2, 3, 4), (4, 5)]),
           ("ik,jkl->ijl", [(2, 3), (4, 3, 2)]), ("->", [()])]


@pytest.mark.parametrize("equation, shapes", EINSUMS, ids=[e for e, _ in EINSUMS])
def test_einsum_matches_onnxruntime(equation, shapes):
    inputs = {f"x{i}": floats(shape, i) for i, shape in enumerate(shapes)}
    check(onnx_model([node("Einsum", list(inputs), equation=equation)], inputs), inputs, rtol=1e-5)


def test_einsum_with_a_dynamic_batch():
    inputs = {"a": floats((3, 2, 4)), "b": floats((3, 4, 5), 1)}
    model = onnx_model([node("Einsum", ["a", "b"], equation="nij,njk->nki")], inputs)
    for value in model.graph.input:
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    check(model, inputs)


def test_einsum_refusals():
    x = {"x": floats((3, 3))}
    assert _import_error([node("Einsum", ["x"], equation="ii->i")], x) == (
        "onnx=g; node=einsum; Einsum: equation 'ii->i' repeats a letter within an operand (a diagonal), which is not "
        "supported")
    three = {"a": floats((2,)), "b": floats((2,), 1), "c": floats((2,), 2)}
    assert _import_error([node("Einsum", ["a", "b", "c"], equation="i,i,i->i")], three) == (
        "onnx=g; node=einsum; Einsum: only one or two operands are supported, got 3")


def test_einsum_equation_that_misses_an_operand_or_a_rank():
    def model(equation, count):
        inputs = [helper.make_tensor_value_info(f"x{i}", onnx.TensorProto.FLOAT, [2, 3]) for i in range(count)]
        graph = helper.make_graph([node("Einsum", [f"x{i}" for i in range(count)], equation=equation)], "g", inputs,
                                  [helper.make_tensor_value_info("y0", onnx.TensorProto.FLOAT, [2])])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(GeError, match=r"^onnx=g; node=einsum; Einsum: equation 'ij,jk->ik' names 2 operands, "
                                      r"the node has 1$"):
        Graph.from_onnx(model("ij,jk->ik", 1))
    with pytest.raises(GeError, match=r"^onnx=g; node=einsum; Einsum: equation 'ijk->i' gives an operand of rank 2 "
                                      r"the letters 'ijk'$"):
        Graph.from_onnx(model("ijk->i", 1))


# --- attention ------------------------------------------------------------------------------------

ATTENTIONS = {
    "4d": ({}, {"Q": (2, 3, 4, 8), "K": (2, 3, 6, 8), "V": (2, 3, 6, 5)}),
    "4d gqa causal": ({"is_causal": 1}, {"Q": (1, 4, 5, 8), "K": (1, 2, 5, 8), "V": (1, 2, 5, 8)}),
    "3d heads scaled": ({"q_num_heads": 4, "kv_num_heads": 2, "scale": 0.3},
                        {"Q": (2, 3, 16), "K": (2, 5, 8), "V": (2, 5, 12)}),
    "float mask shorter than the keys": ({}, {"Q": (1, 2, 3, 4), "K": (1, 2, 5, 4), "V": (1, 2, 5, 4),
                                              "attn_mask": (3, 4)}),
    "bool mask and softcap": ({"softcap": 2.0}, {"Q": (1, 2, 3, 4), "K": (1, 2, 4, 4), "V": (1, 2, 4, 4),
                                                  "attn_mask": (1, 2, 3, 4, "bool")}),
    "past and present, causal, qk with bias": (
        {"is_causal": 1, "qk_matmul_output_mode": 2},
        {"Q": (1, 2, 3, 4), "K": (1, 2, 3, 4), "V": (1, 2, 3, 4), "attn_mask": (3, 5),
         "past_key": (1, 2, 2, 4), "past_value": (1, 2, 2, 4)}),
    "qk after softmax": ({"qk_matmul_output_mode": 3}, {"Q": (1, 1, 2, 4), "K": (1, 1, 3, 4), "V": (1, 1, 3, 4)}),
    "sliding window": ({"left_window_size": 1, "right_window_size": 0},
                       {"Q": (1, 1, 4, 4), "K": (1, 1, 4, 4), "V": (1, 1, 4, 4)}),
}
_ATTENTION_INPUTS = ["Q", "K", "V", "attn_mask", "past_key", "past_value"]


@pytest.mark.parametrize("case", list(ATTENTIONS))
def test_attention_matches_onnx(case):
    attrs, shapes = ATTENTIONS[case]
    inputs = {}
    for i, (name, shape) in enumerate(shapes.items()):
        inputs[name] = floats(shape[:-1], i) > -1 if shape[-1] == "bool" else floats(shape, i)
    if case == "bool mask and softcap":
        inputs["attn_mask"][0, 1, 2] = False  # a row with no key: zeros
    names = [n if n in inputs else "" for n in _ATTENTION_INPUTS]
    while not names[-1]:
        names.pop()
    outputs = ["y", *(["present_key", "present_value"] if "past_key" in inputs else ["", ""]),
               *(["qk"] if "qk_matmul_output_mode" in attrs else [])]
    model = onnx_model([node("Attention", names, outputs=outputs, **attrs)], inputs,
                       opset=25 if "left_window_size" in attrs else 23)
    if case in ("sliding window", "past and present, causal, qk with bias", "float mask shorter than the keys"):
        # onnxruntime has no windows yet, takes no mask shorter than the keys and masks its qk
        # output with the lowest float, not -inf as the ONNX spec: onnx's reference evaluator is
        # the expectation.
        expected = ReferenceEvaluator(model).run(None, inputs)
        got, _ = run_graph(Graph.from_onnx(model), [inputs[n] for n in inputs])
        for a, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)
    else:
        check(model, inputs, rtol=1e-4)


def test_attention_refusals():
    shapes = {"Q": floats((1, 2, 8)), "K": floats((1, 2, 8), 1), "V": floats((1, 2, 8), 2)}
    model = onnx_model([node("Attention", list(shapes), q_num_heads=3, kv_num_heads=3)], shapes, opset=23)
    with pytest.raises(GeError, match=r"^onnx=g; node=attention; Attention: the hidden size of q \[1, 2, 8\] is not a "
                                      r"fixed multiple of 3 heads$"):
        Graph.from_onnx(model)
    shapes = {"Q": floats((1, 2, 3, 4)), "K": floats((1, 2, 3, 4), 1), "V": floats((1, 2, 3, 4), 2)}
    model = onnx_model([node("Attention", list(shapes), is_causal=1, scale=0.5)], shapes, opset=23, dynamic=True)
    with pytest.raises(GeError, match=r"Attention: is_causal and windows need fixed sequence lengths"):
        Graph.from_onnx(model)


@settings(max_examples=10, deadline=None)
@given(valid=st.lists(st.integers(0, 6), min_size=2, max_size=2), causal=st.booleans(),
       window=st.sampled_from([(-1, -1), (1, -1), (2, 0), (-1, 1)]), with_mask=st.booleans())
def test_attention_with_nonpad_kv_seqlen_matches_the_onnx_reference(valid, causal, window, with_mask):
    """The keys of batch b past nonpad_kv_seqlen[b] are padding; the queries sit in front of them
    (causal and windows counted from nonpad[b] - queries), a mask adds to both."""
    inputs = {"Q": floats((2, 2, 3, 4)), "K": floats((2, 2, 6, 4), 1), "V": floats((2, 2, 6, 4), 2)}
    names = ["Q", "K", "V", "attn_mask" if with_mask else "", "", "", "nonpad"]
    if with_mask:
        inputs["attn_mask"] = floats((3, 6), 3) > -1.5
    inputs["nonpad"] = np.array(valid, np.int64)
    attrs = {"is_causal": int(causal)} | ({"left_window_size": window[0], "right_window_size": window[1]}
                                          if window != (-1, -1) else {})
    model = onnx_model([node("Attention", names, outputs=["y"], **attrs)], inputs, opset=25)
    expected = ReferenceEvaluator(model).run(None, inputs)
    got, _ = run_graph(Graph.from_onnx(model), list(inputs.values()))
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("inputs, attrs, message", [
    (["Q", "K", "V"], {}, "a 3-D q needs the q_num_heads attribute"),
    (["Q", "K", "V", "", "P"], {"q_num_heads": 2, "kv_num_heads": 2}, "past_key and past_value must be given together"),
    (["Q", "K", "V", "", "P", "P", "N"], {"q_num_heads": 2, "kv_num_heads": 2},
     "nonpad_kv_seqlen cannot be combined with past_key and past_value"),
    (["Q", "K", "V"], {"q_num_heads": 2, "kv_num_heads": 2, "qk_matmul_output_mode": 4},
     "qk_matmul_output_mode 4 is not one of 0, 1, 2, 3"),
])
def test_attention_forms_that_do_not_import(inputs, attrs, message):
    types = {"Q": [1, 2, 8], "K": [1, 2, 8], "V": [1, 2, 8], "P": [1, 2, 2, 4], "N": [1]}
    infos = [helper.make_tensor_value_info(n, onnx.TensorProto.INT64 if n == "N" else onnx.TensorProto.FLOAT, types[n])
             for n in dict.fromkeys(i for i in inputs if i)]
    graph = helper.make_graph([node("Attention", inputs, outputs=["y"], **attrs)], "g", infos,
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 2, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    with pytest.raises(GeError) as info:
        Graph.from_onnx(model)
    assert str(info.value) == f"onnx=g; node=attention; Attention: {message}"


# --- EyeLike, Size, Hardmax, MeanVarianceNormalization, GroupNormalization -----------------------

@pytest.mark.parametrize("attrs", [{}, {"k": 1, "dtype": onnx.TensorProto.FLOAT}, {"k": -2, "dtype": onnx.TensorProto.INT64}])
def test_eye_like_matches_onnxruntime(attrs):
    inputs = {"x": ints_of((3, 4), np.int32)}
    check(onnx_model([node("EyeLike", ["x"], **attrs)], inputs), inputs)


@pytest.mark.parametrize("dynamic", [False, True])
def test_size_matches_onnxruntime(dynamic):
    inputs = {"x": floats((2, 3, 4))}
    check(onnx_model([node("Size", ["x"])], inputs, dynamic=dynamic), inputs)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_hardmax_matches_onnxruntime(axis):
    inputs = {"x": np.round(floats((3, 4, 5)))}  # ties: the first maximum wins
    check(onnx_model([node("Hardmax", ["x"], axis=axis)], inputs), inputs)


@pytest.mark.parametrize("axes", [None, [1], [0, 2]])
def test_mean_variance_normalization_matches_onnxruntime(axes):
    inputs = {"x": floats((2, 3, 4, 2))}
    attrs = {} if axes is None else {"axes": axes}
    if axes is None:  # ONNX shape inference fails on the function of the default axes: the output is declared
        graph = helper.make_graph([node("MeanVarianceNormalization", ["x"], outputs=["y"])], "g",
                                  [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3, 4, 2])],
                                  [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3, 4, 2])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    else:
        model = onnx_model([node("MeanVarianceNormalization", ["x"], **attrs)], inputs, opset=13)
    check(model, inputs, rtol=1e-4, atol=1e-5)


def _group_norm_model(shape, groups, **attrs) -> onnx.ModelProto:
    """ONNX shape inference does not type GroupNormalization's output: it is declared here."""
    infos = [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", *shape[1:]])]
    weights = [numpy_helper.from_array(floats((shape[1],), i), n) for i, n in enumerate(("s", "b"))]
    graph = helper.make_graph([node("GroupNormalization", ["x", "s", "b"], outputs=["y"], num_groups=groups, **attrs)],
                              "g", infos, [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["N", *shape[1:]])],
                              weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_group_normalization_matches_onnxruntime():
    inputs = {"x": floats((3, 4, 2, 2))}
    check(_group_norm_model((3, 4, 2, 2), 2, epsilon=1e-3), inputs, rtol=1e-4, atol=1e-5)


def test_generation_refusals():
    model = onnx_model([node("EyeLike", ["x"])], {"x": floats((2, 3))}, dynamic=True)
    with pytest.raises(GeError, match=r"^onnx=g; node=eyelike; EyeLike: the input must be a matrix of fixed shape, "
                                      r"got shape \[-1, -1\]$"):
        Graph.from_onnx(model)
    model = onnx_model([node("Hardmax", ["x"], axis=1)], {"x": floats((2, 3))}, dynamic=True)
    with pytest.raises(GeError, match=r"^onnx=g; node=hardmax; Hardmax: dimension 1 must be fixed, got shape \[-1, -1\]$"):
        Graph.from_onnx(model)
    model = _group_norm_model((1, 4, 2), 3)
    with pytest.raises(GeError, match=r"GroupNormalization: channels and spatial dimensions must be fixed, with "
                                      r"channels a multiple of num_groups 3; got shape \[-1, 4, 2\]$"):
        Graph.from_onnx(model)


@pytest.mark.parametrize("upper, k", [(1, 0), (0, 0), (1, -1), (0, 2), (1, 9)])
def test_trilu_matches_onnxruntime(upper, k):
    inputs = {"x": ints_of((2, 3, 4), np.int64)}
    check(onnx_model([node("Trilu", ["x", "k"], upper=upper)], inputs, {"k": np.array(k, np.int64)}, dynamic=True),
          inputs)


# --- cumulative sums ------------------------------------------------------------------------------

@pytest.mark.parametrize("exclusive, reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("dtype, axis", [(np.float32, 1), (np.int64, -1), (np.int32, 0), (np.float64, 0)])
def test_cum_sum_matches_onnxruntime(exclusive, reverse, dtype, axis):
    inputs = {"x": ints_of((3, 4), dtype)}
    check(onnx_model([node("CumSum", ["x", "axis"], exclusive=exclusive, reverse=reverse)], inputs,
                     {"axis": np.array(axis, np.int64)}, dynamic=True), inputs)


def test_cum_sum_over_an_empty_axis_and_its_errors():
    (got,) = KERNELS["cum_sum"]([np.zeros((2, 0), np.float32)], {"axis": 1, "exclusive": True})
    assert got.shape == (2, 0)
    g = Graph("g")
    with pytest.raises(GeError, match=r"ge.cum_sum: input must be numeric, got i1"):
        g.cum_sum(g.data(0, [3], dt.DT_BOOL, name="b"), 0)
    with pytest.raises(GeError, match=r"ge.cum_sum: axis 1 is out of range for \[3\] \(valid: -1..0\)"):
        g.cum_sum(g.data(1, [3], F32, name="x"), 1)


# --- cumulative products ----------------------------------------------------------------------------

@pytest.mark.parametrize("exclusive, reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("dtype, axis", [(np.float32, 1), (np.int64, -1), (np.int32, 0), (np.float64, 0)])
def test_cum_prod_matches_onnxruntime(exclusive, reverse, dtype, axis):
    inputs = {"x": ints_of((3, 4), dtype, low=-3, high=4)}
    check(onnx_model([node("CumProd", ["x", "axis"], exclusive=exclusive, reverse=reverse)], inputs,
                     {"axis": np.array(axis, np.int64)}, opset=26, dynamic=True), inputs)


@pytest.mark.parametrize("kind, axis", [("CumSum", 1), ("CumProd", -2), ("CumProd", 0)])
def test_a_running_axis_fed_at_run_time_picks_the_result_along_it(kind, axis):
    inputs = {"x": ints_of((2, 3), np.float32, low=-3, high=4), "axis": np.array(axis, np.int32)}
    check(onnx_model([node(kind, ["x", "axis"], reverse=1)], inputs, opset=26), inputs)


@pytest.mark.parametrize("axis", [2, -3])
def test_a_running_axis_out_of_range_fed_at_run_time_fails_the_run(axis):
    inputs = {"x": np.ones((2, 3), np.float32), "axis": np.array(axis, np.int64)}
    graph = Graph.from_onnx(onnx_model([node("CumProd", ["x", "axis"])], inputs, opset=26))
    with pytest.raises(GeError, match=rf"gather: index {axis} is out of range for dimension 0 of \[2, 2, 3\]"):
        run_graph(graph, [inputs["x"], inputs["axis"]])


def test_a_running_axis_of_two_values_is_refused():
    inputs = {"x": np.ones((2, 3), np.float32), "axis": np.array([0, 1], np.int64)}
    model = onnx_model([node("CumSum", ["x", "axis"])], inputs)
    with pytest.raises(GeError, match=r"CumSum: axis must hold one value, got shape \[2\]"):
        Graph.from_onnx(model)


def test_cum_prod_over_an_empty_axis_and_its_errors():
    (got,) = KERNELS["cum_prod"]([np.zeros((2, 0), np.float32)], {"axis": 1, "exclusive": True})
    assert got.shape == (2, 0)
    (got,) = KERNELS["cum_prod"]([np.array([2, 3, 4], np.int32)], {"axis": 0, "exclusive": True, "reverse": True})
    np.testing.assert_array_equal(got, [12, 4, 1])
    g = Graph("g")
    with pytest.raises(GeError, match=r"ge.cum_prod: input must be numeric, got i1"):
        g.cum_prod(g.data(0, [3], dt.DT_BOOL, name="b"), 0)
    with pytest.raises(GeError, match=r"ge.cum_prod: axis -2 is out of range for \[3\] \(valid: -1..0\)"):
        g.cum_prod(g.data(1, [3], F32, name="x"), -2)


# --- scatter_elements ----------------------------------------------------------------------------------

def _typed(spelling: str) -> GeTensorType:
    """A type from "[dims] element" (f32 when no element is given)."""
    dims, _, element = spelling.partition("] ")
    return tensor(dims.rstrip("]") + "]", element or "f32")


@pytest.mark.parametrize("operands, props, message", [
    (["[3, 4]", "[2, 4] f32", "[2, 4]"], {}, "indices must have element type i32 or i64, got f32"),
    (["[3, 4]", "[2, 4] i64", "[2, 4] i32"], {}, "data and updates must share one element type, got f32, i32"),
    (["[3, 4]", "[2, 4] i64", "[2, 4]"], {"reduction": "sum"},
     "reduction must be one of none, add, mul, max, min, got 'sum'"),
    (["[3, 4] i1", "[2, 4] i64", "[2, 4] i1"], {"reduction": "max"},
     "data combined by 'max' must have a numeric element type, got i1"),
    (["[3, 4]", "[8] i64", "[8]"], {}, "indices and updates must have the rank of data, got [8] and [8] for [3, 4]"),
    (["[3, 4]", "[2, 4] i64", "[2, 3]"], {}, "indices and updates differ in dimension 1: 4 vs 3"),
    (["[3, 4]", "[2, 5] i64", "[2, 5]"], {},
     "indices [2, 5] exceed data [3, 4] in dimension 1, which is not the axis"),
    (["[3, 4]", "[2, 4] i64", "[2, 4]"], {"axis": 2}, "axis 2 is out of range for [3, 4] (valid: -2..1)"),
])
def test_scatter_elements_shape_errors(operands, props, message):
    types = [_typed(o) for o in operands]
    with pytest.raises(VerifyException) as caught:
        inferred(ge.ScatterElementsOp, types, **{"axis": 0, "reduction": "none", **props})
    assert str(caught.value) == f"ge.scatter_elements: {message}"


def test_scatter_elements_keeps_the_data_type_over_ranges():
    types = [tensor("[-1, 1:8]"), tensor("[2, 1:3]", "i32"), tensor("[-1, 2:4]")]
    assert inferred(ge.ScatterElementsOp, types, axis=0, reduction="add") == "!ge.tensor<[-1, 1:8], f32>"
    types[2] = tensor("[-1, 9]")
    with pytest.raises(VerifyException, match="ge.scatter_elements: indices and updates differ in dimension 1"):
        inferred(ge.ScatterElementsOp, types, axis=0, reduction="add")


@pytest.mark.parametrize("index_shape, update_shape, indices, message", [
    ((1, 3), (1, 2), None, "indices [1, 3] and updates [1, 2] differ in shape"),
    ((1, 4), (1, 4), None, "indices [1, 4] exceed data [2, 3] in dimension 1, which is not the axis"),
    ((1, 3), (1, 3), [[0, 2, 0]], "index 2 is out of range for dimension 0 of [2, 3]"),
    ((1, 3), (1, 3), [[0, -3, 0]], "index -3 is out of range for dimension 0 of [2, 3]"),
])
def test_the_scatter_kernel_refuses_what_it_cannot_place(index_shape, update_shape, indices, message):
    indices = np.zeros(index_shape, np.int64) if indices is None else np.array(indices, np.int64)
    with pytest.raises(GeError) as caught:
        KERNELS["scatter_elements"]([np.zeros((2, 3)), indices, np.zeros(update_shape)], {"axis": 0, "reduction": "none"})
    assert str(caught.value) == f"scatter_elements: {message}"


@settings(max_examples=25, deadline=None)
@given(data=st.data(), reduction=st.sampled_from(["none", "add", "mul", "max", "min"]))
def test_the_scatter_kernel_matches_onnx_reference_with_repeated_targets(data, reduction):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    index_shape = [data.draw(st.integers(1, s)) for s in shape]
    index_shape[axis] = data.draw(st.integers(1, 6))
    indices = data.draw(hnp.arrays(np.int64, index_shape, elements=st.integers(-shape[axis], shape[axis] - 1)))
    x = data.draw(hnp.arrays(np.int32, shape, elements=st.integers(-9, 9)))
    updates = data.draw(hnp.arrays(np.int32, index_shape, elements=st.integers(-9, 9)))
    model = onnx_model([node("ScatterElements", ["x", "i", "u"], axis=axis, reduction=reduction)],
                       {"x": x, "i": indices, "u": updates})
    (expected,) = ReferenceEvaluator(model).run(None, {"x": x, "i": indices, "u": updates})
    (got,) = KERNELS["scatter_elements"]([x, indices, updates], {"axis": axis, "reduction": reduction})
    np.testing.assert_array_equal(got, expected)


def test_the_scatter_builder_checks_its_arguments():
    g = Graph("g")
    x, i = g.data(0, [2, 2], F32, name="x"), g.data(1, [1, 2], dt.DT_INT64, name="i")
    with pytest.raises(GeError, match=r"scatter_elements reduction must be a str, got 3"):
        g.scatter_elements(x, i, x, 0, reduction=3)
    with pytest.raises(GeError, match=r"scatter_elements axis must be an int, got 0.5"):
        g.scatter_elements(x, i, x, 0.5)
