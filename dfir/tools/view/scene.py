"""What `dfir view` draws, read from a module's IR: one diagram per graph, as plain data.

A `df.graph` diagram has a box per `df.node` instance (a replicated node: one per instance, each
in its device), an oval per `df.data` input, a dot per `df.gather` and one `output` box; its
edges carry the data names (`x`, `pre_fnode:0`) and, into a replica, the dispatch rule. Nodes
placed on logical devices sit in one cluster per device inside one cluster per server. A
`ge.graph` diagram has a box per op, its edges the tensor types. A node whose process point runs
a GE graph or a sub-FlowGraph, or whose UDF invokes them by key, `expands` to their diagrams
(`run_flow_model`'s closures). Every box keeps its op's
attributes as text and its `loc`, the Python line that built it.

Reading builds nothing that runs: UDF payloads stay base64 text (shown by size only), and
constants are shown by type, not value.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Operation, SSAValue

from dfir.core.errors import GeError
from dfir.dialects import df, ge
from dfir.dialects.df_attrs import DeviceAttr


@dataclass(frozen=True)
class Cluster:
    """A box around nodes: a server (`0:0`) holding its devices (`0:0:1`), or the host."""

    id: str
    label: str
    parent: str | None = None


@dataclass
class Box:
    """One drawn node: `kind` picks its shape (data, node, graph, gather, output, op). A `df.node`'s
    box also keeps its node's name and, for a replica, its instance (what a trace names)."""

    id: str
    label: str
    kind: str
    attrs: dict[str, str]
    loc: str | None = None
    cluster: str | None = None
    expands: tuple[str, ...] = ()
    node: str | None = None
    instance: int | None = None


@dataclass(frozen=True)
class Edge:
    id: str
    tail: str
    head: str
    label: str


@dataclass
class Diagram:
    """One graph's drawing: `kind` is `flow` (a df.graph) or `ge` (a ge.graph)."""

    id: str
    title: str
    kind: str
    attrs: dict[str, str]
    boxes: list[Box] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    clusters: dict[str, Cluster] = field(default_factory=dict)

    def add_box(self, label: str, kind: str, attrs: dict[str, str], **where) -> Box:
        box = Box(f"{self.id}_n{len(self.boxes)}", label, kind, attrs, **where)
        self.boxes.append(box)
        return box

    def add_edge(self, tail: Box, head: Box, label: str) -> None:
        self.edges.append(Edge(f"{self.id}_e{len(self.edges)}", tail.id, head.id, label))


@dataclass
class Scene:
    """The diagrams of one module, the top-level graph first; `model` names a bundle's member."""

    title: str
    diagrams: list[Diagram]
    model: str | None = None

def scene_of(module: ModuleOp, title: str, prefix: str = "", model: str | None = None) -> Scene:
    """The scene of `module` (of bundle member `model`): its df.graphs (the one no process point
    runs first), then its ge.graphs, with ids starting with `prefix`; a GeError if it holds neither."""
    flows = [op for op in module.ops if isinstance(op, df.GraphOp)]
    ges = [op for op in module.ops if isinstance(op, ge.GraphOp)]
    if not flows and not ges:
        raise GeError(f"{title}: the module holds no df.graph or ge.graph to draw")
    run_by_points = {op.graph.root_reference.data for op in module.ops if isinstance(op, df.FlowGraphPpOp)}
    flows.sort(key=lambda op: op.sym_name.data in run_by_points)
    ids = {op.sym_name.data: f"{prefix}d{index}" for index, op in enumerate([*flows, *ges])}
    points = {op.sym_name.data: op for op in module.ops if isinstance(op, df.FuncPpOp | df.GraphPpOp | df.FlowGraphPpOp)}
    diagrams = [_flow_diagram(op, ids, points) for op in flows] + [_ge_diagram(op, ids) for op in ges]
    return Scene(title, diagrams, model)


# -- df.graph ----------------------------------------------------------------------------------

def _flow_diagram(graph: df.GraphOp, ids: dict[str, str], points: dict[str, Operation]) -> Diagram:
    diagram = Diagram(ids[graph.sym_name.data], f"df.graph @{graph.sym_name.data}", "flow", _graph_attrs(graph))
    boxes: dict[Operation, Box] = {}
    for op in graph.body.block.ops:
        boxes[op] = _flow_box(diagram, op, ids, points)
    for op in graph.body.block.ops:
        for value in op.operands:
            diagram.add_edge(boxes[value.owner], boxes[op], _flow_edge_label(value, op))
    return diagram


def _flow_box(diagram: Diagram, op: Operation, ids: dict[str, str], points: dict[str, Operation]) -> Box:
    if isinstance(op, df.DataOp):
        return diagram.add_box(op.data_name.data, "data", _op_attrs(op), loc=_loc(op))
    if isinstance(op, df.GatherOp):
        return diagram.add_box(f"gather {len(op.inputs)}", "gather", {})
    if isinstance(op, df.OutputOp):
        return diagram.add_box("output", "output", {"outputs": str(len(op.outputs))})
    assert isinstance(op, df.NodeOp), f"a verified df.graph holds no {op.name}"
    point = points[op.pp.root_reference.data]
    closures = _closures(point, points)
    expands = tuple(ids[sym] for sym in (_graph_run_by(point), *closures.values()) if sym in ids)
    attrs = {**_op_attrs(op), **{f"pp.{name}": text for name, text in _op_attrs(point).items()}}
    for key, sym in closures.items():
        attrs[f"pp.invokes {key}"] = f"@{sym}"
    kind = "graph" if isinstance(point, df.GraphPpOp | df.FlowGraphPpOp) else "node"
    return diagram.add_box(_node_label(op, list(closures)), kind, attrs, loc=_loc(op),
                           cluster=_device_cluster(diagram, op.device), expands=expands,
                           node=op.node_name.data,
                           instance=None if op.instance is None else op.instance.index.data)


