"""The ONNX export of GE graphs (`dfir.lowering.onnx_export`) run on onnxruntime against the
reference kernels: every case of the IREE lowering tests (tests/passes/ge_to_linalg/) again, the
ops and forms those do not cover, the NoExport messages, and small ONNX models imported, exported
and run again."""
from __future__ import annotations

import importlib.util
import inspect
import itertools
import re
from pathlib import Path

import numpy as np
import onnx
from onnx import helper
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dfir.core import data_type as dt
from dfir.frontend.ge.graph import Graph
from dfir.lowering.onnx_export import ONNX_OPSET, WEIGHTS_LOCATION, NoExport, export_onnx, weight_name
from dfir.om.plan import GeGraph, GeInput, GeOp
from onnx_export_helpers import assert_export_matches, embedded, exported, packed_entry, run_exported
from onnx_models import tensor_info

_LOWERING_TESTS = Path(__file__).resolve().parents[1] / "passes" / "ge_to_linalg"
_FAMILIES = ["elementwise", "activation", "logic", "contraction", "window", "movement", "reduction", "resize"]
_IREE_ONLY = ("lowered_outputs(", "converted(", "codegen_text(")


def _lowering_module(family: str):
    spec = importlib.util.spec_from_file_location(f"onnx_export_cases_{family}", _LOWERING_TESTS / f"test_{family}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parameter_sets(test) -> list[dict]:
    """The keyword arguments of each case of a (parametrized) test function."""
    axes = []
    for mark in getattr(test, "pytestmark", []):
        if mark.name == "parametrize":
            names, values = mark.args[0], mark.args[1]
            names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
            axes.append([dict(zip(names, v if len(names) > 1 else [v])) for v in values])
    return [{k: v for part in combination for k, v in part.items()} for combination in itertools.product(*axes)]


def _lowering_cases() -> list:
    """Every case of the lowering tests that compares with `assert_lowering_matches` alone."""
    cases = []
    for family in _FAMILIES:
        module = _lowering_module(family)
        for name, test in vars(module).items():
            if name.startswith("test_") and callable(test):
                source = inspect.getsource(test)
                if "assert_lowering_matches" in source and not any(s in source for s in _IREE_ONLY):
                    cases += [_case(test, kwargs, f"{family}.{name}[{i}]")
                              for i, kwargs in enumerate(_parameter_sets(test))]
    return cases


def _case(test, kwargs: dict, case: str):
    marks = [pytest.mark.xfail(raises=_DIFFERS[case][0], reason=_DIFFERS[case][1], strict=True)] \
        if case in _DIFFERS else []
    return pytest.param(test, kwargs, _NO_EXPORT.get(case), id=case, marks=marks)


_NO_EXPORT = {
    "logic.test_integer_comparisons_bitwise_and_shifts_match[0]":
        "ge.bit_shift 'bit_shift_2': ONNX BitShift takes unsigned integers, not DT_INT32",
    "contraction.test_integer_gemm_truncates_alpha_and_beta[0]":
        "ge.gemm 'gemm_0': onnxruntime has no Gemm kernel for DT_INT32",
    "window.test_conv2d_matches_with_groups_strides_dilations_and_pads[1]":
        "ge.conv2d 'conv2d_0': onnxruntime has no Conv kernel for DT_DOUBLE",
    "window.test_conv2d_matches_with_groups_strides_dilations_and_pads[5]":
        "ge.conv2d 'conv2d_0': onnxruntime has no Conv kernel for DT_INT32",
    "window.test_conv2d_matches_with_groups_strides_dilations_and_pads[6]":
        "ge.conv2d 'conv2d_0': onnxruntime has no Conv kernel for DT_INT32",
    "window.test_integer_max_pool_pads_with_the_lowest_integer[0]":
        "ge.max_pool 'max_pool_0': onnxruntime has no MaxPool kernel for DT_INT32",
    "reduction.test_reductions_over_negative_axes_keep_dims[6]":
        "ge.reduce_sum 'reduce_sum_0': onnxruntime has no ReduceSum kernel for DT_UINT8",
    "reduction.test_reductions_over_negative_axes_keep_dims[7]":
        "ge.reduce_mean 'reduce_mean_0': onnxruntime has no ReduceMean kernel for DT_UINT8",
    "reduction.test_more_reductions_in_one_graph[2]":
        "ge.reduce_prod 'reduce_prod_0': onnxruntime has no ReduceProd kernel for DT_UINT8",
    "reduction.test_log_softmax_instance_norm_and_lrn[0]": "ge.lrn 'lrn_1': onnxruntime's LRN takes an odd size, not 2",
    **dict.fromkeys([f"reduction.test_running_sums_and_products_every_direction[{i}]" for i in (1, 3, 5)],
                    "ge.cum_prod 'cum_prod_0': ONNX has no running product"),
    "reduction.test_running_sums_and_products_every_direction[4]":
        "ge.cum_sum 'cum_sum_0': onnxruntime has no CumSum kernel for DT_UINT8",
    **dict.fromkeys([f"resize.test_resize_to_fixed_sizes[{i}]" for i in range(5, 10)],
                    "ge.resize 'resize_0': onnxruntime's cubic Resize takes a 2-D input or the last two axes of a "
                    "4-D one, not axes [1, 2] of a 3-D input"),
    "resize.test_grid_sample[5]":
        "ge.grid_sample 'grid_sample_0': onnxruntime's cubic GridSample with border padding samples other taps",
}
"""Lowering cases (by id) whose graph has an op with no export: its NoExport message."""

_DIFFERS = {
    "elementwise.test_integer_math_and_remainders_match_the_reference[0]":
        (ort.capi.onnxruntime_pybind11_state.Fail, "onnxruntime refuses an integer Mod by a constant 0"),
    **dict.fromkeys([f"window.test_max_pool_pads_with_the_lowest_finite_value[{i}]" for i in range(4)],
                    (AssertionError, "a window over -inf inputs and padding: onnxruntime gives -inf, the kernel "
                                     "the lowest finite value")),
    "movement.test_pad[7]": (ort.capi.onnxruntime_pybind11_state.InvalidArgument,
                             "onnxruntime refuses to reflect pads wider than the input"),
    "reduction.test_reduce_max_propagates_nan[0]": (AssertionError, "onnxruntime's ReduceMax skips NaN"),
    "reduction.test_arg_max_finds_the_first_nan[0]": (AssertionError, "onnxruntime's ArgMax skips NaN"),
    "resize.test_resize_by_scales_fed_at_run_time[1]":
        (AssertionError, "nearest_mode floor of a point computed in float32 (onnxruntime) or float64 (kernel)"),
}
"""Lowering cases (by id) that onnxruntime computes otherwise than the kernels (at run time): the
error that shows it, and why."""


@pytest.mark.parametrize("test, kwargs, no_export", _lowering_cases())
def test_lowering_cases_export(test, kwargs, no_export, monkeypatch):
    monkeypatch.setitem(test.__globals__, "assert_lowering_matches", assert_export_matches)
    if no_export is None:
        test(**kwargs)
    else:
        with pytest.raises(NoExport) as error:
            test(**kwargs)
        assert str(error.value) == no_export




# --- ops and forms the lowering cases leave out -----------------------------------------------

def _graph(name: str, inputs: list[tuple[list[int], object]], build) -> Graph:
    """A graph of `inputs` ([shape, dtype] each, named x0, x1...) whose outputs `build(g, *xs)` gives."""
    g = Graph(name)
    xs = [g.data(i, shape, dtype, name=f"x{i}") for i, (shape, dtype) in enumerate(inputs)]
    outputs = build(g, *xs)
    g.set_outputs(outputs if isinstance(outputs, list) else [outputs])
    return g


def test_integer_math_remainders_and_triangles():
    g = _graph("integer_math", [([-1, 5], dt.DT_INT32), ([5], dt.DT_INT32), ([5], dt.DT_UINT16)],
               lambda g, a, b, p: [g.neg(a), g.abs(a), g.sign(a), g.neg(p), g.abs(p), g.sign(p), g.mod(a, b),
                                   g.mod(a, b, fmod=True), g.mod(p, g.const(np.uint16([3, 2, 7, 1, 65535]))),
                                   g.trilu(a, 2), g.trilu(a), g.relu(a)])
    a = np.int32([[7, -7, 7, -7, -2**31 + 1], [0, 13, -13, 5, 2**31 - 1]])
    assert_export_matches(g, [a, np.int32([3, 3, -3, 2, -1]), np.uint16([0, 1, 65535, 300, 9])])


@given(x=arrays(np.float32, st.integers(1, 8), elements=st.floats(-50, 50, width=32)),
       y=st.sampled_from([-3.0, -0.5, 0.75, 2.0]), fmod=st.booleans())
@settings(max_examples=10, deadline=None)
def test_float_remainders_take_the_divisor_or_dividend_sign(x, y, fmod):
    g = _graph("float_mod", [([-1], dt.DT_FLOAT)], lambda g, v: g.mod(v, g.const(np.float32(y)), fmod=fmod))
    assert_export_matches(g, [x], atol=1e-5)


def test_integer_relu_bitwise_ops_and_unsigned_shifts():
    g = _graph("bits", [([-1, 4], dt.DT_INT64), ([-1, 4], dt.DT_UINT8), ([4], dt.DT_UINT8), ([4], dt.DT_BOOL)],
               lambda g, a, p, q, f: [g.relu(a), g.bitwise_and(a, a), g.bitwise_or(p, q), g.bitwise_xor(p, q),
                                         g.bitwise_not(p), g.bitwise_not(a), g.bit_shift(p, q, "left"),
                                         g.bit_shift(p, q, "right"),
                                         g.less(f, g.logical_not(f)), g.greater_equal(f, g.logical_not(f)),
                                         g.select(f, p, q), g.select(f, f, g.logical_not(f)), g.prelu(p, q)])
    p = np.uint8([[255, 1, 128, 7], [0, 3, 200, 9]])
    assert_export_matches(g, [np.int64([[-5, 0, 3, -1], [2, -2, 9, 0]]), p, np.uint8([1, 0, 9, 7]),
                              np.array([True, False, True, False])])


def test_float_activations():
    g = _graph("activations", [([-1, 6], dt.DT_FLOAT), ([6], dt.DT_FLOAT)],
               lambda g, x, slope: [g.leaky_relu(x, 0.1), g.elu(x, 0.5), g.celu(x, 2.0), g.selu(x),
                                    g.selu(x, 2.0, 3.0), g.thresholded_relu(x, 0.5), g.hard_sigmoid(x, 0.5, 0.6),
                                    g.hard_swish(x), g.shrink(x, 1.5, 1.0), g.softplus(x), g.softsign(x), g.mish(x),
                                    g.prelu(x, slope), g.prelu(x, g.const(np.float32(0.25)))])
    x = np.float32([[-20.0, -4.0, -1.0, -0.5, 0.0, 0.25], [0.5, 0.75, 1.0, 2.0, 3.5, 20.0]])
    assert_export_matches(g, [x, np.linspace(0, 1, 6, dtype=np.float32)])


@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), data=st.data(), largest=st.booleans(),
       integer=st.booleans())
