"""Lower a verified, scheduled df/ge module to the execution plan of docs/execution-plan.md.

1. Take the module's one `df.graph` (in topological order: the `schedule` phase ran).
2. Number its inputs by `index` and its nodes by position (the instances of a replicated node
   fold back into one node, which edges through its `df.gather`s name); turn operands into plan
   edges: the graph's own part of the plan, its *skeleton* (`graph_skeleton`), which names each
   node's process point by symbol.
3. Lower each distinct process point on its own into a *unit* (`lower_unit`): its pp entry and
   the tables it refers to (UDF payloads, C++ UDF libraries, GE graphs lowered by
   `lower_ge_graph` with their weights packed 64-byte aligned), indexed from 0.
4. Merge the units into the plan's tables in node order (`_Tables`): payloads and libraries
   deduplicated by content, weight blobs appended on 64-byte boundaries, and the indexes in each
   pp entry renumbered. A unit or skeleton lowered by an earlier compile (the compile cache
   keeps them) merges exactly as a fresh one, so a plan assembled from cached parts is the plan
   a full compile gives.
"""
from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import SSAValue

from dfir.core.data_type import from_numpy
from dfir.core.errors import GeError
from dfir.dialects.df import DataOp, FuncPpOp, GatherOp, GraphOp, GraphPpOp, NodeOp
from dfir.dialects.df_attrs import AlignAttr, BalanceAttr, DeviceAttr, InstanceAttr
from dfir.dialects.df_params import params_of
from dfir.lowering.ge_graph import lower_ge_graph

WEIGHT_ALIGNMENT = 64
_FUNC_KINDS = ("py_func", "py_project", "cpp_project")


@dataclass
class LoweredGraph:
    """A plan and the blobs it refers to."""

    plan: dict
    udf_payloads: list[bytes] = field(default_factory=list)
    so_bins: list[bytes] = field(default_factory=list)
    weights: bytearray = field(default_factory=bytearray)
    units: dict[str, "LoweredGraph"] = field(default_factory=dict)
    """The process points lowered (not reused) for this plan, by symbol (see `lower_unit`)."""
    skeleton: dict | None = None
    """The graph's own part of this plan (see `graph_skeleton`)."""

    def plan_bytes(self) -> bytes:
        return json.dumps(self.plan, sort_keys=True, separators=(",", ":")).encode()


def the_graph(module: ModuleOp) -> GraphOp:
    graphs = [op for op in module.ops if isinstance(op, GraphOp)]
    if len(graphs) != 1:
        raise GeError(f"a module lowers to one model and needs exactly one df.graph, found {len(graphs)}")
    return graphs[0]


def lower_graph(module: ModuleOp, reuse: Mapping[str, LoweredGraph] | None = None,
                skeleton: dict | None = None) -> LoweredGraph:
    """The plan of the module's graph. `reuse` maps process point symbols to units lowered
    before, merged instead of lowering those points; the units lowered here are in `units`.
    `skeleton`, the graph's skeleton lowered before, is used instead of lowering the graph."""
    if skeleton is None:
        skeleton = graph_skeleton(the_graph(module))
    symbols = {op.sym_name.data: op for op in module.ops if hasattr(op, "sym_name")}
    lowered = LoweredGraph(plan={}, skeleton=skeleton)
    tables = _Tables(lowered)
    entries: dict[str, dict] = {}

    def pp_entry(sym: str) -> dict:
        if sym not in entries:
            unit = (reuse or {}).get(sym)
            if unit is None:
                unit = lowered.units[sym] = lower_unit(symbols, sym)
            entries[sym] = tables.merge(unit)
        return entries[sym]

    nodes = [{**node, "pp": pp_entry(node["pp"])} for node in skeleton["nodes"]]
    lowered.plan = {**skeleton, "nodes": nodes, "udfs": tables.udfs, "ge_graphs": tables.ge_graphs}
    if tables.so_bins:
        lowered.plan["so_bins"] = tables.so_bins
    return lowered


