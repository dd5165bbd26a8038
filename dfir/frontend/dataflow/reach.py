"""What a FlowGraph's outputs reach: its FlowData (sorted by name, the feed order) and its nodes
(producers first), depth first; an unconnected input or a cycle is a GeError naming the node."""
from __future__ import annotations

from collections.abc import Iterator, Sequence

from dfir.core.errors import GeError
from dfir.frontend.dataflow.graph import FlowData, FlowNode, FlowOutput


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
