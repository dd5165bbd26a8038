"""Shape settings applied at import, `infer-shape-ranges` and `plan-output-size`, and the
seed's dynamic-shape resize end to end (compile config, report, run, outputMaxSize)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.dialects import ge
from dfir.dialects.ge_types import DimRange, GeTensorType
from dfir.driver.job import make_context
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.passes.infer_shape_ranges import InferShapeRanges, ShapeMismatch, infer_graph_ranges
from dfir.passes.plan_output_size import PlanOutputSize, max_bytes

F32 = dt.DT_FLOAT
SEED_CONFIG = {
    "build_options": {"ge.inputShape": "1,3,1~1728,1~1728;2", "ge.outputMaxSize": "107495424"},
    "inputs_tensor_desc": [{"data_type": "DT_FLOAT", "shape": [1, 3, -1, -1], "format": "NCHW"},
                           {"data_type": "DT_INT32", "shape": [2], "format": "ND"}],
}


def mlp(rows: int = -1) -> Graph:
    g = Graph("mlp")
    x = g.data(0, [rows, 4], F32, name="x")
    h = g.relu(g.add(g.matmul(x, g.const(np.ones((4, 8), np.float32))), g.const(np.ones(8, np.float32))))
    g.set_outputs([g.reshape(h, [-1])])
    return g


def seed_resize() -> Graph:
    """The seed's `F.interpolate(x, size=[hw[0], hw[1]], mode="bilinear", align_corners=True)`."""
    g = Graph("resize")
    x = g.data(0, [1, 3, 4, 4], F32, name="x")
    hw = g.data(1, [2], dt.DT_INT32, name="hw")
    g.set_outputs([g.resize_bilinear(x, hw, align_corners=True)])
    return g


def graph_op(compiled: dfir.CompiledModel, name: str) -> ge.GraphOp:
    return next(op for op in compiled.module.walk() if isinstance(op, ge.GraphOp) and op.sym_name.data == name)


def dims(value) -> list[str]:
    return [str(d) for d in value.type.dims]


# --- settings applied at import --------------------------------------------------------------------

def test_input_shape_option_narrows_the_inputs_and_retypes_the_graph():
    compiled = dfir.compile(mlp(), {"ge.inputShape": "x:1~8,4"}, stop_after="import")
    graph = graph_op(compiled, "mlp")
    assert dims(graph.data_ops[0].result) == ["1:8", "4"]
    assert dims(graph.output_op.outputs[0]) == ["8:64"]


def test_input_shape_may_make_a_static_graph_dynamic():
    compiled = dfir.compile(mlp(rows=2), {"ge.inputShape": "3~5,4"}, stop_after="import")
    assert dims(graph_op(compiled, "mlp").output_op.outputs[0]) == ["24:40"]


@pytest.mark.parametrize("options, message", [
    ({"ge.inputShape": "x:1~8,5"},
     "compile options: graph mlp: the graph does not fit its input shapes at op 'matmul_0': ge.matmul: "
     "inner dimensions differ: lhs [1:8, 5] has 5 columns, rhs [4, 8] has 4 rows"),
    ({"ge.inputShape": "x:1~8"},
     "compile options: graph mlp: ge.inputShape gives input 'x' 1 dimension, but it has 2 ([-1, 4])"),
    ({"ge.inputShape": "y:2"},
     "compile options: graph mlp: ge.inputShape names input 'y', but graph mlp has no input of that "
     "name; its inputs are ['x']"),
    ({"ge.outputMaxSize": "1;2"},
     "compile options: graph mlp: ge.outputMaxSize '1;2' gives 2 sizes but the graph has only 1 output"),
])
def test_bad_settings_name_their_source_graph_and_op(options, message):
    with pytest.raises(GeError) as error:
        dfir.compile(mlp(), options, stop_after="import")
    assert error.value.error_message == message


def write_config(tmp_path, config) -> str:
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(config))
    return str(path)


def compile_in_flow(graph: Graph, config_path: str, **kwargs) -> dfir.CompiledModel:
    pp = df.GraphProcessPoint(df.Framework.ONNX, graph, compile_config_path=config_path)
    x, hw = df.FlowData(name="a_x"), df.FlowData(name="b_hw")
    return dfir.compile(df.FlowGraph([pp.fnode(2, 1, name="resize_node")(x, hw)]), **kwargs)


def test_the_seed_config_types_the_graph_inputs(tmp_path):
    compiled = compile_in_flow(seed_resize(), write_config(tmp_path, SEED_CONFIG), stop_after="import")
    graph = graph_op(compiled, "resize")
    x, hw = graph.data_ops
    assert x.result.type == GeTensorType([DimRange(1, 1), DimRange(3, 3), DimRange(1, 1728), DimRange(1, 1728)],
                                         x.result.type.element_type, "NCHW")
    assert hw.result.type.shape == [2] and hw.result.type.dtype == dt.DT_INT32
    assert list(graph.attributes["output_max_size"].get_values()) == [107495424]