def _graph_run_by(point: Operation) -> str | None:
    """The graph a GE graph or FlowGraph process point runs (None for a UDF)."""
    return point.graph.root_reference.data if isinstance(point, df.GraphPpOp | df.FlowGraphPpOp) else None


def _closures(point: Operation, points: dict[str, Operation]) -> dict[str, str]:
    """The graphs a UDF's invoked closures run, by closure key."""
    if not isinstance(point, df.FuncPpOp):
        return {}
    return {closure.key.data: _graph_run_by(points[closure.pp.root_reference.data])
            for closure in point.closures.block.ops}


def _node_label(node: df.NodeOp, invoked: list[str]) -> str:
    label = node.node_name.data
    if node.instance is not None:
        label += f" #{node.instance.index.data}/{node.instance.count.data}"
    if node.balance is not None:
        label += f"\nbalance {node.balance.role.data}"
    if node.align is not None:
        label += f"\naligned (cache {node.align.cache.data})"
    if invoked:
        label += f"\ninvokes {', '.join(invoked)}"
    return label


def _device_cluster(diagram: Diagram, device: DeviceAttr | None) -> str | None:
    """The cluster of `device` (made on first use, inside its server's), or None if unplaced."""
    if device is None:
        return None
    if device.is_host:
        return diagram.clusters.setdefault("host", Cluster("host", "host")).id
    ids = [i.data for i in device.ids]
    server = ":".join(map(str, ids[:2]))
    diagram.clusters.setdefault(f"server {server}", Cluster(f"server {server}", f"server {server}"))
    spelling = device.spelling()
    label = f"{'host' if ids[2] == -1 else 'device'} {spelling}"
    return diagram.clusters.setdefault(f"device {spelling}",
                                       Cluster(f"device {spelling}", label, f"server {server}")).id


def _flow_edge_label(value: SSAValue, consumer: Operation) -> str:
    """The data on `value`: a graph input's name or `node:port`, and the rule a replica is fed by
    when it is not round robin (a balance scatter's route label)."""
    owner = value.owner
    if isinstance(owner, df.DataOp):
        label = owner.data_name.data
    elif isinstance(owner, df.GatherOp):
        label = _flow_edge_label(owner.inputs[0], owner)
    else:
        label = f"{owner.node_name.data}:{value.index}"
    if isinstance(consumer, df.NodeOp) and consumer.dispatch is not None \
            and consumer.dispatch.data != "round_robin":
        label += f" ({consumer.dispatch.data.replace('_', ' ')})"
    return label


# -- ge.graph ----------------------------------------------------------------------------------

def _ge_diagram(graph: ge.GraphOp, ids: dict[str, str]) -> Diagram:
    attrs = _graph_attrs(graph)
    attrs.setdefault("backend", "not chosen yet (runs as reference)")
    diagram = Diagram(ids[graph.sym_name.data], f"ge.graph @{graph.sym_name.data}", "ge", attrs)
    boxes: dict[Operation, Box] = {}
    for op in graph.block.ops:
        kind = "data" if isinstance(op, ge.DataOp) else "output" if isinstance(op, ge.OutputOp) else "op"
        boxes[op] = diagram.add_box(_ge_label(op), kind, _ge_attrs(op), loc=_loc(op))
        for value in op.operands:
            diagram.add_edge(boxes[value.owner], boxes[op], str(value.type))
    return diagram


def _ge_label(op: Operation) -> str:
    """`ge.matmul` and its result types: shapes with their ranges."""
    types = ", ".join(str(result.type) for result in op.results)
    return f"{op.name}\n{types}" if types else op.name


def _ge_attrs(op: Operation) -> dict[str, str]:
    attrs = _op_attrs(op)
    for index, result in enumerate(op.results):
        attrs[f"result {index}"] = str(result.type)
    return attrs


# -- attributes as text ------------------------------------------------------------------------

def _op_attrs(op: Operation, left_out: str = "loc") -> dict[str, str]:
    """An op's properties and attributes but `left_out` as text, in IR spelling."""
    return {name: _attribute_text(name, value) for name, value in {**op.properties, **op.attributes}.items()
            if name != left_out}


def _graph_attrs(graph: Operation) -> dict[str, str]:
    return _op_attrs(graph, left_out="sym_name")


def _attribute_text(name: str, value: Attribute) -> str:
    if isinstance(value, DenseIntOrFPElementsAttr):
        return f"dense {value.get_type()} (values not shown)"
    if name == "payload" and isinstance(value, StringAttr):
        return f"{len(value.data)} bytes of base64 (not loaded)"
    if isinstance(value, StringAttr):
        return value.data
    return str(value)


def _loc(op: Operation) -> str | None:
    loc = op.attributes.get("loc")
    return loc.data if isinstance(loc, StringAttr) else None
