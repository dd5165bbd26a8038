"""Activation exports: each is one ONNX node whose attributes are the op's own
(runtime/ge/kernels/activation.py)."""
from __future__ import annotations

from dfir.lowering.onnx_export.builder import Builder, Export
from dfir.om.plan import GeOp

_ACTIVATIONS = {
    "leaky_relu": ("LeakyRelu", ("alpha",)),
    "elu": ("Elu", ("alpha",)),
    "celu": ("Celu", ("alpha",)),
    "selu": ("Selu", ("alpha", "gamma")),
    "thresholded_relu": ("ThresholdedRelu", ("alpha",)),
    "hard_sigmoid": ("HardSigmoid", ("alpha", "beta")),
    "hard_swish": ("HardSwish", ()),
    "shrink": ("Shrink", ("bias", "lambd")),
    "softplus": ("Softplus", ()),
    "softsign": ("Softsign", ()),
    "mish": ("Mish", ()),
}
"""GE op -> (ONNX op, the float attributes both name alike)."""


def _activation(onnx_op: str, names: tuple[str, ...]) -> Export:
    def export(b: Builder, op: GeOp, x: list[str]) -> list[str]:
        return [b.node(onnx_op, x, **{name: float(op.attrs[name]) for name in names})]
    return export


def _prelu(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    if b.supports("PRelu", x[0]):
        return [b.node("PRelu", x)]
    # onnxruntime's PRelu takes floats only: integers select x * slope where x < 0
    negative = b.node("Less", [x[0], b.scalar(0, b.dtypes[x[0]])])
    return [b.node("Where", [negative, b.node("Mul", x), x[0]])]


EXPORTS: dict[str, Export] = {**{kind: _activation(*spec) for kind, spec in _ACTIVATIONS.items()}, "prelu": _prelu}
