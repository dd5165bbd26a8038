"""Lower a verified, scheduled df/ge module to the execution plan of docs/execution-plan.md.

1. Take the module's one top-level `df.graph` (in topological order: the `schedule` phase ran).
2. Number its inputs by `index` and its nodes by position (the `df.node` clones of a replicated
   node are one plan node, which edges through its `df.gather`s name), the sub-FlowGraphs it
   runs flattened into plan nodes and flow closures (`dfir.lowering.flatten`); write each clone
   as it is, one `units` entry with its `instance` and `device` (a node `replicate-instances` did
   not replicate is one unit); turn operands into plan edges: the graph's own part of the plan,
   its *skeleton* (`graph_skeleton`), a `Plan` with no tables whose nodes name their process
   point by `Symbol`.
3. Lower each distinct process point on its own into a *unit* (`lower_unit`, a `UnitPlan`): its
   pp entry and the tables it refers to (UDF payloads, C++ UDF libraries, GE graphs lowered by
   `ge_graph_entry` with their weights packed 64-byte aligned, and the executables of the
   graphs a compiled backend runs, built by `lowering.ge_executable`: IREE's from their codegen
   region, onnxruntime's exported to ONNX; a graph `auto` chose for is measured first when the
   compile gives a chooser, `GeBuild.choose`), indexed from 0.
4. Merge the units into the plan's tables in node order (`_Tables`): payloads, libraries and
   executables deduplicated by content, weight blobs appended on 64-byte boundaries, and the
   indexes in each pp entry and graph renumbered; check the plan's references (`Plan.check`).
   A unit or skeleton lowered by an earlier compile (the compile cache keeps them as JSON:
   `to_json`, `UnitPlan.from_json`, `read_skeleton`) merges exactly as a fresh one, so a plan
   assembled from cached parts is the plan a full compile gives.
"""
from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import numpy as np
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr

from dfir.core.backends import COMPILED_BACKENDS, REFERENCE
from dfir.core.data_type import from_numpy
from dfir.core.errors import GeError
from dfir.core.udf_params import InitParam
from dfir.core.udf_timeout import UDF_TIMEOUT_FACT
from dfir.dialects import ge
from dfir.dialects.df import DataOp, FlowGraphPpOp, FuncPpOp, GraphOp, GraphPpOp, NodeOp, top_graphs
from dfir.dialects.df_attrs import AlignAttr, BalanceAttr, DeviceAttr
from dfir.dialects.df_params import params_of
from dfir.lowering.flatten import flatten
from dfir.lowering.ge_executable import DEFAULT_VARIANT, GraphCode, compile_graph, output_dtypes
from dfir.lowering.ge_graph import ge_graph_entry
from dfir.lowering.om_writer import Chunks
from dfir.om.plan import (DEFAULT_CHANNEL_DEPTH, DEFAULT_RECOVER, METHOD_FACT, Cluster, WEIGHT_ALIGNMENT, Align,
                          CppProject, Executable, Func, GeGraph, GraphPoint, Input, InputBatch, Node, Plan,
                          ProcessPoint, PyProject, PyUdf, SoBin, UdfBlob, Unit, Weight, list_from_json,
                          process_point_from_json)
from dfir.passes.convert_ge_to_linalg import AUTO_ATTR

_FUNC_KINDS = ("py_func", "py_project", "cpp_project")


@dataclass(frozen=True)
class AutoChoice:
    """What a measuring `auto` chose for a graph: the backend and its variant, and one line
    saying what it measured (the `auto` attribute of the graph and of its plan entry)."""

    backend: str
    variant: str
    measured: str


Chooser = Callable[[ge.GraphOp, GeGraph, list], AutoChoice]
"""(graph op marked `auto`, its plan entry, its weight arrays) -> the backend to run it with."""


