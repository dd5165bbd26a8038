"""The resource config (`numa_config.json`): the clusters, servers and devices a model may use.

    {"cluster": [{"cluster_nodes": [{"node_id": 0, "node_type": "ATLAS800", "ipaddr": "192.168.1.2",
                                     "item_list": [{"item_id": 0}, {"item_id": 1}]}]}],
     "node_def": [...], "item_def": [...]}

declares devices 0:0:0 and 0:0:1. A device id `cluster:server:device` addresses the cluster by its
position in `cluster`, the server by its `node_id` and the device by its position in the server's
`item_list` (not by `item_id`); a numa part, a compute unit inside the device, is not checked
here. The host CPU of a server (device -1) exists when the server does.

The whole file is checked against its shape (`_RESOURCE_CONFIG`); then node ids are unique in a
cluster, item ids in a server, type names in `node_def` / `item_def`, and when those lists are
there every `node_type` (and a node type's `item_type`) they name is defined.
"""
from __future__ import annotations

from dataclasses import dataclass

from dfir.core.errors import GeError
from dfir.frontend.deploy.devices import MAX_VALUE, DeviceId
from dfir.frontend.deploy.json_document import JsonDocument
from dfir.frontend.deploy.shape import BOOLEAN, IPV4, NON_NEGATIVE, PORT, STRING, ListOf, Obj, Value, check

def _device_list_id(value: int) -> str | None:
    """An id a device list can name: what the `cluster:server:device` grammar allows."""
    return None if 0 <= value <= MAX_VALUE else f"expected an id in [0, {MAX_VALUE}] (what a device list can name)"


_ID = Value(int, _device_list_id)
_ITEM = Obj({"item_id": _ID}, {"device_id": _ID, "ipaddr": IPV4})
_NODE = Obj({"node_id": _ID, "node_type": STRING, "ipaddr": IPV4, "item_list": ListOf(_ITEM)},
            {"port": PORT, "memory": Value((str, int)), "is_local": BOOLEAN, "auth_lib_path": STRING,
             "deploy_res_path": STRING, "data_panel": Obj({}, {"avail_ports": STRING})})
_TOPOLOGY = Obj({"type": STRING, "topos": ListOf(Obj({"plane_id": Value((int, str)),
                                                      "devices": ListOf(NON_NEGATIVE)}))},
                {"protocol": STRING})
_NODE_DEF = Obj({"node_type": STRING, "resource_type": STRING, "support_links": STRING,
                 "item_type": STRING, "inter_item_memory_access_mode": STRING},
                {"h2d_bw": Value((int, str)),
                 "item_topology": ListOf(Obj({"links_mode": STRING,
                                              "links": ListOf(ListOf(NON_NEGATIVE, non_empty=True))}))})
_ITEM_DEF = Obj({"item_type": STRING, "resource_type": STRING, "memory": STRING, "aic_type": STRING})
_RESOURCE_CONFIG = Obj(
    {"cluster": ListOf(Obj({"cluster_nodes": ListOf(_NODE, non_empty=True)},
                           {"nodes_topology": _TOPOLOGY}), non_empty=True)},
    {"node_def": ListOf(_NODE_DEF), "item_def": ListOf(_ITEM_DEF)})


@dataclass(frozen=True)
class Server:
    """One `cluster_nodes` entry: server `node_id` of cluster `cluster` with `device_count` devices."""

    cluster: int
    node_id: int
    node_type: str
    ipaddr: str
    device_count: int

    @property
    def devices(self) -> tuple[DeviceId, ...]:
        return tuple(DeviceId(self.cluster, self.node_id, index) for index in range(self.device_count))

    def describe_devices(self) -> str:
        """"devices 0:0:0..0:0:3", "device 0:0:0" or "no devices"."""
        spellings = [device.spelling() for device in self.devices]
        if len(spellings) > 1:
            return f"devices {spellings[0]}..{spellings[-1]}"
        return f"device {spellings[0]}" if spellings else "no devices"


