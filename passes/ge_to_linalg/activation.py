"""Activations with parameters, the smooth activations and `prelu` as element-wise
`linalg.generic`s (see `pointwise`) over arith and math; the parameters become constants.

    %y = ge.leaky_relu %x alpha 1.000000e-01 : !ge.tensor<[-1, 3], f32>
  ==>
    %y = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0, d1)],
                         iterator_types = ["parallel", "parallel"]} ins(%x) outs(%empty) {
    ^bb0(%a: f32, %out: f32):
      %negative = arith.cmpf olt, %a, %zero : f32
      %scaled = arith.mulf %a, %alpha : f32
      %r = arith.select %negative, %scaled, %a : f32
      linalg.yield %r : f32
    }

The formulas are the reference kernels': `exp(x) - 1` on `min(x, 0)` (no overflow on the branch
not taken), softplus as `max(x, 0) + log(1 + exp(-|x|))`.
"""
from __future__ import annotations

from typing import Callable

from xdsl.dialects import arith
from xdsl.dialects import math as m
from xdsl.ir import Attribute, Operation, SSAValue

from dfir.dialects import ge
from dfir.passes.ge_to_linalg.builder import Body, FuncBuilder, is_float, is_unsigned
from dfir.passes.ge_to_linalg.elementwise import pointwise

__all__ = ["LOWERINGS"]


class _Scalar:
    """Float arithmetic on one element, in a `linalg.generic` body."""

    def __init__(self, b: Body, t: Attribute):
        self.b, self.t = b, t

    def c(self, value: float) -> SSAValue:
        return self.b.constant(value, self.t)

    def add(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.add(arith.AddfOp(x, y))

    def sub(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.add(arith.SubfOp(x, y))

    def mul(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.add(arith.MulfOp(x, y))

    def div(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.add(arith.DivfOp(x, y))

    def max(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.add(arith.MaximumfOp(x, y))

    def min(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.add(arith.MinimumfOp(x, y))

    def exp(self, x: SSAValue) -> SSAValue:
        return self.b.add(m.ExpOp(x))

    def log(self, x: SSAValue) -> SSAValue:
        return self.b.add(m.LogOp(x))

    def abs(self, x: SSAValue) -> SSAValue:
        return self.b.add(m.AbsFOp(x))

    def tanh(self, x: SSAValue) -> SSAValue:
        return self.b.add(m.TanhOp(x))

    def lt(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.add(arith.CmpfOp(x, y, "olt"))

    def gt(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.add(arith.CmpfOp(x, y, "ogt"))

    def select(self, c: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.b.add(arith.SelectOp(c, x, y))

    def expm1_of_negative_part(self, x: SSAValue) -> SSAValue:
        """`exp(min(x, 0)) - 1`."""
        return self.sub(self.exp(self.min(x, self.c(0.0))), self.c(1.0))

    def clamp01(self, x: SSAValue) -> SSAValue:
        return self.min(self.max(x, self.c(0.0)), self.c(1.0))

    def softplus(self, x: SSAValue) -> SSAValue:
        tail = self.log(self.add(self.c(1.0), self.exp(self.sub(self.c(0.0), self.abs(x)))))
        return self.add(self.max(x, self.c(0.0)), tail)


Formula = Callable[[_Scalar, SSAValue, Callable[[str], float]], SSAValue]
"""(scalar arithmetic, x, parameter by name) -> the activation of x."""

_FORMULAS: dict[type[Operation], Formula] = {
    ge.LeakyReluOp: lambda s, x, p: s.select(s.lt(x, s.c(0.0)), s.mul(x, s.c(p("alpha"))), x),
    ge.EluOp: lambda s, x, p: s.select(s.gt(x, s.c(0.0)), x, s.mul(s.c(p("alpha")), s.expm1_of_negative_part(x))),
    ge.CeluOp: lambda s, x, p: s.add(s.max(x, s.c(0.0)), s.min(s.c(0.0), s.mul(
        s.c(p("alpha")), s.sub(s.exp(s.div(s.min(x, s.c(0.0)), s.c(p("alpha")))), s.c(1.0))))),
    ge.SeluOp: lambda s, x, p: s.mul(s.c(p("gamma")), s.select(
        s.gt(x, s.c(0.0)), x, s.mul(s.c(p("alpha")), s.expm1_of_negative_part(x)))),
    ge.ThresholdedReluOp: lambda s, x, p: s.select(s.gt(x, s.c(p("alpha"))), x, s.c(0.0)),
    ge.HardSigmoidOp: lambda s, x, p: s.clamp01(s.add(s.mul(s.c(p("alpha")), x), s.c(p("beta")))),
    ge.HardSwishOp: lambda s, x, p: s.mul(x, s.clamp01(s.add(s.div(x, s.c(6.0)), s.c(0.5)))),
    ge.ShrinkOp: lambda s, x, p: s.select(s.lt(x, s.c(-p("lambd"))), s.add(x, s.c(p("bias"))), s.select(
        s.gt(x, s.c(p("lambd"))), s.sub(x, s.c(p("bias"))), s.c(0.0))),
    ge.SoftplusOp: lambda s, x, p: s.softplus(x),
    ge.SoftsignOp: lambda s, x, p: s.div(x, s.add(s.c(1.0), s.abs(x))),
    ge.MishOp: lambda s, x, p: s.mul(x, s.tanh(s.softplus(x))),
}


def _activation(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    formula = _FORMULAS[type(op)]

    def parameter(name: str) -> float:
        return op.properties[name].value.data
    return pointwise(builder, op, lambda b, t, x: formula(_Scalar(b, t), x, parameter))


def _prelu(builder: FuncBuilder, op: ge.PReluOp) -> list[SSAValue]:
    def scalar(b: Body, t: Attribute, x: SSAValue, slope: SSAValue) -> SSAValue:
        if is_unsigned(t):
            return x
        zero = b.constant(0, t)
        negative = b.add(arith.CmpfOp(x, zero, "olt") if is_float(t) else arith.CmpiOp(x, zero, "slt"))
        scaled = b.add(arith.MulfOp(x, slope) if is_float(t) else arith.MuliOp(x, slope))
        return b.add(arith.SelectOp(negative, scaled, x))
    return pointwise(builder, op, scalar)


LOWERINGS = {**{cls: _activation for cls in _FORMULAS}, ge.PReluOp: _prelu}
