"""The deploy info file: which logical device each flow node runs on.

    {"batch_deploy_info": [{"flow_node_list": ["a", "b"], "logic_device_list": "0:0:1"}],
     "deploy_info": [{"flow_node_name": "c", "logic_device_id": "0:0:2:0"}]}

At least one of the two lists must be there. Nodes are named by their name or alias, each at
most once in the file. One device per entry for now; keys not read here
(`redundant_logic_device_list`, `invoke_list`, ...) are left to the loader that will.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from dfir.deploy.devices import DeviceId, parse_device_id
from dfir.deploy.json_document import JsonDocument


@dataclass(frozen=True)
class Placement:
    """A node's device and the JSON path of the entry that names the node."""

    device: DeviceId
    where: str


@dataclass
class DeployInfo:
    document: JsonDocument
    placements: dict[str, Placement] = field(default_factory=dict)  # node name or alias -> placement

    @property
    def path(self) -> str:
        return self.document.path


def load_deploy_info(path: str) -> DeployInfo:
    """The placements the file at `path` gives; a GeError naming the file and JSON path on a defect."""
    document = JsonDocument.read(path, "deploy info")
    root = document.expect(document.root, dict, "$")
    if "deploy_info" not in root and "batch_deploy_info" not in root:
        raise document.error("$", "expected 'deploy_info' or 'batch_deploy_info'")
    info = DeployInfo(document)
    for where, entry in document.objects(root, "$", "batch_deploy_info", []):
        device = _device(document, entry, where, "logic_device_list")
        for j, node in enumerate(document.field(entry, where, "flow_node_list", list)):
            node_where = f"{where}.flow_node_list[{j}]"
            _place(info, document.expect(node, str, node_where), Placement(device, node_where))
    for where, entry in document.objects(root, "$", "deploy_info", []):
        node = document.field(entry, where, "flow_node_name", str)
        _place(info, node, Placement(_device(document, entry, where, "logic_device_id"),
                                     f"{where}.flow_node_name"))
    return info


def _device(document: JsonDocument, entry: dict, where: str, key: str) -> DeviceId:
    parsed = parse_device_id(document.field(entry, where, key, str))
    if isinstance(parsed, str):
        raise document.error(f"{where}.{key}", parsed)
    return parsed


def _place(info: DeployInfo, node: str, placement: Placement) -> None:
    earlier = info.placements.get(node)
    if earlier is not None:
        raise info.document.error(placement.where, f"node '{node}' is already placed by {earlier.where}")
    info.placements[node] = placement
