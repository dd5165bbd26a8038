"""The GE graph path: `!ge.tensor`, the `ge` ops' shape functions, the `Graph` builder, lowering
to a plan entry, and `GeGraphRunner` against plain numpy."""
from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, Builtin, IntAttr, StringAttr, f32
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

import dfir.data_type as dt
from dfir.dialects import ge
from dfir.dialects.ge_types import DimRange, GeTensorType, element_type_of
from dfir.ge.error import GeError
from dfir.ge.graph import Graph, GraphInput
from dfir.lowering.ge_graph import lower_ge_graph
from dfir.runtime.ge.graph_runner import GeGraphRunner

from onnx_models import run_reference

F32 = dt.DT_FLOAT


# --- helpers -------------------------------------------------------------------------------------

def _pack(weights: list[np.ndarray], align: int = 64) -> tuple[list[dict], bytearray]:
    """Weight arrays laid out as a WEIGHTS_DATA partition: 64-byte aligned, in index order."""
    buffer, descs = bytearray(), []
    for array in weights:
        buffer += bytes(-len(buffer) % align)
        descs.append({"offset": len(buffer), "size": array.nbytes, "dtype": dt.from_numpy(array.dtype).name,
                      "shape": list(array.shape)})
        buffer += array.tobytes()
    return descs, buffer


def _runner(graph: Graph) -> GeGraphRunner:
    entry, weights = lower_ge_graph(graph.to_ir())
    entry["weights"], buffer = _pack(weights)
    return GeGraphRunner(entry, bytes(buffer))


def _print(op, generic: bool = False) -> str:
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(op)
    return stream.getvalue()


def _parse(text: str):
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(ge.GE)
    module = Parser(ctx, text).parse_module()
    module.verify()
    return module


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- !ge.tensor ----------------------------------------------------------------------------------

def test_tensor_type_from_shape_and_helpers():
    t = GeTensorType.from_shape([2, -1, 3], F32, "NCHW")
    assert str(t) == "!ge.tensor<[2, -1, 3], f32, NCHW>"
    assert t.dims == (DimRange(2, 2), DimRange(0, None), DimRange(3, 3))
    assert (t.shape, t.rank, t.dtype, t.numpy_dtype, t.tensor_format) == ([2, -1, 3], 3, F32, np.float32, "NCHW")
    assert t.max_element_count() is None and not t.is_static()
    ranged = t.with_dims([DimRange(2, 2), DimRange(1, 8), DimRange(3, 3)])
    assert str(ranged) == "!ge.tensor<[2, 1:8, 3], f32, NCHW>"
    assert ranged.max_element_count() == 48 and ranged.shape == [2, -1, 3]
    scalar = GeTensorType.from_shape([], dt.DT_INT64)
    assert (str(scalar), scalar.is_static(), scalar.max_element_count()) == ("!ge.tensor<[], i64>", True, 1)


def test_dim_range_spelling_and_algebra():
    assert [str(d) for d in (DimRange(3, 3), DimRange(0, None), DimRange(2, None), DimRange(1, 8))] == \
        ["3", "-1", "2:-1", "1:8"]
    assert DimRange(1, 8).intersect(DimRange(5, None)) == DimRange(5, 8)
    assert DimRange(1, 3).intersect(DimRange(4, 5)) is None
    assert DimRange(1, 3).hull(DimRange(6, None)) == DimRange(1, None)
    assert DimRange(2, None).contains(10**9) and not DimRange(2, 9).contains(10)


def test_tensor_type_without_numpy_equivalent():
    with pytest.raises(GeError, match="data type DT_BF16 has no numpy equivalent"):
        GeTensorType.from_shape([2], dt.DT_BF16).numpy_dtype


