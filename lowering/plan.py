"""Lower a verified, scheduled df/ge module to the execution plan of docs/execution-plan.md.

1. Take the module's one `df.graph` (in topological order: the `schedule` phase ran).
2. Number its inputs by `index` and its nodes by position; turn operands into plan edges.
3. Give each distinct process point a plan entry: UDF payloads (deduplicated by content) and GE
   graphs (lowered by `lower_ge_graph`, weights packed 64-byte aligned into one blob).
"""
from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import SSAValue

from dfir.dialects.df import DataOp, FuncPpOp, GraphOp, GraphPpOp, NodeOp
from dfir.dialects.df_attrs import DeviceAttr
from dfir.ge.error import GeError

WEIGHT_ALIGNMENT = 64


@dataclass
class LoweredGraph:
    """A plan and the blobs it refers to."""

    plan: dict
    udf_payloads: list[bytes] = field(default_factory=list)
    weights: bytearray = field(default_factory=bytearray)

    def plan_bytes(self) -> bytes:
        return json.dumps(self.plan, sort_keys=True, separators=(",", ":")).encode()


def the_graph(module: ModuleOp) -> GraphOp:
    graphs = [op for op in module.ops if isinstance(op, GraphOp)]
    if len(graphs) != 1:
        raise GeError(f"a module lowers to one model and needs exactly one df.graph, found {len(graphs)}")
    return graphs[0]


def lower_graph(module: ModuleOp) -> LoweredGraph:
    graph = the_graph(module)
    symbols = {op.sym_name.data: op for op in module.ops if hasattr(op, "sym_name")}
    lowered = LoweredGraph(plan={})
    entries = _ProcessPointEntries(symbols, lowered)
    nodes = graph.node_ops
    index_of = {node: i for i, node in enumerate(nodes)}
    edge = _edge_maker(index_of)
    lowered.plan = {
        "format": 1,
        "name": graph.sym_name.data,
        "inputs": [_input_entry(d) for d in sorted(graph.data_ops, key=lambda d: d.index.data)],
        "outputs": [edge(v, "graph output") for v in graph.output_op.outputs],
        "nodes": [_node_entry(node, edge, entries) for node in nodes],
        "order": list(range(len(nodes))),
        "udfs": entries.udfs,
        "ge_graphs": entries.ge_graphs,
    }
    return lowered


def _edge_maker(index_of: dict[NodeOp, int]):
    def edge(value: SSAValue, where: str) -> dict:
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


def _node_entry(node: NodeOp, edge, entries: "_ProcessPointEntries") -> dict:
    def text(name: str):
        attr = node.attributes.get(name)
        return attr.data if isinstance(attr, StringAttr) else None
    device = node.attributes.get("device")
    return {
        "name": node.node_name.data,
        "alias": text("alias"),
        "loc": text("loc"),
        "input_num": node.input_num.data,
        "output_num": node.output_num.data,
        "inputs": [edge(v, f"input {i} of {node.label}") for i, v in enumerate(node.inputs)],
        "device": device.spelling() if isinstance(device, DeviceAttr) else "-1",
        "attrs": _user_attrs(node),
        "pp": entries.entry(node.pp.root_reference.data),
    }


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

    def entry(self, sym: str) -> dict:
        if sym not in self._cache:
            pp = self.symbols[sym]
            self._cache[sym] = self._func(pp) if isinstance(pp, FuncPpOp) else self._graph(pp)
        return self._cache[sym]

    def _func(self, pp: FuncPpOp) -> dict:
        if pp.kind.data != "py_func" or pp.payload is None:
            raise GeError(f"df.func_pp @{pp.sym_name.data}: kind '{pp.kind.data}' cannot be lowered yet")
        data = base64.b64decode(pp.payload.data)
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self._udf_by_digest:
            self._udf_by_digest[digest] = len(self.udfs)
            self.udfs.append({"partition": len(self.udfs), "sha256": digest, "size": len(data)})
            self.lowered.udf_payloads.append(data)
        funcs = [{"name": f.func_name.data, "inputs": f.input_ports, "outputs": f.output_ports,
                  "stream_input": f.is_stream_input} for f in pp.funcs]
        return {"kind": "py_udf", "udf": self._udf_by_digest[digest], "funcs": funcs}

    def _graph(self, pp: GraphPpOp) -> dict:
        from dfir.lowering.ge_graph import lower_ge_graph
        graph_op = self.symbols[pp.graph.root_reference.data]
        entry, arrays = lower_ge_graph(graph_op)
        entry["weights"] = [self._pack(a) for a in arrays]
        self.ge_graphs.append(entry)
        return {"kind": "ge_graph", "graph": len(self.ge_graphs) - 1}

    def _pack(self, array: np.ndarray) -> dict:
        from dfir.data_type import from_numpy
        blob = self.lowered.weights
        blob.extend(b"\0" * (-len(blob) % WEIGHT_ALIGNMENT))
        offset = len(blob)
        blob.extend(np.ascontiguousarray(array).tobytes())
        return {"offset": offset, "size": int(array.nbytes), "dtype": from_numpy(array.dtype).name,
                "shape": list(array.shape)}
