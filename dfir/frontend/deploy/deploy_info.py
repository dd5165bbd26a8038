"""The deploy info file (`ge.experiment.data_flow_deploy_info_path`): the logical devices each flow
node runs on, one instance per device.

    {"keep_logic_device_order": false,
     "batch_deploy_info": [{"flow_node_list": ["a", "b"], "logic_device_list": "0:0:0~1:0",
                            "invoke_list": [{"invoke_name": "sub", "logic_device_list": "0:0:2,0:0:3"}],
                            "udf_timeout_ms": 5000}],
     "deploy_info": [{"flow_node_name": "c", "logic_device_id": "-1"}]}

Rules (each broken one is a GeError naming the file, the JSON path and the value):
  1. the file has the shape `_DEPLOY_INFO` (no unknown key, no wrong kind, no empty
     `flow_node_list`) and at least one of `deploy_info` / `batch_deploy_info`;
  2. every device list parses (dfir.frontend.deploy.devices) and does not mix hosts (device -1) with devices;
  3. a node (name or alias) is placed once in the file;
  4. an invoke gives exactly one of `deploy_info_file` (a sub-FlowGraph) and `logic_device_list`
     (a sub-FlowGraph or an AscendGraph); an `invoke_name` appears once per `invoke_list`;
  5. a `deploy_info_file` exists (relative to the file naming it), loads under these rules and
     does not include itself, directly or through other files.
A node's instances are its devices in the list's order when `keep_logic_device_order` is true,
else sorted by their ids. A batch entry's `udf_timeout_ms` (1 to 86400000) is the timeout of one
call of each UDF node it places (`place-nodes` writes it on the node; a GE graph node has none).
Whether the devices exist is `check_deploy_devices`'s business. The rules
that depend on what an invoked closure runs (a sub-FlowGraph's parent has one instance, an
AscendGraph has one device per parent instance) need the graph: `InvokePlacement.check`, called by
the `place-nodes` pass. (The seed's example deploy file gives a two-device node a
`deploy_info_file` invoke, so it loads here and only a graph whose closure runs a sub-FlowGraph
refuses it.)
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from dfir.core.errors import GeError
from dfir.core.udf_timeout import udf_timeout_problem
from dfir.frontend.deploy.devices import DeviceId, parse_device_list
from dfir.frontend.deploy.json_document import JsonDocument
from dfir.frontend.deploy.resource_config import ResourceConfig, load_resource_config
from dfir.frontend.deploy.shape import BOOLEAN, STRING, ListOf, Obj, Value, check

_INVOKE = Obj({"invoke_name": STRING}, {"deploy_info_file": STRING, "logic_device_list": STRING,
                                        "redundant_logic_device_list": STRING})
_BATCH_ENTRY = Obj({"flow_node_list": ListOf(STRING, non_empty=True), "logic_device_list": STRING},
                   {"redundant_logic_device_list": STRING, "invoke_list": ListOf(_INVOKE),
                    "udf_timeout_ms": Value(int, udf_timeout_problem)})
_ENTRY = Obj({"flow_node_name": STRING, "logic_device_id": STRING})
_DEPLOY_INFO = Obj({}, {"deploy_info": ListOf(_ENTRY), "batch_deploy_info": ListOf(_BATCH_ENTRY),
                        "keep_logic_device_order": BOOLEAN, "dynamic_schedule_enable": BOOLEAN})


@dataclass(frozen=True)
class InvokePlacement:
    """Where an invoked closure of a node runs: `devices` from its `logic_device_list` (instance
    order; () when it names a `deploy_info_file`), or the nested file's `deploy_info`."""

    name: str
    devices: tuple[DeviceId, ...]
    deploy_info: DeployInfo | None
    where: str
    redundant: tuple[DeviceId, ...] = ()
    file: str = ""          # the deploy info file that lists this invoke
    parent_text: str = ""   # the parent's logic_device_list as written
    parent_instances: int = 1

    def check(self, runs_sub_flow_graph: bool) -> None:
        """GeError unless this invoke fits what its closure runs: a sub-FlowGraph's parent has one
        instance; an AscendGraph gets one device per parent instance from `logic_device_list`."""
        if runs_sub_flow_graph and self.parent_instances != 1:
            raise self._error("invoke_name", (
                f"invoke '{self.name}' runs a sub-FlowGraph, so its parent cannot be multi-instance, "
                f"but the parent's logic_device_list '{self.parent_text}' has {self.parent_instances} devices"))
        if runs_sub_flow_graph:
            return
        if self.deploy_info is not None:
            raise self._error("deploy_info_file", (
                f"invoke '{self.name}' runs an AscendGraph; a deploy_info_file places a sub-FlowGraph: "
                f"give logic_device_list"))
        if len(self.devices) != self.parent_instances:
            raise self._error("logic_device_list", (
                f"invoke '{self.name}' runs an AscendGraph and lists {_count(len(self.devices), 'device')} "
                f"but its parent has {_count(self.parent_instances, 'instance')} "
                f"('{self.parent_text}'); give one device per parent instance"))

    def _error(self, key: str, problem: str) -> GeError:
        return GeError(f"{self.where}.{key}: {problem}", context={"file": self.file})


