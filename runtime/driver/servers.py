"""The servers a plan runs on: which worker (logical device) belongs to which server of the
resource config, and whether a server is this machine.

A device `cluster:server:device[:numa]` runs on server `server` (the resource config's
`node_id`) of cluster `cluster`; the bare host `-1` runs where the model is loaded. The resource
config is the one the model was compiled with (the `.om`'s RESOURCE_CONFIG partition, checked
against the deploy info at compile time), so every such server is listed in it.
"""
from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from typing import Sequence

from dfir.core.errors import GeError

HOST = "-1"


@dataclass(frozen=True)
class Server:
    """Server `node_id` of cluster `cluster` at `ipaddr` (`is_local`: the config marks it as the
    machine that loads the model), with the workers (`devices` indexes) and nodes placed on it."""

    cluster: int
    node_id: int
    ipaddr: str
    is_local: bool
    workers: tuple[int, ...]
    nodes: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"server {self.node_id} ({self.ipaddr})"


def plan_servers(devices: Sequence[str], nodes_of: Sequence[Sequence[str]],
                 resource_config: bytes | memoryview | None) -> list[Server]:
    """The servers of the workers `devices` (worker w runs the nodes `nodes_of[w]`), in order of
    their first worker; the host's workers belong to none, and so do all workers of a model
    without a resource config."""
    placed: dict[tuple[int, int], list[int]] = {}
    for w, device in enumerate(devices):
        if device != HOST:
            cluster, node_id = (int(part) for part in device.split(":")[:2])
            placed.setdefault((cluster, node_id), []).append(w)
    if not placed or resource_config is None:  # a plan written by hand: every device is this machine's
        return []
    listed = _listed_servers(resource_config)
    servers = []
    for (cluster, node_id), workers in placed.items():
        entry = listed.get((cluster, node_id))
        if entry is None:
            raise GeError(f"devices {[devices[w] for w in workers]} are on server {node_id} of cluster "
                          f"{cluster}, which the model's resource config does not list", "dfir.load")
        nodes = tuple(dict.fromkeys(name for w in workers for name in nodes_of[w]))
        servers.append(Server(cluster, node_id, entry.get("ipaddr", ""), entry.get("is_local") is True,
                              tuple(workers), nodes))
    return servers


def check_local(servers: Sequence[Server]) -> None:
    """GeError for the first server that is not this machine (`dfir.runtime.cluster=local` runs
    every worker here): neither marked `is_local` nor at an address of this host."""
    for server in servers:
        if not server.is_local and not is_host_address(server.ipaddr):
            raise GeError(f"{server.label} is not this machine, but nodes {list(server.nodes)} are placed "
                          f"on it; run the model on a Ray cluster (option dfir.runtime.cluster=ray) or "
                          f"place them on this machine", "dfir.load", {"option": "dfir.runtime.cluster"})


def is_host_address(ipaddr: str) -> bool:
    """Whether `ipaddr` is an address of this host (a socket can bind to it)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.bind((ipaddr, 0))
    except OSError:
        return False
    return True


def _listed_servers(resource_config: bytes | memoryview) -> dict[tuple[int, int], dict]:
    """(cluster, node_id) -> the `cluster_nodes` entry, for every server of the config."""
    config = json.loads(bytes(resource_config))
    return {(c, node["node_id"]): node for c, cluster in enumerate(config.get("cluster", []))
            for node in cluster.get("cluster_nodes", [])}
