"""Sliding-window ops over NCHW images: convolution and pooling."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import onnx

from dfir.frontend.ge.onnx.attributes import attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter, require_image, unary

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Value
    from dfir.frontend.ge.onnx.importer import Importer

def _window_pads(imp: Importer, node: onnx.NodeProto, x: Value, kernel: Sequence[int],
                 attrs: dict) -> list[int]:
    """ONNX `pads` ([h_begin, w_begin, h_end, w_end]) or `auto_pad` as ge pads [top, bottom, left, right]."""
    auto = attrs.get("auto_pad", "NOTSET")
    if auto == "NOTSET":
        pads = list(attrs.get("pads", [0, 0, 0, 0]))
        if len(pads) != 4:
            raise imp.node_error(node, f"pads must have 4 entries for a 2-D window, got {pads}")
        return [pads[0], pads[2], pads[1], pads[3]]
    if auto == "VALID":
        return [0, 0, 0, 0]
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise imp.node_error(node, f"auto_pad '{auto}' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER")
    sizes = x.shape[2:]
    if -1 in sizes:
        raise imp.node_error(node, f"auto_pad {auto} needs fixed spatial dimensions, got shape {x.shape}")
    pads = []
    strides, dilations = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    for size, k, stride, dilation in zip(sizes, kernel, strides, dilations):
        total = max(0, (-(-size // stride) - 1) * stride + dilation * (k - 1) + 1 - size)
        small, large = total // 2, total - total // 2
        pads += [small, large] if auto == "SAME_UPPER" else [large, small]
    return pads


def _conv(imp, node):
    return [conv_of(imp, node, imp.tensor(node, 0), imp.tensor(node, 1), imp.tensor(node, 2))]


def conv_of(imp: Importer, node: onnx.NodeProto, x: Value, w: Value, bias: Value | None, suffix: str = "") -> Value:
    """The 2-D convolution the node's window attributes describe (Conv's, ConvInteger's, QLinearConv's)."""
    require_image(imp, node, x)
    attrs = attributes_of(node)
    kernel = attrs.get("kernel_shape", w.shape[2:])
    return imp.g.conv2d(x, w, bias, strides=list(attrs.get("strides", [1, 1])),
                        pads=_window_pads(imp, node, x, kernel, attrs),
                        dilations=list(attrs.get("dilations", [1, 1])), groups=attrs.get("group", 1),
                        name=imp.name(node, suffix))


def _pool(method: str) -> Converter:
    def convert(imp, node):
        x = imp.tensor(node, 0)
        require_image(imp, node, x)
        if len(node.output) > 1 and node.output[1]:
            raise imp.node_error(node, "the Indices output is not supported")
        attrs = attributes_of(node)
        kernel = list(attrs["kernel_shape"])
        flags = {"ceil_mode": bool(attrs.get("ceil_mode", 0))}
        if method == "avg_pool":
            flags["count_include_pad"] = bool(attrs.get("count_include_pad", 0))
        return [getattr(imp.g, method)(x, kernel, strides=list(attrs.get("strides", [1, 1])),
                                       pads=_window_pads(imp, node, x, kernel, attrs),
                                       dilations=list(attrs.get("dilations", [1, 1])), **flags,
                                       name=imp.name(node))]
    return convert


def _conv_transpose(imp, node):
    """A 1-D one (rank 3) runs as 2-D over a height of 1."""
    x, w = imp.tensor(node, 0), imp.tensor(node, 1)
    attrs = attributes_of(node)
    if x.type.rank == 3 and w.type.rank == 3:
        flat = (imp.g.unsqueeze(x, [2], name=imp.name(node, "/as_2d")),
                imp.g.unsqueeze(w, [2], name=imp.name(node, "/filter_2d")))
        attrs = {k: ([1, *v] if k in ("strides", "dilations", "output_shape", "output_padding", "kernel_shape")
                     else [0, v[0], 0, v[1]] if k == "pads" else v) for k, v in attrs.items()}
        y = _transposed_2d(imp, node, *flat, attrs, name=imp.name(node, "/2d"))
        return [imp.g.squeeze(y, [2], name=imp.name(node))]
    return [_transposed_2d(imp, node, x, w, attrs, name=imp.name(node))]


def _transposed_2d(imp: Importer, node: onnx.NodeProto, x: Value, w: Value, attrs: dict, name: str) -> Value:
    require_image(imp, node, x)
    strides, dilations = list(attrs.get("strides", [1, 1])), list(attrs.get("dilations", [1, 1]))
    extra = list(attrs.get("output_padding", [0, 0]))
    return imp.g.conv_transpose(x, w, imp.tensor(node, 2), strides=strides,
                                pads=_transposed_pads(imp, node, x, w, attrs, strides, dilations, extra),
                                dilations=dilations, output_padding=extra, groups=attrs.get("group", 1), name=name)


def _transposed_pads(imp: Importer, node: onnx.NodeProto, x: Value, w: Value, attrs: dict,
                     strides: Sequence[int], dilations: Sequence[int], extra: Sequence[int]) -> list[int]:
    """ge pads [top, bottom, left, right] from ONNX `pads`, or from `output_shape` / `auto_pad`
    SAME_* (the output `size * stride`): the full output minus the requested size, split as ONNX
    says (the extra element at the end for SAME_UPPER, at the start otherwise)."""
    auto = attrs.get("auto_pad", "NOTSET")
    if "output_shape" not in attrs and auto not in ("SAME_UPPER", "SAME_LOWER"):
        return _window_pads(imp, node, x, w.shape[2:], {"pads": attrs.get("pads", [0, 0, 0, 0])})
    sizes = x.shape[2:]
    if -1 in sizes:
        raise imp.node_error(node, f"output_shape or auto_pad {auto} needs fixed spatial dimensions, "
                                   f"got shape {x.shape}")
    wanted = list(attrs["output_shape"])[-2:] if "output_shape" in attrs else [s * t for s, t in zip(sizes, strides)]
    pads = []
    for size, k, stride, dilation, e, out in zip(sizes, w.shape[2:], strides, dilations, extra, wanted):
        total = stride * (size - 1) + e + dilation * (k - 1) + 1 - out
        pads += [total // 2, total - total // 2] if auto == "SAME_UPPER" else [total - total // 2, total // 2]
    return pads


CONVERTERS: dict[str, Converter] = {
    "Conv": _conv, "MaxPool": _pool("max_pool"), "AveragePool": _pool("avg_pool"),
    "GlobalAveragePool": unary("global_avg_pool"), "ConvTranspose": _conv_transpose,
}
