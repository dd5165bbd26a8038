"""Elementwise exports: arithmetic, math functions, casts (runtime/ge/kernels/elementwise.py)."""
from __future__ import annotations

from dfir.lowering.onnx_export.builder import Builder, Export, Unsupported, onnx_type
from dfir.om.plan import GeOp

_ONE_TO_ONE = {
    "add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow", "maximum": "Max", "minimum": "Min",
    "identity": "Identity", "sqrt": "Sqrt", "exp": "Exp", "log": "Log", "tanh": "Tanh",
    "sigmoid": "Sigmoid", "erf": "Erf", "abs": "Abs", "sign": "Sign", "reciprocal": "Reciprocal", "floor": "Floor",
    "ceil": "Ceil", "round": "Round", "sin": "Sin", "cos": "Cos", "tan": "Tan", "asin": "Asin", "acos": "Acos",
    "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
}
"""GE op -> the ONNX op computing the same, attribute-free."""


def one_to_one(table: dict[str, str]) -> dict[str, Export]:
    """Exports of GE ops that are one attribute-free ONNX node each."""
    return {kind: (lambda b, op, x, onnx_op=onnx_op: [b.node(onnx_op, x)]) for kind, onnx_op in table.items()}


def _neg(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    if b.dtypes[x[0]].startswith("DT_UINT"):  # onnxruntime's Neg is signed only; 0 - x wraps as numpy's does
        return [b.node("Sub", [b.scalar(0, b.dtypes[x[0]]), x[0]])]
    return [b.node("Neg", x)]


def _relu(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    if b.supports("Relu", x[0]):
        return [b.node("Relu", x)]
    return [b.node("Max", [x[0], b.scalar(0, b.dtypes[x[0]])])]  # the integers onnxruntime's Relu lacks


def _gelu(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    return [b.node("Gelu", x, approximate=op.attrs.get("approximate", "none"))]


def _cast(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    return [b.node("Cast", x, dtypes=[op.attrs["to"]], to=onnx_type(op.attrs["to"]))]


def _bitcast(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    raise Unsupported("ONNX has no bitcast")


def _mod(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    """Integers: ONNX Mod (fmod 0: the divisor's sign, as numpy's mod). Floats: ONNX has only
    fmod, so numpy's mod is fmod moved by the divisor where the signs differ."""
    if op.attrs.get("fmod") or not b.dtypes[x[0]].endswith(("FLOAT", "FLOAT16", "DOUBLE")):
        return [b.node("Mod", x, fmod=int(bool(op.attrs.get("fmod"))))]
    remainder = b.node("Mod", x, fmod=1)
    zero = b.scalar(0, b.dtypes[x[0]])
    signs_differ = b.node("Xor", [b.node("Less", [remainder, zero]), b.node("Less", [x[1], zero])])
    moved = b.node("And", [signs_differ, b.node("Not", [b.node("Equal", [remainder, zero])])])
    return [b.node("Where", [moved, b.node("Add", [remainder, x[1]]), remainder])]


EXPORTS: dict[str, Export] = {
    **one_to_one(_ONE_TO_ONE),
    "relu": _relu,
    "neg": _neg,
    "gelu": _gelu,
    "cast": _cast,
    "bitcast": _bitcast,
    "mod": _mod,
}
