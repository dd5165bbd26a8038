"""Convolution and pooling exports over any number of spatial axes (runtime/ge/kernels/window.py).

GE lists `pads` as a begin and an end per axis ([b0, e0, b1, e1]); ONNX as all begins, then all
ends ([b0, b1, e0, e1]).
"""
from __future__ import annotations

from typing import Sequence

from dfir.lowering.onnx_export.builder import Builder, Export
from dfir.om.plan import GeOp


def onnx_pads(pads: Sequence[int]) -> list[int]:
    return [*pads[0::2], *pads[1::2]]


def _window_attrs(op: GeOp) -> dict:
    return {"strides": list(op.attrs["strides"]), "pads": onnx_pads(op.attrs["pads"]),
            "dilations": list(op.attrs["dilations"])}


def _conv(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    return [b.node("Conv", x, group=op.attrs["groups"], **_window_attrs(op))]


def _conv_transpose(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    """ONNX ConvTranspose crops its output by `pads`; the kernel's negative pads extend it with
    zeros instead, before the bias: ConvTranspose without those, Pad, then the bias."""
    pads = op.attrs["pads"]
    attrs = _window_attrs(op) | {"group": op.attrs["groups"], "output_padding": list(op.attrs["output_padding"])}
    if min(pads, default=0) >= 0:
        return [b.node("ConvTranspose", x, **attrs)]
    y = b.node("ConvTranspose", x[:2], **(attrs | {"pads": onnx_pads([max(p, 0) for p in pads])}))
    extension = onnx_pads([max(-p, 0) for p in pads])
    spatial = len(pads) // 2
    y = b.node("Pad", [y, b.ints([0, 0, *extension[:spatial], 0, 0, *extension[spatial:]])])
    if len(x) == 3:
        y = b.node("Add", [y, b.node("Unsqueeze", [x[2], b.ints(list(range(1, spatial + 1)))])])
    return [y]


def _max_pool(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    return [b.node("MaxPool", x, kernel_shape=list(op.attrs["kernel"]), ceil_mode=int(bool(op.attrs.get("ceil_mode"))),
                   **_window_attrs(op))]


def _avg_pool(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    return [b.node("AveragePool", x, kernel_shape=list(op.attrs["kernel"]),
                   ceil_mode=int(bool(op.attrs.get("ceil_mode"))),
                   count_include_pad=int(bool(op.attrs.get("count_include_pad"))), **_window_attrs(op))]


EXPORTS: dict[str, Export] = {
    "conv2d": _conv,
    "conv_transpose": _conv_transpose,
    "max_pool": _max_pool,
    "avg_pool": _avg_pool,
    "global_avg_pool": lambda b, op, x: [b.node("GlobalAveragePool", x)],
}