@settings(max_examples=12, deadline=None)
def test_top_k_keeps_ties_in_position_order(shape, data, largest, integer):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[axis]))
    dtype = np.int32 if integer else np.float32
    g = _graph("top_k", [(shape, dt.from_numpy(np.dtype(dtype)))], lambda g, x: g.top_k(x, k, axis, largest))
    values = np.random.default_rng(k).integers(0, 3, shape).astype(dtype)  # many ties
    assert_export_matches(g, [values])


def test_normalizations_and_log_softmax():
    rng = np.random.default_rng(8)
    g = _graph("norms", [([-1, 3, 4, 5], dt.DT_FLOAT)],
               lambda g, x: [g.log_softmax(x, 1), g.log_softmax(x, -1),
                             g.instance_norm(x, g.const(rng.standard_normal(3).astype(np.float32)),
                                             g.const(rng.standard_normal(3).astype(np.float32)), epsilon=1e-3),
                             g.lrn(x, 3, alpha=0.1, beta=0.7, bias=2.0), g.lrn(x, 1)])
    assert_export_matches(g, [rng.standard_normal((2, 3, 4, 5)).astype(np.float32)], rtol=1e-4, atol=1e-5)


@given(axes=st.lists(st.integers(-3, 2), max_size=3, unique_by=lambda a: a % 3), keep=st.booleans())
@settings(max_examples=10, deadline=None)
def test_every_reduction_over_any_axes(axes, keep):
    kinds = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_l1", "reduce_l2",
             "reduce_sum_square", "reduce_log_sum", "reduce_log_sum_exp"]
    g = _graph("reductions", [([-1, 3, 4], dt.DT_FLOAT)],
               lambda g, x: [getattr(g, kind)(g.abs(x) if kind == "reduce_log_sum" else x, axes, keep_dims=keep)
                             for kind in kinds])
    assert_export_matches(g, [np.random.default_rng(3).uniform(0.5, 1.5, (2, 3, 4)).astype(np.float32)],
                          rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sizes", [[2, 3], [-1, 2], [1, -1, 1], [5]])
def test_split_into_known_and_remaining_sizes(sizes):
    g = _graph("split", [([-1, 5], dt.DT_FLOAT)], lambda g, x: g.split(x, sizes, 1))
    assert_export_matches(g, [np.arange(10, dtype=np.float32).reshape(2, 5)])


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data(),
       mode=st.sampled_from(["constant", "reflect", "edge"]))
