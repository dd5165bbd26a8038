"""Shape-range inference over one `ge.graph`: each op's shape and value functions, in one walk.

The `infer-shape-ranges` pass runs it on every graph; the frontend re-types a graph whose input
shapes a compile config changed. Algorithm, per graph, in one walk of the block (operands are
defined before their uses):

1. For a tensor op, call its shape function on the operands' current types and on what is
   known of its operands' values: small integer tensors (shapes, sizes, indices) carry the
   range of every element (`ValueRanges`), which constants, `ge.shape` and shape arithmetic
   compute (`infer_values`), so a resize or reshape sized by a computed shape gets a range.
2. The new result type is the inferred one intersected, dimension by dimension, with the
   declared one (`keep_declared`, the pass) or the inferred one alone (re-typing a graph whose
   inputs changed, as the importer does when it applies a compile config).
3. A result whose type changed gets the new type in place (its uses see it); then the op's
   `infer_values` records what is known of its results' values for the ops that follow.
"""
from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from dfir.dialects import ge
from dfir.dialects.ge import ValueRanges
from dfir.dialects.ge_types import GeTensorType

__all__ = ["ShapeMismatch", "infer_graph_ranges"]


class ShapeMismatch(VerifyException):
    """An op whose operands do not fit it, or whose declared type excludes the inferred one."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op


def infer_graph_ranges(graph: ge.GraphOp, keep_declared: bool = True) -> int:
    """Re-infer every result type of `graph` in place; returns how many types changed.

    A `ShapeMismatch` raised at the offending op (its message names both shapes) when the
    operands do not fit an op or, with `keep_declared`, a declared type excludes the inferred one.
    """
    values: dict[SSAValue, ValueRanges] = {}
    changed = 0
    for op in list(graph.block.ops):
        if isinstance(op, ge.ShapedOp):
            changed += _infer_op(op, values, keep_declared)
    return changed


def _infer_op(op: ge.ShapedOp, values: dict[SSAValue, ValueRanges], keep_declared: bool) -> int:
    known = [values.get(v) for v in op.operands]
    try:
        inferred = op.infer_types([v.type for v in op.operands], op.properties, known)
    except VerifyException as error:
        op.emit_error(str(error), ShapeMismatch(op, str(error)))
    changed = 0
    for result, new in zip(list(op.results), inferred, strict=True):
        if keep_declared:
            new = _narrowed(op, result.type, new)
        if new != result.type:
            Rewriter.replace_value_with_new_type(result, new)
            changed += 1
    try:
        result_values = op.infer_values([v.type for v in op.operands], op.properties, known)
    except VerifyException as error:
        op.emit_error(str(error), ShapeMismatch(op, str(error)))
    for result, ranges in zip(op.results, result_values):
        if ranges is not None:
            values[result] = ranges
    return changed


def _narrowed(op: Operation, declared: GeTensorType, inferred: GeTensorType) -> GeTensorType:
    """`inferred` restricted to the sizes `declared` allows, dimension by dimension."""
    dims = ([d.intersect(i) for d, i in zip(declared.dims, inferred.dims)]
            if declared.rank == inferred.rank else [None])
    if None in dims:
        message = (f"{op.name}: declared result type {declared} and the type {inferred} inferred "
                   "from its operands share no shape")
        op.emit_error(message, ShapeMismatch(op, message))
    return inferred.with_dims(dims)
