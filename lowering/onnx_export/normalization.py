"""Normalization and softmax exports, each one ONNX node whose attributes are the op's own
(runtime/ge/kernels/normalization.py)."""
from __future__ import annotations

from typing import Sequence

from dfir.lowering.onnx_export.builder import Builder, Export, Unsupported
from dfir.om.plan import GeOp


def _node(onnx_op: str, ints: Sequence[str] = (), floats: Sequence[str] = ()) -> Export:
    def export(b: Builder, op: GeOp, x: list[str]) -> list[str]:
        attrs = {name: int(op.attrs[name]) for name in ints} | {name: float(op.attrs[name]) for name in floats}
        return [b.node(onnx_op, x, **attrs)]
    return export


def _lrn(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    if op.attrs["size"] % 2 == 0:
        raise Unsupported(f"onnxruntime's LRN takes an odd size, not {op.attrs['size']}")
    return _node("LRN", ints=["size"], floats=["alpha", "beta", "bias"])(b, op, x)


EXPORTS: dict[str, Export] = {
    "batch_norm": _node("BatchNormalization", floats=["epsilon"]),
    "layer_norm": _node("LayerNormalization", ints=["axis"], floats=["epsilon"]),
    "instance_norm": _node("InstanceNormalization", floats=["epsilon"]),
    "lrn": _lrn,
    "softmax": _node("Softmax", ints=["axis"]),
    "log_softmax": _node("LogSoftmax", ints=["axis"]),
}