@dataclass(frozen=True)
class GeBuild:
    """How lowering builds the code of GE graphs: the intra-op threads their plan entries ask
    for (None: the cores of the process that runs them), who chooses the backend of the graphs
    `auto` marked (None: the backend `convert-ge-to-linalg` gave stays) and who is told the name
    of each graph compiled (the compile's progress)."""

    threads: int | None = None
    choose: Chooser | None = None
    on_compiled: Callable[[str], None] | None = None


@dataclass(frozen=True)
class Symbol:
    """A skeleton node's process point before lowering: its symbol (JSON: the symbol's name)."""

    name: str

    def to_json(self) -> str:
        return self.name

    @classmethod
    def from_json(cls, value: Any, path: str) -> Symbol:
        if not isinstance(value, str):
            raise GeError(f"{path}: expected a process point symbol, got {value!r:.60}")
        return cls(value)


Skeleton = Plan[Symbol]
"""The graph's own part of its plan: no tables, each node's `pp` its process point's `Symbol`."""


def read_skeleton(document: Any, where: str = "skeleton") -> Skeleton:
    """A skeleton from its JSON (`to_json`); GeError naming the path of a defect."""
    return Plan.from_json(document, where, Symbol.from_json)


@dataclass(frozen=True)
class UnitPlan:
    """A process point lowered on its own: its pp entry and the tables it refers to, whose
    indexes and weight offsets are local to the unit."""

    pp: ProcessPoint
    udfs: tuple[UdfBlob, ...] = ()
    ge_graphs: tuple[GeGraph, ...] = ()
    so_bins: tuple[SoBin, ...] = ()
    executables: tuple[Executable, ...] = ()

    def to_json(self) -> dict:
        return {"pp": self.pp.to_json(), "udfs": [u.to_json() for u in self.udfs],
                "ge_graphs": [g.to_json() for g in self.ge_graphs], "so_bins": [s.to_json() for s in self.so_bins],
                "executables": [e.to_json() for e in self.executables]}

    @classmethod
    def from_json(cls, document: Any, where: str = "unit") -> UnitPlan:
        """A unit from its JSON; GeError naming the path of a defect or of an index out of its tables."""
        if not isinstance(document, dict) or set(document) != {"pp", "udfs", "ge_graphs", "so_bins", "executables"}:
            raise GeError(f'{where}: expected an object of "pp", "udfs", "ge_graphs", "so_bins" and "executables"')
        unit = cls(process_point_from_json(document["pp"], f"{where}.pp"),
                   list_from_json(document["udfs"], f"{where}.udfs", UdfBlob.from_json),
                   list_from_json(document["ge_graphs"], f"{where}.ge_graphs", GeGraph.from_json),
                   list_from_json(document["so_bins"], f"{where}.so_bins", SoBin.from_json),
                   list_from_json(document["executables"], f"{where}.executables", Executable.from_json))
        _relocated(unit.pp, *(range(len(table)) for table in (unit.udfs, unit.so_bins, unit.ge_graphs)),
                   where=f"{where}.pp")
        for g, graph in enumerate(unit.ge_graphs):
            _relocated_executable(graph, range(len(unit.executables)), f"{where}.ge_graphs[{g}]")
        return unit


@dataclass
class LoweredGraph:
    """A plan (a `Plan`, or a unit's `UnitPlan`) and the blobs it refers to."""

    plan: Plan | UnitPlan
    udf_payloads: list[bytes] = field(default_factory=list)
    so_bins: list[bytes] = field(default_factory=list)
    weights: Chunks = field(default_factory=Chunks)
    """The weights blob: views of the constants' bytes, copied once, into the `.om`."""
    units: dict[str, "LoweredGraph"] = field(default_factory=dict)
    """The process points lowered (not reused) for this plan, by symbol (see `lower_unit`)."""
    skeleton: Skeleton | None = None
    """The graph's own part of this plan (see `graph_skeleton`)."""
    executables: list[bytes] = field(default_factory=list)
    """The executables (IREE vmfbs, ONNX models) the plan's `executables` describe, in order."""

    def plan_bytes(self) -> bytes:
        return self.plan.to_bytes()


