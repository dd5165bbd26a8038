"""Comparisons, logic and bitwise ops, Where, and the float tests IsNaN and IsInf."""
from __future__ import annotations

from dfir.frontend.ge.onnx.attributes import attribute, attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter, binary, unary


def _where(imp, node):
    return [imp.g.select(imp.tensor(node, 0), imp.tensor(node, 1), imp.tensor(node, 2), name=imp.name(node))]


def _bit_shift(imp, node):
    direction = attribute(node, "direction")
    if direction not in ("LEFT", "RIGHT"):
        raise imp.node_error(node, f"direction must be LEFT or RIGHT, got {direction!r}")
    return [imp.g.bit_shift(imp.tensor(node, 0), imp.tensor(node, 1), direction.lower(), name=imp.name(node))]


def _is_inf(imp, node):
    attrs = attributes_of(node)
    return [imp.g.is_inf(imp.tensor(node, 0), detect_positive=bool(attrs.get("detect_positive", 1)),
                         detect_negative=bool(attrs.get("detect_negative", 1)), name=imp.name(node))]


CONVERTERS: dict[str, Converter] = {
    "Equal": binary("equal"), "Less": binary("less"), "Greater": binary("greater"),
    "LessOrEqual": binary("less_equal"), "GreaterOrEqual": binary("greater_equal"),
    "And": binary("logical_and"), "Or": binary("logical_or"), "Xor": binary("logical_xor"),
    "Not": unary("logical_not"), "Where": _where,
    "BitwiseAnd": binary("bitwise_and"), "BitwiseOr": binary("bitwise_or"), "BitwiseXor": binary("bitwise_xor"),
    "BitwiseNot": unary("bitwise_not"), "BitShift": _bit_shift,
    "IsNaN": unary("is_nan"), "IsInf": _is_inf,
}
