"""`place-nodes`: give every node of every graph its logical devices, one per instance.

1. Place the top-level graph's nodes: by the deploy info, or (without one) on the device they
   have or `default-device`.
2. Then each sub-FlowGraph (a `df.graph` that a `df.flow_graph_pp` runs), once its parent
   (the node running it, or invoking it as a closure) is placed: the parent must have one
   instance; the sub-graph's nodes go where the parent's `invoke_list` entry for it says (its
   `deploy_info_file`, placing them by name like a top-level file, or its `logic_device_list`
   for all of them), else on the parent's device. The invoke of a node running a
   FlowGraph is named by its FlowGraphProcessPoint's name (`point_name`), a closure's by its key.

Reads: each node's name, `alias`, process point (its invoked closures) and any `device` already
set; the option `deploy_info`, a parsed deploy info file whose devices were checked against the
resource config (`dfir.frontend.deploy`; the compiler and `dfir-opt --deploy-info=FILE
[--resource-config=FILE]` parse the files: a pass reads none). Writes on every node either `device = #df.device<...>` (one instance) or
`devices = [#df.device<...>, ...]` (one per instance, in instance order), and `invokes = {"key" =
[#df.device<...>]}` when the deploy info places the node's invoked GE graphs.

Without a deploy info, a node keeps the device it has, or gets `default-device` (the host unless
given, `cluster:server:device[:numa]`): everything runs on the host, one instance each. A UDF
project whose compile config sets `heavy_load: true` (`project = {heavy_load = "true"}`) goes on
the host CPU of the server of each device it is given (`0:0:1:0` -> `0:0:-1:0`).

With a deploy info, the file decides: every node must be placed by its name or its alias (not
both), every name in the file must be a node's name or alias, every invoke must name an invoked
closure of the node (`df.invoked_closure` keys) and give a `logic_device_list` with one device
per instance of the node (closures run GE graphs, AscendGraphs in the seed's terms, and a
`deploy_info_file` places a sub-FlowGraph: `InvokePlacement.check`), and every device must be
declared by the resource config when one is given. The host spells `#df.device<host>` ("-1");
a server's host CPU keeps its ids (`#df.device<0:0:-1:0>`). A batch entry's `udf_timeout_ms` goes
on each UDF node it places (`udf_timeout_ms = 5000 : i64`), and on a node running a sub-FlowGraph,
whose nodes placed with no timeout of their own take it; a GE graph node gets none.

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
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from dfir.core.errors import GeError
from dfir.dialects.df import FlowGraphPpOp, FuncPpOp, GraphOp, InvokedClosureOp, NodeOp, subgraph_parents, top_graphs
from dfir.dialects.df_attrs import DeviceAttr
from dfir.frontend.deploy import DeployInfo, DeviceId, InvokePlacement, Placement


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
        graphs = {graph.sym_name.data: graph for graph in op.ops if isinstance(graph, GraphOp)}
        children: dict[NodeOp, list[tuple[str, str | None]]] = {}  # parent -> (sub-graph, closure key)
        for sub, (parent, key) in subgraph_parents(op).items():
            children.setdefault(parent, []).append((sub, key))
        for graph in top_graphs(op):
            placements = self._place_top(graph)
            self._place_children(graph, placements, children, graphs)

    def _place_top(self, graph: GraphOp) -> dict[str, Placement]:
        """Step 1: the top-level graph; each node's placement by the deploy info, by name."""
        if self.deploy_info is not None:
            return _Deployment(self.deploy_info, graph.node_ops).place()
        device = parse_device(self.default_device)
        for node in graph.node_ops:
            if not node.instance_devices:
                _set_devices(node, [device])
        return {}

    def _place_children(self, graph: GraphOp, placements: dict[str, Placement],
                        children: dict, graphs: dict[str, GraphOp]) -> None:
        """Step 2 for the sub-FlowGraphs the nodes of `graph` run, then theirs."""
        for node in graph.node_ops:
            for sub, key in children.get(node, ()):
                placement = placements.get(node.node_name.data)
                invoke = _invoke_for(placement, key if key is not None else _point_name(node))
                _check_single_instance(node, sub, placement, invoke)
                nested = _place_subgraph(graphs[sub], node, invoke)
                if key is None:
                    _inherit_udf_timeout(graphs[sub], node)
                self._place_children(graphs[sub], nested, children, graphs)

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

    def place(self) -> dict[str, Placement]:
        """Place every node; each node's placement by its name."""
        self._check_names_exist()
        placed = {}
        for node in self.nodes:
            placement = placed[node.node_name.data] = self._placement(node)
            _set_devices(node, [device_attr(d) for d in placement.devices])
            if placement.udf_timeout_ms is not None and _has_udf_timeout(node):
                node.udf_timeout_ms = IntegerAttr(placement.udf_timeout_ms, i64)
            if placement.invokes:
                invokes = self._invokes(node, placement)
                if invokes.data:
                    node.invokes = invokes
        return placed

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
        closures = _closures(node)
        invokes = {}
        for invoke in placement.invokes:
            name = node.node_name.data
            if invoke.name not in closures:
                what = "sub-FlowGraph" if _point_name(node) is not None else "invoked closure"
                raise self._error(f"{invoke.where}.invoke_name", f"node '{name}' has no {what} "
                                                                 f"'{invoke.name}'; its closures are {sorted(closures)}")
            sub_flow = isinstance(closures[invoke.name], FlowGraphPpOp)
            try:
                invoke.check(runs_sub_flow_graph=sub_flow)
            except GeError as error:
                raise DiagnosticException(str(error)) from None
            if not sub_flow:  # a sub-FlowGraph's placement is on its nodes
                invokes[invoke.name] = ArrayAttr([device_attr(d) for d in invoke.devices])
        return DictionaryAttr(invokes)