@settings(max_examples=12, deadline=None)
def test_pads_that_crop_or_extend_in_any_mode(shape, data, mode):
    """Reflect pads stay below the (cropped) size: numpy reflects again beyond it, onnxruntime refuses."""
    begins = [data.draw(st.integers(-(size - 1), size - 1)) for size in shape]
    ends = [data.draw(st.integers(-(size - 1 - max(0, -b)), size - 1 - max(0, -b))) for size, b in zip(shape, begins)]
    if mode == "reflect":
        ends = [min(e, size - 1 - max(0, -b) - max(0, -e)) for size, b, e in zip(shape, begins, ends)]
        begins = [min(b, size - 1 - max(0, -b) - max(0, -e)) for size, b, e in zip(shape, begins, ends)]
    g = _graph("pad", [([-1, *shape[1:]], dt.DT_FLOAT)], lambda g, x: g.pad(x, [*begins, *ends], mode, 2.5))
    assert_export_matches(g, [np.arange(np.prod(shape), dtype=np.float32).reshape(shape)])


# --- the model: inputs, outputs, weights -------------------------------------------------------

def test_inputs_keep_order_names_and_fixed_dims_outputs_are_numbered():
    g = Graph("io")
    y = g.data(1, [2, -1], dt.DT_INT32, name="y")
    x = g.data(0, [-1, 3], dt.DT_FLOAT, name="output_0")  # a name the exporter gives: renamed
    g.set_outputs([g.relu(x), g.cast(y, dt.DT_FLOAT16)])
    model, _ = exported(g)
    inputs = [(i.name, i.type.tensor_type.elem_type, [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim])
              for i in model.graph.input]
    assert inputs == [("input_0", onnx.TensorProto.FLOAT, ["input_0_dim0", 3]),
                      ("y", onnx.TensorProto.INT32, [2, "y_dim1"])]
    assert [(o.name, o.type.tensor_type.elem_type) for o in model.graph.output] == [
        ("output_0", onnx.TensorProto.FLOAT), ("output_1", onnx.TensorProto.FLOAT16)]
    assert model.opset_import[0].version == ONNX_OPSET