def test_the_config_data_type_replaces_the_inputs_as_in_ge(tmp_path):
    config = json.loads(json.dumps(SEED_CONFIG))
    config["inputs_tensor_desc"][1]["data_type"] = "DT_INT64"
    compiled = compile_in_flow(seed_resize(), write_config(tmp_path, config), stop_after="import")
    x, hw = graph_op(compiled, "resize").data_ops
    assert hw.result.type.dtype == dt.DT_INT64 and hw.result.type.shape == [2]
    assert x.result.type.dtype == dt.DT_FLOAT


@pytest.mark.parametrize("change, message", [
    (lambda c: c["inputs_tensor_desc"].pop(),
     "inputs_tensor_desc describes 1 input but the graph has 2 inputs"),
    (lambda c: c["inputs_tensor_desc"][0].update(shape=[1, 3, 224, -1]),
     "ge.inputShape gives dimension 2 of input 'x' as 1~1728, but inputs_tensor_desc[0].shape fixes "
     "it at 224 (use -1 there to make it dynamic)"),
    (lambda c: c["inputs_tensor_desc"][0].update(format="NHWC"),
     "the graph does not fit its input shapes at op 'resize_bilinear_0': ge.resize_bilinear: input "
     "format NHWC is not supported, expected NCHW or ND"),
])
def test_config_conflicts_name_the_file(tmp_path, change, message):
    config = json.loads(json.dumps(SEED_CONFIG))
    change(config)
    path = write_config(tmp_path, config)
    with pytest.raises(GeError) as error:
        compile_in_flow(seed_resize(), path, stop_after="import")
    assert error.value.error_message == f"compile config {path}: graph resize: {message}"


# --- infer-shape-ranges ----------------------------------------------------------------------------

def test_the_pass_narrows_declared_types_and_summarizes():
    graph = mlp().to_ir()
    data = graph.data_ops[0]
    Rewriter.replace_value_with_new_type(data.result, data.result.type.with_dims([DimRange(2, 3), DimRange.fixed(4)]))
    assert infer_graph_ranges(graph) == 4  # matmul, add, relu and reshape; not the constants
    assert dims(graph.output_op.outputs[0]) == ["16:24"]
    assert infer_graph_ranges(graph) == 0  # a fixed point
    module = ModuleOp([graph])
    assert InferShapeRanges().summary(module) == "7 values in 1 ge graph: 2 static, 5 bounded, 0 unbounded"


def test_a_mismatch_is_raised_at_the_op_naming_both_shapes():
    g = Graph("g")
    x = g.data(0, [-1, 4], F32, name="x")
    g.set_outputs([g.add(x, g.const(np.ones((3, 4), np.float32)), name="sum")])
    graph = g.to_ir()
    data = graph.data_ops[0]
    Rewriter.replace_value_with_new_type(data.result, data.result.type.with_dims([DimRange(5, 9), DimRange.fixed(4)]))
    with pytest.raises(ShapeMismatch) as error:
        infer_graph_ranges(graph)
    assert str(error.value) == "ge.add: shapes [5:9, 4] and [3, 4] do not broadcast: dimension 0 is 5:9 vs 3"
    assert ge.op_name_of(error.value.op) == "sum"


# --- plan-output-size ------------------------------------------------------------------------------

def test_max_bytes_uses_each_element_size():
    assert max_bytes(GeTensorType.from_shape([2, 3], dt.DT_FLOAT16)) == 12
    assert max_bytes(GeTensorType.from_shape([5], dt.DT_BOOL)) == 5
    assert max_bytes(GeTensorType([DimRange(1, 4)], GeTensorType.from_shape([1], dt.DT_INT64).element_type)) == 32
    assert max_bytes(GeTensorType.from_shape([-1], dt.DT_FLOAT)) is None


def test_a_given_size_below_the_proof_is_a_compile_error():
    with pytest.raises(GeError) as error:
        dfir.compile(mlp(), {"ge.inputShape": "x:1~8,4", "ge.outputMaxSize": "100"})
    assert str(error.value) == ("dfir.compile failed; ge.outputMaxSize of output 0 of graph mlp is 100 bytes, "
                                "below the 256 bytes its shape ranges allow; give at least that, or narrow "
                                "the input shapes (ge.inputShape)")


def test_a_given_size_bounds_an_unbounded_output_at_run_time():
    compiled = dfir.compile(mlp(), {"ge.inputShape": "x:-1,4", "ge.outputMaxSize": "100"})
    assert "plan-output-size: @mlp[0] unbounded, ge.outputMaxSize 100 B (checked at run time)" in str(compiled.report)
    with dfir.load(compiled.om) as model:
        for rows in (3, 4, 2):
            model.feed_data([np.ones((rows, 4), np.float32)])
        outputs, _, ret = model.fetch_data(timeout=5000)
        assert ret == 0 and outputs[0].numpy().shape == (24,)
        outputs, _, ret = model.fetch_data(timeout=5000)
        assert ret != 0 and outputs == []
        assert ("output 0 ([32] float32) is 128 bytes, above its outputMaxSize of 100 bytes"
                in ret.message)
        outputs, _, ret = model.fetch_data(timeout=5000)
        assert ret == 0 and outputs[0].numpy().shape == (16,)


