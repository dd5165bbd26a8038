"""`infer-shape-ranges`: propagate shape ranges through every op of every `ge.graph`.

Reads: the `ge.data` types (dimension ranges from the graph, `ge.inputShape` or a compile config)
and every op's shape and value functions (`infer_types`, `infer_values` on the op class, see
dialects/ge/), so a new op needs nothing here. Writes: each op result's type, narrowed to
what its operands allow; an op whose operands no longer fit it (or whose declared type shares
no shape with the inferred one) is an error at that op naming both shapes.

    %x = ge.data 0 "x" : !ge.tensor<[1:8, 4], f32>
    %y = ge.matmul %x, %w : (!ge.tensor<[1:8, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[-1, 2], f32>
    ==>
    %y = ge.matmul %x, %w : (!ge.tensor<[1:8, 4], f32>, !ge.tensor<[4, 2], f32>) -> !ge.tensor<[1:8, 2], f32>

The algorithm is `dfir.dialects.ge_shape_inference`'s.
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from dfir.dialects import ge
from dfir.dialects.ge_shape_inference import ShapeMismatch, infer_graph_ranges

__all__ = ["InferShapeRanges", "ShapeMismatch", "infer_graph_ranges", "range_counts"]


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
