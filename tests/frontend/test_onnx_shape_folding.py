"""Shape computations over values whose shapes only dfir knows fold at import: a Pad whose pads
are computed from shapes (Shape -> Gather -> Mod/Sub -> Concat -> Pad) has a static result in
dfir's types though onnx's shape inference leaves it open, so the Shape of it, and the masks a
windowed attention (Swin) builds from it with ConstantOfShape, Range, Equal and Where, fold into
weights; a shape computation that stays dynamic is refused at the node that needs its value."""
from __future__ import annotations

import collections
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dfir
from dfir.ge.error import GeError
from dfir.ge.graph import Graph

from onnx_models import RNG, ints, model, reference, run_reference, tensor_info

WINDOW = 4
SHAPE_OPS = {"ge.shape", "ge.expand", "ge.select", "ge.equal", "ge.mod", "ge.cast", "ge.tile", "ge.scatter_elements"}


def ge_op_counts(graph: Graph) -> collections.Counter:
    return collections.Counter(re.findall(r" = (ge\.\w+)", str(graph.to_ir())))


def scalar(name: str, value, dtype=np.int64) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(value, dtype), name)


def windowed_attention(height: int, width: int, channels: int = 4) -> onnx.ModelProto:
    """x [1, H, W, C] padded at the bottom and right to multiples of WINDOW (pads computed from
    Shape(x)), a region mask over the padded image (ConstantOfShape of its Shape, plus Range
    comparisons marking the last two rows and columns), then attention within each window with
    -100 between positions of different regions, as Swin's shifted windows do."""
    n = helper.make_node
    nodes = [
        n("Shape", ["x"], ["shape"], name="shape"),
        n("Gather", ["shape", "one"], ["h"], name="h", axis=0),
        n("Gather", ["shape", "two"], ["w"], name="w", axis=0),
        n("Mod", ["h", "window"], ["h_rest"], name="h_rest"),
        n("Sub", ["window", "h_rest"], ["h_gap"], name="h_gap"),
        n("Mod", ["h_gap", "window"], ["pad_h"], name="pad_h"),
        n("Mod", ["w", "window"], ["w_rest"], name="w_rest"),
        n("Sub", ["window", "w_rest"], ["w_gap"], name="w_gap"),
        n("Mod", ["w_gap", "window"], ["pad_w"], name="pad_w"),
        n("Unsqueeze", ["pad_h", "axis0"], ["pad_h1"], name="pad_h1"),
        n("Unsqueeze", ["pad_w", "axis0"], ["pad_w1"], name="pad_w1"),
        n("Concat", ["zeros5", "pad_h1", "pad_w1", "zero1"], ["pads"], name="pads", axis=0),
        n("Pad", ["x", "pads"], ["xp"], name="pad", mode="constant"),
        n("Shape", ["xp"], ["padded"], name="padded"),
        n("Slice", ["padded", "one1", "three1"], ["hw"], name="hw"),
        n("ConstantOfShape", ["hw"], ["base"], name="base",
          value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.0])),
        n("Gather", ["padded", "one"], ["hp"], name="hp", axis=0),
        n("Gather", ["padded", "two"], ["wp"], name="wp", axis=0),
        n("Range", ["zero", "hp", "one"], ["rows"], name="rows"),
        n("Range", ["zero", "wp", "one"], ["columns"], name="columns"),
        n("Sub", ["hp", "two"], ["row_edge"], name="row_edge"),
        n("Sub", ["wp", "two"], ["column_edge"], name="column_edge"),
        n("GreaterOrEqual", ["rows", "row_edge"], ["low"], name="low"),
        n("GreaterOrEqual", ["columns", "column_edge"], ["right"], name="right"),
        n("Cast", ["low"], ["low_f"], name="low_f", to=TensorProto.FLOAT),
        n("Cast", ["right"], ["right_f"], name="right_f", to=TensorProto.FLOAT),
        n("Unsqueeze", ["low_f", "axis1"], ["low_col"], name="low_col"),
        n("Mul", ["low_col", "three_f"], ["low_ids"], name="low_ids"),
        n("Add", ["low_ids", "right_f"], ["region_part"], name="region_part"),
        n("Add", ["base", "region_part"], ["regions"], name="regions"),
        n("Reshape", ["regions", "region_windows_shape"], ["region_grid"], name="region_grid"),
        n("Transpose", ["region_grid"], ["region_windows"], name="region_windows", perm=[0, 2, 1, 3]),
        n("Reshape", ["region_windows", "flat_windows"], ["ids"], name="ids"),
        n("Unsqueeze", ["ids", "axis1"], ["ids_row"], name="ids_row"),
        n("Unsqueeze", ["ids", "axis2"], ["ids_col"], name="ids_col"),
        n("Equal", ["ids_row", "ids_col"], ["same"], name="same"),
        n("Where", ["same", "zero_f", "minus_100"], ["mask"], name="mask"),
        n("Reshape", ["xp", "window_grid_shape"], ["grid"], name="grid"),
        n("Transpose", ["grid"], ["grid_t"], name="grid_t", perm=[0, 1, 3, 2, 4, 5]),
        n("Reshape", ["grid_t", "tokens_shape"], ["tokens"], name="tokens"),
        n("Transpose", ["tokens"], ["keys"], name="keys", perm=[0, 2, 1]),
        n("MatMul", ["tokens", "keys"], ["scores"], name="scores"),
        n("Add", ["scores", "mask"], ["masked"], name="masked"),
        n("Softmax", ["masked"], ["weights"], name="weights", axis=-1),
        n("MatMul", ["weights", "tokens"], ["y"], name="attend"),
    ]
    hp, wp = -(-height // WINDOW) * WINDOW, -(-width // WINDOW) * WINDOW
    windows = (hp // WINDOW) * (wp // WINDOW)
    weights = [scalar("zero", 0), scalar("one", 1), scalar("two", 2), scalar("window", WINDOW),
               ints("axis0", [0]), ints("axis1", [1]), ints("axis2", [2]), ints("zeros5", [0] * 5), ints("zero1", [0]),
               ints("one1", [1]), ints("three1", [3]), scalar("three_f", 3.0, np.float32),
               scalar("zero_f", 0.0, np.float32), scalar("minus_100", -100.0, np.float32),
               ints("region_windows_shape", [hp // WINDOW, WINDOW, wp // WINDOW, WINDOW]),
               ints("flat_windows", [windows, WINDOW * WINDOW]),
               ints("window_grid_shape", [1, hp // WINDOW, WINDOW, wp // WINDOW, WINDOW, channels]),
               ints("tokens_shape", [windows, WINDOW * WINDOW, channels])]
    return model(nodes, [tensor_info("x", [1, height, width, channels])],
                 [tensor_info("y", [windows, WINDOW * WINDOW, channels])], weights, name="windows")


@pytest.mark.parametrize("height, width", [(5, 6), (8, 7), (4, 4)])
def test_masks_over_a_pad_with_computed_pads_fold_and_match_onnxruntime(height, width):
    proto = windowed_attention(height, width)
    inferred = onnx.shape_inference.infer_shapes(proto, data_prop=True)
    (padded,) = [vi for vi in inferred.graph.value_info if vi.name == "xp"]
    assert not all(d.HasField("dim_value") for d in padded.type.tensor_type.shape.dim)  # open to onnx
    graph = Graph.from_onnx(proto)
    counts = ge_op_counts(graph)
    assert not SHAPE_OPS & set(counts), counts
    assert counts["ge.pad"] == 1 and counts["ge.softmax"] == 1
    x = RNG.standard_normal((1, height, width, 4)).astype(np.float32)
    np.testing.assert_allclose(run_reference(graph, x)[0], reference(proto, {"x": x})[0], rtol=1e-5, atol=1e-6)


def test_the_padded_shape_folds_to_numbers_onnx_inference_leaves_open():
    """Shape(Pad(x, computed pads)) becomes one weight holding the padded shape."""
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Gather", ["shape", "axes"], ["dims"], name="dims", axis=0),
             helper.make_node("Mod", ["dims", "two"], ["odd"], name="odd"),
             helper.make_node("Concat", ["zeros2", "odd"], ["pads"], name="pads", axis=0),
             helper.make_node("Pad", ["x", "pads"], ["xp"], name="pad"),
             helper.make_node("Shape", ["xp"], ["y"], name="padded")]
    proto = model(nodes, [tensor_info("x", [3, 5])], [tensor_info("y", [2], TensorProto.INT64)],
                  [ints("axes", [0, 1]), numpy_helper.from_array(np.array(2, np.int64), "two"), ints("zeros2", [0, 0])])
    graph = Graph.from_onnx(proto)
    assert '%y = ge.const dense<[4, 6]> : tensor<2xi64> {name = "y"}' in str(graph.to_ir())
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    assert run_reference(graph, x)[0].tolist() == reference(proto, {"x": x})[0].tolist() == [4, 6]


def test_a_shape_open_to_onnx_and_to_dfir_is_refused_at_the_node_that_needs_its_value():
    """x's first dimension is unnamed: neither onnx nor dfir fixes it, so Range over it (no
    converter, computed at import only) is refused when the walk reaches it."""
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Gather", ["shape", "zero"], ["n"], name="n", axis=0),
             helper.make_node("Range", ["zero", "n", "one"], ["y"], name="positions")]
    proto = model(nodes, [tensor_info("x", [None, 3])], [tensor_info("y", ["L"], TensorProto.INT64)],
                  [scalar("zero", 0), scalar("one", 1)])
    with pytest.raises(GeError) as info:
        Graph.from_onnx(proto)
    assert str(info.value) == ("onnx=net; node=positions; Range: dfir has no converter for this op and computes "
                               "it at import only from constant inputs; 'n' is known only at run time")


@pytest.fixture(scope="module")
def swin_t(tmp_path_factory) -> str:
    """torchvision's Swin-T (random weights) exported as users export it: torch.onnx, opset 18."""
    torch = pytest.importorskip("torch", reason="exporting Swin-T needs torch and torchvision (the bench extra)")
    torchvision = pytest.importorskip("torchvision", reason="exporting Swin-T needs torchvision (the bench extra)")
    path = str(tmp_path_factory.mktemp("swin") / "swin_t.onnx")
    torch.manual_seed(0)
    torch.onnx.export(torchvision.models.swin_t(weights=None).eval(), torch.randn(1, 3, 224, 224), path,
                      input_names=["x"], opset_version=18, dynamo=False)
    return path


def test_swin_t_exported_by_torch_folds_its_masks_and_matches_onnxruntime(swin_t):
    import onnxruntime as ort
    SWIN = swin_t
    graph = Graph.from_onnx(SWIN)
    counts = ge_op_counts(graph)
    assert not SHAPE_OPS & set(counts), counts
    x = RNG.standard_normal((1, 3, 224, 224)).astype(np.float32)
    with dfir.load(dfir.compile(graph, {"dfir.ge.backend": "reference"}).om) as runtime:
        runtime.feed_data([x])
        outputs, _, ret = runtime.fetch_data(timeout=300000)
    assert ret == 0
    session = ort.InferenceSession(SWIN, providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(outputs[0].numpy(), session.run(None, {"x": x})[0], rtol=1e-3, atol=1e-4)
