"""GE's `dataflow.utils.generate_deploy_template(graph, file_path)`: a deploy info file placing
every node of a FlowGraph on device `0:0:0:0`.

1. From the graph's outputs, take nodes off a stack (the last output's node first), each once,
   pushing the producers of its inputs in input order.
2. Each node gets one `batch_deploy_info` entry, in that order, named by its alias when it has
   one (the name deploy files use), else by its name, on `0:0:0:0`.
3. Write `{"batch_deploy_info": [...]}` as JSON indented by 4 and say so on stdout.

`dfir deploy template` writes the same kind of file sorted by node name, on devices of choice.
"""
from __future__ import annotations

import json

from dfir.core.errors import GeError
from dfir.frontend.dataflow.graph import FlowData

TEMPLATE_DEVICE = "0:0:0:0"


def deploy_template_entries(graph) -> list[dict]:
    """Steps 1 and 2 for FlowGraph `graph`."""
    stack = [output.node for output in graph.outputs]
    seen: set[str] = set()
    entries = []
    while stack:
        node = stack.pop()
        if node.name in seen:
            continue
        seen.add(node.name)
        name = node.alias if node.alias is not None else node.name
        entries.append({"flow_node_list": [name], "logic_device_list": TEMPLATE_DEVICE})
        stack.extend(anchor.node for anchor in node.input_anchors
                     if anchor is not None and not isinstance(anchor, FlowData))
    return entries


def generate_deploy_template(graph, file_path: str) -> None:
    """Write the deploy template of FlowGraph `graph` to `file_path` (step 3)."""
    try:
        with open(file_path, "w", encoding="utf-8") as file:
            json.dump({"batch_deploy_info": deploy_template_entries(graph)}, file, indent=4)
    except OSError as error:
        raise GeError(f"generate_deploy_template: cannot write {file_path!r}: {error.strerror}") from None
    print("generate deploy template success, file:", file_path)
