"""Element-wise `ge` ops as one `linalg.generic` each, operands broadcast (see `FuncBuilder`).

    %z = ge.add %x, %y : (!ge.tensor<[-1, 4], f32>, !ge.tensor<[4], f32>) -> !ge.tensor<[-1, 4], f32>
  ==>
    %z = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d1), (d0, d1) -> (d0, d1)],
                         iterator_types = ["parallel", "parallel"]} ins(%x, %y) outs(%empty) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }

The scalar functions match the reference kernels: integer division truncates toward zero,
`maximum` / `minimum` propagate NaN (numpy's), `sigmoid` saturates without overflow, `cast`
converts as numpy's `astype` (to bool: non-zero), `bitcast` keeps the bits (numpy's `view`).
"""
from __future__ import annotations

import math
from typing import Callable

from xdsl.dialects import arith
from xdsl.dialects import math as m
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from dfir.dialects import ge
from dfir.passes.ge_to_linalg.builder import Body, FuncBuilder, Unsupported, is_float, is_unsigned, signless

__all__ = ["LOWERINGS", "convert", "pointwise"]

Scalar = Callable[[Body, Attribute, SSAValue, SSAValue], SSAValue]
"""(body, element type as the ge type has it, lhs, rhs) -> result."""


def _by_kind(float_op, signed_op, unsigned_op=None) -> Scalar:
    def build(b: Body, element_type: Attribute, x: SSAValue, y: SSAValue) -> SSAValue:
        if is_float(element_type):
            return b.add(float_op(x, y))
        op = unsigned_op if is_unsigned(element_type) and unsigned_op is not None else signed_op
        if op is None:
            raise Unsupported(f"no integer form for element type {element_type}")
        return b.add(op(x, y))
    return build


_BINARY: dict[type[Operation], Scalar] = {
    ge.AddOp: _by_kind(arith.AddfOp, arith.AddiOp),
    ge.SubOp: _by_kind(arith.SubfOp, arith.SubiOp),
    ge.MulOp: _by_kind(arith.MulfOp, arith.MuliOp),
    ge.DivOp: _by_kind(arith.DivfOp, arith.DivSIOp, arith.DivUIOp),
    ge.MaximumOp: _by_kind(arith.MaximumfOp, arith.MaxSIOp, arith.MaxUIOp),
    ge.MinimumOp: _by_kind(arith.MinimumfOp, arith.MinSIOp, arith.MinUIOp),
    ge.PowOp: _by_kind(m.PowFOp, None),
}


def pointwise(builder: FuncBuilder, op: Operation,
              scalar: Callable[..., SSAValue]) -> list[SSAValue]:
    """The op as one element-wise `linalg.generic`: `scalar(body, element type of the first
    operand, *operand elements)` at every position of the result, the operands broadcast."""
    element_type = op.operands[0].type.element_type
    return [builder.elementwise([builder.value(v) for v in op.operands], op.results[0].type,
                                lambda b, *xs: scalar(b, element_type, *xs))]