@dataclass(frozen=True)
class Placement:
    """A node's devices, one per instance in instance order; `where` is the JSON path naming it."""

    devices: tuple[DeviceId, ...]
    where: str
    invokes: tuple[InvokePlacement, ...] = ()
    redundant: tuple[DeviceId, ...] = ()  # redundant_logic_device_list, recorded only
    file: str = ""  # the deploy info file that places the node
    udf_timeout_ms: int | None = None  # the timeout of the node's UDF calls (None: the entry gives none)


@dataclass
class DeployInfo:
    document: JsonDocument
    placements: dict[str, Placement] = field(default_factory=dict)  # node name or alias -> placement
    keep_logic_device_order: bool = False
    dynamic_schedule_enable: bool = False  # accepted and recorded; scheduling does not read it

    @property
    def path(self) -> str:
        return self.document.path


def load_deploy_info(path: str) -> DeployInfo:
    """The deploy info at `path` with its nested files, checked against every rule above; a
    GeError naming the file, the JSON path and the value on the first defect."""
    return _load(path, (path,))


def load_checked_deploy_info(path: str, resource_config_path: str | None = None) -> DeployInfo:
    """`load_deploy_info(path)`, its devices checked against the resource config at
    `resource_config_path` when one is given: what `place-nodes` places by."""
    info = load_deploy_info(path)
    if resource_config_path:
        check_deploy_devices(info, load_resource_config(resource_config_path))
    return info


def check_deploy_devices(info: DeployInfo, resources: ResourceConfig) -> None:
    """GeError unless `resources` declares every device `info` names: the nodes' devices and
    redundant devices, their invokes' devices and, recursively, those of nested files."""
    subject = f"deploy info {info.path}"
    for name, placement in info.placements.items():
        for device in placement.devices + placement.redundant:
            resources.check(device, f"{subject} {placement.where} (node '{name}')")
        for invoke in placement.invokes:
            for device in invoke.devices + invoke.redundant:
                resources.check(device, f"{subject} {invoke.where} (invoke '{invoke.name}')")
            if invoke.deploy_info is not None:
                check_deploy_devices(invoke.deploy_info, resources)


def _load(path: str, chain: tuple[str, ...]) -> DeployInfo:
    """Load `path`, the last of `chain`, the files that include one another down to it."""
    document = JsonDocument.read(path, "deploy info")
    check(document, document.root, _DEPLOY_INFO)
    root = document.root
    if "deploy_info" not in root and "batch_deploy_info" not in root:
        raise document.error("$", "neither 'deploy_info' nor 'batch_deploy_info' is given; "
                                  "give at least one")
    info = DeployInfo(document, {}, root.get("keep_logic_device_order", False),
                      root.get("dynamic_schedule_enable", False))
    reader = _EntryReader(info, chain)
    for index, entry in enumerate(root.get("batch_deploy_info", [])):
        reader.batch_entry(entry, f"$.batch_deploy_info[{index}]")
    for index, entry in enumerate(root.get("deploy_info", [])):
        where = f"$.deploy_info[{index}]"
        devices = reader.devices(entry["logic_device_id"], f"{where}.logic_device_id")
        reader.place(entry["flow_node_name"], Placement(devices, f"{where}.flow_node_name", file=path))
    return info