def test_an_output_that_is_an_input_a_weight_or_twice_there_is_copied():
    g = Graph("copies")
    x = g.data(0, [2], dt.DT_FLOAT, name="x")
    w = g.const(np.float32([1, 2]))
    y = g.add(x, w)
    g.set_outputs([x, y, w, y])
    model, weights = exported(g)
    assert [n.op_type for n in model.graph.node] == ["Add", "Identity", "Identity", "Identity"]
    got = run_exported(model, weights, [np.float32([3, 4])])
    np.testing.assert_array_equal(np.stack(got), [[3, 4], [4, 6], [1, 2], [4, 6]])


def test_weights_are_external_initializers_shared_by_their_users_and_empty_ones_embedded():
    """And a weight no op reads has no initializer (onnxruntime would drop it, then refuse its data)."""
    g = Graph("weights")
    x = g.data(0, [-1, 2], dt.DT_FLOAT, name="x")
    blob = np.float32([[1, 2], [3, 4]])
    w, scalar, empty = g.const(blob), g.const(np.float32(2)), g.const(np.zeros((0, 2), np.float32))
    g.const(np.float32([5]))
    g.set_outputs([g.concat([g.mul(g.matmul(x, w), scalar), empty, w], 0), g.add(w, w)])
    entry, arrays, dtypes = packed_entry(g)
    model = export_onnx(entry, dtypes)
    initializers = {t.name: t for t in model.graph.initializer}
    assert len(entry.weights) == 4 and weight_name(3) not in initializers
    for index, weight in enumerate(entry.weights[:3]):
        tensor = initializers[weight_name(index)]
        assert list(tensor.dims) == list(weight.shape)
        if weight.size:
            assert tensor.data_location == onnx.TensorProto.EXTERNAL and not tensor.raw_data
            assert {e.key: e.value for e in tensor.external_data} == {
                "location": WEIGHTS_LOCATION, "offset": str(weight.offset), "length": str(weight.size)}
        else:
            assert tensor.data_location == onnx.TensorProto.DEFAULT and tensor.raw_data == b""
    assert sum(t.name.startswith("weight_") for t in model.graph.initializer) == 3
    assert_export_matches(g, [np.float32([[1, 1], [2, 0]])])


