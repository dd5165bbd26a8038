"""Elementwise ops: arithmetic, math functions, activations, casts, Clip and inference Dropout."""
from __future__ import annotations

import numpy as np

from dfir.core import data_type as dt
from dfir.frontend.ge.onnx.attributes import attribute
from dfir.frontend.ge.onnx.ops.converter import Converter, binary, unary


def _variadic(method: str) -> Converter:
    """Max, Min and Sum of one or more inputs, as a chain of binary ops."""
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


def _cast_like(imp, node):
    like = node.input[1]
    known = imp.values[like].dtype if like in imp.values else dt.from_numpy(imp.known[like].dtype)
    return [imp.g.cast(imp.tensor(node, 0), known, name=imp.name(node))]


def _mod(imp, node):
    return [imp.g.mod(imp.tensor(node, 0), imp.tensor(node, 1), fmod=bool(attribute(node, "fmod", 0)),
                      name=imp.name(node))]


def _clip(imp, node):
    """`min(max(x, low), high)`; an absent bound does not clip."""
    result = imp.tensor(node, 0)
    for i, method, suffix in ((1, "maximum", "/min"), (2, "minimum", "")):
        bound = imp.tensor(node, i)
        if bound is not None:
            result = getattr(imp.g, method)(result, bound, name=imp.name(node, suffix))
    return [result if result is not imp.tensor(node, 0) else imp.g.identity(result, name=imp.name(node))]


def _mean(imp, node):
    (total,) = _variadic("add")(imp, node)
    count = imp.g.const(np.array(len(node.input), total.type.numpy_dtype), name=imp.name(node, "/count"))
    return [imp.g.div(total, count, name=imp.name(node, "/mean"))]


def _dropout(imp, node):
    """Inference: the output is the input, and the mask (if asked for) is all true."""
    training = imp.static(node, 2, "training_mode")
    if training is not None and any(training.ints()):
        raise imp.node_error(node, "training_mode true is not supported (inference only)")
    x = imp.tensor(node, 0)
    outputs = [imp.g.identity(x, name=imp.name(node))]
    if len(node.output) > 1 and node.output[1]:
        if -1 in x.shape:
            raise imp.node_error(node, f"the mask output needs a static input shape, got {x.shape}")
        outputs.append(imp.g.const(np.ones(x.shape, bool), name=imp.name(node, "/mask")))
    return outputs


CONVERTERS: dict[str, Converter] = {
    "Add": binary("add"), "Sub": binary("sub"), "Mul": binary("mul"), "Div": binary("div"),
    "Pow": _pow, "Max": _variadic("maximum"), "Min": _variadic("minimum"),
    "Identity": unary("identity"), "Relu": unary("relu"), "Sqrt": unary("sqrt"), "Exp": unary("exp"),
    "Log": unary("log"), "Tanh": unary("tanh"), "Sigmoid": unary("sigmoid"), "Erf": unary("erf"),
    "Gelu": _gelu, "Cast": _cast,
    "CastLike": _cast_like, "Mod": _mod, "Clip": _clip, "Sum": _variadic("add"), "Mean": _mean, "Dropout": _dropout,
    "Neg": unary("neg"), "Abs": unary("abs"), "Sign": unary("sign"), "Reciprocal": unary("reciprocal"),
    "Floor": unary("floor"), "Ceil": unary("ceil"), "Round": unary("round"), "Sin": unary("sin"),
    "Cos": unary("cos"), "Tan": unary("tan"), "Asin": unary("asin"), "Acos": unary("acos"), "Atan": unary("atan"),
    "Sinh": unary("sinh"), "Cosh": unary("cosh"), "Asinh": unary("asinh"), "Acosh": unary("acosh"),
    "Atanh": unary("atanh"),
}