def the_graph(module: ModuleOp) -> GraphOp:
    graphs = top_graphs(module)
    if len(graphs) != 1:
        raise GeError(f"a module lowers to one model and needs exactly one df.graph, found {len(graphs)}")
    return graphs[0]


def lower_graph(module: ModuleOp, reuse: Mapping[str, LoweredGraph] | None = None,
                skeleton: Skeleton | None = None, channel_depth: int = DEFAULT_CHANNEL_DEPTH,
                cluster: Cluster = Cluster(), build: GeBuild = GeBuild(),
                shared_arena_bytes: int | None = None, recover: str = DEFAULT_RECOVER,
                udf_timeout_ms: int | None = None, trace: float = 0.0) -> LoweredGraph:
    """The plan of the module's graph. `reuse` maps process point symbols to units lowered
    before, merged instead of lowering those points; the units lowered here are in `units`.
    `skeleton`, the graph's skeleton lowered before, is used instead of lowering the graph.
    `channel_depth` is the depth the runtime gives the model's channels, `cluster` where its
    servers run, `build` how GE graphs' code is built, `shared_arena_bytes` the size of the
    runtime's tensor arena (None: the runtime's default), `recover` what the runtime does when a
    worker dies, `udf_timeout_ms` the timeout of a UDF node that has none of its own
    (`udf_timeouts`), `trace` the share of transactions the runtime traces."""
    symbols = {op.sym_name.data: op for op in module.ops if hasattr(op, "sym_name")}
    if skeleton is None:
        skeleton = graph_skeleton(the_graph(module), symbols)
    tables = _Tables()
    units: dict[str, LoweredGraph] = {}
    entries: dict[str, ProcessPoint] = {}

    def pp_entry(sym: str) -> ProcessPoint:
        if sym not in entries:
            unit = (reuse or {}).get(sym)
            if unit is None:
                unit = units[sym] = lower_unit(symbols, sym, build)
            entries[sym] = tables.merge(unit)
        return entries[sym]

    nodes = tuple(replace(node, pp=pp_entry(node.pp.name)) for node in skeleton.nodes)
    plan = replace(skeleton, nodes=nodes, udfs=tuple(tables.udfs), ge_graphs=tuple(tables.ge_graphs),
                   so_bins=tuple(tables.so_bins), channel_depth=channel_depth,
                   executables=tuple(tables.executables), cluster=cluster,
                   shared_arena_bytes=shared_arena_bytes, recover=recover,
                   udf_timeouts=_udf_timeouts(skeleton, nodes, symbols, udf_timeout_ms), trace=trace)
    plan.check()
    return LoweredGraph(plan, tables.blobs.udf_payloads, tables.blobs.so_bins, tables.blobs.weights, units,
                        skeleton, tables.blobs.executables)


def _udf_timeouts(skeleton: Skeleton, nodes: tuple[Node[ProcessPoint], ...], symbols: Mapping[str, object],
                  default_ms: int | None) -> dict[str, int]:
    """The timeout of every UDF node that has one, most specific first: the `udf_timeout_ms`
    fact of its UDF project (its compile config's), the skeleton's (its deploy info entry's,
    which `place-nodes` wrote on its `df.node`), `default_ms` (the option's)."""
    timeouts = {}
    for skeleton_node, node in zip(skeleton.nodes, nodes):
        if isinstance(node.pp, GraphPoint):
            continue
        pp = symbols.get(skeleton_node.pp.name)
        facts = pp.project.data if isinstance(pp, FuncPpOp) and pp.project is not None else {}
        fact = facts.get(UDF_TIMEOUT_FACT)
        milliseconds = (int(fact.data) if isinstance(fact, StringAttr) else
                        skeleton.udf_timeouts.get(node.name, default_ms))
        if milliseconds is not None:
            timeouts[node.name] = milliseconds
    return timeouts


