"""Flatten a `df.graph` and the sub-FlowGraphs it runs into the plan's nodes and edges.

The runtime knows no nesting: a sub-FlowGraph's nodes run as plan nodes, on their own devices,
with the same channels as any other node.

1. Walk the graph's logical nodes (the instances of a replicated node are one) in order. A node
   running a sub-FlowGraph (`df.flow_graph_pp`) is no plan node: the sub-graph's nodes take its
   place, named `<node>/<sub node>`; the sub-graph's `df.data` k stands for the node's input k,
   and the node's output p for the sub-graph's output p.
2. A node whose UDF invokes sub-FlowGraphs is a plan node, followed by each closure's nodes
   (`<node>/<key>/<sub node>`), whose `df.data` k is input k of flow closure c
   (`ClosureRef(c, k)`): the plan's `closures[c]`, whose outputs are the sub-graph's, is what
   `run_flow_model(key, ...)` feeds and fetches.
3. Plan nodes are numbered in that order (producers stay before consumers: each graph is in
   topological order, and a sub-graph reads only its entries and itself); an edge resolves
   through gathers, sub-graph entries and sub-graph outputs to a graph input, a closure input
   or a plan node's port.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from xdsl.ir import SSAValue

from dfir.core.errors import GeError
from dfir.dialects.df import DataOp, FlowGraphPpOp, FuncPpOp, GatherOp, GraphOp, NodeOp
from dfir.dialects.df_attrs import InstanceAttr
from dfir.om.plan import ClosureRef, DataRef, FlowClosure, NodeRef, Ref

Entry = Ref | SSAValue  # what a sub-graph's df.data stands for: a ref, or a value of its parent


@dataclass(frozen=True)
class FlatNode:
    """A plan node: its name (prefixed by the nodes it is nested in) and its instances."""

    name: str
    instances: list[NodeOp]


@dataclass
class Flattening:
    """The plan nodes of a graph and its sub-FlowGraphs (steps 1 and 2); `ref` resolves edges."""

    symbols: Mapping[str, object]
    nodes: list[FlatNode] = field(default_factory=list)
    entries: dict[GraphOp, list[Entry]] = field(default_factory=dict)
    index_of: dict[NodeOp, int] = field(default_factory=dict)
    runs_graph: dict[NodeOp, GraphOp] = field(default_factory=dict)
    closures: list[tuple[int, str, GraphOp]] = field(default_factory=list)

    def add_graph(self, graph: GraphOp, entries: list[Entry], prefix: str) -> None:
        self.entries[graph] = entries
        for instances in logical_nodes(graph):
            node = instances[0]
            name = prefix + node.node_name.data
            pp = self.symbols.get(node.pp.root_reference.data)
            if isinstance(pp, FlowGraphPpOp):
                sub = self._graph_of(pp)
                self.runs_graph[node] = sub
                self.add_graph(sub, list(node.inputs), f"{name}/")
                continue
            index = len(self.nodes)
            self.nodes.append(FlatNode(name, instances))
            self.index_of.update((instance, index) for instance in instances)
            if isinstance(pp, FuncPpOp):
                self._add_closures(index, name, pp)

    def _add_closures(self, index: int, name: str, pp: FuncPpOp) -> None:
        for closure in pp.closures.block.ops:
            target = self.symbols.get(closure.pp.root_reference.data)
            if isinstance(target, FlowGraphPpOp):
                sub, c = self._graph_of(target), len(self.closures)
                key = closure.key.data
                self.closures.append((index, key, sub))
                self.add_graph(sub, [ClosureRef(c, k) for k in range(len(sub.data_ops))], f"{name}/{key}/")

    def _graph_of(self, pp: FlowGraphPpOp) -> GraphOp:
        graph = self.symbols.get(pp.graph.root_reference.data)
        if not isinstance(graph, GraphOp):
            raise GeError(f"{pp.label}: sub-FlowGraph @{pp.graph.root_reference.data} does not exist")
        return graph

    def ref(self, value: SSAValue, where: str) -> Ref:
        """The plan ref of `value` (step 3)."""
        if isinstance(value.owner, GatherOp):
            value = value.owner.inputs[0]
        owner = value.owner
        if isinstance(owner, DataOp):
            entry = self.entries[owner.parent_op()][owner.index.value.data]
            return self.ref(entry, where) if isinstance(entry, SSAValue) else entry
        if owner in self.runs_graph:
            return self.ref(self.runs_graph[owner].output_op.outputs[value.index], where)
        if owner not in self.index_of:
            raise GeError(f"{where} comes from {owner.name}, not a node or graph input")
        return NodeRef(self.index_of[owner], value.index)

    def flow_closures(self) -> tuple[FlowClosure, ...]:
        return tuple(FlowClosure(node, key, len(sub.data_ops),
                                 tuple(self.ref(v, f"output {j} of closure '{key}'")
                                       for j, v in enumerate(sub.output_op.outputs)))
                     for node, key, sub in self.closures)


def flatten(graph: GraphOp, symbols: Mapping[str, object]) -> Flattening:
    """The flattening of top-level graph `graph`; `symbols` are the module's symbol ops."""
    flattening = Flattening(symbols)
    flattening.add_graph(graph, [DataRef(d.index.value.data) for d in graph.data_ops], "")
    return flattening


def logical_nodes(graph: GraphOp) -> list[list[NodeOp]]:
    """The graph's nodes, each as its instances in instance order (one for an unreplicated
    node), in the order of their first instance. Instances share the node's name."""
    by_name: dict[str, list[NodeOp]] = {}
    for node in graph.node_ops:
        by_name.setdefault(node.node_name.data, []).append(node)
    return [sorted(instances, key=_instance_index) for instances in by_name.values()]


def _instance_index(node: NodeOp) -> int:
    instance = node.attributes.get("instance")
    return instance.index.data if isinstance(instance, InstanceAttr) else 0