def test_the_same_entry_gives_the_same_bytes():
    def build():
        g = Graph("same")
        x = g.data(0, [-1, 4], dt.DT_FLOAT, name="x")
        g.set_outputs(g.split(g.pad(g.resize(g.reshape(x, [-1, 1, 2, 2]), sizes=[4, 4], axes=[2, 3]),
                                    [0, 0, 1, -1, 0, 0, 0, 1]), [1, -1], 2))
        return g
    assert exported(build())[0].SerializeToString() == exported(build())[0].SerializeToString()


# --- what has no export -------------------------------------------------------------------------

@pytest.mark.parametrize("build, message", [
    (lambda g, x: g.bitcast(x, dt.DT_INT32, name="b"), "ge.bitcast 'b': ONNX has no bitcast"),
    (lambda g, x: g.cum_prod(x, 0, name="p"), "ge.cum_prod 'p': ONNX has no running product"),
    (lambda g, x: g.bit_shift(g.cast(x, dt.DT_INT8), g.cast(x, dt.DT_INT8), "left", name="s"),
     "ge.bit_shift 's': ONNX BitShift takes unsigned integers, not DT_INT8"),
    (lambda g, x: g.conv2d(g.cast(g.reshape(x, [1, 1, 2, 2]), dt.DT_INT32), g.const(np.ones((1, 1, 1, 1), np.int32)),
                           name="c"), "ge.conv2d 'c': onnxruntime has no Conv kernel for DT_INT32"),
    (lambda g, x: g.lrn(g.reshape(x, [1, 4, 1, 1]), 4, name="n"),
     "ge.lrn 'n': onnxruntime's LRN takes an odd size, not 4"),
    (lambda g, x: g.resize(g.reshape(x, [1, 2, 2]), sizes=[1, 4, 4], mode="cubic", name="r"),
     "ge.resize 'r': onnxruntime's cubic Resize takes a 2-D input or the last two axes of a 4-D one, not axes "
     "[0, 1, 2] of a 3-D input"),
    (lambda g, x: g.grid_sample(g.reshape(x, [1, 1, 2, 2]), g.const(np.zeros((1, 1, 1, 2), np.float32)), "cubic",
                                "border", name="s"),
     "ge.grid_sample 's': onnxruntime's cubic GridSample with border padding samples other taps"),
])
def test_ops_without_an_export_say_why(build, message):
    g = _graph("none", [([4], dt.DT_FLOAT)], build)
    with pytest.raises(NoExport, match="^" + re.escape(message) + "$") as error:
        exported(g)
    assert error.value.op.name == message.split("'")[1]