def graph_skeleton(graph: GraphOp) -> dict:
    """The graph's own part of its plan: all but the tables, each node's `pp` its symbol. The
    instances of a replicated node fold back into one plan node (at the first one's position)."""
    nodes = logical_nodes(graph)
    edge = _edge_maker({instance: i for i, instances in enumerate(nodes) for instance in instances})
    return {
        "format": 1,
        "name": graph.sym_name.data,
        "inputs": [_input_entry(d) for d in sorted(graph.data_ops, key=lambda d: d.index.data)],
        "outputs": [edge(v, "graph output") for v in graph.output_op.outputs],
        "nodes": [_node_entry(instances, edge) for instances in nodes],
        "order": list(range(len(nodes))),
        "align": _align_entry(graph.align),
    }


def logical_nodes(graph: GraphOp) -> list[list[NodeOp]]:
    """The graph's nodes, each as its instances in instance order (one for an unreplicated
    node), in the order of their first instance. Instances share the node's name."""
    by_name: dict[str, list[NodeOp]] = {}
    for node in graph.node_ops:
        by_name.setdefault(node.node_name.data, []).append(node)
    return [sorted(instances, key=_instance_index) for instances in by_name.values()]


def _instance_index(node: NodeOp) -> int:
    instance = node.attributes.get("instance")
    return instance.index.data if isinstance(instance, InstanceAttr) else 0


def _align_entry(align: AlignAttr | None) -> dict | None:
    """An input alignment (`set_inputs_align_attrs`) as `{"cache", "timeout", "dropout"}`, or None."""
    if align is None:
        return None
    return {"cache": align.cache.data, "timeout": align.timeout.data, "dropout": bool(align.dropout.data)}


def lower_unit(symbols: Mapping[str, object], sym: str) -> LoweredGraph:
    """Process point `sym` lowered on its own: plan `{"pp": entry, "udfs": [...], "ge_graphs":
    [...], "so_bins": [...]}`, its indexes and weight offsets local to the unit."""
    unit = LoweredGraph(plan={})
    entries = _ProcessPointEntries(symbols, unit)
    entry = entries.entry(sym)
    unit.plan = {"pp": entry, "udfs": entries.udfs, "ge_graphs": entries.ge_graphs,
                 "so_bins": entries.so_bins}
    return unit


class _Tables:
    """The plan's `udfs`, `so_bins` and `ge_graphs` tables and their blobs, filled by merging units."""

    def __init__(self, lowered: LoweredGraph):
        self.lowered = lowered
        self.udfs: list[dict] = []
        self.so_bins: list[dict] = []
        self.ge_graphs: list[dict] = []
        self._udf_by_digest: dict[str, int] = {}
        self._so_by_digest: dict[str, int] = {}

    def merge(self, unit: LoweredGraph) -> dict:
        """Add `unit`'s tables; its pp entry with indexes into this plan's tables."""
        udfs = [self._deduplicated(meta, payload, self.udfs, self._udf_by_digest, self.lowered.udf_payloads)
                for meta, payload in zip(unit.plan["udfs"], unit.udf_payloads)]
        so_bins = [self._deduplicated(meta, library, self.so_bins, self._so_by_digest, self.lowered.so_bins)
                   for meta, library in zip(unit.plan.get("so_bins", []), unit.so_bins)]
        base = self._weights(unit.weights)
        graphs = []
        for graph in unit.plan["ge_graphs"]:
            graphs.append(len(self.ge_graphs))
            weights = [{**w, "offset": w["offset"] + base} for w in graph["weights"]]
            self.ge_graphs.append({**graph, "weights": weights})
        return _relocated(unit.plan["pp"], udfs, so_bins, graphs)

    @staticmethod
    def _deduplicated(meta: dict, blob: bytes, table: list[dict], by_digest: dict[str, int],
                      blobs: list[bytes]) -> int:
        """The index of `blob` in `table` (each distinct blob once, with its `partition`)."""
        digest = meta["sha256"]
        if digest not in by_digest:
            by_digest[digest] = len(table)
            table.append({**meta, "partition": len(table)})
            blobs.append(blob)
        return by_digest[digest]

    def _weights(self, blob: bytes | bytearray) -> int:
        """Append a unit's weight blob on a 64-byte boundary; its offset in the plan's blob."""
        weights = self.lowered.weights
        if blob:
            weights.extend(b"\0" * (-len(weights) % WEIGHT_ALIGNMENT))
        base = len(weights)
        weights.extend(blob)
        return base


