"""Comparison, logic, bitwise, select and float-test exports (runtime/ge/kernels/logic.py)."""
from __future__ import annotations

from dfir.lowering.onnx_export.builder import Builder, Export, Unsupported
from dfir.lowering.onnx_export.elementwise import one_to_one
from dfir.om.plan import GeOp

_COMPARISONS = {"less": "Less", "greater": "Greater", "less_equal": "LessOrEqual", "greater_equal": "GreaterOrEqual"}

_ONE_TO_ONE = {"equal": "Equal", "logical_and": "And", "logical_or": "Or", "logical_xor": "Xor",
               "logical_not": "Not", "bitwise_and": "BitwiseAnd", "bitwise_or": "BitwiseOr",
               "bitwise_xor": "BitwiseXor", "bitwise_not": "BitwiseNot", "is_nan": "IsNaN"}


def _comparison(onnx_op: str) -> Export:
    """An ordering comparison; booleans compare as 0 and 1 (onnxruntime orders numbers only)."""
    def export(b: Builder, op: GeOp, x: list[str]) -> list[str]:
        if b.dtypes[x[0]] == "DT_BOOL":
            x = [b.cast(v, "DT_UINT8") for v in x]
        return [b.node(onnx_op, x)]
    return export


def _select(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    """Where; booleans are picked as 0 and 1 (onnxruntime's Where takes no booleans)."""
    if b.dtypes[x[1]] != "DT_BOOL":
        return [b.node("Where", x)]
    picked = b.node("Where", [x[0], *(b.cast(v, "DT_UINT8") for v in x[1:])])
    return [b.cast(picked, "DT_BOOL")]


def _is_inf(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    return [b.node("IsInf", x, detect_positive=int(bool(op.attrs.get("detect_positive"))),
                   detect_negative=int(bool(op.attrs.get("detect_negative"))))]


def _bit_shift(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    """ONNX BitShift of unsigned integers. The kernel gives 0 for a shift outside [0, bit width),
    which C leaves undefined: shift by at most width - 1, then once more by 1 where the shift was
    larger (a shift of a negative signed amount, cast, is larger than any width)."""
    value, dtype = x[0], b.dtypes[x[0]]
    if not dtype.startswith("DT_UINT"):
        raise Unsupported(f"ONNX BitShift takes unsigned integers, not {dtype}")
    shift = b.cast(x[1], dtype)
    widest = b.scalar(int(dtype.removeprefix("DT_UINT")) - 1, dtype)
    direction = "LEFT" if op.attrs["direction"] == "left" else "RIGHT"
    bounded = b.node("BitShift", [value, b.node("Min", [shift, widest])], direction=direction)
    beyond = b.cast(b.node("Greater", [shift, widest]), dtype)
    return [b.node("BitShift", [bounded, beyond], direction=direction)]


EXPORTS: dict[str, Export] = {
    **one_to_one(_ONE_TO_ONE),
    **{kind: _comparison(onnx_op) for kind, onnx_op in _COMPARISONS.items()},
    "select": _select,
    "is_inf": _is_inf,
    "bit_shift": _bit_shift,
}