def test_the_proof_is_filled_in_and_a_larger_given_size_gives_way():
    compiled = dfir.compile(mlp(), {"ge.inputShape": "x:1~8,4", "ge.outputMaxSize": "100000"},
                            stop_after="plan")
    graph = graph_op(compiled, "mlp")
    assert list(graph.output_op.attributes["max_bytes"].get_values()) == [256]
    assert "plan-output-size: @mlp[0] 256 B proved (ge.outputMaxSize 100000 B)" in str(compiled.report)
    compiled = dfir.compile(mlp(), {"ge.inputShape": "x:1~8,4", "ge.outputMaxSize": "0"}, stop_after="plan")
    graph = graph_op(compiled, "mlp")  # 0, as an empty entry, gives no size (as GE reads it)
    assert list(graph.attributes["output_max_size"].get_values()) == [-1]
    assert list(graph.output_op.attributes["max_bytes"].get_values()) == [256]
    compiled = dfir.compile(mlp(), stop_after="plan")
    assert list(graph_op(compiled, "mlp").output_op.attributes["max_bytes"].get_values()) == [-1]
    assert "plan-output-size: @mlp[0] unbounded" in str(compiled.report)


def test_disabled_plans_nothing():
    module = dfir.compile(mlp(), {"ge.inputShape": "x:1~8,4"}, stop_after="shapes").module
    PlanOutputSize(enabled=False).apply(make_context(), module)
    graph = next(op for op in module.walk() if isinstance(op, ge.GraphOp))
    assert "max_bytes" not in graph.output_op.attributes
    assert PlanOutputSize(enabled=False).summary(module) == "off"


# --- the seed's dynamic-shape example, end to end --------------------------------------------------

def reference_resize(x: np.ndarray, height: int, width: int) -> np.ndarray:
    """Bilinear resize with aligned corners, one output pixel at a time (the definition)."""
    _, _, h, w = x.shape
    out = np.empty((*x.shape[:2], height, width), np.float64)
    for i in range(height):
        for j in range(width):
            sy = i * (h - 1) / (height - 1) if height > 1 else 0.0
            sx = j * (w - 1) / (width - 1) if width > 1 else 0.0
            y0, x0 = int(np.floor(sy)), int(np.floor(sx))
            y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
            dy, dx = sy - y0, sx - x0
            out[..., i, j] = ((1 - dy) * (1 - dx) * x[..., y0, x0] + (1 - dy) * dx * x[..., y0, x1]
                              + dy * (1 - dx) * x[..., y1, x0] + dy * dx * x[..., y1, x1])
    return out.astype(np.float32)


def test_seed_resize_end_to_end(tmp_path, caplog):
    config = json.loads(json.dumps(SEED_CONFIG))
    config["build_options"]["ge.outputMaxSize"] = str(1 * 3 * 40 * 50 * 4)  # smaller, to see it act
    compiled = compile_in_flow(seed_resize(), write_config(tmp_path, config))
    assert ("plan-output-size: @resize[0] unbounded, ge.outputMaxSize 24000 B (checked at run time)"
            in str(compiled.report))
    rng = np.random.default_rng(0)
    with dfir.load(compiled.om) as model:
        image = rng.standard_normal((1, 3, 17, 23)).astype(np.float32)
        for size in ([40, 50], [41, 50], [5, 7]):
            model.feed_data([image, np.array(size, np.int32)])
        outputs, _, ret = model.fetch_data(timeout=5000)
        assert ret == 0
        np.testing.assert_allclose(outputs[0].numpy(), reference_resize(image, 40, 50), rtol=1e-5, atol=1e-5)
        outputs, _, ret = model.fetch_data(timeout=5000)
        assert ret != 0 and "above its outputMaxSize of 24000 bytes" in ret.message
        outputs, _, ret = model.fetch_data(timeout=5000)
        assert ret == 0
        np.testing.assert_allclose(outputs[0].numpy(), reference_resize(image, 5, 7), rtol=1e-5, atol=1e-5)


def test_seed_bound_is_proved_when_the_size_derives_from_the_input(tmp_path):
    """With the size computed from the input (height x 3 / 2, width x 2), the seed's figure
    107495424 = 1 x 3 x 2592 x 3456 x 4 is exactly what the ranges prove."""
    g = Graph("resize")
    x = g.data(0, [1, 3, 4, 4], F32, name="x")
    g.data(1, [2], dt.DT_INT32, name="hw")
    hw = g.slice(g.shape(x), [2], [4])
    scaled = g.div(g.mul(hw, g.const(np.array([3, 4], np.int64))), g.const(np.array(2, np.int64)))
    g.set_outputs([g.resize_bilinear(x, scaled, align_corners=True)])
    compiled = compile_in_flow(g, write_config(tmp_path, SEED_CONFIG), stop_after="plan")
    assert dims(graph_op(compiled, "resize").output_op.outputs[0]) == ["1", "3", "1:2592", "2:3456"]
    assert "plan-output-size: @resize[0] 107495424 B proved (ge.outputMaxSize 107495424 B)" in str(compiled.report)
