"""Comparisons, logic and bitwise ops, `select` and the float tests as element-wise
`linalg.generic`s (see `pointwise`) over arith's `cmpf` / `cmpi`, `andi` / `ori` / `xori`,
shifts and `select`.

    %z = ge.less %x, %y : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[3], f32>) -> !ge.tensor<[-1, 3], i1>
  ==>
    %z = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d1), (d0, d1) -> (d0, d1)],
                         iterator_types = ["parallel", "parallel"]} ins(%x, %y) outs(%empty) {
    ^bb0(%a: f32, %b: f32, %out: i1):
      %c = arith.cmpf olt, %a, %b : f32
      linalg.yield %c : i1
    }

As the reference kernels: float comparisons are ordered (NaN compares false); booleans compare
as unsigned (false < true); shifts by the bit width or more give 0 (-1 for a negative signed
value shifted right), where arith's shifts are undefined.
"""
from __future__ import annotations

import math

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from dfir.dialects import ge
from dfir.passes.ge_to_linalg.builder import Body, FuncBuilder, is_float, is_unsigned
from dfir.passes.ge_to_linalg.elementwise import pointwise

__all__ = ["LOWERINGS"]

_PREDICATES: dict[type[Operation], tuple[str, str, str]] = {
    ge.EqualOp: ("oeq", "eq", "eq"),
    ge.LessOp: ("olt", "slt", "ult"),
    ge.GreaterOp: ("ogt", "sgt", "ugt"),
    ge.LessEqualOp: ("ole", "sle", "ule"),
    ge.GreaterEqualOp: ("oge", "sge", "uge"),
}
"""Comparison op -> its (float, signed, unsigned) predicate."""


def compare(b: Body, t: Attribute, predicates: tuple[str, str, str], x: SSAValue, y: SSAValue) -> SSAValue:
    """`x <predicate> y` for elements of ge type `t`."""
    floating, signed, unsigned = predicates
    if is_float(t):
        return b.add(arith.CmpfOp(x, y, floating))
    return b.add(arith.CmpiOp(x, y, unsigned if is_unsigned(t) or t == IntegerType(1) else signed))


def _compare(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    predicates = _PREDICATES[type(op)]
    return pointwise(builder, op, lambda b, t, x, y: compare(b, t, predicates, x, y))


_BITWISE: dict[type[Operation], type[Operation]] = {
    ge.LogicalAndOp: arith.AndIOp, ge.LogicalOrOp: arith.OrIOp, ge.LogicalXorOp: arith.XOrIOp,
    ge.BitwiseAndOp: arith.AndIOp, ge.BitwiseOrOp: arith.OrIOp, ge.BitwiseXorOp: arith.XOrIOp,
}


def _bitwise(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    op_class = _BITWISE[type(op)]
    return pointwise(builder, op, lambda b, t, x, y: b.add(op_class(x, y)))


def _invert(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    """`logical_not` and `bitwise_not`: xor with all ones."""
    return pointwise(builder, op, lambda b, t, x: b.add(arith.XOrIOp(x, b.constant(-1, t))))


def _bit_shift(builder: FuncBuilder, op: ge.BitShiftOp) -> list[SSAValue]:
    left = op.direction.data == "left"

    def shift(b: Body, t: Attribute, x: SSAValue, n: SSAValue) -> SSAValue:
        zero = b.constant(0, t)
        too_far = b.add(arith.CmpiOp(n, b.constant(t.width.data, t), "uge"))
        if left:
            return b.add(arith.SelectOp(too_far, zero, b.add(arith.ShLIOp(x, n))))
        if is_unsigned(t):
            return b.add(arith.SelectOp(too_far, zero, b.add(arith.ShRUIOp(x, n))))
        sign_fill = b.add(arith.SelectOp(b.add(arith.CmpiOp(x, zero, "slt")), b.constant(-1, t), zero))
        return b.add(arith.SelectOp(too_far, sign_fill, b.add(arith.ShRSIOp(x, n))))
    return pointwise(builder, op, shift)


def _select(builder: FuncBuilder, op: ge.SelectOp) -> list[SSAValue]:
    return pointwise(builder, op, lambda b, t, c, x, y: b.add(arith.SelectOp(c, x, y)))


def _is_nan(builder: FuncBuilder, op: ge.IsNanOp) -> list[SSAValue]:
    return pointwise(builder, op, lambda b, t, x: b.add(arith.CmpfOp(x, x, "uno")))


def _is_inf(builder: FuncBuilder, op: ge.IsInfOp) -> list[SSAValue]:
    signs = [s for s, flag in ((1, "detect_positive"), (-1, "detect_negative")) if flag in op.properties]

    def test(b: Body, t: Attribute, x: SSAValue) -> SSAValue:
        hits = [b.add(arith.CmpfOp(x, b.constant(s * math.inf, t), "oeq")) for s in signs]
        if not hits:
            return b.constant(0, IntegerType(1))
        return hits[0] if len(hits) == 1 else b.add(arith.OrIOp(hits[0], hits[1]))
    return pointwise(builder, op, test)


LOWERINGS = {**{cls: _compare for cls in _PREDICATES}, **{cls: _bitwise for cls in _BITWISE},
             ge.LogicalNotOp: _invert, ge.BitwiseNotOp: _invert, ge.BitShiftOp: _bit_shift,
             ge.SelectOp: _select, ge.IsNanOp: _is_nan, ge.IsInfOp: _is_inf}
