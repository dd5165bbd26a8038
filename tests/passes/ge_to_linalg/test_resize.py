"""Bilinear resize lowering against the reference kernel, through IREE on the host CPU; `resize` and
`grid_sample` have no lowering."""
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


@pytest.mark.parametrize("op, build", [
    ("ge.resize", lambda g, x: g.resize(x, sizes=[3, 5], axes=[2, 3], mode="nearest", name="r")),
    ("ge.grid_sample", lambda g, x: g.grid_sample(x, g.const(np.zeros((1, 2, 2, 2), np.float32)), name="r")),
])
def test_resize_and_grid_sample_stay_on_the_reference_kernels(op, build):
    """They have no lowering: auto keeps the graph on the reference kernels, iree-cpu refuses it."""
    g = Graph("sample")
    g.set_outputs([build(g, g.data(0, [1, 1, 2, 2], dt.DT_FLOAT, name="x"))])
    (graph,) = converted(g, backend="auto").ops
    assert graph.backend.data == "reference"
    assert graph.attributes["backend_fallback"].data == f"{op} 'r': no lowering"
    with pytest.raises(DiagnosticException, match=f"backend iree-cpu cannot run {op} 'r': no lowering"):
        converted(g, backend="iree-cpu")
