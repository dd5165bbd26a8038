"""The import phase: a FlowGraph (or a GE Graph) becomes a df/ge module, in memory.

1. Walk the graph (`dfir.frontend.dataflow.traversal`): the FlowData and nodes it reaches, and
   its process points in first-use order.
2. Each distinct process point becomes one `df.func_pp` / `df.graph_pp` (+ its `ge.graph`) /
   `df.flow_graph_pp` (+ its sub-FlowGraph's `df.graph`, imported by these steps), named by a
   unique symbol, in that order.
3. Emit the `df.graph`: one `df.data` per FlowData, sorted by name (the feed order); the nodes
   in that order, so each value exists before its use; `df.output` with the outputs in the
   order the user listed them.
"""
from __future__ import annotations

import base64
import re
from collections.abc import Callable

import cloudpickle
from xdsl.dialects.builtin import (ArrayAttr, BoolAttr, DenseArrayBase, DictionaryAttr, IntegerAttr, ModuleOp,
                                   StringAttr, UnitAttr, i64)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from dfir.core.errors import GeError
from dfir.dialects.df import (DataOp, FlowGraphPpOp, FuncPpOp, GraphOp, GraphPpOp, InvokedClosureOp,
                              NodeOp, OutputOp)
from dfir.dialects.df_attrs import AlignAttr, BalanceAttr, FuncAttr, batch_attr
from dfir.dialects.df_params import params_attr
from dfir.frontend.dataflow.flow_graph import FlowGraph
from dfir.frontend.dataflow.graph import FlowData, FlowNode, FlowOutput
from dfir.frontend.dataflow.process_points import FlowGraphProcessPoint, FuncProcessPoint, GraphProcessPoint
from dfir.frontend.dataflow.traversal import FlowWalk, walk_flow_graph
from dfir.frontend.dataflow.udf_spec import UdfSpec
from dfir.frontend.ge.graph_config import SHAPE_OPTIONS, apply_graph_settings, load_graph_config
from dfir.frontend.udf.project import load_project


ReusedGraph = Callable[[GraphProcessPoint, str, str], bool]
"""`reused_graph(pp, pp_symbol, graph_symbol)`: whether the caller (the compile cache) has the
graph process point compiled already; its `df.graph_pp` is then imported without its `ge.graph`."""