@dataclass
class _EntryReader:
    """Reads the entries of one file into `info`; `chain` is the include chain down to it."""

    info: DeployInfo
    chain: tuple[str, ...]

    @property
    def document(self) -> JsonDocument:
        return self.info.document

    def batch_entry(self, entry: dict, where: str) -> None:
        devices = self.devices(entry["logic_device_list"], f"{where}.logic_device_list")
        redundant = self.optional_devices(entry, where, "redundant_logic_device_list")
        invokes = self.invokes(entry, where, devices)
        for index, node in enumerate(entry["flow_node_list"]):
            self.place(node, Placement(devices, f"{where}.flow_node_list[{index}]", invokes, redundant,
                                       self.info.path, entry.get("udf_timeout_ms")))

    def devices(self, text: str, where: str) -> tuple[DeviceId, ...]:
        """The devices `text` lists, in instance order; one host or devices, never both."""
        devices = parse_device_list(text)
        if isinstance(devices, str):
            raise self.document.error(where, devices)
        host = next((d for d in devices if d.is_host), None)
        device = next((d for d in devices if not d.is_host), None)
        if host is not None and device is not None:
            raise self.document.error(where, f"'{text}' puts a node both on a host ({host.spelling()}) "
                                             f"and on a device ({device.spelling()}); a node runs on "
                                             f"hosts or on devices, not both")
        if self.info.keep_logic_device_order:
            return devices
        return tuple(sorted(devices, key=lambda d: d.ids))

    def optional_devices(self, entry: dict, where: str, key: str) -> tuple[DeviceId, ...]:
        return self.devices(entry[key], f"{where}.{key}") if key in entry else ()

    def place(self, node: str, placement: Placement) -> None:
        earlier = self.info.placements.get(node)
        if earlier is not None:
            raise self.document.error(placement.where, f"node '{node}' is already placed by {earlier.where}")
        self.info.placements[node] = placement

    def invokes(self, entry: dict, where: str, parent: tuple[DeviceId, ...]) -> tuple[InvokePlacement, ...]:
        invokes: dict[str, InvokePlacement] = {}
        for index, invoke in enumerate(entry.get("invoke_list", [])):
            invoke_where = f"{where}.invoke_list[{index}]"
            name = invoke["invoke_name"]
            if name in invokes:
                raise self.document.error(f"{invoke_where}.invoke_name",
                                          f"invoke '{name}' is already listed at {invokes[name].where}")
            invokes[name] = self.invoke(invoke, invoke_where, entry["logic_device_list"], len(parent))
        return tuple(invokes.values())

    def invoke(self, invoke: dict, where: str, parent_text: str, instances: int) -> InvokePlacement:
        """The invoke at `where` of a node whose `instances` come from `parent_text`."""
        name = invoke["invoke_name"]
        given = [key for key in ("deploy_info_file", "logic_device_list") if key in invoke]
        if len(given) != 1:
            got = "both 'deploy_info_file' and" if given else "neither 'deploy_info_file' nor"
            raise self.document.error(where, f"invoke '{name}' gives {got} 'logic_device_list'; "
                                             f"give exactly one")
        redundant = self.optional_devices(invoke, where, "redundant_logic_device_list")
        parent = {"file": self.info.path, "parent_text": parent_text, "parent_instances": instances}
        if given[0] == "deploy_info_file":
            nested = self.nested(invoke["deploy_info_file"], where)
            return InvokePlacement(name, (), nested, where, redundant, **parent)
        devices = self.devices(invoke["logic_device_list"], f"{where}.logic_device_list")
        return InvokePlacement(name, devices, None, where, redundant, **parent)

    def nested(self, file: str, where: str) -> DeployInfo:
        """The deploy info `file` names (relative to this file's folder), loaded under every rule."""
        path = os.path.normpath(os.path.join(os.path.dirname(self.info.path), file))
        if not os.path.isfile(path):
            raise self.document.error(f"{where}.deploy_info_file",
                                      f"'{file}' does not exist (looked for {path})")
        if os.path.realpath(path) in {os.path.realpath(p) for p in self.chain}:
            raise self.document.error(f"{where}.deploy_info_file",
                                      f"'{file}' includes itself: {' -> '.join(self.chain + (path,))}")
        return _load(path, self.chain + (path,))


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