def graph_skeleton(graph: GraphOp, symbols: Mapping[str, object] | None = None) -> Skeleton:
    """The graph's own part of its plan: all but the tables, each node's `pp` its symbol. The
    clones of a replicated node are one plan node (at the first one's position) and a unit
    each; the sub-FlowGraphs it runs are flattened into it (`symbols`: the module's symbol ops).
    The plan is `n_mapping` when the graph is or one of its nodes (a sub-FlowGraph's too) batches;
    its `udf_timeouts` are those its deploy info gives (`udf_timeout_ms` on the `df.node`s)."""
    flat = flatten(graph, symbols or {})
    nodes = tuple(_node_entry(node.name, node.instances[0], flat.ref) for node in flat.nodes)
    units = tuple(_unit(n, clone) for n, node in enumerate(flat.nodes) for clone in node.instances)
    return Plan(name=graph.sym_name.data,
                inputs=tuple(_input_entry(d) for d in sorted(graph.data_ops, key=lambda d: d.index.value.data)),
                outputs=tuple(flat.ref(v, "graph output") for v in graph.output_op.outputs),
                nodes=nodes, order=tuple(range(len(flat.nodes))), align=_align_entry(graph.align),
                closures=flat.flow_closures(),
                n_mapping=graph.n_mapping is not None or any(node.batch for node in nodes), units=units,
                exception_catch=graph.exception_catch is not None,
                udf_timeouts={node.name: node.instances[0].udf_timeout_ms.value.data for node in flat.nodes
                              if node.instances[0].udf_timeout_ms is not None})


def _align_entry(align: AlignAttr | None) -> Align | None:
    """An input alignment (`set_inputs_align_attrs`) as an `Align`, or None."""
    if align is None:
        return None
    return Align(align.cache.data, align.timeout.data, bool(align.dropout.data))


def lower_unit(symbols: Mapping[str, object], sym: str, build: GeBuild = GeBuild()) -> LoweredGraph:
    """Process point `sym` lowered on its own: a `UnitPlan`, its indexes and weight offsets local
    to the unit (`build`: see `lower_graph`)."""
    entries = _ProcessPointEntries(symbols, build)
    entry = entries.entry(sym)
    blobs = entries.blobs
    return LoweredGraph(UnitPlan(entry, tuple(entries.udfs), tuple(entries.ge_graphs), tuple(entries.so_bins),
                                 tuple(entries.executables)),
                        blobs.udf_payloads, blobs.so_bins, blobs.weights, executables=blobs.executables)


@dataclass
class _Blobs:
    """The bytes a plan's tables describe: UDF payloads, C++ UDF libraries, the weights blob,
    IREE executables."""

    udf_payloads: list[bytes] = field(default_factory=list)
    so_bins: list[bytes] = field(default_factory=list)
    weights: Chunks = field(default_factory=Chunks)
    executables: list[bytes] = field(default_factory=list)


def _deduplicated(meta: UdfBlob | SoBin | Executable, blob: bytes, table: list, by_digest: dict[str, int],
                  blobs: list[bytes]) -> int:
    """The index of `blob` in `table` (each distinct blob once, with its `partition`)."""
    if meta.sha256 not in by_digest:
        by_digest[meta.sha256] = len(table)
        table.append(replace(meta, partition=len(table)))
        blobs.append(blob)
    return by_digest[meta.sha256]


