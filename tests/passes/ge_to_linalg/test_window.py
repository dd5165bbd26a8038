"""Convolution and pooling lowerings against the reference kernels, through IREE on the host CPU."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dfir.core import data_type as dt
from dfir.frontend.ge.graph import Graph
from ge_lowering import assert_lowering_matches, codegen_text, converted, lowered_outputs

_windows = st.fixed_dictionaries({
    "kernel": st.lists(st.integers(1, 3), min_size=2, max_size=2),
    "strides": st.lists(st.integers(1, 3), min_size=2, max_size=2),
    "dilations": st.lists(st.integers(1, 2), min_size=2, max_size=2),
    "pads": st.lists(st.integers(0, 2), min_size=4, max_size=4)})


def _image(shape, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-300, 300, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("channels,groups,bias,dtype", [(4, 1, True, np.float32), (4, 1, False, np.float64),
                                                        (8, 1, True, np.float32), (4, 2, True, np.float32),
                                                        (4, 4, False, np.float32), (4, 1, True, np.int32),
                                                        (4, 2, False, np.int32)])
def test_conv2d_matches_with_groups_strides_dilations_and_pads(channels, groups, bias, dtype):
    g = Graph("conv")
    element = dt.from_numpy(np.dtype(dtype))
    x = g.data(0, [-1, channels, 9, 8], element, name="x")
    w = g.data(1, [8, channels // groups, 3, 2], element, name="w")
    b = g.data(2, [8], element, name="b") if bias else None
    g.set_outputs([g.conv2d(x, w, b, strides=(2, 1), pads=(1, 2, 0, 1), dilations=(1, 2), groups=groups)])
    inputs = [_image((2, channels, 9, 8), 0, dtype), _image((8, channels // groups, 3, 2), 1, dtype)]
    inputs += [_image((8,), 2, dtype)] if bias else []
    assert_lowering_matches(g, inputs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("channels,layout", [(3, "conv_2d_nchw_fchw"), (8, "conv_2d_nchw_fchw"),
                                             (-1, "conv_2d_nchw_fchw")])
def test_conv2d_runs_in_nchw_whatever_the_channels(channels, layout):
    g = Graph("conv")
    x = g.data(0, [-1, channels, 6, 6], dt.DT_FLOAT, name="x")
    g.set_outputs([g.conv2d(x, g.data(1, [4, 3 if channels == -1 else channels, 3, 3], dt.DT_FLOAT, name="w"))])
    assert f'"linalg.{layout}"' in codegen_text(converted(g))


@given(strides=st.lists(st.integers(1, 3), min_size=2, max_size=2).filter(lambda s: s != [1, 1]),
       pads=st.lists(st.integers(0, 2), min_size=4, max_size=4), dilations=st.lists(st.integers(1, 2), min_size=2,
                                                                                      max_size=2),
       height=st.integers(1, 9), bias=st.booleans())
@settings(max_examples=6, deadline=None)
def test_a_static_strided_1x1_conv2d_reads_a_strided_slice_and_matches(strides, pads, dilations, height, bias):
    g = Graph("conv")
    x = g.data(0, [2, 4, height, 7], dt.DT_FLOAT, name="x")
    b = g.const(_image((6,), 5)) if bias else None
    g.set_outputs([g.conv2d(x, g.const(_image((6, 4, 1, 1), 4)), b, strides=strides, pads=pads, dilations=dilations)])
    text = codegen_text(converted(g))
    assert '"tensor.extract_slice"' in text
    assert '"util.optimization_barrier"' in text
    assert "strides = dense<1> : vector<2xi64>" in text
    assert_lowering_matches(g, [_image((2, 4, height, 7))], rtol=1e-5, atol=1e-5)


@given(window=_windows, depthwise=st.booleans())
@settings(max_examples=4, deadline=None)
def test_conv2d_with_constant_filters(window, depthwise):
    g = Graph("conv")
    x = g.data(0, [-1, 3, 7, 6], dt.DT_FLOAT, name="x")
    w = g.const(_image((3 if depthwise else 5, 1 if depthwise else 3, *window["kernel"]), 3))
    g.set_outputs([g.conv2d(x, w, strides=window["strides"], pads=window["pads"], dilations=window["dilations"],
                            groups=3 if depthwise else 1)])
    assert_lowering_matches(g, [_image((2, 3, 7, 6))], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool_pads_with_the_lowest_finite_value(dtype, ceil_mode):
    g = Graph("max_pool")
    x = g.data(0, [-1, 2, 7, 6], dt.from_numpy(np.dtype(dtype)), name="x")
    g.set_outputs([g.max_pool(x, [3, 2], strides=[2, 3], pads=[1, 2, 0, 1], dilations=[1, 2], ceil_mode=ceil_mode)])
    values = _image((2, 2, 7, 6), dtype=dtype)
    values[0, 0] = -np.inf
    values[1, 1, 3, 3] = np.nan
    assert_lowering_matches(g, [values])


@given(window=_windows, ceil_mode=st.booleans(), count_include_pad=st.booleans())
@settings(max_examples=8, deadline=None)
def test_avg_pool_divides_by_the_counted_part_of_each_window(window, ceil_mode, count_include_pad):
    extents = [d * (k - 1) + 1 for d, k in zip(window["dilations"], window["kernel"])]
    pads = [min(p, extents[i // 2] - 1) for i, p in enumerate(window["pads"])]
    g = Graph("avg_pool")
    x = g.data(0, [-1, 2, 7, 6], dt.DT_FLOAT, name="x")
    g.set_outputs([g.avg_pool(x, window["kernel"], strides=window["strides"], pads=pads,
                              dilations=window["dilations"], ceil_mode=ceil_mode,
                              count_include_pad=count_include_pad)])
    assert_lowering_matches(g, [_image((3, 2, 7, 6))])


def test_dilated_avg_pool_window_in_uncounted_padding_is_nan():
    g = Graph("avg_pool")
    x = g.data(0, [1, 1, 1, 1], dt.DT_FLOAT, name="x")
    g.set_outputs([g.avg_pool(x, [2, 1], dilations=[3, 1], pads=[3, 3, 0, 0])])
    (y,) = lowered_outputs(g, [np.full((1, 1, 1, 1), 5, np.float32)])
    np.testing.assert_array_equal(y.ravel(), [5, np.nan, np.nan, 5])


def test_dynamic_spatial_dims_compute_window_counts():
    g = Graph("dynamic")
    x = g.data(0, [-1, 2, -1, -1], dt.DT_FLOAT, name="x")
    g.set_outputs([g.conv2d(x, g.const(_image((3, 2, 3, 3), 4)), pads=(1, 0, 0, 1), strides=(2, 3)),
                   g.max_pool(x, [3, 2], strides=[2, 3], pads=[1, 1, 0, 1], ceil_mode=True),
                   g.avg_pool(x, [3, 3], strides=[3, 2], pads=[1, 0, 2, 1], dilations=[1, 2], ceil_mode=True),
                   g.avg_pool(x, [2, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=True, count_include_pad=True)])
    for shape in [(2, 2, 7, 9), (1, 2, 10, 6)]:
        assert_lowering_matches(g, [_image(shape)], rtol=1e-5, atol=1e-5)


def test_dynamic_input_smaller_than_the_window_gives_an_empty_result():
    """The reference raises a GeError; the lowering computes a window count of 0."""
    g = Graph("small")
    x = g.data(0, [1, 2, -1, -1], dt.DT_FLOAT, name="x")
    g.set_outputs([g.conv2d(x, g.const(_image((3, 2, 3, 3))))])
    (y,) = lowered_outputs(g, [_image((1, 2, 2, 2))])
    assert y.shape == (1, 3, 0, 0)


def test_grouped_conv2d_with_dynamic_channels_has_no_lowering():
    g = Graph("grouped")
    x = g.data(0, [1, -1, 5, 5], dt.DT_FLOAT, name="x")
    g.set_outputs([g.conv2d(x, g.const(_image((4, 2, 3, 3))), groups=2)])
    (graph,) = converted(g, backend="auto").ops
    assert graph.backend.data == "reference"
    assert graph.attributes["backend_fallback"].data == \
        "ge.conv2d 'conv2d_0': a grouped convolution needs static channel counts"


def test_conv_transpose_with_strides_dilations_groups_pads_and_output_padding():
    g = Graph("deconv")
    x = g.data(0, [-1, 4, 3, 4], dt.DT_FLOAT, name="x")
    rng = np.random.default_rng(11)
    w = g.const(rng.standard_normal((4, 3, 3, 2)).astype(np.float32))
    b = g.const(rng.standard_normal(6).astype(np.float32))
    g.set_outputs([g.conv_transpose(x, w, b, strides=[2, 3], pads=[1, 0, 2, 1], dilations=[1, 2],
                                    output_padding=[1, 2], groups=2),
                   g.conv_transpose(x, g.const(rng.standard_normal((4, 2, 2, 2)).astype(np.float32)),
                                    pads=[0, -1, -2, 0])])
    assert_lowering_matches(g, [_image((2, 4, 3, 4))], rtol=1e-5, atol=1e-5)


# --- one and three spatial dimensions -------------------------------------------------------------

@pytest.mark.parametrize("sizes,kernel,window,groups", [
    ([-1], [3], dict(strides=[2], pads=[1, 2], dilations=[2]), 1),
    ([9], [2], dict(strides=[1], pads=[0, 1], dilations=[1]), 2),
    ([5, 4, -1], [2, 3, 2], dict(strides=[1, 2, 2], pads=[1, 0, 0, 2, 1, 1], dilations=[2, 1, 1]), 1),
    ([4, 5, 4], [3, 1, 2], dict(strides=[2, 1, 1], pads=[0, 1, 1, 1, 0, 0], dilations=[1, 1, 2]), 2)])
def test_conv_in_one_and_three_dimensions_matches_the_reference(sizes, kernel, window, groups):
    g = Graph("conv_nd")
    x = g.data(0, [-1, 4, *sizes], dt.DT_FLOAT, name="x")
    w = g.const(_image((6, 4 // groups, *kernel), 1))
    g.set_outputs([g.conv2d(x, w, g.const(_image((6,), 2)), groups=groups, **window)])
    run_sizes = [7 if s == -1 else s for s in sizes]
    assert_lowering_matches(g, [_image((2, 4, *run_sizes))], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("count_include_pad", [False, True])
def test_pools_in_one_and_three_dimensions(ceil_mode, count_include_pad):
    g = Graph("pool_nd")
    line = g.data(0, [-1, 2, 9], dt.DT_FLOAT, name="line")
    volume = g.data(1, [-1, 2, 5, -1, 6], dt.DT_FLOAT, name="volume")
    g.set_outputs([g.max_pool(line, [3], strides=[2], pads=[1, 2], dilations=[2], ceil_mode=ceil_mode),
                   g.avg_pool(line, [2], strides=[3], pads=[1, 1], ceil_mode=ceil_mode,
                              count_include_pad=count_include_pad),
                   g.max_pool(volume, [2, 3, 2], strides=[2, 1, 3], pads=[1, 0, 1, 1, 1, 0], ceil_mode=ceil_mode),
                   g.avg_pool(volume, [3, 2, 2], strides=[2, 2, 1], pads=[1, 1, 0, 1, 1, 0], dilations=[1, 2, 1],
                              ceil_mode=ceil_mode, count_include_pad=count_include_pad)])
    assert_lowering_matches(g, [_image((2, 2, 9)), _image((1, 2, 5, 7, 6), 1)], rtol=1e-5, atol=1e-5)


def test_conv_transpose_in_one_and_three_dimensions():
    g = Graph("deconv_nd")
    line = g.data(0, [-1, 4, 5], dt.DT_FLOAT, name="line")
    volume = g.data(1, [-1, 2, 3, 2, 4], dt.DT_FLOAT, name="volume")
    g.set_outputs([g.conv_transpose(line, g.const(_image((4, 3, 3), 2)), g.const(_image((6,), 3)), strides=[2],
                                    pads=[1, -1], dilations=[2], output_padding=[1], groups=2),
                   g.conv_transpose(volume, g.const(_image((2, 3, 2, 3, 2), 4)), strides=[1, 2, 2],
                                    pads=[0, 1, 1, 0, 0, 1])])
    assert_lowering_matches(g, [_image((2, 4, 5)), _image((1, 2, 3, 2, 4), 1)], rtol=1e-5, atol=1e-5)


def test_conv_in_three_dimensions_with_dynamic_channels_has_no_lowering():
    g = Graph("conv_3d")
    x = g.data(0, [1, -1, 4, 4, 4], dt.DT_FLOAT, name="x")
    g.set_outputs([g.conv2d(x, g.const(_image((2, 3, 2, 2, 2))))])
    (graph,) = converted(g, backend="auto").ops
    assert graph.attributes["backend_fallback"].data == \
        "ge.conv2d 'conv2d_0': a 3-D convolution needs static channel counts"


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int8])
def test_integer_max_pool_pads_with_the_lowest_integer(dtype):
    g = Graph("int_max_pool")
    x = g.data(0, [-1, 2, 5, 4], dt.from_numpy(np.dtype(dtype)), name="x")
    g.set_outputs([g.max_pool(x, [3, 2], strides=[2, 1], pads=[1, 2, 1, 1], ceil_mode=True)])
    info = np.iinfo(dtype)
    values = np.random.default_rng(3).integers(info.min, info.max, (2, 2, 5, 4), endpoint=True).astype(dtype)
    values[0, 0] = info.min
    assert_lowering_matches(g, [values])