def _binary(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    scalar = _BINARY[type(op)]
    element_type = op.operands[0].type.element_type
    return [builder.elementwise([builder.value(v) for v in op.operands], op.results[0].type,
                                lambda b, x, y: scalar(b, element_type, x, y))]


# --- unary ---------------------------------------------------------------------------------------

Unary = Callable[[Body, Attribute, SSAValue], SSAValue]


def _relu(b: Body, t: Attribute, x: SSAValue) -> SSAValue:
    if is_unsigned(t):
        return x
    zero = b.constant(0, t)
    return b.add(arith.MaximumfOp(x, zero) if is_float(t) else arith.MaxSIOp(x, zero))


def _sigmoid(b: Body, t: Attribute, x: SSAValue) -> SSAValue:
    # 1 / (1 + exp(-x)): exp overflows to inf for very negative x, giving exactly 0.
    one = b.constant(1.0, t)
    e = b.add(m.ExpOp(b.add(arith.NegfOp(x))))
    return b.add(arith.DivfOp(one, b.add(arith.AddfOp(one, e))))


def _gelu(approximate: str) -> Unary:
    def build(b: Body, t: Attribute, x: SSAValue) -> SSAValue:
        half, one = b.constant(0.5, t), b.constant(1.0, t)
        if approximate == "tanh":
            cube = b.add(arith.MulfOp(b.add(arith.MulfOp(x, x)), x))
            inner = b.add(arith.AddfOp(x, b.add(arith.MulfOp(b.constant(0.044715, t), cube))))
            inner = b.add(arith.MulfOp(b.constant(math.sqrt(2.0 / math.pi), t), inner))
            core = b.add(m.TanhOp(inner))
        else:
            core = b.add(m.ErfOp(b.add(arith.MulfOp(x, b.constant(1.0 / math.sqrt(2.0), t)))))
        return b.add(arith.MulfOp(b.add(arith.MulfOp(half, x)), b.add(arith.AddfOp(one, core))))
    return build


def _math(op_class) -> Unary:
    return lambda b, t, x: b.add(op_class(x))


_UNARY: dict[type[Operation], Callable[[Operation], Unary]] = {
    ge.ReluOp: lambda op: _relu,
    ge.SqrtOp: lambda op: _math(m.SqrtOp),
    ge.ExpOp: lambda op: _math(m.ExpOp),
    ge.LogOp: lambda op: _math(m.LogOp),
    ge.TanhOp: lambda op: _math(m.TanhOp),
    ge.ErfOp: lambda op: _math(m.ErfOp),
    ge.SigmoidOp: lambda op: _sigmoid,
    ge.GeluOp: lambda op: _gelu(op.properties["approximate"].data if "approximate" in op.properties else "none"),
}


def _unary(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    scalar = _UNARY[type(op)](op)
    element_type = op.operands[0].type.element_type
    if scalar is not _relu and not is_float(element_type):
        raise Unsupported(f"element type {element_type} is not a float")
    return [builder.elementwise([builder.value(op.operands[0])], op.results[0].type,
                                lambda b, x: scalar(b, element_type, x))]


def _identity(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    return [builder.value(op.operands[0])]


# --- cast ----------------------------------------------------------------------------------------

def convert(b: Body, source: Attribute, target: Attribute, x: SSAValue) -> SSAValue:
    """numpy's `astype` from `source` to `target` (ge element types)."""
    out = signless(target)
    if source == target:
        return x
    if target == IntegerType(1):
        zero = b.constant(0, source)
        return b.add(arith.CmpfOp(x, zero, "une") if is_float(source) else arith.CmpiOp(x, zero, "ne"))
    unsigned_source = is_unsigned(source) or source == IntegerType(1)
    if is_float(source) and is_float(target):
        wider = target.bitwidth > source.bitwidth
        return b.add(arith.ExtFOp(x, out) if wider else arith.TruncFOp(x, out))
    if is_float(target):
        return b.add(arith.UIToFPOp(x, out) if unsigned_source else arith.SIToFPOp(x, out))
    if is_float(source):
        return b.add(arith.FPToUIOp(x, out) if is_unsigned(target) else arith.FPToSIOp(x, out))
    source_width, target_width = source.width.data, target.width.data
    if source_width == target_width:
        return x
    if target_width < source_width:
        return b.add(arith.TruncIOp(x, out))
    return b.add(arith.ExtUIOp(x, out) if unsigned_source else arith.ExtSIOp(x, out))


def _cast(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    source, target = op.operands[0].type.element_type, op.results[0].type.element_type
    if source == target:
        return [builder.value(op.operands[0])]
    return [builder.elementwise([builder.value(op.operands[0])], op.results[0].type,
                                lambda b, x: convert(b, source, target, x))]


def _bitcast(builder: FuncBuilder, op: ge.BitCastOp) -> list[SSAValue]:
    """`arith.bitcast` between a float and an integer; integers of one width are one signless type
    already; a bool (i1, a byte of 0 or 1 in memory) zero-extends to its byte."""
    source, target = op.input.type.element_type, op.result.type.element_type
    x = builder.value(op.input)
    if signless(source) == signless(target):
        return [x]
    if source == IntegerType(1):
        return [builder.elementwise([x], op.result.type, lambda b, v: b.add(arith.ExtUIOp(v, signless(target))))]
    return [builder.elementwise([x], op.result.type, lambda b, v: b.add(arith.BitcastOp(v, signless(target))))]


# --- math functions ------------------------------------------------------------------------------

def _neg(b: Body, t: Attribute, x: SSAValue) -> SSAValue:
    return b.add(arith.NegfOp(x) if is_float(t) else arith.SubiOp(b.constant(0, t), x))


def _abs(b: Body, t: Attribute, x: SSAValue) -> SSAValue:
    if is_unsigned(t):
        return x
    return b.add(m.AbsFOp(x) if is_float(t) else m.AbsIOp(x))


def _sign(b: Body, t: Attribute, x: SSAValue) -> SSAValue:
    """1 above 0, -1 below; else `x` itself for floats (0, -0 or NaN), 0 for integers."""
    zero = b.constant(0, t)
    if is_float(t):
        above, below = b.add(arith.CmpfOp(x, zero, "ogt")), b.add(arith.CmpfOp(x, zero, "olt"))
        rest = x
    else:
        above = b.add(arith.CmpiOp(x, zero, "ugt" if is_unsigned(t) else "sgt"))
        below = b.add(arith.CmpiOp(x, zero, "slt")) if not is_unsigned(t) else None
        rest = zero
    if below is not None:
        rest = b.add(arith.SelectOp(below, b.constant(-1, t), rest))
    return b.add(arith.SelectOp(above, b.constant(1, t), rest))


def _reciprocal(b: Body, t: Attribute, x: SSAValue) -> SSAValue:
    return b.add(arith.DivfOp(b.constant(1.0, t), x))


_FLOAT_MATH: dict[type[Operation], type[Operation]] = {
    ge.FloorOp: m.FloorOp, ge.CeilOp: m.CeilOp, ge.RoundOp: m.RoundEvenOp, ge.SinOp: m.SinOp, ge.CosOp: m.CosOp,
    ge.TanOp: m.TanOp, ge.AsinOp: m.AsinOp, ge.AcosOp: m.AcosOp, ge.AtanOp: m.AtanOp, ge.SinhOp: m.SinhOp,
    ge.CoshOp: m.CoshOp, ge.AsinhOp: m.AsinhOp, ge.AcoshOp: m.AcoshOp, ge.AtanhOp: m.AtanhOp,
}
"""Float ops that are one `math` op."""

_MATH: dict[type[Operation], Unary] = {
    ge.NegOp: _neg, ge.AbsOp: _abs, ge.SignOp: _sign, ge.ReciprocalOp: _reciprocal,
    **{cls: _math(math_op) for cls, math_op in _FLOAT_MATH.items()},
}


def _math_function(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    return pointwise(builder, op, _MATH[type(op)])


def _mod(builder: FuncBuilder, op: ge.ModOp) -> list[SSAValue]:
    element_type = op.operands[0].type.element_type
    if is_float(element_type):
        raise Unsupported(f"no float remainder in upstream arith as xDSL has it (element type {element_type})")
    floored = "fmod" not in op.properties and not is_unsigned(element_type)
    return pointwise(builder, op, lambda b, t, x, y: _integer_remainder(b, t, x, y, floored))


def _integer_remainder(b: Body, t: Attribute, x: SSAValue, y: SSAValue, floored: bool) -> SSAValue:
    """`x rem y` with the sign of `x` (or of `y` when `floored`); by 0 it is 0, as numpy's.

    arith's remainder is undefined for a divisor of 0 (and signed overflow of MIN rem -1): those
    divide by 1 instead, whose remainder is 0 too."""
    zero, one = b.constant(0, t), b.constant(1, t)
    unsafe = b.add(arith.CmpiOp(y, zero, "eq"))
    if not is_unsigned(t):
        unsafe = b.add(arith.OrIOp(unsafe, b.add(arith.CmpiOp(y, b.constant(-1, t), "eq"))))
    divisor = b.add(arith.SelectOp(unsafe, one, y))
    if is_unsigned(t):
        return b.add(arith.RemUIOp(x, divisor))
    r = b.add(arith.RemSIOp(x, divisor))
    if not floored:
        return r
    signs_differ = b.add(arith.XOrIOp(b.add(arith.CmpiOp(r, zero, "slt")), b.add(arith.CmpiOp(divisor, zero, "slt"))))
    adjust = b.add(arith.AndIOp(signs_differ, b.add(arith.CmpiOp(r, zero, "ne"))))
    return b.add(arith.SelectOp(adjust, b.add(arith.AddiOp(r, divisor)), r))


LOWERINGS = {**{cls: _binary for cls in _BINARY}, **{cls: _unary for cls in _UNARY},
             ge.IdentityOp: _identity, ge.CastOp: _cast, ge.BitCastOp: _bitcast, **{cls: _math_function for cls in _MATH},
             ge.ModOp: _mod}
