"""`ge.const` and `ge.variable` as `arith.constant` tensors (a variable is a constant at run time).

    %w = ge.const dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  ==>
    %w = arith.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>

A weight blob stays one: `dense_resource<h> : tensor<...>` becomes an `arith.constant` of the
same blob, whose bytes IREE's input carries in its resource section (`dfir.lowering.codegen`).
Unsigned data keep their bytes under the signless type of their width. Booleans are built as
`i8` and compared with 0, since MLIR packs `i1` dense data differently from numpy's bytes.
"""
from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, DenseResourceAttr, IntegerType, TensorType, i8
from xdsl.ir import Operation, SSAValue

from dfir.dialects import ge
from dfir.passes.ge_to_linalg.builder import FuncBuilder, signless

__all__ = ["LOWERINGS"]


def _const(builder: FuncBuilder, op: Operation) -> list[SSAValue]:
    value: ge.ConstValue = op.value
    shape, element_type = value.type.get_shape(), value.type.get_element_type()
    if element_type == IntegerType(1):
        as_bytes = builder.add(arith.ConstantOp(_retyped(value, TensorType(i8, shape), normalize=True)))
        zero = builder.scalar(0, i8)
        return [builder.elementwise([as_bytes.result], op.results[0].type,
                                    lambda b, x: b.add(arith.CmpiOp(x, zero, "ne")))]
    return [builder.add(arith.ConstantOp(_retyped(value, TensorType(signless(element_type), shape)))).result]


def _retyped(value: ge.ConstValue, tensor: TensorType, normalize: bool = False) -> ge.ConstValue:
    """`value`'s bytes under the type `tensor` (a blob stays the same blob); with `normalize`,
    dense bytes as 0 or 1 (xDSL parses an `i1` true as 0xFF). A blob of booleans compares its
    bytes with 0 all the same."""
    if isinstance(value, DenseResourceAttr):
        return DenseResourceAttr.from_params(value.resource_handle, tensor)
    raw = bytes(1 if byte else 0 for byte in value.data.data) if normalize else value.data.data
    return DenseIntOrFPElementsAttr(tensor, BytesAttr(raw))


LOWERINGS = {ge.ConstOp: _const, ge.VariableOp: _const}