def test_tensor_type_verify_messages():
    with pytest.raises(VerifyException, match=r"^ge.tensor: 1 lower bounds but 2 upper bounds$"):
        GeTensorType.new([ArrayAttr([IntAttr(1)]), ArrayAttr([IntAttr(1), IntAttr(2)]), f32, StringAttr("ND")])
    with pytest.raises(VerifyException, match=r"^ge.tensor: dimension range 4:2 has its lower bound above its upper bound$"):
        GeTensorType([DimRange(4, 2)], f32)
    with pytest.raises(VerifyException, match=r"^ge.tensor: unknown tensor format 'NC1HWC0', expected one of ND, NCHW, NHWC$"):
        GeTensorType([DimRange(4, 4)], f32, "NC1HWC0")
    with pytest.raises(ValueError, match=r"^data type DT_STRING cannot be a ge tensor element type"):
        element_type_of(dt.DT_STRING)


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9) | st.none()), max_size=4))
def test_tensor_type_prints_and_parses_back(bounds):
    dims = [DimRange(lo, None if hi is None else lo + hi) for lo, hi in bounds]
    t = GeTensorType(dims, f32)
    ctx = Context()
    ctx.load_dialect(ge.GE)
    assert Parser(ctx, str(t)).parse_type() == t


@settings(max_examples=60)
@given(st.data())
def test_broadcast_ranges_contain_every_numpy_result(data):
    """Soundness: any concrete sizes inside the operand ranges that numpy broadcasts land inside
    the inferred result range."""
    def dim_range():
        lo = data.draw(st.integers(0, 4))
        return DimRange(lo, data.draw(st.none() | st.integers(lo, 6)))

    a, b = dim_range(), dim_range()
    size_a = data.draw(st.integers(a.lo, a.hi if a.hi is not None else 8))
    size_b = data.draw(st.integers(b.lo, b.hi if b.hi is not None else 8))
    if not (size_a == size_b or 1 in (size_a, size_b)):
        return
    (result,) = ge.AddOp.infer_types([GeTensorType([a], f32), GeTensorType([b], f32)], {})
    assert result.dims[0].contains(np.broadcast_shapes((size_a,), (size_b,))[0])


# --- the builder ---------------------------------------------------------------------------------

def _mlp() -> Graph:
    g = Graph("mlp")
    x = g.data(0, [-1, 4], F32, name="x")
    w = g.const(np.arange(8, dtype=np.float32).reshape(4, 2), name="w")
    b = g.const(np.float32([1.0, -20.0]), name="b")
    g.set_outputs([g.relu(g.add(g.matmul(x, w), b), name="act")])
    return g


def test_builder_types_every_op():
    g = Graph("ops")
    x = g.data(1, [-1, 3], F32, name="x")
    s = g.data(0, [], F32)
    assert (x.shape, x.dtype) == ([-1, 3], F32)
    assert str(g.add(x, g.const(np.ones(3, np.float32))).type) == "!ge.tensor<[-1, 3], f32>"
    assert str(g.sub(s, x).type) == "!ge.tensor<[-1, 3], f32>"
    assert str(g.mul(g.const(np.ones((2, 1), np.float32)), x).type) == "!ge.tensor<[2, 3], f32>"
    assert str(g.relu(x).type) == "!ge.tensor<[-1, 3], f32>"
    assert str(g.matmul(x, g.const(np.ones((3, 5), np.float32))).type) == "!ge.tensor<[-1, 5], f32>"
    batched = g.data(2, [4, 1, 2, 3], F32, format="NCHW")
    assert str(g.matmul(batched, g.const(np.ones((6, 3, 2), np.float32))).type) == \
        "!ge.tensor<[4, 6, 2, 2], f32, NCHW>"
    assert str(g.reshape(g.const(np.ones((2, 3, 4), np.int32)), [0, -1]).type) == "!ge.tensor<[2, 12], i32>"
    assert str(g.reshape(x, [3, -1]).type) == "!ge.tensor<[3, -1], f32>"
    assert g.inputs == [GraphInput("data_0", 0, F32, []), GraphInput("x", 1, F32, [-1, 3]),
                        GraphInput("data_1", 2, F32, [4, 1, 2, 3])]