class _Tables:
    """The plan's `udfs`, `so_bins`, `executables` and `ge_graphs` tables and their blobs, filled
    by merging units."""

    def __init__(self):
        self.blobs = _Blobs()
        self.udfs: list[UdfBlob] = []
        self.so_bins: list[SoBin] = []
        self.executables: list[Executable] = []
        self.ge_graphs: list[GeGraph] = []
        self._udf_by_digest: dict[str, int] = {}
        self._so_by_digest: dict[str, int] = {}
        self._executable_by_digest: dict[str, int] = {}

    def merge(self, unit: LoweredGraph) -> ProcessPoint:
        """Add `unit`'s tables; its pp entry with indexes into this plan's tables."""
        plan = unit.plan
        udfs = [_deduplicated(meta, payload, self.udfs, self._udf_by_digest, self.blobs.udf_payloads)
                for meta, payload in zip(plan.udfs, unit.udf_payloads)]
        so_bins = [_deduplicated(meta, library, self.so_bins, self._so_by_digest, self.blobs.so_bins)
                   for meta, library in zip(plan.so_bins, unit.so_bins)]
        executables = [_deduplicated(meta, vmfb, self.executables, self._executable_by_digest,
                                     self.blobs.executables)
                       for meta, vmfb in zip(plan.executables, unit.executables)]
        base = self._weights(unit.weights)
        graphs = []
        for graph in plan.ge_graphs:
            graphs.append(len(self.ge_graphs))
            weights = tuple(replace(w, offset=w.offset + base) for w in graph.weights)
            self.ge_graphs.append(_relocated_executable(replace(graph, weights=weights), executables))
        return _relocated(plan.pp, udfs, so_bins, graphs)

    def _weights(self, blob: Chunks) -> int:
        """Append a unit's weight blob on a 64-byte boundary; its offset in the plan's blob."""
        weights = self.blobs.weights
        base = weights.append(b"", WEIGHT_ALIGNMENT) if blob else len(weights)
        for piece in blob.pieces:
            weights.append(piece)
        return base


def _relocated(pp: ProcessPoint, udfs, so_bins, graphs, where: str = "unit.pp") -> ProcessPoint:
    """A unit's pp entry with its `udf`, `so`, `graph` and `closures` indexes renumbered through
    the given sequences; GeError naming `where` for an index outside them."""
    def renumbered(field_name: str, index: int, table) -> int:
        if not 0 <= index < len(table):
            raise GeError(f"{where}.{field_name}: {index} is out of range [0, {len(table)})")
        return table[index]

    changes = {name: renumbered(name, getattr(pp, name), table)
               for name, table in (("udf", udfs), ("so", so_bins), ("graph", graphs)) if hasattr(pp, name)}
    if isinstance(pp, (PyProject, CppProject)):
        changes["closures"] = {key: renumbered(f"closures.{key}", value, graphs)
                               for key, value in pp.closures.items()}
    return replace(pp, **changes)


def _relocated_executable(graph: GeGraph, executables, where: str = "unit.ge_graphs") -> GeGraph:
    """`graph` with its `executable` renumbered through `executables`; GeError naming `where`
    for an index outside it."""
    if graph.executable is None:
        return graph
    if not 0 <= graph.executable < len(executables):
        raise GeError(f"{where}.executable: {graph.executable} is out of range [0, {len(executables)})")
    return replace(graph, executable=executables[graph.executable])


def _input_entry(data: DataOp) -> Input:
    dtype = data.attributes.get("dtype")
    shape = data.attributes.get("shape")
    return Input(data.data_name.data, data.index.value.data, dtype.data if isinstance(dtype, StringAttr) else None,
                 tuple(shape.get_values()) if shape is not None else None)


def _node_entry(name: str, node: NodeOp, edge) -> Node[Symbol]:
    """Plan node `name` of a node given as its first clone (the clones differ only in device and
    instance, which its units hold: `_unit`)."""

    def attr(name: str, kind: type):
        value = node.attributes.get(name)
        return value if isinstance(value, kind) else None

    def text(name: str):
        value = attr(name, StringAttr)
        return None if value is None else value.data

    balance = attr("balance", BalanceAttr)
    invokes = attr("invokes", DictionaryAttr)
    return Node(
        name=name, alias=text("alias"), loc=text("loc"),
        input_num=node.input_num.value.data, output_num=node.output_num.value.data,
        inputs=tuple(edge(v, f"input {i} of {node.label}") for i, v in enumerate(node.inputs)),
        dispatch=text("dispatch") or "round_robin",
        balance=None if balance is None else balance.role.data, align=_align_entry(attr("align", AlignAttr)),
        invokes={} if invokes is None else {key: tuple(_spelling(d) for d in placed.data)
                                            for key, placed in sorted(invokes.data.items())},
        attrs=_user_attrs(node), pp=Symbol(node.pp.root_reference.data),
        batch=tuple(InputBatch(attr.input_index, attr.spec()) for attr in (node.batch.data if node.batch else ())))


