"""The logical devices a resource (numa) config declares.

    {"cluster": [{"cluster_nodes": [{"node_id": 0, "item_list": [{"item_id": 0}, {"item_id": 1}]}]}]}

declares devices 0:0:0 and 0:0:1: `cluster:server:device` is the cluster's position in `cluster`,
the server's `node_id` and the item's `item_id`. Only these fields are read here.
"""
from __future__ import annotations

from dataclasses import dataclass

from dfir.deploy.devices import DeviceId
from dfir.deploy.json_document import JsonDocument
from dfir.ge.error import GeError


@dataclass(frozen=True)
class ResourceDevices:
    path: str
    devices: frozenset[tuple[int, int, int]]  # (cluster, server, device)

    def check(self, device: DeviceId, used_by: str) -> None:
        """GeError unless the config declares `device`; `used_by` says who names it."""
        if (device.cluster, device.server, device.device) not in self.devices:
            declared = ", ".join(":".join(map(str, d)) for d in sorted(self.devices)) or "none"
            raise GeError(f"{used_by} names device {device.spelling()}, which the resource config "
                          f"does not declare (it declares {declared})", context={"file": self.path})


def load_resource_devices(path: str) -> ResourceDevices:
    """The devices the resource config at `path` declares; a GeError naming file and JSON path."""
    document = JsonDocument.read(path, "resource config")
    root = document.expect(document.root, dict, "$")
    devices = set()
    for c, (cluster_where, cluster) in enumerate(document.objects(root, "$", "cluster")):
        for node_where, node in document.objects(cluster, cluster_where, "cluster_nodes"):
            server = _id(document, node, node_where, "node_id")
            for item_where, item in document.objects(node, node_where, "item_list"):
                devices.add((c, server, _id(document, item, item_where, "item_id")))
    return ResourceDevices(path, frozenset(devices))


def _id(document: JsonDocument, parent: dict, where: str, key: str) -> int:
    value = document.field(parent, where, key, int)
    if value < 0:
        raise document.error(f"{where}.{key}", f"expected a non-negative integer, got {value}")
    return value
