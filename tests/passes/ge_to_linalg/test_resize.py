"""The resize lowerings (`resize_bilinear`, `resize`) against the reference kernels, through IREE on
the host CPU, and `grid_sample`'s; the forms with no lowering (antialias, a dynamic aspect-kept result)."""
from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import DiagnosticException

from dfir.core import data_type as dt
from dfir.frontend.ge.graph import Graph
from ge_lowering import assert_lowering_matches, converted

_MODES = [{}, {"align_corners": True}, {"half_pixel_centers": True}]


def _image(shape, dtype=np.float32):
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("mode", _MODES)
@pytest.mark.parametrize("size", [(5, 7), (1, 2)])
def test_resize_with_size_attribute(mode, size):
    g = Graph("resize")
    x = g.data(0, [-1, 2, 3, 4], dt.DT_FLOAT, name="x")
    g.set_outputs([g.resize_bilinear(x, list(size), **mode)])
    assert_lowering_matches(g, [_image((2, 2, 3, 4))], rtol=0, atol=0)


@pytest.mark.parametrize("mode", _MODES)
def test_resize_of_dynamic_images_with_size_operand(mode):
    g = Graph("resize")
    x = g.data(0, [-1, 2, -1, -1], dt.DT_FLOAT, name="x")
    hw = g.data(1, [2], dt.DT_INT32, name="hw")
    g.set_outputs([g.resize_bilinear(x, hw, **mode)])
    assert_lowering_matches(g, [_image((1, 2, 4, 3)), np.array([7, 2], np.int32)])


def test_resize_of_float16_interpolates_in_float64():
    g = Graph("resize")
    x = g.data(0, [1, 1, 2, 2], dt.DT_FLOAT16, name="x")
    g.set_outputs([g.resize_bilinear(x, [3, 5], half_pixel_centers=True)])
    assert_lowering_matches(g, [_image((1, 1, 2, 2), np.float16)], rtol=0, atol=0)


@pytest.mark.parametrize("transform", ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                       "align_corners", "asymmetric"])
@pytest.mark.parametrize("mode", [{"mode": "linear"}, {"mode": "cubic", "cubic_coeff_a": -0.5},
                                  {"mode": "nearest", "nearest_mode": "round_prefer_ceil"}], ids=["linear", "cubic", "nearest"])
def test_resize_to_fixed_sizes(transform, mode):
    g = Graph("resize")
    x = g.data(0, [2, 3, 5], dt.DT_FLOAT, name="x")
    g.set_outputs([g.resize(x, sizes=[7, 2], axes=[1, 2], coordinate_transformation_mode=transform, **mode)])
    assert_lowering_matches(g, [_image((2, 3, 5))])


@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "floor", "ceil"])
def test_resize_by_scales_fed_at_run_time(nearest_mode):
    g = Graph("resize")
    x = g.data(0, [1, 2, -1, -1], dt.DT_FLOAT, name="x")
    scales = g.data(1, [4], dt.DT_FLOAT, name="scales")
    g.set_outputs([g.resize(x, scales=scales, nearest_mode=nearest_mode)])
    assert_lowering_matches(g, [_image((1, 2, 4, 5)), np.array([1, 1, 1.5, 0.6], np.float32)])


def test_cubic_resize_to_sizes_fed_at_run_time():
    g = Graph("resize")
    x = g.data(0, [-1, 2, 3, 4], dt.DT_FLOAT, name="x")
    sizes = g.data(1, [2], dt.DT_INT64, name="sizes")
    g.set_outputs([g.resize(x, sizes=sizes, axes=[2, 3], mode="cubic")])
    assert_lowering_matches(g, [_image((2, 2, 3, 4)), np.array([5, 3], np.int64)])


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
def test_cubic_resize_excluding_outside_taps_keeping_the_aspect_ratio(policy):
    g = Graph("resize")
    x = g.data(0, [1, 1, 4, 5], dt.DT_FLOAT, name="x")
    g.set_outputs([g.resize(x, sizes=[7, 3], axes=[2, 3], mode="cubic", cubic_coeff_a=-0.5, exclude_outside=True,
                            keep_aspect_ratio_policy=policy)])
    assert_lowering_matches(g, [_image((1, 1, 4, 5))])


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_tf_crop_and_resize_with_a_roi_fed_at_run_time(mode):
    """Points of a crop reaching outside the input are the extrapolation value."""
    g = Graph("crop")
    x = g.data(0, [1, 2, 4, 5], dt.DT_FLOAT, name="x")
    roi = g.data(1, [4], dt.DT_FLOAT, name="roi")
    g.set_outputs([g.resize(x, sizes=[3, 6], roi=roi, axes=[2, 3], mode=mode, extrapolation_value=7.5,
                            coordinate_transformation_mode="tf_crop_and_resize")])
    assert_lowering_matches(g, [_image((1, 2, 4, 5)), np.array([-0.4, 0.1, 0.9, 1.3], np.float32)])


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
@pytest.mark.parametrize("padding_mode, align_corners", [("zeros", False), ("border", True), ("reflection", False),
                                                         ("reflection", True)])
def test_grid_sample(mode, padding_mode, align_corners):
    """Grid points reach past [-1, 1], so each padding mode is exercised."""
    g = Graph("sample")
    x = g.data(0, [-1, 2, 3, 4], dt.DT_FLOAT, name="x")
    grid = g.data(1, [-1, 5, 6, 2], dt.DT_FLOAT, name="grid")
    g.set_outputs([g.grid_sample(x, grid, mode, padding_mode, align_corners)])
    points = np.random.default_rng(1).uniform(-1.7, 1.7, (2, 5, 6, 2)).astype(np.float32)
    assert_lowering_matches(g, [_image((2, 2, 3, 4)), points])


def test_volumetric_grid_sample():
    g = Graph("sample")
    x = g.data(0, [1, 2, 3, 4, 5], dt.DT_FLOAT, name="x")
    grid = g.data(1, [1, 2, 3, 4, 3], dt.DT_FLOAT, name="grid")
    g.set_outputs([g.grid_sample(x, grid, "linear", "border")])
    points = np.random.default_rng(2).uniform(-1.3, 1.3, (1, 2, 3, 4, 3)).astype(np.float32)
    assert_lowering_matches(g, [_image((1, 2, 3, 4, 5)), points])


@pytest.mark.parametrize("op, reason, build", [
    ("ge.resize", "antialias has no lowering",
     lambda g, x: g.resize(x, sizes=[1, 1], axes=[2, 3], mode="linear", antialias=True, name="r")),
    ("ge.resize", "keep_aspect_ratio_policy with a dynamic result has no lowering",
     lambda g, x: g.resize(x, sizes=g.data(1, [2], dt.DT_INT64, name="s"), axes=[2, 3], name="r",
                           keep_aspect_ratio_policy="not_larger")),
])
def test_resize_forms_without_a_lowering_stay_on_the_reference_kernels(op, reason, build):
    """auto keeps the graph on the reference kernels and says why; iree-cpu refuses it."""
    g = Graph("sample")
    g.set_outputs([build(g, g.data(0, [1, 1, 2, 2], dt.DT_FLOAT, name="x"))])
    (graph,) = converted(g, backend="auto").ops
    assert graph.backend.data == "reference"
    assert graph.attributes["backend_fallback"].data == f"{op} 'r': {reason}"
    with pytest.raises(DiagnosticException, match=f"backend iree-cpu cannot run {op} 'r': {reason}"):
        converted(g, backend="iree-cpu")