def _unit(node: int, clone: NodeOp) -> Unit:
    """The unit of `clone`, an instance of plan node `node`: its `instance` index and `device` as
    `replicate-instances` wrote them (a node it did not replicate: instance 0)."""
    return Unit(node, 0 if clone.instance is None else clone.instance.index.data,
                _spelling(clone.attributes.get("device")))


def _spelling(device) -> str:
    """A device's plan spelling; "-1" (the host) for a node without one."""
    return device.spelling() if isinstance(device, DeviceAttr) else "-1"


def _init_params(pp: FuncPpOp) -> dict[str, InitParam]:
    """A UDF project's init params by name (dfir.core.udf_params)."""
    if pp.init_params is None:
        return {}
    return dict(sorted(params_of(pp.init_params).items()))


def _user_attrs(node: NodeOp) -> dict:
    attrs = node.attributes.get("user_attrs")
    if attrs is None:
        return {}
    out = {}
    for key, value in attrs.data.items():
        if isinstance(value, StringAttr):
            out[key] = value.data
        else:  # a bool is an i1, whose true reads back as -1
            out[key] = bool(value.value.data) if value.type.width.data == 1 else value.value.data
    return out


class _ProcessPointEntries:
    """Plan entries of process points, each lowered once, and the tables and blobs they refer to."""

    def __init__(self, symbols: Mapping[str, object], build: GeBuild = GeBuild()):
        self.symbols = symbols
        self.build = build
        self.blobs = _Blobs()
        self.udfs: list[UdfBlob] = []
        self.ge_graphs: list[GeGraph] = []
        self.so_bins: list[SoBin] = []
        self.executables: list[Executable] = []
        self._cache: dict[str, ProcessPoint] = {}
        self._udf_by_digest: dict[str, int] = {}
        self._so_by_digest: dict[str, int] = {}
        self._executable_by_digest: dict[str, int] = {}

    def entry(self, sym: str) -> ProcessPoint:
        if sym not in self._cache:
            pp = self.symbols[sym]
            self._cache[sym] = self._func(pp) if isinstance(pp, FuncPpOp) else self._graph(pp)
        return self._cache[sym]

    def _func(self, pp: FuncPpOp) -> ProcessPoint:
        """A UDF's entry: `py_udf` (a `py_func`), `py_project` or `cpp_project` (docs/execution-plan.md)."""
        kind = pp.kind.data
        if pp.payload is None or kind not in _FUNC_KINDS:
            raise GeError(f"df.func_pp @{pp.sym_name.data}: kind '{kind}' cannot be lowered yet")
        data = base64.b64decode(pp.payload.data)
        funcs = tuple(Func(f.func_name.data, tuple(f.input_ports), tuple(f.output_ports), f.is_stream_input)
                      for f in pp.funcs)
        if kind == "py_func":
            return PyUdf(self._udf(data), funcs)
        facts = {key: value.data for key, value in pp.project.data.items()}
        params, closures = _init_params(pp), self._closures(pp)
        if kind == "py_project":
            methods = {key[len(METHOD_FACT):]: value for key, value in facts.items() if key.startswith(METHOD_FACT)}
            return PyProject(self._udf(data), facts["py_module"], facts["py_class"], funcs, params, closures,
                             methods)
        return CppProject(self._so_bin(data, facts["target_bin"], facts["resource_type"]),
                          facts["resource_type"], funcs, params, closures)

    def _udf(self, data: bytes) -> int:
        """The `udfs` index of a UDF payload (one UDF_PAYLOAD partition per distinct payload)."""
        meta = UdfBlob(0, hashlib.sha256(data).hexdigest(), len(data))
        return _deduplicated(meta, data, self.udfs, self._udf_by_digest, self.blobs.udf_payloads)

    def _so_bin(self, data: bytes, name: str, resource_type: str) -> int:
        """The `so_bins` index of a C++ UDF library (one SO_BINS partition per distinct library)."""
        meta = SoBin(0, name, hashlib.sha256(data).hexdigest(), len(data), resource_type)
        return _deduplicated(meta, data, self.so_bins, self._so_by_digest, self.blobs.so_bins)

    def _closures(self, pp: FuncPpOp) -> dict[str, int]:
        """Invoked closure key -> `ge_graphs` index of the GE graph it runs (a sub-FlowGraph is
        flattened into the plan instead: `dfir.lowering.flatten`)."""
        closures = {}
        for closure in pp.closures.block.ops:
            if isinstance(self.symbols.get(closure.pp.root_reference.data), FlowGraphPpOp):
                continue
            entry = self.entry(closure.pp.root_reference.data)
            if not isinstance(entry, GraphPoint):
                raise GeError(f"df.func_pp @{pp.sym_name.data}: invoked closure "
                              f"'{closure.key.data}' must run a GE graph")
            closures[closure.key.data] = entry.graph
        return closures

    def _graph(self, pp: GraphPpOp) -> GraphPoint:
        graph_op = self.symbols[pp.graph.root_reference.data]
        entry, arrays = ge_graph_entry(graph_op)
        entry = replace(entry, weights=tuple(self._pack(a) for a in arrays))
        self.ge_graphs.append(replace(entry, **self._compiled(graph_op, entry, arrays)))
        return GraphPoint(len(self.ge_graphs) - 1)

    def _compiled(self, graph_op: ge.GraphOp, entry: GeGraph, arrays: list[np.ndarray]) -> dict[str, Any]:
        """The fields of the graph's entry that say what runs it: for a compiled backend its
        `backend`, `executable` (built into `executables`), `output_dtypes` and `threads`; the
        `auto` line of a graph whose backend was measured. A graph `auto` marked is measured
        first when the build has a chooser, which may change its backend."""
        backend = REFERENCE if graph_op.backend is None else graph_op.backend.data  # verified: a known one
        variant, fields = DEFAULT_VARIANT, {}
        if AUTO_ATTR in graph_op.attributes and self.build.choose is not None:
            choice = self.build.choose(graph_op, entry, arrays)
            backend, variant = choice.backend, choice.variant
            graph_op.backend = StringAttr(backend)
            graph_op.attributes[AUTO_ATTR] = StringAttr(choice.measured)
            fields["auto"] = choice.measured
        if backend not in COMPILED_BACKENDS:
            return fields
        code = compile_graph(graph_op, entry, backend, variant)
        if self.build.on_compiled is not None:
            self.build.on_compiled(graph_op.sym_name.data)
        return {**fields, **self._executable(code), "output_dtypes": output_dtypes(graph_op),
                "threads": self.build.threads, "external_weights": code.external_weights}

    def _executable(self, code: GraphCode) -> dict[str, Any]:
        """The `backend` and `executables` index of `code`, stored once per distinct content."""
        meta = Executable(0, code.backend, code.target, code.sha256, len(code.code))
        index = _deduplicated(meta, code.code, self.executables, self._executable_by_digest, self.blobs.executables)
        return {"backend": code.backend, "executable": index}

    def _pack(self, array: np.ndarray) -> Weight:
        offset = self.blobs.weights.append(np.ascontiguousarray(array), WEIGHT_ALIGNMENT)
        return Weight(offset, int(array.nbytes), from_numpy(array.dtype).name, tuple(array.shape))
