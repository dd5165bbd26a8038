"""ONNX Resize (as `ge.resize`, where it is not a `ge.resize_bilinear`) and GridSample (as
`ge.grid_sample`) against onnxruntime, their result types, and their error messages. The
harness is test_ge's: a one-node ONNX model, imported, run on the reference kernels."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx.reference import ReferenceEvaluator

import dfir.data_type as dt
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.runtime.ge.kernels import KERNELS
from test_ge import EXAMPLES, check, floats, node, onnx_model, run_graph

F32 = dt.DT_FLOAT
TRANSFORMS = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
ONNXRUNTIME_TRANSFORMS = [t for t in TRANSFORMS if t != "half_pixel_symmetric"]
"""onnxruntime maps half_pixel_symmetric unlike onnx's reference (a 3 x 5 image resized to 1 x 1
reads row 0, not row 1); onnx's reference evaluator checks that transform."""


@st.composite
def resize_options(draw):
    """A mode with its options, as Resize attributes."""
    mode = draw(st.sampled_from(["nearest", "linear", "cubic"]))
    attrs = {"mode": mode, "coordinate_transformation_mode": draw(st.sampled_from(ONNXRUNTIME_TRANSFORMS))}
    if mode == "nearest":
        attrs["nearest_mode"] = draw(st.sampled_from(NEAREST_MODES))
    if mode == "cubic":  # onnxruntime takes exclude_outside with cubic (and antialiased linear) only
        attrs["cubic_coeff_a"] = draw(st.sampled_from([-0.75, -0.5]))
        attrs["exclude_outside"] = draw(st.sampled_from([0, 1]))
    return attrs


# --- Resize ---------------------------------------------------------------------------------------