class _ModuleBuilder:
    """Accumulates the module's top-level ops with unique symbols."""

    def __init__(self, payloads: dict[int, tuple] | None = None, reused_graph: ReusedGraph | None = None):
        self.top: list = []
        self.symbols: set[str] = set()
        self.pp_symbols: dict[int, str] = {}
        self.spec_symbols: dict[int, str] = {}  # id(UdfSpec) -> symbol, see `_deciding_spec`
        self.func_pps: dict[tuple, str] = {}
        # id(payload) -> (payload kept alive, base64 text), see `encode_payload`
        self.payloads: dict[int, tuple] = {} if payloads is None else payloads
        self.reused_graph = reused_graph
        self.projects: dict[str, tuple] = {}  # compile config path -> (ProjectSpec, base64 payload)
        self.subwalks: dict[int, FlowWalk] = {}  # id(FlowGraphProcessPoint) -> its graph's walk

    def symbol(self, wanted: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", wanted) or "pp"
        name, suffix = base, 1
        while name in self.symbols:
            name, suffix = f"{base}_{suffix}", suffix + 1
        self.symbols.add(name)
        return name

    def process_point(self, pp, node: FlowNode) -> str:
        if id(pp) not in self.pp_symbols:
            spec = _deciding_spec(pp)
            if spec is not None and id(spec) in self.spec_symbols:
                symbol = self.spec_symbols[id(spec)]
            elif isinstance(pp, FuncProcessPoint):
                symbol = self._func_pp(pp, node)
            else:
                symbol = self._closure(pp) if node is None else self._point_of_graph(pp, node)
            if spec is not None:
                self.spec_symbols[id(spec)] = symbol
            self.pp_symbols[id(pp)] = symbol
        return self.pp_symbols[id(pp)]

    def _func_pp(self, pp: FuncProcessPoint, node: FlowNode) -> str:
        """One `df.func_pp` per distinct UDF: nodes running the same code share its symbol.

        A `@pyflow` UDF is a `py_func`; a UDF project (`compile_config_path`) is a `py_project`
        or `cpp_project` (`_project`). Invoked closures become the op's region.
        """
        closures = [(key, self._closure(closure))
                    for key, closure in sorted(pp.invoked_closures.items())]
        if pp.udf is None:
            kind, funcs, payload, project = self._project(pp, node)
        else:
            kind, project = "py_func", None
            funcs = tuple(FuncAttr(f.name, f.inputs, f.outputs, f.stream_input) for f in pp.udf.funcs)
            payload = self._payload(pp.udf, node)
        params = params_attr(pp.init_params) if pp.init_params else None
        key = (kind, funcs, payload, str(params), str(project), tuple(closures))
        if key not in self.func_pps:
            sym = self.symbol(f"{pp.name}_pp")
            op = FuncPpOp(sym, kind, funcs, payload,
                          [InvokedClosureOp(k, closure) for k, closure in closures])
            if params is not None:
                op.properties["init_params"] = params
            if project is not None:
                op.properties["compile_config"] = StringAttr(pp.compile_config_path)
                op.properties["project"] = project
            self.top.append(op)
            self.func_pps[key] = sym
        return self.func_pps[key]

    def _project(self, pp: FuncProcessPoint, node: FlowNode) -> tuple:
        """(kind, funcs, base64 payload, `project` property) of a UDF project, loaded once per file."""
        path = pp.compile_config_path
        if path not in self.projects:
            spec = load_project(path)
            self.projects[path] = (spec, base64.b64encode(spec.payload).decode("ascii"))
        spec, payload = self.projects[path]
        config = spec.config
        if (node.input_num, node.output_num) != (config.input_num, config.output_num):
            raise GeError(f"node {node.name} ({node.loc}) has {node.input_num} inputs and "
                          f"{node.output_num} outputs but compile config {config.path} says "
                          f"input_num {config.input_num} and output_num {config.output_num}")
        funcs = tuple(FuncAttr(f.name, f.inputs, f.outputs, f.stream_input) for f in config.funcs)
        project = DictionaryAttr({k: StringAttr(v) for k, v in sorted(spec.facts.items())})
        return spec.kind, funcs, payload, project

    def _closure(self, pp: GraphProcessPoint | FlowGraphProcessPoint) -> str:
        """The symbol of an invoked closure's process point (its arity is the graph's own)."""
        if id(pp) not in self.pp_symbols:
            self.pp_symbols[id(pp)] = self._point_of_graph(pp, None)
        return self.pp_symbols[id(pp)]

    def _point_of_graph(self, pp: GraphProcessPoint | FlowGraphProcessPoint, node: FlowNode | None) -> str:
        return self._flow_graph_pp(pp) if isinstance(pp, FlowGraphProcessPoint) else self._graph_pp(pp, node)

    def _flow_graph_pp(self, pp: FlowGraphProcessPoint) -> str:
        """A sub-FlowGraph: its process points, its `df.graph` and the `df.flow_graph_pp` running it."""
        walk = self.subwalks[id(pp)]
        self.subwalks.update(walk.subgraphs)
        graph_sym = self.graph(pp.flow_graph, walk)
        sym = self.symbol(f"{pp.name}_pp")
        self.top.append(FlowGraphPpOp(sym, graph_sym, pp.name))
        return sym

    def graph(self, graph: FlowGraph, walk: FlowWalk, reused_flow: ReusedFlow | None = None) -> str:
        """Import `graph` (steps 2 and 3) as a top-level `df.graph`; its symbol."""
        self.subwalks.update(walk.subgraphs)
        for pp, node in walk.points:
            self.process_point(pp, node)
        symbols = [self.pp_symbols[id(node.process_points[0])] for node in walk.nodes]
        graph_sym = self.symbol(graph.name)
        graph_op = reused_flow(symbols, graph_sym) if reused_flow is not None and not walk.subgraphs else None
        if graph_op is None:
            graph_op = _flow_graph_op(graph, graph_sym, walk.datas, walk.nodes, symbols)
        self.top.append(graph_op)
        return graph_sym

    def _payload(self, udf: UdfSpec, node: FlowNode) -> str:
        if id(udf.payload) not in self.payloads:
            self.payloads[id(udf.payload)] = (udf.payload, encode_payload(udf, node))
        return self.payloads[id(udf.payload)][1]

    def _graph_pp(self, pp: GraphProcessPoint, node: FlowNode | None) -> str:
        graph_sym = self.symbol(pp.graph.name)
        sym = self.symbol(f"{pp.name}_pp")
        if self.reused_graph is None or not self.reused_graph(pp, sym, graph_sym):
            graph_op = pp.graph.to_ir(verify=False)  # the compiler verifies the module
            if pp.compile_config_path:
                config = load_graph_config(pp.compile_config_path)
                apply_graph_settings(graph_op, config.build_options, config.inputs,
                                     f"compile config {config.source}")
            graph_op.properties["sym_name"] = StringAttr(graph_sym)
            self.top.append(graph_op)
        if node is not None:  # None: an invoked closure, which no node's ports constrain
            _check_graph_arity(pp, node)
        self.top.append(GraphPpOp(sym, graph_sym, "ge"))
        return sym


def _deciding_spec(pp) -> UdfSpec | None:
    """The `@pyflow` spec that alone decides the `df.func_pp` of `pp` (no init params, no
    closures), so that the many process points `.fnode()` makes of one UDF import once."""
    if isinstance(pp, FuncProcessPoint) and pp.udf is not None and not pp.init_params \
            and not pp.invoked_closures:
        return pp.udf
    return None


def _check_graph_arity(pp: GraphProcessPoint, node: FlowNode) -> None:
    inputs, outputs = len(pp.graph.inputs), pp.graph.num_outputs
    if (node.input_num, node.output_num) != (inputs, outputs):
        raise GeError(f"node {node.name} ({node.loc}) has {node.input_num} inputs and "
                      f"{node.output_num} outputs but GE graph {pp.graph.name} has {inputs} inputs "
                      f"and {outputs} outputs")


def encode_payload(udf: UdfSpec, node: FlowNode) -> str:
    """The cloudpickled payload, by value for the UDF's own module so a fresh process can rebuild it."""
    module = __import__("sys").modules.get(getattr(udf.payload.target, "__module__", ""), None)
    by_value = module is not None and module.__name__ not in ("__main__", "builtins")
    if by_value:
        cloudpickle.register_pickle_by_value(module)
    try:
        data = udf.payload.dumps()
    except Exception as error:
        raise GeError(f"node {node.name} ({node.loc}): the UDF cannot be serialized: {error}") from error
    finally:
        if by_value:
            cloudpickle.unregister_pickle_by_value(module)
    return base64.b64encode(data).decode("ascii")


def _node_attributes(node: FlowNode, udf: UdfSpec | None) -> dict[str, Attribute]:
    attrs: dict[str, Attribute] = {"loc": StringAttr(node.loc)}
    if node.alias is not None:
        attrs["alias"] = StringAttr(node.alias)
    if node.attrs:
        attrs["user_attrs"] = DictionaryAttr({k: _attr_value(v) for k, v in sorted(node.attrs.items())})
    if node.balance is not None:
        attrs["balance"] = BalanceAttr(node.balance)
    if node.input_batches:
        attrs["batch"] = ArrayAttr([batch_attr(index, spec) for index, spec in sorted(node.input_batches.items())])
    if udf is not None and udf.resources:
        attrs["resources"] = DictionaryAttr({str(k): StringAttr(str(v))
                                             for k, v in sorted(udf.resources.items())})
    return attrs


def _data_attributes(data: FlowData) -> dict[str, Attribute]:
    attrs: dict[str, Attribute] = {"loc": StringAttr(data.loc)}
    if data.schema is not None:
        attrs["dtype"] = StringAttr(data.schema.dtype.name)
        attrs["shape"] = DenseArrayBase.from_list(i64, data.schema.shape)
    return attrs


def _attr_value(value: bool | int | str) -> Attribute:
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    return IntegerAttr(value, i64) if isinstance(value, int) else StringAttr(value)


ReusedFlow = Callable[[list[str], str], Operation | None]
"""`reused_flow(node_symbols, graph_symbol)`: a stand-in for the `df.graph` whose nodes run the
process points `node_symbols` (in the importer's order), for a caller that has it compiled (the
compile cache), or None to build it."""


def import_flow_graph(graph: FlowGraph, *, payloads: dict[int, tuple] | None = None,
                      walk: FlowWalk | None = None, reused_graph: ReusedGraph | None = None,
                      reused_flow: ReusedFlow | None = None) -> ModuleOp:
    """Build the module of `graph` (see the module docstring for the steps).

    `payloads` holds UDF payloads this compile already serialized, `{id(payload): (payload,
    encode_payload text)}` (the importer adds those it serializes), and `walk` the graph's walk
    when this compile has it already; `reused_graph` and `reused_flow` may stand in for parts
    the compile cache has compiled (see their types); `reused_flow` is not asked for a graph
    with sub-FlowGraphs (their `df.graph`s are imported with it).
    """
    walk = walk_flow_graph(graph) if walk is None else walk
    builder = _ModuleBuilder(payloads, reused_graph)
    builder.graph(graph, walk, reused_flow)
    return ModuleOp(builder.top)


def _flow_graph_op(graph: FlowGraph, sym: str, datas: list[FlowData], nodes: list[FlowNode],
                   node_symbols: list[str]) -> GraphOp:
    """Step 3 of the module docstring: the `df.graph` of `graph` as symbol `sym`."""
    _check_batching(graph, nodes)
    block = Block()
    values: dict[tuple[int, int], SSAValue] = {}
    for index, data in enumerate(datas):
        op = DataOp(data.name, index, _data_attributes(data))
        block.add_op(op)
        values[(id(data), 0)] = op.result
    for node, pp_sym in zip(nodes, node_symbols):
        inputs = [values[_key(anchor)] for anchor in node.input_anchors]
        op = NodeOp(node.name, pp_sym, inputs, node.input_num, node.output_num,
                    _node_attributes(node, getattr(node.process_points[0], "udf", None)))
        block.add_op(op)
        for port, result in enumerate(op.outputs):
            values[(id(node), port)] = result
    block.add_op(OutputOp([values[_key(output)] for output in graph.outputs]))
    graph_op = GraphOp(sym, Region(block), graph.graph_options)
    if graph.align is not None:
        graph_op.properties["align"] = AlignAttr(*graph.align)
    if graph.contains_n_mapping_node or any(node.input_batches for node in nodes):
        graph_op.properties["n_mapping"] = UnitAttr()
    if graph.exception_catch:
        graph_op.properties["exception_catch"] = UnitAttr()
    return graph_op


def _check_batching(graph: FlowGraph, nodes: list[FlowNode]) -> None:
    """GE refuses a batched input in a graph that catches exceptions."""
    for node in nodes:
        if node.input_batches and graph.exception_catch:
            raise GeError(f"node {node.name} ({node.loc}): TimeBatch or CountBatch cannot be set on input "
                          f"{min(node.input_batches)} while exception catch is enabled")


def _key(anchor: FlowData | FlowOutput) -> tuple[int, int]:
    return (id(anchor), 0) if isinstance(anchor, FlowData) else (id(anchor.node), anchor.index)


def import_ge_graph(graph, options: dict[str, str] | None = None) -> ModuleOp:
    """A GE Graph compiled on its own: one node running it, fed in the graph's input order.

    `ge.inputShape` and `ge.outputMaxSize` among the (validated) compile `options` apply to it.
    """
    builder = _ModuleBuilder()
    graph_sym = builder.symbol(graph.name)
    graph_op = graph.to_ir(verify=False)  # the compiler verifies the module
    shape_options = {k: v for k, v in (options or {}).items() if k in SHAPE_OPTIONS}
    if shape_options:
        apply_graph_settings(graph_op, shape_options, None, "compile options")
    graph_op.properties["sym_name"] = StringAttr(graph_sym)
    pp_sym = builder.symbol(f"{graph.name}_pp")
    block = Block([DataOp(d.name, d.index) for d in graph.inputs])
    node = NodeOp(graph.name, pp_sym, [op.result for op in block.ops], len(graph.inputs),
                  graph.num_outputs)
    block.add_ops([node, OutputOp(list(node.outputs))])
    return ModuleOp([graph_op, GraphPpOp(pp_sym, graph_sym, "ge"),
                     GraphOp(builder.symbol(f"{graph.name}_flow"), Region(block))])
