"""`ge.const` and `ge.variable` as `arith.constant` tensors (a variable is a constant at run time).

    %w = ge.const dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  ==>
    %w = arith.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>

Unsigned data keep their bytes under the signless type of their width. Booleans are built as
`i8` and compared with 0, since MLIR packs `i1` dense data differently from numpy's bytes.
"""
from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, IntegerType, TensorType, i8
from xdsl.ir import Operation, SSAValue

from dfir.dialects import ge
from dfir.passes.ge_to_linalg.builder import FuncBuilder, signless

__all__ = ["LOWERINGS"]


def _const(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    value: DenseIntOrFPElementsAttr = op.value
    shape, element_type = value.get_shape(), value.get_element_type()
    if element_type == IntegerType(1):
        raw = bytes(1 if byte else 0 for byte in value.data.data)
        as_bytes = builder.add(arith.ConstantOp(DenseIntOrFPElementsAttr(TensorType(i8, shape), BytesAttr(raw))))
        zero = builder.scalar(0, i8)
        return [builder.elementwise([as_bytes.result], op.results[0].type,
                                    lambda b, x: b.add(arith.CmpiOp(x, zero, "ne")))]
    typed = DenseIntOrFPElementsAttr(TensorType(signless(element_type), shape), value.data)
    return [builder.add(arith.ConstantOp(typed)).result]


LOWERINGS = {ge.ConstOp: _const, ge.VariableOp: _const}