def test_builder_names_nodes_uniquely():
    g = Graph("names")
    x = g.data(0, [2], F32, name="relu_0")
    g.set_outputs([g.relu(g.relu(x)), g.relu(x, name="last")])
    names = [ge.op_name_of(op) for op in g.to_ir().block.ops]
    assert names == ["relu_0", "relu_1", "relu_2", "last", None]
    assert g.num_outputs == 2


BUILD_ERRORS = [
    (lambda g, x: Graph(""), "Graph name must be a non-empty str, got ''"),
    (lambda g, x: g.data(-1, [2], F32), "graph=g; data index must be an int >= 0, got -1"),
    (lambda g, x: g.data(0, [2], F32), "graph=g; data index 0 is already used by data 'x'"),
    (lambda g, x: g.data(1, [2, -2], F32),
     "graph=g; data shape must be a list of ints >= -1 (-1 = unknown), got [2, -2]"),
    (lambda g, x: g.data(1, [2], F32, format="HWCN"),
     "graph=g; unknown tensor format 'HWCN', expected one of ND, NCHW, NHWC"),
    (lambda g, x: g.data(1, [2], np.float32),
     "graph=g; dtype must be a DType such as DT_FLOAT, got <class 'numpy.float32'>"),
    (lambda g, x: g.data(1, [2], dt.DT_STRING),
     "graph=g; data type DT_STRING cannot be a ge tensor element type, expected one of "
     "DT_FLOAT, DT_FLOAT16, DT_BF16, DT_DOUBLE, DT_BOOL, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64"),
    (lambda g, x: g.relu(x, name="x"), "graph=g; node name 'x' is already used"),
    (lambda g, x: g.relu(x, name=""), "graph=g; node name must be a non-empty str, got ''"),
    (lambda g, x: g.relu(np.ones(2)), "graph=g; relu: operand 0 must be a Value of this graph, got ndarray"),
    (lambda g, x: g.add(x, Graph("other").data(0, [2, 3], F32)),
     "graph=g; add: operand 1 belongs to graph 'other'"),
    (lambda g, x: g.add(x, g.const(np.ones(4, np.float32))),
     "graph=g; node=add_0; ge.add: shapes [2, 3] and [4] do not broadcast: dimension 1 is 3 vs 4"),
    (lambda g, x: g.mul(x, g.const(np.ones(3, np.int32))),
     "graph=g; node=mul_0; ge.mul: element types differ: lhs f32, rhs i32"),
    (lambda g, x: g.matmul(x, g.const(np.ones((4, 5), np.float32))),
     "graph=g; node=matmul_0; ge.matmul: inner dimensions differ: lhs [2, 3] has 3 columns, rhs [4, 5] has 4 rows"),
    (lambda g, x: g.matmul(g.const(np.ones(3, np.float32)), x),
     "graph=g; node=matmul_0; ge.matmul: lhs must have rank >= 2, got [3]"),
    (lambda g, x: g.reshape(x, [4, 2]),
     "graph=g; node=reshape_0; ge.reshape: cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)"),
    (lambda g, x: g.reshape(x, [-1, -1]),
     "graph=g; node=reshape_0; ge.reshape: target shape [-1, -1] has more than one -1"),
    (lambda g, x: g.reshape(x, "23"), "graph=g; reshape shape must be a list of ints, got '23'"),
    (lambda g, x: g.set_outputs([]), "graph=g; set_outputs needs a non-empty list of values, got []"),
    (lambda g, x: g.set_outputs([x, 1]),
     "graph=g; set_outputs: output 1 must be a Value of this graph, got int"),
    (lambda g, x: g.to_ir(), "graph=g; the graph has no outputs; call set_outputs first"),
    (lambda g, x: (g.data(2, [1], F32), g.set_outputs([x]), g.to_ir()),
     "graph=g; ge.graph @g: data indexes must be 0..1, got [0, 2]"),
]