def _keys(node: NodeOp) -> Iterable[str]:
    """The names the deploy info may use for `node`: its name, then its alias."""
    yield node.node_name.data
    if node.alias is not None and node.alias.data != node.node_name.data:
        yield node.alias.data


def _set_devices(node: NodeOp, devices: Sequence[DeviceAttr]) -> None:
    """Place `node` on `devices`, one instance each; a `heavy_load` UDF on the host CPU of each
    device's server instead (`0:0:1:0` -> `0:0:-1:0`), as the seed's logic_device_list says."""
    if _heavy_load(node):
        devices = [d if d.is_host else _server_host(d) for d in devices]
    node.device, node.devices = (devices[0], None) if len(devices) == 1 else (None, ArrayAttr(list(devices)))


def _has_udf_timeout(node: NodeOp) -> bool:
    """Whether a deploy entry's `udf_timeout_ms` acts on `node`: a UDF, or a node running a
    sub-FlowGraph, whose nodes then take it (a GE graph's calls have no timeout)."""
    return isinstance(_process_point(node), FuncPpOp | FlowGraphPpOp)


def _inherit_udf_timeout(graph: GraphOp, parent: NodeOp) -> None:
    """Give the nodes of sub-FlowGraph `graph` that the deploy info gave no timeout the timeout
    of `parent`, the node running it."""
    if parent.udf_timeout_ms is None:
        return
    for node in graph.node_ops:
        if node.udf_timeout_ms is None and _has_udf_timeout(node):
            node.udf_timeout_ms = parent.udf_timeout_ms


def _server_host(device: DeviceAttr) -> DeviceAttr:
    ids = [i.data for i in device.ids]
    return DeviceAttr([*ids[:2], -1, *ids[3:]])


def _heavy_load(node: NodeOp) -> bool:
    pp = _process_point(node)
    facts = pp.project.data if isinstance(pp, FuncPpOp) and pp.project is not None else {}
    return facts.get("heavy_load") == StringAttr("true")


def _process_point(node: NodeOp):
    """The process point op `node` runs, or None when the module lacks it."""
    module = node.parent_op().parent_op()
    symbol = node.pp.root_reference.data
    return next((op for op in module.regions[0].block.ops
                 if isinstance(op, FuncPpOp | FlowGraphPpOp) and op.sym_name.data == symbol), None)


def _point_name(node: NodeOp) -> str | None:
    """The FlowGraphProcessPoint name of a node running a sub-FlowGraph (None for any other)."""
    pp = _process_point(node)
    if not isinstance(pp, FlowGraphPpOp):
        return None
    return pp.point_name.data if pp.point_name is not None else pp.sym_name.data


def _closures(node: NodeOp) -> dict:
    """What a deploy file's invoke entries of `node` may name: its invoked closures by key (the
    process point each runs), or, for a node running a sub-FlowGraph, that point by its name."""
    pp = _process_point(node)
    if isinstance(pp, FlowGraphPpOp):
        return {_point_name(node): pp}
    if not isinstance(pp, FuncPpOp):
        return {}
    module = node.parent_op().parent_op()
    symbols = {op.sym_name.data: op for op in module.regions[0].block.ops if hasattr(op, "sym_name")}
    return {op.key.data: symbols.get(op.pp.root_reference.data)
            for op in pp.closures.block.ops if isinstance(op, InvokedClosureOp)}


def _invoke_for(placement: Placement | None, name: str) -> InvokePlacement | None:
    if placement is None:
        return None
    return next((invoke for invoke in placement.invokes if invoke.name == name), None)


def _check_single_instance(node: NodeOp, sub: str, placement: Placement | None,
                           invoke: InvokePlacement | None) -> None:
    """A node running or invoking a sub-FlowGraph cannot be multi-instance."""
    count = len(node.instance_devices)
    if count <= 1:
        return
    if invoke is not None:
        try:
            invoke.check(runs_sub_flow_graph=True)  # raises: the invoke's own message
        except GeError as error:
            raise DiagnosticException(str(error)) from None
    where = f"file={placement.file}; {placement.where}: " if placement is not None else ""
    raise DiagnosticException(f"{where}{node.label} runs sub-FlowGraph @{sub}, so it cannot be "
                              f"multi-instance, but it has {count} instances")


def _place_subgraph(graph: GraphOp, parent: NodeOp, invoke: InvokePlacement | None) -> dict[str, Placement]:
    """Place the nodes of sub-FlowGraph `graph` of `parent` as its invoke says (step 2)."""
    if invoke is not None and invoke.deploy_info is not None:
        return _Deployment(invoke.deploy_info, graph.node_ops).place()
    if invoke is not None:
        for node in graph.node_ops:
            _set_devices(node, [device_attr(d) for d in invoke.devices])
        return {}
    for node in graph.node_ops:
        if not node.instance_devices:
            _set_devices(node, parent.instance_devices)
    return {}
