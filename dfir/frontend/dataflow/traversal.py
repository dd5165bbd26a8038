"""The one walk over a FlowGraph's wiring that the importer and the compile cache's keys share.

1. From the outputs, depth first, find the nodes and FlowData the graph reaches; every input of
   every reached node must be connected, and the wiring must have no cycle.
2. FlowData are taken sorted by name (the feed order), nodes in post-order (producers first).
3. Every node must have a unique name, a process point and identity port maps; each process
   point is listed once, where first used, and an invoked closure before the UDF invoking it.
4. Each sub-FlowGraph (a `FlowGraphProcessPoint`, run by a node or invoked by a UDF) is walked
   the same way, once: it runs in one place (one node, or one closure of a UDF that one node
   runs), a node running it has its ports, and no FlowGraph runs itself through sub-FlowGraphs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from dfir.core.errors import GeError
from dfir.frontend.dataflow.graph import FlowData, FlowNode, ProcessPoint
from dfir.frontend.dataflow.process_points import FlowGraphProcessPoint, FuncProcessPoint
from dfir.frontend.dataflow.reach import reachable


@dataclass(frozen=True)
class FlowWalk:
    """What a FlowGraph reaches, in the order its module lists it."""

    datas: list[FlowData]
    nodes: list[FlowNode]
    points: list[tuple[ProcessPoint, FlowNode | None]]
    """Each process point with the node that first runs it (None: first met as a closure)."""
    subgraphs: dict[int, FlowWalk] = field(default_factory=dict)
    """The walk of each sub-FlowGraph, by `id` of its FlowGraphProcessPoint (step 4)."""


def walk_flow_graph(graph, _chain: tuple = ()) -> FlowWalk:
    """The walk of a FlowGraph (steps 1 to 4); each defect a GeError naming the node."""
    chain = _chain + (graph,)
    datas, nodes = reachable(graph.outputs)
    names = [d.name for d in datas]
    if len(set(names)) != len(names):
        raise GeError(f"graph {graph.name}: two FlowData share a name: {names}")
    _check_nodes(graph.name, nodes)
    points: dict[int, tuple[ProcessPoint, FlowNode | None]] = {}
    users: dict[int, str] = {}
    for node in nodes:
        _add_point(node.process_points[0], node, points)
        _check_single_use(node, users)
    subgraphs = {id(pp): _walk_subgraph(pp, node, chain) for pp, node in points.values()
                 if isinstance(pp, FlowGraphProcessPoint)}
    return FlowWalk(datas, nodes, list(points.values()), subgraphs)


def _check_single_use(node: FlowNode, users: dict[int, str]) -> None:
    """A sub-FlowGraph runs in one place: one node, or one closure of a UDF one node runs."""
    pp = node.process_points[0]
    uses = [(pp, f"node {node.name}")] if isinstance(pp, FlowGraphProcessPoint) else []
    if isinstance(pp, FuncProcessPoint):
        uses += [(closure, f"node {node.name} as invoked closure {key}")
                 for key, closure in sorted(pp.invoked_closures.items())
                 if isinstance(closure, FlowGraphProcessPoint)]
    for sub, user in uses:
        if id(sub) in users:
            raise GeError(f"FlowGraphProcessPoint {sub.name} is used by {users[id(sub)]} and by {user}; "
                          "a sub-FlowGraph runs in one place: give each use its own FlowGraphProcessPoint")
        users[id(sub)] = user


def _walk_subgraph(pp: FlowGraphProcessPoint, node: FlowNode | None, chain: tuple) -> FlowWalk:
    sub = pp.flow_graph
    if any(sub is graph for graph in chain):
        path = " -> ".join(graph.name for graph in (*chain, sub))
        raise GeError(f"FlowGraph {sub.name} runs itself through sub-FlowGraphs: {path}")
    walk = walk_flow_graph(sub, chain)
    if node is not None and (node.input_num, node.output_num) != (len(walk.datas), len(sub.outputs)):
        raise GeError(f"node {node.name} ({node.loc}) has {node.input_num} inputs and {node.output_num} "
                      f"outputs but sub-FlowGraph {sub.name} has {len(walk.datas)} inputs and "
                      f"{len(sub.outputs)} outputs")
    return walk


def _check_nodes(graph_name: str, nodes: list[FlowNode]) -> None:
    seen: dict[str, FlowNode] = {}
    for node in nodes:
        if node.name in seen:
            raise GeError(f"graph {graph_name}: two nodes are named {node.name} "
                          f"({seen[node.name].loc} and {node.loc})")
        seen[node.name] = node
        if not node.process_points:
            raise GeError(f"node {node.name} ({node.loc}) has no process point")
        _check_mappings(node)


def _check_mappings(node: FlowNode) -> None:
    for ports, kind in ((node.input_map, "input"), (node.output_map, "output")):
        for index, (_, pp_index) in ports.items():
            if pp_index != index:
                raise GeError(f"node {node.name} ({node.loc}): map_{kind} {index} -> process point "
                              f"{kind} {pp_index}: only identity mappings are supported yet")


def _add_point(pp: ProcessPoint, node: FlowNode | None, points: dict) -> None:
    if id(pp) in points:
        return
    if isinstance(pp, FuncProcessPoint):
        for _, closure in sorted(pp.invoked_closures.items()):
            _add_point(closure, None, points)
    points[id(pp)] = (pp, node)