@pytest.mark.parametrize("build, message", BUILD_ERRORS, ids=[m for _, m in BUILD_ERRORS])
def test_builder_errors(build, message):
    g = Graph("g")
    x = g.data(0, [2, 3], F32, name="x")
    with pytest.raises(GeError) as info:
        build(g, x)
    line = build.__code__.co_firstlineno
    assert f"at=test_ge_graph.py:{line}" in str(info.value)  # the user's line that called the builder
    assert str(info.value).replace(f"at=test_ge_graph.py:{line}; ", "").replace(f"; at=test_ge_graph.py:{line}", "") == message


def test_failed_op_leaves_its_name_free():
    g = Graph("g")
    x = g.data(0, [2], F32)
    with pytest.raises(GeError):
        g.matmul(x, x, name="mm")
    g.set_outputs([g.relu(x, name="mm")])
    assert [ge.op_name_of(op) for op in g.to_ir().block.ops][:2] == ["data_0", "mm"]


def test_to_ir_is_fresh_verified_and_round_trips():
    g = _mlp()
    first, second = g.to_ir(), g.to_ir()
    assert first is not second and _print(first) == _print(second)
    assert first.sym_name.data == "mlp"
    text = _print(first)
    assert text.splitlines()[0] == "ge.graph @mlp {"
    assert re.search(r'%act = ge.relu %add {name = "act", loc = "test_ge_graph.py:\d+"} : !ge.tensor<\[-1, 2\], f32>',
                     text)
    for generic in (False, True):
        module = _parse(_print(first, generic))
        (reparsed,) = module.ops
        assert _print(reparsed) == text


def test_constants_print_and_parse_back_bit_exact():
    consts = {
        "weights": _rng(0).standard_normal((64, 33)).astype(np.float32),
        "small": np.float32([0.1, 0.123456791, -3e38, 1e-45]),
        "non_finite": np.float16([np.nan, np.inf, -1.5]),
        "nan_splat": np.full(101, np.nan, np.float32),
        "zero_splat": np.zeros((3, 50), np.float32),
        "flags": np.array([True, False, True]),
        "bytes": np.arange(200, dtype=np.uint8).reshape(2, 100),
        "scalar": np.float64(2.5),
    }
    g = Graph("consts")
    g.set_outputs([g.const(array, name=name) for name, array in consts.items()])
    text = _print(g.to_ir())
    assert re.search(r"= ge.const dense_resource<weight_[0-9a-f]{32}> : tensor<64x33xf32>", text.splitlines()[1])
    assert 'dense<[1.000000e-01, 0.123456791, -3.000000e+38, 1.401300e-45]> : tensor<4xf32>' in text
    assert 'dense<"0x007E007C00BE"> : tensor<3xf16>' in text
    assert f'dense<"0x{"0000C07F" * 101}"> : tensor<101xf32>' in text  # a splat of NaN too
    assert 'dense<0.000000e+00> : tensor<3x50xf32>' in text  # a long splat prints one value
    assert 'dense<[true, false, true]> : tensor<3xi1>' in text
    (reparsed,) = _parse(text).ops
    _, arrays = lower_ge_graph(reparsed)
    for array, expected in zip(arrays, consts.values()):
        assert array.dtype == expected.dtype and array.shape == expected.shape
        assert array.tobytes() == expected.tobytes()


# --- lowering ------------------------------------------------------------------------------------

def test_lowering_gives_the_plan_entry_and_weights():
    entry, weights = lower_ge_graph(_mlp().to_ir())
    assert entry == {
        "name": "mlp",
        "inputs": [{"name": "x", "index": 0, "dtype": "DT_FLOAT", "shape": [-1, 4],
                    "ranges": [[0, -1], [4, 4]], "value": 0}],
        "ops": [
            {"op": "const", "name": "w", "inputs": [], "outputs": [1], "attrs": {"weight": 0}},
            {"op": "const", "name": "b", "inputs": [], "outputs": [2], "attrs": {"weight": 1}},
            {"op": "matmul", "name": "matmul_0", "inputs": [0, 1], "outputs": [3], "attrs": {}},
            {"op": "add", "name": "add_0", "inputs": [3, 2], "outputs": [4], "attrs": {}},
            {"op": "relu", "name": "act", "inputs": [4], "outputs": [5], "attrs": {}},
        ],
        "outputs": [5],
    }
    assert [w.tolist() for w in weights] == [[[0, 1], [2, 3], [4, 5], [6, 7]], [1.0, -20.0]]
    assert all(w.dtype == np.float32 and not w.flags.writeable for w in weights)


