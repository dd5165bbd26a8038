"""Sliding-window ops over N, C and one or more spatial dimensions: convolution and pooling."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np
import onnx

from dfir.core import data_type as dt
from dfir.frontend.ge.onnx.attributes import attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter, unary

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Value
    from dfir.frontend.ge.onnx.importer import Importer

def _spatial_rank(imp: Importer, node: onnx.NodeProto, x: Value) -> int:
    """How many spatial dimensions the N, C, spatial... input `x` has."""
    if x.type.rank < 3:
        raise imp.node_error(node, f"the input must have rank >= 3 (N, C and spatial dimensions), got shape {x.shape}")
    return x.type.rank - 2


def _window_attrs(imp: Importer, node: onnx.NodeProto, x: Value) -> dict:
    """The node's attributes, `strides` and `dilations` defaulting to 1 per spatial axis."""
    ones = [1] * _spatial_rank(imp, node, x)
    return {"strides": ones, "dilations": ones} | attributes_of(node)


def _window_pads(imp: Importer, node: onnx.NodeProto, x: Value, kernel: Sequence[int],
                 attrs: dict) -> list[int]:
    """ONNX `pads` (all begins, then all ends) or `auto_pad` as ge pads (begin, end per axis)."""
    spatial = len(kernel)
    auto = attrs.get("auto_pad", "NOTSET")
    if auto == "NOTSET":
        pads = list(attrs.get("pads", [0] * 2 * spatial))
        if len(pads) != 2 * spatial:
            raise imp.node_error(node, f"pads must have {2 * spatial} entries for a {spatial}-D window, got {pads}")
        return [p for axis in range(spatial) for p in (pads[axis], pads[spatial + axis])]
    if auto == "VALID":
        return [0] * 2 * spatial
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise imp.node_error(node, f"auto_pad '{auto}' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER")
    sizes = x.shape[2:]
    if -1 in sizes:
        raise imp.node_error(node, f"auto_pad {auto} needs fixed spatial dimensions, got shape {x.shape}")
    pads = []
    for size, k, stride, dilation in zip(sizes, kernel, attrs["strides"], attrs["dilations"]):
        total = max(0, (-(-size // stride) - 1) * stride + dilation * (k - 1) + 1 - size)
        small, large = total // 2, total - total // 2
        pads += [small, large] if auto == "SAME_UPPER" else [large, small]
    return pads


def _conv(imp, node):
    return [conv_of(imp, node, imp.tensor(node, 0), imp.tensor(node, 1), imp.tensor(node, 2))]


def conv_of(imp: Importer, node: onnx.NodeProto, x: Value, w: Value, bias: Value | None, suffix: str = "") -> Value:
    """The convolution the node's window attributes describe (Conv's, ConvInteger's, QLinearConv's)."""
    attrs = _window_attrs(imp, node, x)
    kernel = attrs.get("kernel_shape", w.shape[2:])
    return imp.g.conv2d(x, w, bias, strides=list(attrs["strides"]), pads=_window_pads(imp, node, x, kernel, attrs),
                        dilations=list(attrs["dilations"]), groups=attrs.get("group", 1), name=imp.name(node, suffix))


def _pool_window(imp: Importer, node: onnx.NodeProto, x: Value, attrs: dict) -> dict:
    """The window arguments of a pool builder (kernel, strides, pads, dilations, ceil_mode)."""
    kernel = list(attrs["kernel_shape"])
    return {"kernel": kernel, "strides": list(attrs["strides"]), "pads": _window_pads(imp, node, x, kernel, attrs),
            "dilations": list(attrs["dilations"]), "ceil_mode": bool(attrs.get("ceil_mode", 0))}


def _pool(method: str) -> Converter:
    def convert(imp, node):
        x = imp.tensor(node, 0)
        if len(node.output) > 1 and node.output[1]:
            raise imp.node_error(node, "the Indices output is not supported")
        attrs = _window_attrs(imp, node, x)
        flags = {"count_include_pad": bool(attrs.get("count_include_pad", 0))} if method == "avg_pool" else {}
        return [getattr(imp.g, method)(x, **_pool_window(imp, node, x, attrs), **flags, name=imp.name(node))]
    return convert


def _lp_pool(imp, node):
    """`sum(|x| ^ p) ^ (1 / p)` over each window: the sum is an average pool that counts its
    padding (which adds |0| ^ p = 0), times the window size. With `ceil_mode` the windows that
    reach past the padding would count fewer positions, so it is refused."""
    x = imp.tensor(node, 0)
    attrs = _window_attrs(imp, node, x)
    if attrs.get("ceil_mode", 0):
        raise imp.node_error(node, "ceil_mode 1 is not supported")
    g, dtype, p = imp.g, dt.to_numpy(x.dtype), attrs.get("p", 2)
    window = _pool_window(imp, node, x, attrs)
    powered = g.pow(g.abs(x, name=imp.name(node, "/abs")), g.const(np.array(p, dtype), name=imp.name(node, "/p")),
                    name=imp.name(node, "/powered"))
    mean = g.avg_pool(powered, **window, count_include_pad=True, name=imp.name(node, "/mean"))
    size = g.const(np.array(math.prod(window["kernel"]), dtype), name=imp.name(node, "/window_size"))
    total = g.mul(mean, size, name=imp.name(node, "/sum"))
    return [g.pow(total, g.const(np.array(1 / p, dtype), name=imp.name(node, "/root")), name=imp.name(node))]


def _causal_conv_with_state(imp, node):
    """A depthwise 1-D convolution of `past_state` (zeros when absent) joined before the input,
    with SiLU after it for `activation` silu / swish; `present_state` is the joined sequence's
    last k - 1 positions."""
    x, w, bias, past = (imp.tensor(node, i) for i in range(4))
    activation = attributes_of(node).get("activation", "none")
    if activation not in ("none", "silu", "swish"):
        raise imp.node_error(node, f"activation '{activation}' is not one of none, silu, swish")
    if x.type.rank != 3 or w.type.rank != 3 or w.shape[2] < 1 or x.shape[1] < 1:
        raise imp.node_error(node, f"needs an input [batch, channels, length] with fixed channels and a "
                                   f"[channels, 1, k] weight, got {x.shape} and {w.shape}")
    g, history = imp.g, w.shape[2] - 1
    joined = g.pad(x, [0, 0, history, 0, 0, 0], name=imp.name(node, "/zero_state")) if past is None else \
        g.concat([past, x], 2, name=imp.name(node, "/joined"))
    y = g.conv2d(joined, w, bias, groups=x.shape[1], name=imp.name(node, "/conv"))
    if activation != "none":
        y = g.mul(y, g.sigmoid(y, name=imp.name(node, "/gate")), name=imp.name(node, "/silu"))
    present = g.slice(joined, [-history if history else 2**62], [2**62], [2], name=imp.name(node, "/present"))
    return [y, present]


def _global_max_pool(imp, node):
    x = imp.tensor(node, 0)
    axes = list(range(2, 2 + _spatial_rank(imp, node, x)))
    return [imp.g.reduce_max(x, axes, keep_dims=True, name=imp.name(node))]


def _conv_transpose(imp, node):
    x, w = imp.tensor(node, 0), imp.tensor(node, 1)
    attrs = {"output_padding": [0] * _spatial_rank(imp, node, x)} | _window_attrs(imp, node, x)
    strides, dilations, extra = list(attrs["strides"]), list(attrs["dilations"]), list(attrs["output_padding"])
    return [imp.g.conv_transpose(x, w, imp.tensor(node, 2), strides=strides,
                                 pads=_transposed_pads(imp, node, x, w, attrs), dilations=dilations,
                                 output_padding=extra, groups=attrs.get("group", 1), name=imp.name(node))]


def _transposed_pads(imp: Importer, node: onnx.NodeProto, x: Value, w: Value, attrs: dict) -> list[int]:
    """ge pads (begin, end per axis) from ONNX `pads`, or from `output_shape` / `auto_pad`
    SAME_* (the output `size * stride`): the full output minus the requested size, split as ONNX
    says (the extra element at the end for SAME_UPPER, at the start otherwise)."""
    auto = attrs.get("auto_pad", "NOTSET")
    if "output_shape" not in attrs and auto not in ("SAME_UPPER", "SAME_LOWER"):
        return _window_pads(imp, node, x, w.shape[2:], {"pads": attrs.get("pads", [0] * 2 * (x.type.rank - 2))})
    sizes, strides = x.shape[2:], attrs["strides"]
    if -1 in sizes:
        raise imp.node_error(node, f"output_shape or auto_pad {auto} needs fixed spatial dimensions, "
                                   f"got shape {x.shape}")
    wanted = list(attrs["output_shape"])[-len(sizes):] if "output_shape" in attrs else \
        [s * t for s, t in zip(sizes, strides)]
    pads = []
    for size, k, stride, dilation, e, out in zip(sizes, w.shape[2:], strides, attrs["dilations"],
                                                 attrs["output_padding"], wanted):
        total = stride * (size - 1) + e + dilation * (k - 1) + 1 - out
        pads += [total // 2, total - total // 2] if auto == "SAME_UPPER" else [total - total // 2, total // 2]
    return pads


CONVERTERS: dict[str, Converter] = {
    "Conv": _conv, "MaxPool": _pool("max_pool"), "AveragePool": _pool("avg_pool"),
    "GlobalAveragePool": unary("global_avg_pool"), "ConvTranspose": _conv_transpose, "LpPool": _lp_pool,
    "GlobalMaxPool": _global_max_pool, "CausalConvWithState": _causal_conv_with_state,
}