@EXAMPLES
@given(options=resize_options(), scales=st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]), min_size=2, max_size=2))
def test_resize_by_scales_matches_onnxruntime(options, scales):
    inputs = {"x": floats((1, 2, 4, 6))}
    scales = np.array([1, 1, *scales], np.float32)
    check(onnx_model([node("Resize", ["x", "", "scales"], **options)], inputs, {"scales": scales}), inputs)


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_resize_by_scales_fed_at_run_time_matches_onnx(transform):
    """Scales fed at run time give a dynamic result type. 0.6 scales 4 and 6 to no whole size: onnx
    then maps align_corners and half_pixel_symmetric by the scaled length (2.4, 3.6), which
    onnxruntime does not, so onnx's reference evaluator is the expectation."""
    feeds = {"x": floats((1, 2, 4, 6)), "scales": np.array([1, 1, 0.6, 1.7], np.float32)}
    model = onnx_model([node("Resize", ["x", "", "scales"], mode="cubic", coordinate_transformation_mode=transform)],
                       feeds)
    (expected,) = ReferenceEvaluator(model).run(None, feeds)
    (got,), (t,) = run_graph(Graph.from_onnx(model), [feeds["x"], feeds["scales"]])
    assert got.shape == (1, 2, 2, 10) and str(t) == "!ge.tensor<[-1, -1, -1, -1], f32>"
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@EXAMPLES
@given(options=resize_options(), sizes=st.lists(st.integers(1, 9), min_size=2, max_size=2))
def test_resize_to_sizes_of_the_last_axes_matches_onnxruntime(options, sizes):
    inputs = {"x": floats((2, 1, 3, 5))}
    resize = node("Resize", ["x", "", "", "sizes"], axes=[2, 3], **options)
    check(onnx_model([resize], inputs, {"sizes": np.array(sizes, np.int64)}), inputs)


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@pytest.mark.parametrize("transform", TRANSFORMS)
def test_resize_keeping_the_aspect_ratio_matches_onnx(policy, transform):
    """One scale for both axes leaves a scaled length that is no whole size (see above)."""
    inputs = {"x": floats((1, 1, 3, 5))}
    resize = node("Resize", ["x", "", "", "sizes"], mode="linear", keep_aspect_ratio_policy=policy,
                  coordinate_transformation_mode=transform)
    model = onnx_model([resize], inputs, {"sizes": np.array([1, 1, 7, 4], np.int64)})
    (expected,) = ReferenceEvaluator(model).run(None, inputs)
    (got,), (t,) = run_graph(Graph.from_onnx(model), [inputs["x"]])
    assert got.shape == expected.shape == tuple(t.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("scale", [0.3, 0.6, 1.5])
def test_antialiased_resize_matches_onnxruntime(mode, scale):
    inputs = {"x": floats((1, 1, 8, 7))}
    resize = node("Resize", ["x", "", "scales"], mode=mode, antialias=1)
    check(onnx_model([resize], inputs, {"scales": np.array([1, 1, scale, scale], np.float32)}), inputs)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("roi", [[0.2, 0.1, 0.9, 0.8], [-0.5, 0.3, 1.2, 0.6]])
def test_tf_crop_and_resize_matches_onnxruntime(mode, roi):
    """Points of the crop outside the input (roi beyond [0, 1]) are the extrapolation value."""
    inputs = {"x": floats((1, 1, 4, 5)), "roi": np.array(roi, np.float32)}
    resize = node("Resize", ["x", "roi", "", "sizes"], mode=mode, axes=[2, 3], extrapolation_value=7.5,
                  coordinate_transformation_mode="tf_crop_and_resize")
    got = check(onnx_model([resize], inputs, {"sizes": np.array([3, 6], np.int64)}), inputs)
    assert (7.5 in got[0]) == (roi[0] < 0)


def test_resize_of_every_axis_of_a_3d_tensor_matches_onnxruntime():
    inputs = {"x": floats((3, 4, 2))}
    resize = node("Resize", ["x", "", "scales"], mode="linear")
    check(onnx_model([resize], inputs, {"scales": np.array([2, 0.5, 1.5], np.float32)}), inputs)


def test_resize_result_types():
    g = Graph("types")
    x = g.data(0, [1, 3, 4, 6], F32, name="x")
    by_scales = g.resize(x, scales=[0.6, 2.5], axes=[2, 3], mode="cubic")
    not_larger = g.resize(x, sizes=[8, 8], axes=[2, 3], keep_aspect_ratio_policy="not_larger")
    fed = g.resize(x, sizes=g.data(1, [2], dt.DT_INT64, name="hw"), axes=[-2, -1])
    assert [str(v.type) for v in (by_scales, not_larger, fed)] == [
        "!ge.tensor<[1, 3, 2, 15], f32>", "!ge.tensor<[1, 3, 5, 8], f32>", "!ge.tensor<[1, 3, -1, -1], f32>"]


RESIZE_ERRORS = [
    (dict(sizes=[2, 2], axes=[2, 3], mode="area"),
     "ge.resize: mode must be one of nearest, linear, cubic, got 'area'"),
    (dict(sizes=[2, 2], axes=[2, 3], nearest_mode="round"),
     "ge.resize: nearest_mode must be one of round_prefer_floor, round_prefer_ceil, floor, ceil, got 'round'"),
    (dict(sizes=[2, 2], axes=[2, 3], mode="linear", nearest_mode="floor"),
     "ge.resize: nearest_mode does not apply to mode 'linear' with coordinates 'half_pixel'"),
    (dict(sizes=[2, 2], axes=[2, 3], antialias=True),
     "ge.resize: antialias does not apply to mode 'nearest' with coordinates 'half_pixel'"),
    (dict(sizes=[2, 2], axes=[2, 3], extrapolation_value=1.0),
     "ge.resize: extrapolation_value does not apply to mode 'nearest' with coordinates 'half_pixel'"),
    (dict(sizes=[2, 2], axes=[2, 3], coordinate_transformation_mode="tf_crop_and_resize"),
     "ge.resize: a roi operand goes with coordinates 'tf_crop_and_resize' (and only with them)"),
    (dict(sizes=[2, 2, 2], axes=[2, 3]), "ge.resize: sizes must have shape [2] (axes [2, 3]), got [3]"),
    (dict(axes=[2, 3]), "ge.resize: needs a scales or a sizes operand"),
    (dict(scales=[2.0, 2.0], axes=[2, 3], keep_aspect_ratio_policy="not_larger"),
     "ge.resize: keep_aspect_ratio_policy needs sizes and no scales"),
    (dict(sizes=[2.5, 2.0], axes=[2, 3]), "ge.resize: sizes must have element type i32 or i64, got f32"),
    (dict(sizes=[2, 2], axes=[2, 2]), "ge.resize: axes [2, 2] name axis 2 more than once"),
]


@pytest.mark.parametrize("kwargs, message", RESIZE_ERRORS, ids=[m.split(": ")[1][:30] for _, m in RESIZE_ERRORS])
def test_resize_errors(kwargs, message):
    g = Graph("bad")
    x = g.data(0, [1, 1, 4, 4], F32, name="x")
    if "sizes" in kwargs and isinstance(kwargs["sizes"][0], float):
        kwargs["sizes"] = g.const(np.array(kwargs["sizes"], np.float32))
    with pytest.raises(GeError) as caught:
        g.resize(x, name="r", **kwargs)
    assert str(caught.value).endswith(f"; {message}")


@pytest.mark.parametrize("operands, message", [
    ([np.zeros((1, 0, 3), np.float32), None, None, np.array([2, 2])],
     "resize: the resized dimensions [1, 2] of input [1, 0, 3] must not be empty"),
    ([np.zeros((1, 2, 3), np.float32), None, np.array([1.0, 0.0], np.float32), None],
     "resize: scales must be > 0, got [1.0, 0.0]"),
    ([np.zeros((1, 2, 3), np.float32), None, None, np.array([2, -1])], "resize: sizes must be >= 0, got [2, -1]"),
])
def test_resize_run_time_errors(operands, message):
    attrs = {"operandSegmentSizes": [int(o is not None) for o in operands], "axes": [1, 2], "mode": "nearest",
             "coordinate_transformation_mode": "half_pixel"}
    with pytest.raises(GeError) as caught:
        KERNELS["resize"]([o for o in operands if o is not None], attrs)
    assert str(caught.value) == message


def test_resize_to_an_empty_axis_is_empty():
    attrs = {"operandSegmentSizes": [1, 0, 0, 1], "axes": [1], "mode": "linear",
             "coordinate_transformation_mode": "half_pixel"}
    (got,) = KERNELS["resize"]([np.ones((2, 3), np.float32), np.array([0])], attrs)
    assert got.shape == (2, 0) and got.dtype == np.float32


# --- GridSample -----------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [0, 1])
def test_grid_sample_matches_onnxruntime(mode, padding_mode, align_corners):
    """Grid points reach past [-1, 1], so each padding mode is exercised."""
    inputs = {"x": floats((2, 3, 4, 5)), "grid": floats((2, 6, 7, 2), seed=1, low=-1.6, high=1.6)}
    sample = node("GridSample", ["x", "grid"], mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    model = onnx_model([sample], inputs, opset=20)
    if mode != "cubic" or padding_mode == "zeros":
        check(model, inputs)
        return
    # Cubic taps read the border or the reflection of points pulled inside by that padding, as
    # onnx's reference does; onnxruntime (as PyTorch) pulls only the taps inside.
    (expected,) = ReferenceEvaluator(model).run(None, inputs)
    (got,), _ = run_graph(Graph.from_onnx(model), [inputs["x"], inputs["grid"]])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_volumetric_grid_sample_matches_onnxruntime(mode, padding_mode):
    inputs = {"x": floats((1, 2, 3, 4, 5)), "grid": floats((1, 2, 3, 4, 3), seed=2, low=-1.4, high=1.4)}
    sample = node("GridSample", ["x", "grid"], mode=mode, padding_mode=padding_mode)
    check(onnx_model([sample], inputs, opset=20), inputs)


def test_grid_sample_16_mode_names():
    inputs = {"x": floats((1, 1, 3, 3)), "grid": floats((1, 2, 2, 2), seed=3, low=-1, high=1)}
    check(onnx_model([node("GridSample", ["x", "grid"], mode="bicubic")], inputs, opset=16), inputs)


def test_grid_sample_result_type_and_errors():
    g = Graph("gs")
    x = g.data(0, [-1, 3, 8, 8], F32, name="x")
    grid = g.data(1, [2, 5, 6, 2], F32, name="grid")
    assert str(g.grid_sample(x, grid).type) == "!ge.tensor<[2, 3, 5, 6], f32>"
    for kwargs, message in [
        (dict(mode="bilinear"), "ge.grid_sample: mode must be one of linear, nearest, cubic, got 'bilinear'"),
        (dict(padding_mode="edge"),
         "ge.grid_sample: padding_mode must be one of zeros, border, reflection, got 'edge'"),
        (dict(grid=g.data(2, [2, 5, 6, 3], F32, name="g3")),
         "ge.grid_sample: grid [2, 5, 6, 3] must end in 2 coordinates: 3 vs 2"),
        (dict(grid=g.data(3, [2, 5, 2], F32, name="g1")),
         "ge.grid_sample: input [-1, 3, 8, 8] and grid [2, 5, 2] must have one rank, at least 3"),
        (dict(x=g.data(4, [3, 3, 8, 8], F32, name="x3")),
         "ge.grid_sample: grid [2, 5, 6, 2] must have the batch of input [3, 3, 8, 8]: 2 vs 3"),
    ]:
        kwargs = {"x": x, "grid": grid, **kwargs}
        with pytest.raises(GeError) as caught:
            g.grid_sample(kwargs.pop("x"), kwargs.pop("grid"), **kwargs)
        assert str(caught.value).endswith(f"; {message}")