def test_an_op_the_exporter_does_not_know_has_no_onnx_form():
    entry = GeGraph("g", (GeInput("x", 0, "DT_FLOAT", (2,), ((2, 2),), 0),), (GeOp("frobnicate", "f", (0,), (1,), {}),),
                    (1,))
    with pytest.raises(NoExport, match="^ge.frobnicate 'f': no ONNX form$"):
        export_onnx(entry, ["DT_FLOAT"])


def test_a_clip_imported_as_max_and_min_exports_as_one_clip():
    g = Graph("relu6")
    x = g.data(0, [-1, 4], dt.DT_FLOAT, name="x")
    low, high = g.const(np.float32(0)), g.const(np.float32(6))
    kept = g.maximum(x, low)
    g.set_outputs([g.minimum(g.maximum(x, low), high), g.minimum(kept, high), kept])
    model, weights = exported(g)
    assert sorted(node.op_type for node in model.graph.node) == ["Clip", "Max", "Min"]  # a Max read elsewhere stays
    x_in = np.array([[-3, 0.5, 6, 9]], np.float32)
    clipped = np.clip(x_in, 0, 6)
    for got, want in zip(run_exported(model, weights, [x_in]), [clipped, clipped, np.maximum(x_in, 0)]):
        np.testing.assert_array_equal(got, want)


# --- ONNX -> GE -> ONNX: small architectures against onnxruntime on the original ---------------

