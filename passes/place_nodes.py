"""`place-nodes`: give every node of every graph its logical device (`device` attribute).

Reads: each node's name, `alias` and any `device` already set; the deploy info file
`deploy-info` and the resource config `resource-config` (paths; empty: none). Writes
`device = #df.device<...>` on every node:
  1. a node the deploy info names (by its name, else by its alias) gets that device, which the
     resource config must declare when one is given;
  2. any other node keeps the device it has, or gets `default-device` (the host unless given,
     `cluster:server:device[:numa]`).
Every node the deploy info names must exist. The summary says how many nodes were placed where
and how many by the deploy info.

    %1 = df.node "a"(%0) pp @p : 1 -> 1   ==>   %1 = df.node "a"(%0) pp @p {device = #df.device<host>} : 1 -> 1

and with a deploy info of `{"deploy_info": [{"flow_node_name": "a", "logic_device_id": "0:0:1"}]}`:

    %1 = df.node "a"(%0) pp @p : 1 -> 1   ==>   %1 = df.node "a"(%0) pp @p {device = #df.device<0:0:1>} : 1 -> 1
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from dfir.dialects.df import NodeOp
from dfir.dialects.df_attrs import DeviceAttr


def parse_device(spelling: str) -> DeviceAttr:
    """`host` or `-1` -> the host; `0:0:1:0` -> that device."""
    if spelling in ("host", "-1"):
        return DeviceAttr()
    try:
        return DeviceAttr([int(part) for part in spelling.split(":")])
    except ValueError:
        from dfir.ge.error import GeError
        raise GeError(f"device '{spelling}' is not host, -1 or cluster:server:device[:numa]") from None


@dataclass(frozen=True)
class PlaceNodes(ModulePass):
    name = "place-nodes"

    default_device: str = "host"
    deploy_info: str = ""
    resource_config: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        device = parse_device(self.default_device)
        placements = self._placements()
        nodes = [node for node in op.walk() if isinstance(node, NodeOp)]
        placed = set()
        for node in nodes:
            key = next((k for k in (node.node_name.data, _alias(node)) if k in placements), None)
            if key is not None:
                node.attributes["device"] = DeviceAttr(placements[key].device.ids)
                placed.add(key)
            elif "device" not in node.attributes:
                node.attributes["device"] = device
        unknown = [key for key in placements if key not in placed]
        if unknown:
            names = sorted({node.node_name.data for node in nodes})
            raise DiagnosticException(
                f"file={self.deploy_info}; {placements[unknown[0]].where}: no node is named or aliased "
                f"'{unknown[0]}'; the nodes are {names}")

    def _placements(self) -> dict:
        """Node name or alias -> `Placement` from the deploy info, checked against the resources."""
        if not self.deploy_info:
            return {}
        from dfir.deploy import load_deploy_info, load_resource_devices
        from dfir.ge.error import GeError
        try:
            placements = load_deploy_info(self.deploy_info).placements
            if self.resource_config:
                resources = load_resource_devices(self.resource_config)
                for key, placement in placements.items():
                    resources.check(placement.device, f"deploy info {placement.where} (node '{key}')")
        except GeError as error:
            raise DiagnosticException(str(error)) from None
        return placements

    def summary(self, op: ModuleOp) -> str:
        nodes = [n for n in op.walk() if isinstance(n, NodeOp) and isinstance(n.attributes.get("device"), DeviceAttr)]
        placed = Counter(n.attributes["device"].spelling() for n in nodes)
        where = ", ".join(f"{count} on {'host' if dev == '-1' else dev}" for dev, count in sorted(placed.items()))
        placements = self._placements()
        deployed = sum(n.node_name.data in placements or _alias(n) in placements for n in nodes)
        by_file = f"; {deployed} by the deploy info" if self.deploy_info else ""
        return f"placed {sum(placed.values())} nodes ({where or 'none'}){by_file}"


def _alias(node: NodeOp) -> str | None:
    alias = node.attributes.get("alias")
    return alias.data if isinstance(alias, StringAttr) else None
