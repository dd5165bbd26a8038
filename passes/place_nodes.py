"""`place-nodes`: give every node of every graph its logical devices, one per instance.

Reads: each node's name, `alias`, process point (its invoked closures) and any `device` already
set; the option `deploy_info`, a parsed deploy info file whose devices were checked against the
resource config (`dfir.frontend.deploy`; the compiler and `dfir-opt --deploy-info=FILE
[--resource-config=FILE]` parse the files: a pass reads none). Writes on every node either `device = #df.device<...>` (one instance) or
`devices = [#df.device<...>, ...]` (one per instance, in instance order), and `invokes = {"key" =
[#df.device<...>]}` when the deploy info places the node's invoked GE graphs.

Without a deploy info, a node keeps the device it has, or gets `default-device` (the host unless
given, `cluster:server:device[:numa]`): everything runs on the host, one instance each.

With a deploy info, the file decides: every node must be placed by its name or its alias (not
both), every name in the file must be a node's name or alias, every invoke must name an invoked
closure of the node (`df.invoked_closure` keys) and give a `logic_device_list` with one device
per instance of the node (closures run GE graphs, AscendGraphs in the seed's terms, and a
`deploy_info_file` places a sub-FlowGraph: `InvokePlacement.check`), and every device must be
declared by the resource config when one is given. The host spells `#df.device<host>` ("-1");
a server's host CPU keeps its ids (`#df.device<0:0:-1:0>`).

    %1 = df.node "a"(%0) pp @p : 1 -> 1
      ==>   %1 = df.node "a"(%0) pp @p {device = #df.device<host>} : 1 -> 1

and with `{"batch_deploy_info": [{"flow_node_list": ["a"], "logic_device_list": "0:0:0~1"}]}`:

    %1 = df.node "a"(%0) pp @p : 1 -> 1
      ==>   %1 = df.node "a"(%0) pp @p {devices = [#df.device<0:0:0>, #df.device<0:0:1>]} : 1 -> 1

The summary says how many nodes and instances were placed on which devices.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from dfir.core.errors import GeError
from dfir.dialects.df import FuncPpOp, InvokedClosureOp, NodeOp
from dfir.dialects.df_attrs import DeviceAttr
from dfir.frontend.deploy import DeployInfo, DeviceId, Placement


def parse_device(spelling: str) -> DeviceAttr:
    """`host` or `-1` -> the host; `0:0:1:0` -> that device."""
    if spelling in ("host", "-1"):
        return DeviceAttr()
    try:
        return DeviceAttr([int(part) for part in spelling.split(":")])
    except ValueError:
        raise GeError(f"device '{spelling}' is not host, -1 or cluster:server:device[:numa]") from None


def device_attr(device: DeviceId) -> DeviceAttr:
    """The IR spelling of a deploy file's device: `host` for "-1", its ids otherwise."""
    return DeviceAttr() if device.spelling() == "-1" else DeviceAttr(device.ids)


@dataclass(frozen=True)
class PlaceNodes(ModulePass):
    name = "place-nodes"

    default_device: str = "host"
    deploy_info: DeployInfo | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        nodes = [node for node in op.walk() if isinstance(node, NodeOp)]
        if self.deploy_info is not None:
            _Deployment(self.deploy_info, nodes).place()
            return
        device = parse_device(self.default_device)
        for node in nodes:
            if not node.instance_devices:
                node.device = device

    def summary(self, op: ModuleOp) -> str:
        nodes = [n for n in op.walk() if isinstance(n, NodeOp) and n.instance_devices]
        devices = [device.spelling() for node in nodes for device in node.instance_devices]
        where = ", ".join(f"{count} on {'host' if spelling == '-1' else spelling}"
                          for spelling, count in sorted(Counter(devices).items()))
        instances = f" as {len(devices)} instances" if len(devices) != len(nodes) else ""
        by_file = f"; {len(nodes)} by the deploy info" if self.deploy_info is not None else ""
        return f"placed {len(nodes)} nodes{instances} ({where or 'none'}){by_file}"


class _Deployment:
    """Places `nodes` as the deploy info `info` says; each defect a DiagnosticException naming
    the file and the JSON path."""

    def __init__(self, info: DeployInfo, nodes: Sequence[NodeOp]):
        self.info = info
        self.nodes = nodes

    def place(self) -> None:
        self._check_names_exist()
        for node in self.nodes:
            placement = self._placement(node)
            devices = [device_attr(d) for d in placement.devices]
            node.device, node.devices = (devices[0], None) if len(devices) == 1 else (None, ArrayAttr(devices))
            if placement.invokes:
                node.invokes = self._invokes(node, placement)

    def _error(self, where: str, message: str) -> DiagnosticException:
        return DiagnosticException(f"file={self.info.path}; {where}: {message}")

    def _check_names_exist(self) -> None:
        known = {key for node in self.nodes for key in _keys(node)}
        for key, placement in self.info.placements.items():
            if key not in known:
                names = sorted({node.node_name.data for node in self.nodes})
                raise self._error(placement.where,
                                  f"no node is named or aliased '{key}'; the nodes are {names}")

    def _placement(self, node: NodeOp) -> Placement:
        """The one placement naming `node` by its name or its alias."""
        found = [(key, self.info.placements[key]) for key in _keys(node) if key in self.info.placements]
        if not found:
            raise self._error("$", f"{node.label} is not placed: name it or its alias in a "
                                   "flow_node_list or deploy_info entry")
        if len(found) == 2:
            (name, by_name), (alias, by_alias) = found
            raise self._error(by_alias.where, f"node '{name}' is placed by its alias '{alias}' and "
                                              f"by its name at {by_name.where}")
        return found[0][1]

    def _invokes(self, node: NodeOp, placement: Placement) -> DictionaryAttr:
        """`invokes = {"key" = [devices]}` for the invoke list of the node's placement."""
        keys = _closure_keys(node)
        invokes = {}
        for invoke in placement.invokes:
            name = node.node_name.data
            if invoke.name not in keys:
                raise self._error(f"{invoke.where}.invoke_name", f"node '{name}' has no invoked closure "
                                                                 f"'{invoke.name}'; its closures are {keys}")
            try:
                invoke.check(runs_sub_flow_graph=False)  # an invoked closure here runs a GE graph
            except GeError as error:
                raise DiagnosticException(str(error)) from None
            invokes[invoke.name] = ArrayAttr([device_attr(d) for d in invoke.devices])
        return DictionaryAttr(invokes)


def _keys(node: NodeOp) -> Iterable[str]:
    """The names the deploy info may use for `node`: its name, then its alias."""
    yield node.node_name.data
    if node.alias is not None and node.alias.data != node.node_name.data:
        yield node.alias.data


def _closure_keys(node: NodeOp) -> list[str]:
    """The keys of the invoked closures of `node`'s process point (sorted)."""
    module = node.parent_op().parent_op()
    symbol = node.pp.root_reference.data
    pp = next((op for op in module.regions[0].block.ops
               if isinstance(op, FuncPpOp) and op.sym_name.data == symbol), None)
    if pp is None:
        return []
    return sorted(op.key.data for op in pp.closures.block.ops if isinstance(op, InvokedClosureOp))
