"""Activations with parameters (LeakyRelu, Elu, Selu...), the smooth activations, and PRelu."""
from __future__ import annotations

from dfir.frontend.ge.onnx.attributes import attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter, binary, unary


def _with_attributes(method: str, **defaults: float) -> Converter:
    """A one-op converter passing the node's float attributes (ONNX's `defaults` where absent)."""
    def convert(imp, node):
        attrs = attributes_of(node)
        params = {key: attrs.get(key, default) for key, default in defaults.items()}
        return [getattr(imp.g, method)(imp.tensor(node, 0), **params, name=imp.name(node))]
    return convert


CONVERTERS: dict[str, Converter] = {
    "LeakyRelu": _with_attributes("leaky_relu", alpha=0.01),
    "Elu": _with_attributes("elu", alpha=1.0),
    "Celu": _with_attributes("celu", alpha=1.0),
    "Selu": _with_attributes("selu", alpha=1.67326319217681884765625, gamma=1.05070102214813232421875),
    "ThresholdedRelu": _with_attributes("thresholded_relu", alpha=1.0),
    "HardSigmoid": _with_attributes("hard_sigmoid", alpha=0.2, beta=0.5),
    "Shrink": _with_attributes("shrink", bias=0.0, lambd=0.5),
    "HardSwish": unary("hard_swish"), "Softplus": unary("softplus"), "Softsign": unary("softsign"),
    "Mish": unary("mish"), "PRelu": binary("prelu"),
}
