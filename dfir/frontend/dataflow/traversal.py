"""The one walk over a FlowGraph's wiring that the importer and the compile cache's keys share.

1. From the outputs, depth first, find the nodes and FlowData the graph reaches; every input of
   every reached node must be connected, and the wiring must have no cycle.
2. FlowData are taken sorted by name (the feed order), nodes in post-order (producers first).
3. Every node must have a unique name, a process point and identity port maps; each process
   point is listed once, where first used, and an invoked closure before the UDF invoking it.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from dfir.core.errors import GeError
from dfir.frontend.dataflow.graph import FlowData, FlowNode, FlowOutput, ProcessPoint
from dfir.frontend.dataflow.process_points import FuncProcessPoint


@dataclass(frozen=True)
class FlowWalk:
    """What a FlowGraph reaches, in the order its module lists it."""

    datas: list[FlowData]
    nodes: list[FlowNode]
    points: list[tuple[ProcessPoint, FlowNode | None]]
    """Each process point with the node that first runs it (None: first met as a closure)."""


def walk_flow_graph(graph) -> FlowWalk:
    """The walk of a FlowGraph (steps 1 to 3); each defect a GeError naming the node."""
    datas, nodes = reachable(graph.outputs)
    names = [d.name for d in datas]
    if len(set(names)) != len(names):
        raise GeError(f"graph {graph.name}: two FlowData share a name: {names}")
    _check_nodes(graph.name, nodes)
    points: dict[int, tuple[ProcessPoint, FlowNode | None]] = {}
    for node in nodes:
        _add_point(node.process_points[0], node, points)
    return FlowWalk(datas, nodes, list(points.values()))


def reachable(outputs: Sequence[FlowOutput]) -> tuple[list[FlowData], list[FlowNode]]:
    """(FlowData sorted by name, nodes in post-order) reachable from `outputs`."""
    datas: dict[int, FlowData] = {}
    order: list[FlowNode] = []
    state: dict[int, str] = {}
    for output in outputs:
        _visit(output.node, datas, order, state)
    return sorted(datas.values(), key=lambda d: d.name), order


def _visit(root: FlowNode, datas: dict, order: list, state: dict) -> None:
    stack: list[tuple[FlowNode, Iterator]] = [(root, iter(_anchors(root)))]
    if id(root) in state:
        return
    state[id(root)] = "open"
    while stack:
        node, anchors = stack[-1]
        anchor = next(anchors, None)
        if anchor is None:
            stack.pop()
            state[id(node)] = "done"
            order.append(node)
        elif isinstance(anchor, FlowData):
            datas[id(anchor)] = anchor
        elif state.get(id(anchor.node)) == "open":
            raise GeError(f"the graph has a cycle through node {anchor.node.name} ({anchor.node.loc})")
        elif id(anchor.node) not in state:
            state[id(anchor.node)] = "open"
            stack.append((anchor.node, iter(_anchors(anchor.node))))


def _anchors(node: FlowNode) -> list[FlowData | FlowOutput]:
    for index, anchor in enumerate(node.input_anchors):
        if anchor is None:
            raise GeError(f"node {node.name} ({node.loc}): input {index} is not connected")
    return node.input_anchors


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