def _classic_cnns():
    spec = importlib.util.spec_from_file_location(
        "onnx_export_classic_cnns", Path(__file__).resolve().parents[1] / "frontend" / "test_onnx_classic_cnns.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_CNNS = _classic_cnns()


def _mobilenet_v3_block() -> onnx.ModelProto:
    """Stem with hard-swish, a depthwise conv with relu6 (Clip), a squeeze-and-excitation block, a
    pointwise conv, global pooling and a classifier (Gemm)."""
    n = _CNNS.Net(14)
    h = n.node("HardSwish", [n.batch_norm(n.conv("x", 3, 8, 3, stride=2, pad=1), 8)])
    depthwise = n.node("Clip", [n.batch_norm(n.conv(h, 8, 8, 3, pad=1, group=8), 8),
                                n.weight(np.float32(0)), n.weight(np.float32(6))])
    squeeze = n.node("Relu", [n.conv(n.node("GlobalAveragePool", [depthwise]), 8, 4, 1)])
    excite = n.node("HardSigmoid", [n.conv(squeeze, 4, 8, 1)], alpha=1 / 6, beta=0.5)
    h = n.node("HardSwish", [n.batch_norm(n.conv(n.node("Mul", [depthwise, excite]), 8, 16, 1), 16)])
    h = n.node("Flatten", [n.node("GlobalAveragePool", [h])], axis=1)
    return n.model("mobilenet_v3", [3, 16, 16], n.dense(h, 16, 10), 10)


def _encoder_block(tokens: int = 5, width: int = 8, heads: int = 2) -> onnx.ModelProto:
    """Pre-norm self-attention and an erf-GELU MLP, each with its residual."""
    n, head = _CNNS.Net(17), width // heads
    rng = np.random.default_rng(4)

    def dense(x: str, fan_in: int, fan_out: int) -> str:
        w = (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32)
        bias = (rng.standard_normal(fan_out) * 0.1).astype(np.float32)
        return n.node("Add", [n.node("MatMul", [x, n.weight(w)]), n.weight(bias)])

    def layer_norm(x: str) -> str:
        return n.node("LayerNormalization", [x, n.weight(rng.uniform(0.5, 1.5, width).astype(np.float32)),
                                             n.weight((rng.standard_normal(width) * 0.1).astype(np.float32))], axis=-1)

    def split_heads(x: str) -> str:
        return n.node("Transpose", [n.node("Reshape", [x, n.weight(np.array([0, 0, heads, head], np.int64))])],
                      perm=[0, 2, 1, 3])

    h = layer_norm("x")
    q, k, v = (split_heads(dense(h, width, width)) for _ in range(3))
    scores = n.node("Div", [n.node("MatMul", [q, n.node("Transpose", [k], perm=[0, 1, 3, 2])]),
                            n.weight(np.float32(np.sqrt(head)))])
    attended = n.node("MatMul", [n.node("Softmax", [scores], axis=-1), v])
    merged = n.node("Reshape", [n.node("Transpose", [attended], perm=[0, 2, 1, 3]),
                                n.weight(np.array([0, 0, width], np.int64))])
    x = n.node("Add", ["x", dense(merged, width, width)])
    up = dense(layer_norm(x), width, 4 * width)
    erf = n.node("Erf", [n.node("Div", [up, n.weight(np.float32(np.sqrt(2)))])])
    half = n.node("Mul", [up, n.weight(np.float32(0.5))])
    gelu = n.node("Mul", [half, n.node("Add", [erf, n.weight(np.float32(1))])])
    y = n.node("Add", [x, dense(gelu, 4 * width, width)])
    graph = helper.make_graph(n.nodes, "encoder", [tensor_info("x", ["N", tokens, width])],
                              [tensor_info(y, ["N", tokens, width])], n.weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


_ARCHITECTURES = {
    **{name: (lambda build=build: build(12), [*shape], {"Conv", "Relu"})
       for name, (build, shape) in _CNNS.MODELS.items()},
    "mobilenet_v3": (_mobilenet_v3_block, [3, 16, 16],
                     {"Conv", "BatchNormalization", "HardSwish", "HardSigmoid", "GlobalAveragePool", "Gemm", "Clip"}),
    "encoder": (_encoder_block, [5, 8], {"LayerNormalization", "MatMul", "Softmax", "Erf", "Transpose", "Reshape"}),
}
"""name -> (the ONNX model, its input's shape but the batch, native ONNX ops the export must use)."""


@pytest.mark.parametrize("architecture", _ARCHITECTURES)
def test_imported_models_exported_again_match_onnxruntime_on_the_original(architecture):
    build, shape, native = _ARCHITECTURES[architecture]
    proto = build()
    model, weights = exported(Graph.from_onnx(proto))
    onnx.checker.check_model(embedded(model, weights))
    assert native <= {node.op_type for node in model.graph.node}
    original = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, *shape)).astype(np.float32)
        (want,) = original.run(None, {"x": x})
        (got,) = run_exported(model, weights, [x])
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