def _relocated(entry: dict, udfs: list[int], so_bins: list[int], graphs: list[int]) -> dict:
    """A unit's pp entry with its `udf`, `so`, `graph` and `closures` indexes renumbered."""
    out = dict(entry)
    for field_name, index in (("udf", udfs), ("so", so_bins), ("graph", graphs)):
        if field_name in out:
            out[field_name] = index[out[field_name]]
    if "closures" in out:
        out["closures"] = {key: graphs[value] for key, value in out["closures"].items()}
    return out


def _edge_maker(index_of: dict[NodeOp, int]):
    """`edge(value, where)`: the plan ref of `value`; through a df.gather, the gathered node's."""
    def edge(value: SSAValue, where: str) -> dict:
        if isinstance(value.owner, GatherOp):
            value = value.owner.inputs[0]
        owner = value.owner
        if isinstance(owner, DataOp):
            return {"data": owner.index.data}
        if owner not in index_of:
            raise GeError(f"{where} comes from {owner.name}, not a node or graph input")
        return {"node": index_of[owner], "port": value.index}
    return edge


def _input_entry(data: DataOp) -> dict:
    dtype = data.attributes.get("dtype")
    shape = data.attributes.get("shape")
    return {"name": data.data_name.data, "index": data.index.data,
            "dtype": dtype.data if isinstance(dtype, StringAttr) else None,
            "shape": list(shape.get_values()) if shape is not None else None}


def _node_entry(instances: list[NodeOp], edge) -> dict:
    """The plan node of a node given as its instances (which differ only in device)."""
    node = instances[0]

    def attr(name: str, kind: type):
        value = node.attributes.get(name)
        return value if isinstance(value, kind) else None

    def text(name: str):
        value = attr(name, StringAttr)
        return None if value is None else value.data

    devices = [_spelling(instance.attributes.get("device")) for instance in instances]
    balance = attr("balance", BalanceAttr)
    invokes = attr("invokes", DictionaryAttr)
    return {
        "name": node.node_name.data,
        "alias": text("alias"),
        "loc": text("loc"),
        "input_num": node.input_num.data,
        "output_num": node.output_num.data,
        "inputs": [edge(v, f"input {i} of {node.label}") for i, v in enumerate(node.inputs)],
        "device": devices[0],
        "instances": devices,
        "dispatch": text("dispatch") or "round_robin",
        "balance": None if balance is None else balance.role.data,
        "align": _align_entry(attr("align", AlignAttr)),
        "invokes": {} if invokes is None else {key: [_spelling(d) for d in placed.data]
                                               for key, placed in sorted(invokes.data.items())},
        "attrs": _user_attrs(node),
        "pp": node.pp.root_reference.data,
    }


def _spelling(device) -> str:
    """A device's plan spelling; "-1" (the host) for a node without one."""
    return device.spelling() if isinstance(device, DeviceAttr) else "-1"


def _init_params(pp: FuncPpOp) -> dict:
    """A UDF project's init params as `{name: {"type": tag, "value": ...}}` (dfir.core.udf_params)."""
    if pp.init_params is None:
        return {}
    return {name: param.to_plan() for name, param in sorted(params_of(pp.init_params).items())}


def _user_attrs(node: NodeOp) -> dict:
    attrs = node.attributes.get("user_attrs")
    if attrs is None:
        return {}
    out = {}
    for key, value in attrs.data.items():
        out[key] = value.data if isinstance(value, StringAttr) else value.value.data
    return out


