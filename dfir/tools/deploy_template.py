"""A starting deploy info file for a FlowGraph: every node on one device.

    {"keep_logic_device_order": false,
     "batch_deploy_info": [{"flow_node_list": ["a"], "logic_device_list": "0:0:0:0"},
                           {"flow_node_list": ["b"], "logic_device_list": "0:0:0:0"}]}

One entry per node, sorted by node name, so users edit the device of each node in place; the
file loads with `load_deploy_info`.
"""
from __future__ import annotations

import json

from dfir.core.errors import GeError
from dfir.frontend.dataflow.reach import reachable
from dfir.frontend.deploy.devices import parse_device_list

DEFAULT_DEVICE = "0:0:0:0"


def flow_node_names(graph) -> list[str]:
    """The names of the nodes of FlowGraph `graph` (those its outputs reach), sorted."""
    return sorted(node.name for node in reachable(graph.outputs)[1])


def deploy_template(graph, devices: str = DEFAULT_DEVICE) -> dict:
    """The deploy info placing every node of `graph` on the device list `devices` (checked,
    written as given)."""
    parsed = parse_device_list(devices)
    if isinstance(parsed, str):
        raise GeError(f"the template's device list: {parsed}")
    return {"keep_logic_device_order": False,
            "batch_deploy_info": [{"flow_node_list": [name], "logic_device_list": devices}
                                  for name in flow_node_names(graph)]}


def write_deploy_template(graph, path: str, devices: str = DEFAULT_DEVICE) -> int:
    """Write `deploy_template(graph, devices)` to `path`; returns how many nodes it places."""
    template = deploy_template(graph, devices)
    try:
        with open(path, "w", encoding="utf-8") as file:
            file.write(json.dumps(template, indent=4) + "\n")
    except OSError as error:
        raise GeError(f"cannot write the deploy template {path!r}: {error.strerror}") from None
    return len(template["batch_deploy_info"])