def test_lowering_orders_inputs_by_index_and_is_deterministic():
    g = Graph("two")
    b = g.data(1, [2], dt.DT_INT32, name="b")
    a = g.data(0, [2], dt.DT_INT32, name="a")
    g.set_outputs([g.reshape(g.sub(a, b), [2, 1], name="r")])
    entry, _ = lower_ge_graph(g.to_ir())
    assert [(i["name"], i["index"], i["value"]) for i in entry["inputs"]] == [("a", 0, 1), ("b", 1, 0)]
    assert entry["ops"][-1] == {"op": "reshape", "name": "r", "inputs": [2], "outputs": [3], "attrs": {"shape": [2, 1]}}
    again, _ = lower_ge_graph(_parse(_print(g.to_ir())).ops.first)
    assert json.dumps(entry, sort_keys=True) == json.dumps(again, sort_keys=True)


# --- running -------------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
       seed=st.integers(0, 2**32 - 1))
def test_elementwise_ops_match_numpy(shapes, seed):
    lhs_shape, rhs_shape = shapes.input_shapes
    rng = _rng(seed)
    lhs, rhs = rng.standard_normal(lhs_shape).astype(np.float32), rng.standard_normal(rhs_shape).astype(np.float32)
    g = Graph("elementwise")
    x, y = g.data(0, list(lhs_shape), F32), g.data(1, [-1] * len(rhs_shape), F32)
    g.set_outputs([g.add(x, y), g.sub(x, y), g.mul(x, y), g.relu(x)])
    results = _runner(g).run([lhs, rhs])
    for got, expected in zip(results, [lhs + rhs, lhs - rhs, lhs * rhs, np.maximum(lhs, 0)]):
        assert got.dtype == np.float32 and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


@settings(max_examples=25, deadline=None)
@given(batch=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3),
       m=st.integers(1, 4), k=st.integers(1, 4), n=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_matmul_matches_numpy(batch, m, k, n, seed):
    rng = _rng(seed)
    lhs = rng.integers(-5, 5, (*batch.input_shapes[0], m, k)).astype(np.int32)
    rhs = rng.integers(-5, 5, (*batch.input_shapes[1], k, n)).astype(np.int32)
    g = Graph("matmul")
    x = g.data(0, [-1] * lhs.ndim, dt.DT_INT32)
    g.set_outputs([g.matmul(x, g.const(rhs))])
    (got,) = _runner(g).run([lhs])
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.matmul(lhs, rhs))


@settings(max_examples=25, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=4), data=st.data())
def test_reshape_matches_numpy(shape, data):
    keep = data.draw(st.integers(0, len(shape) - 1))
    target = [0] * keep + [-1]
    array = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    g = Graph("reshape")
    x = g.data(0, [-1] * len(shape), dt.DT_INT64)
    g.set_outputs([g.reshape(x, target)])
    (got,) = _runner(g).run([array])
    np.testing.assert_array_equal(got, array.reshape(*shape[:keep], -1))


def test_mlp_matches_numpy_on_dynamic_batches():
    runner = _runner(_mlp())
    w, b = np.arange(8, dtype=np.float32).reshape(4, 2), np.float32([1.0, -20.0])
    for batch in (1, 3, 7):
        x = _rng(batch).standard_normal((batch, 4)).astype(np.float32)
        (got,) = runner.run([x])
        np.testing.assert_array_equal(got, np.maximum(x @ w + b, 0))