@dataclass(frozen=True)
class ResourceConfig:
    """The servers of each cluster (`clusters[c]`, in file order) the config at `path` declares."""

    path: str
    clusters: tuple[tuple[Server, ...], ...]

    def server(self, cluster: int, node_id: int) -> Server | None:
        if not 0 <= cluster < len(self.clusters):
            return None
        return next((s for s in self.clusters[cluster] if s.node_id == node_id), None)

    @property
    def devices(self) -> tuple[DeviceId, ...]:
        """Every device (three-part ids), cluster by cluster, server by server."""
        return tuple(d for servers in self.clusters for server in servers for d in server.devices)

    def check(self, device: DeviceId, used_by: str) -> None:
        """GeError unless the config declares `device`; `used_by` says who names it (a sentence
        subject, e.g. "deploy info x.json $.deploy_info[0].flow_node_name (node 'a')")."""
        missing = self._why_missing(device)
        if missing:
            raise GeError(f"{used_by} names device {device.spelling()}, which the resource config does "
                          f"not declare ({missing})", context={"file": self.path})

    def _why_missing(self, device: DeviceId) -> str | None:
        if not 0 <= device.cluster < len(self.clusters):
            count = len(self.clusters)
            return "it declares cluster 0" if count == 1 else f"it declares clusters 0..{count - 1}"
        server = self.server(device.cluster, device.server)
        if server is None:
            ids = ", ".join(str(s.node_id) for s in self.clusters[device.cluster])
            return f"cluster {device.cluster} has servers {ids}"
        if not device.is_host and device.device >= server.device_count:
            return f"server {server.node_id} of cluster {server.cluster} has {server.describe_devices()}"
        return None


def load_resource_config(path: str) -> ResourceConfig:
    """The resource config at `path`, fully checked; a GeError naming the file, the JSON path and
    the value on any defect."""
    document = JsonDocument.read(path, "resource config")
    check(document, document.root, _RESOURCE_CONFIG)
    root = document.root
    _check_definitions(document, root)
    clusters = []
    for c, cluster in enumerate(root["cluster"]):
        nodes = cluster["cluster_nodes"]
        where = f"$.cluster[{c}].cluster_nodes"
        _check_unique(document, nodes, where, "node_id")
        for n, node in enumerate(nodes):
            _check_unique(document, node["item_list"], f"{where}[{n}].item_list", "item_id")
        clusters.append(tuple(Server(c, node["node_id"], node["node_type"], node["ipaddr"],
                                     len(node["item_list"])) for node in nodes))
    return ResourceConfig(path, tuple(clusters))


def _check_definitions(document: JsonDocument, root: dict) -> None:
    """Type names are defined once, and used ones are defined when the definition lists exist."""
    _check_unique(document, root.get("node_def", []), "$.node_def", "node_type")
    _check_unique(document, root.get("item_def", []), "$.item_def", "item_type")
    if "node_def" in root:
        uses = [(f"$.cluster[{c}].cluster_nodes[{n}]", node) for c, cluster in enumerate(root["cluster"])
                for n, node in enumerate(cluster["cluster_nodes"])]
        _check_defined(document, uses, "node_type", root["node_def"], "$.node_def")
    if "item_def" in root:
        uses = [(f"$.node_def[{i}]", node_def) for i, node_def in enumerate(root.get("node_def", []))]
        _check_defined(document, uses, "item_type", root["item_def"], "$.item_def")


def _check_defined(document: JsonDocument, uses: list[tuple[str, dict]], key: str,
                   definitions: list[dict], definitions_where: str) -> None:
    defined = [definition[key] for definition in definitions]
    for where, entry in uses:
        if entry[key] not in defined:
            listed = ", ".join(f'"{name}"' for name in defined) or "none"
            raise document.error(f"{where}.{key}", f'"{entry[key]}" is not defined in {definitions_where} '
                                                   f"(it defines {listed})")


def _check_unique(document: JsonDocument, entries: list[dict], where: str, key: str) -> None:
    first: dict = {}
    for index, entry in enumerate(entries):
        value = entry[key]
        if value in first:
            raise document.error(f"{where}[{index}].{key}",
                                 f"{key} {value!r} is already used by {where}[{first[value]}]")
        first[value] = index
