"""`sort-nodes`: order each graph's body topologically (inputs, then nodes, then the output).

Reads: the df.graph bodies (graph regions, any order). Writes: the same ops, reordered so that
every producer precedes its consumers; among ready nodes the original order is kept, so an
already-sorted graph is unchanged. Lowering relies on this order.

    df.graph @g {                                   df.graph @g {
      %2 = df.node "b"(%1) pp @p : 1 -> 1             %0 = df.data "x" index 0
      %1 = df.node "a"(%0) pp @p : 1 -> 1    ==>      %1 = df.node "a"(%0) pp @p : 1 -> 1
      %0 = df.data "x" index 0                        %2 = df.node "b"(%1) pp @p : 1 -> 1
      df.output %2                                    df.output %2
    }                                               }
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from dfir.dialects.df import GraphOp, NodeOp


def topological_nodes(graph: GraphOp) -> list[NodeOp]:
    """Kahn's algorithm, ties broken by position in the block (stable)."""
    nodes = graph.node_ops
    position = {node: i for i, node in enumerate(nodes)}
    waiting = {node: sum(isinstance(v.owner, NodeOp) for v in node.inputs) for node in nodes}
    ready = [position[n] for n, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order: list[NodeOp] = []
    while ready:
        node = nodes[heapq.heappop(ready)]
        order.append(node)
        for result in node.outputs:
            for use in result.uses:
                consumer = use.operation
                if consumer in waiting:
                    waiting[consumer] -= 1
                    if waiting[consumer] == 0:
                        heapq.heappush(ready, position[consumer])
    assert len(order) == len(nodes), "verified graphs are acyclic"
    return order


@dataclass(frozen=True)
class SortNodes(ModulePass):
    name = "sort-nodes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in op.walk():
            if isinstance(graph, GraphOp):
                self._sort(graph)

    @staticmethod
    def _sort(graph: GraphOp) -> None:
        block = graph.body.block
        ordered = [*sorted(graph.data_ops, key=lambda d: d.index.value.data), *topological_nodes(graph),
                   graph.output_op]
        if list(block.ops) == ordered:
            return
        for op in ordered:
            op.detach()
        block.add_ops(ordered)
