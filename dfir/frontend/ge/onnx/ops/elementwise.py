"""Elementwise ops: arithmetic, activations and casts."""
from __future__ import annotations

from dfir.frontend.ge.onnx.attributes import attribute
from dfir.frontend.ge.onnx.ops.converter import Converter, binary, unary


def _variadic(method: str) -> Converter:
    """Max and Min of one or more inputs, as a chain of binary ops."""
    def convert(imp, node):
        values = [imp.tensor(node, i) for i in range(len(node.input))]
        if len(values) == 1:
            return [imp.g.identity(values[0], name=imp.name(node))]
        result = values[0]
        for i, value in enumerate(values[1:], 1):
            suffix = "" if i == len(values) - 1 else f"/{i}"
            result = getattr(imp.g, method)(result, value, name=imp.name(node, suffix))
        return [result]
    return convert


def _pow(imp, node):
    x, y = imp.tensor(node, 0), imp.tensor(node, 1)
    if y.dtype != x.dtype:
        y = imp.g.cast(y, x.dtype, name=imp.name(node, "/exponent"))
    return [imp.g.pow(x, y, name=imp.name(node))]


def _gelu(imp, node):
    return [imp.g.gelu(imp.tensor(node, 0), approximate=attribute(node, "approximate", "none"), name=imp.name(node))]


def _cast(imp, node):
    dtype = imp.dtype_of(attribute(node, "to"), "the Cast target")
    return [imp.g.cast(imp.tensor(node, 0), dtype, name=imp.name(node))]


CONVERTERS: dict[str, Converter] = {
    "Add": binary("add"), "Sub": binary("sub"), "Mul": binary("mul"), "Div": binary("div"),
    "Pow": _pow, "Max": _variadic("maximum"), "Min": _variadic("minimum"),
    "Identity": unary("identity"), "Relu": unary("relu"), "Sqrt": unary("sqrt"), "Exp": unary("exp"),
    "Log": unary("log"), "Tanh": unary("tanh"), "Sigmoid": unary("sigmoid"), "Erf": unary("erf"),
    "Gelu": _gelu, "Cast": _cast,
}