class _ProcessPointEntries:
    """Plan entries of process points, each lowered once."""

    def __init__(self, symbols: dict, lowered: LoweredGraph):
        self.symbols = symbols
        self.lowered = lowered
        self.udfs: list[dict] = []
        self.ge_graphs: list[dict] = []
        self._cache: dict[str, dict] = {}
        self._udf_by_digest: dict[str, int] = {}
        self.so_bins: list[dict] = []
        self._so_by_digest: dict[str, int] = {}

    def entry(self, sym: str) -> dict:
        if sym not in self._cache:
            pp = self.symbols[sym]
            self._cache[sym] = self._func(pp) if isinstance(pp, FuncPpOp) else self._graph(pp)
        return self._cache[sym]

    def _func(self, pp: FuncPpOp) -> dict:
        """A UDF's entry: `py_udf` (a `py_func`), `py_project` or `cpp_project` (docs/execution-plan.md)."""
        kind = pp.kind.data
        if pp.payload is None or kind not in _FUNC_KINDS:
            raise GeError(f"df.func_pp @{pp.sym_name.data}: kind '{kind}' cannot be lowered yet")
        data = base64.b64decode(pp.payload.data)
        funcs = [{"name": f.func_name.data, "inputs": f.input_ports, "outputs": f.output_ports,
                  "stream_input": f.is_stream_input} for f in pp.funcs]
        if kind == "py_func":
            return {"kind": "py_udf", "udf": self._udf(data), "funcs": funcs}
        entry = {"kind": kind, "funcs": funcs, "init_params": _init_params(pp),
                 "closures": self._closures(pp)}
        facts = {key: value.data for key, value in pp.project.data.items()}
        if kind == "py_project":
            entry.update(udf=self._udf(data), py_module=facts["py_module"], py_class=facts["py_class"])
        else:
            entry.update(so=self._so_bin(data, facts["target_bin"], facts["resource_type"]),
                         resource_type=facts["resource_type"])
        return entry

    def _udf(self, data: bytes) -> int:
        """The `udfs` index of a UDF payload (one UDF_PAYLOAD partition per distinct payload)."""
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self._udf_by_digest:
            self._udf_by_digest[digest] = len(self.udfs)
            self.udfs.append({"partition": len(self.udfs), "sha256": digest, "size": len(data)})
            self.lowered.udf_payloads.append(data)
        return self._udf_by_digest[digest]

    def _so_bin(self, data: bytes, name: str, resource_type: str) -> int:
        """The `so_bins` index of a C++ UDF library (one SO_BINS partition per distinct library)."""
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self._so_by_digest:
            self._so_by_digest[digest] = len(self.so_bins)
            self.so_bins.append({"partition": len(self.so_bins), "name": name, "sha256": digest,
                                 "size": len(data), "resource_type": resource_type})
            self.lowered.so_bins.append(data)
        return self._so_by_digest[digest]

    def _closures(self, pp: FuncPpOp) -> dict[str, int]:
        """Invoked closure key -> `ge_graphs` index of the GE graph it runs."""
        closures = {}
        for closure in pp.closures.block.ops:
            entry = self.entry(closure.pp.root_reference.data)
            if entry["kind"] != "ge_graph":
                raise GeError(f"df.func_pp @{pp.sym_name.data}: invoked closure "
                              f"'{closure.key.data}' must run a GE graph")
            closures[closure.key.data] = entry["graph"]
        return closures

    def _graph(self, pp: GraphPpOp) -> dict:
        graph_op = self.symbols[pp.graph.root_reference.data]
        entry, arrays = lower_ge_graph(graph_op)
        entry["weights"] = [self._pack(a) for a in arrays]
        self.ge_graphs.append(entry)
        return {"kind": "ge_graph", "graph": len(self.ge_graphs) - 1}

    def _pack(self, array: np.ndarray) -> dict:
        blob = self.lowered.weights
        blob.extend(b"\0" * (-len(blob) % WEIGHT_ALIGNMENT))
        offset = len(blob)
        blob.extend(np.ascontiguousarray(array).tobytes())
        return {"offset": offset, "size": int(array.nbytes), "dtype": from_numpy(array.dtype).name,
                "shape": list(array.shape)}
