"""`infer-shape-ranges`: propagate shape ranges through every op of every `ge.graph`.

Reads: the `ge.data` types (dimension ranges from the graph, `ge.inputShape` or a compile config)
and every op's shape and value functions (`infer_types`, `infer_values` on the op class, see
dialects/ge.py), so a new op needs nothing here. Writes: each op result's type, narrowed to
what its operands allow; an op whose operands no longer fit it (or whose declared type shares
no shape with the inferred one) is an error at that op naming both shapes.

    %x = ge.data 0 "x" : !ge.tensor<[1:8, 4], f32>
    %y = ge.matmul %x, %w : (!ge.tensor<[1:8, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
    ==>
    %y = ge.matmul %x, %w : (!ge.tensor<[1:8, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[1:8, 2], f32>

Algorithm, per graph, in one walk of the block (operands are defined before their uses):
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

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from dfir.dialects import ge
from dfir.dialects.ge import ValueRanges
from dfir.dialects.ge_types import GeTensorType

__all__ = ["InferShapeRanges", "ShapeMismatch", "infer_graph_ranges", "range_counts"]


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


def range_counts(module: ModuleOp) -> tuple[int, int, int, int]:
    """(graphs, static values, bounded dynamic values, unbounded values) over every ge.graph."""
    graphs = static = bounded = unbounded = 0
    for graph in module.walk():
        if not isinstance(graph, ge.GraphOp):
            continue
        graphs += 1
        for op in graph.block.ops:
            for result in op.results:
                t = result.type
                if t.is_static():
                    static += 1
                elif t.max_element_count() is None:
                    unbounded += 1
                else:
                    bounded += 1
    return graphs, static, bounded, unbounded


@dataclass(frozen=True)
class InferShapeRanges(ModulePass):
    name = "infer-shape-ranges"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in list(op.walk()):
            if isinstance(graph, ge.GraphOp):
                infer_graph_ranges(graph)

    def summary(self, op: ModuleOp) -> str:
        graphs, static, bounded, unbounded = range_counts(op)
        if not graphs:
            return "no ge graphs"
        return (f"{static + bounded + unbounded} values in {graphs} ge graph{'' if graphs == 1 else 's'}: "
                f"{static} static, {bounded} bounded, {unbounded} unbounded")