def test_weights_are_views_of_the_buffer():
    g = Graph("views")
    g.data(0, [1], F32)
    weights = np.float32([[1, 2, 3], [4, 5, 6]])
    g.set_outputs([g.const(weights, name="w")])
    entry, arrays = lower_ge_graph(g.to_ir())
    entry["weights"], buffer = _pack(arrays)
    runner = GeGraphRunner(entry, memoryview(buffer))
    (out,) = runner.run([np.float32([0])])
    np.testing.assert_array_equal(out, weights)
    assert np.shares_memory(out, np.frombuffer(buffer, np.uint8)) and not out.flags.writeable
    buffer[:4] = np.float32([9]).tobytes()
    assert runner.run([np.float32([0])])[0][0, 0] == 9


RUN_ERRORS = [
    ([], "graph=ranges; expected 2 inputs, got 0"),
    ([np.zeros((2, 3), np.float64), np.zeros(3, np.int32)],
     "graph=ranges; input 'x' (index 0): expected dtype DT_FLOAT (float32), got float64"),
    ([np.zeros((9, 3), np.float32), np.zeros(3, np.int32)],
     "graph=ranges; input 'x' (index 0): expected shape [1:8, 3], got [9, 3]"),
    ([np.zeros((2, 3), np.float32), np.zeros((1, 3), np.int32)],
     "graph=ranges; input 'n' (index 1): expected shape [-1], got [1, 3]"),
]


@pytest.mark.parametrize("inputs, message", RUN_ERRORS, ids=[m for _, m in RUN_ERRORS])
def test_runner_checks_inputs(inputs, message):
    graph = _parse('''ge.graph @ranges {
      %x = ge.data 0 "x" : !ge.tensor<[1:8, 3], f32>
      %n = ge.data 1 "n" : !ge.tensor<[-1], i32>
      ge.output %x, %n : !ge.tensor<[1:8, 3], f32>, !ge.tensor<[-1], i32>
    }''').ops.first
    entry, _ = lower_ge_graph(graph)
    runner = GeGraphRunner(entry, None)
    assert runner.run([np.ones((8, 3), np.float32), np.arange(5, dtype=np.int32)])[1].tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(GeError) as info:
        runner.run(inputs)
    assert str(info.value) == message


def test_runner_rejects_bad_entries():
    entry, arrays = lower_ge_graph(_mlp().to_ir())
    descs, buffer = _pack(arrays)
    with pytest.raises(GeError, match=r"^ge_graph.ops\[0\].attrs.weight: 0 is out of range \[0, 0\)$"):
        GeGraphRunner(dict(entry, weights=[]), bytes(buffer))
    with pytest.raises(GeError, match=r"^graph=mlp; weight 1 \(DT_FLOAT \[2\], 8 bytes at offset 64\) does not fit "
                                      r"a weights buffer of 70 bytes$"):
        GeGraphRunner(dict(entry, weights=descs), bytes(buffer[:70]))
    with pytest.raises(GeError, match=r"^graph=mlp; weight 0 \(DT_FLOAT \[4, 2\], 32 bytes at offset 0\) does not fit "
                                      r"a weights buffer of 0 bytes$"):
        GeGraphRunner(dict(entry, weights=descs), None)
    unknown = dict(entry, ops=[*entry["ops"][:-1], dict(entry["ops"][-1], op="lstm")], weights=descs)
    with pytest.raises(GeError, match=r"^graph=mlp; op 'act' is a 'lstm', which has no kernel$"):
        GeGraphRunner(unknown, bytes(buffer))


def test_an_empty_constant_is_a_dense_attribute_and_runs():
    g = Graph("empty")
    x = g.data(0, [2, 0], dt.DT_FLOAT)
    g.set_outputs([g.add(x, g.const(np.zeros([2, 0], np.float32)))])
    assert "ge.const dense<> : tensor<2x0xf32>" in str(g.to_ir())
    (y,) = run_reference(g, np.zeros([2, 0], np.float32))
    assert y.shape == (2, 0) and y.dtype == np.float32
