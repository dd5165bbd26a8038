"""`place-nodes`: give every node of every graph its logical device (`device` attribute).

Reads: nodes, and any `device` already set. Writes: `device = #df.device<...>` on each node that
has none: the host unless `default-device` names another (`cluster:server:device[:numa]`).
The summary says how many nodes were placed where.

    %1 = df.node "a"(%0) pp @p : 1 -> 1   ==>   %1 = df.node "a"(%0) pp @p {device = #df.device<host>} : 1 -> 1
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from xdsl.passes import ModulePass

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

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        device = parse_device(self.default_device)
        for node in op.walk():
            if isinstance(node, NodeOp) and "device" not in node.attributes:
                node.attributes["device"] = device

    def summary(self, op: ModuleOp) -> str:
        placed = Counter(n.attributes["device"].spelling() for n in op.walk()
                         if isinstance(n, NodeOp) and isinstance(n.attributes.get("device"), DeviceAttr))
        where = ", ".join(f"{count} on {'host' if dev == '-1' else dev}" for dev, count in sorted(placed.items()))
        return f"placed {sum(placed.values())} nodes ({where or 'none'})"
