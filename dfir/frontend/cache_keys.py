"""The compile cache's frontend keys: what a compile would import, hashed from the frontend
objects before any IR exists, so that a compile of an unchanged graph loads its cached model
without importing it.

Two frontends with the same graph key import to the same module (`dfir.frontend.importer` reads
nothing the key leaves out), so the key can stand for the `df.graph` fingerprint that the import
would give. It hashes what the importer's walk (`walk_flow_graph`, whose errors it raises) yields,
in that walk's order:

1. The graph: a FlowGraph's name, graph options, alignment and exception flag, its process
   points, the FlowData and nodes its outputs reach, and the outputs; a GE Graph compiled
   alone, its content.
2. Each FlowData: name, location, schema. Each node: name, location, alias, ports, attributes,
   balance role, input and output maps, its process points (by the position where each was
   first used, so that sharing a process point differs from using equal ones), and where each
   input comes from.
3. Each process point once, where first used. A UDF: name, paths, init params, the functions
   and resources of its `@pyflow` spec, its payload's bytes exactly as shipped (serialized once
   per compile, with `dfir.frontend.importer.encode_payload`, and handed to the importer; cloudpickle's
   per-process class ids made canonical by `dfir.core.canonical_payload`), or what its UDF project
   loads; its invoked closures. A GE graph: name, framework, load params, the compile config
   file's bytes, and `Graph.content_key()`, which the graph hashed as its ops were added. A
   sub-FlowGraph: its name and, as its metadata and contents, the flow and graph keys' lines
   of its FlowGraph (steps 1 to 3), hashed.
4. The salt of every fingerprint, the compile salt (`dfir.driver.cache.settings.compile_salt`:
   dfir's version, the `.om` IR version, options, pass pipeline, deploy info contents). The
   resource config is not in the key: the cache compares it with the model's.

Values enter as the `repr` of tuples of plain values (strings quoted, `True` apart from `1`).
Two more keys let a compile with changes skip what did not change:

- a point key for each graph process point (`FrontendKeys.point_key`): its own part of the
  above plus the symbols the importer gives it, which stands for its fingerprint, so that the
  point is reused without building its `ge.graph`;
- the flow key of the `df.graph` (`FrontendKeys.flow_key`): all of the above but the contents
  of the process points (payloads, GE graph contents, config and project files), plus the
  symbols the importer gives the nodes' process points and the resource config, so that a
  change inside process points reuses the compiled `df.graph` without building it. The importer
  builds the `df.graph` from the nodes, the FlowData and the process points' symbols and
  metadata (names, functions, resources), never from their contents: what a change of
  contents changes, the symbols say.
"""
from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field

from dfir.core.canonical_payload import canonical_payload
from dfir.frontend.dataflow.flow_graph import FlowGraph
from dfir.frontend.dataflow.graph import FlowData, FlowNode, FlowOutput
from dfir.frontend.dataflow.process_points import FlowGraphProcessPoint, FuncProcessPoint, GraphProcessPoint
from dfir.frontend.dataflow.traversal import FlowWalk, walk_flow_graph
from dfir.frontend.importer import encode_payload
from dfir.frontend.udf.project import load_project

__all__ = ["FrontendKeys", "frontend_keys"]


@dataclass
class FrontendKeys:
    """The keys of one compile's frontend objects, and what computing them serialized.

    `graph_key` keys the whole graph; `payloads` holds the UDF payloads serialized for it, and
    `walk` the FlowGraph's walk (None for a GE Graph), in the forms
    `dfir.frontend.importer.import_flow_graph(payloads=..., walk=...)` takes (so neither is done twice).
    """

    graph_key: str
    payloads: dict[int, tuple] = field(default_factory=dict)
    walk: FlowWalk | None = None
    _salt: bytes = b""
    _points: dict[int, str] = field(default_factory=dict)
    _closures: set[int] = field(default_factory=set)
    _flow: str | None = None

    def point_key(self, pp: GraphProcessPoint, pp_symbol: str, graph_symbol: str) -> str | None:
        """The key of graph process point `pp` imported as `@pp_symbol` with its graph as
        `@graph_symbol`, or None when it must be imported anyway: an invoked closure (a UDF
        compiled again lowers the closures it invokes with it)."""
        described = self._points.get(id(pp))
        if described is None or id(pp) in self._closures:
            return None
        text = f"graph point {described} @{pp_symbol} @{graph_symbol}"
        return "sha256:" + hashlib.sha256(self._salt + text.encode()).hexdigest()

    def flow_key(self, node_symbols: list[str], graph_symbol: str, resource_config: bytes | None) -> str:
        """The key of the `df.graph` imported as `@graph_symbol` with its nodes running
        `node_symbols`, compiled for `resource_config` (canonical bytes, None for none)."""
        assert self._flow is not None, "only a FlowGraph has a df.graph of its own"
        digest = hashlib.sha256(self._salt + f"flow {self._flow} @{graph_symbol} {node_symbols!r}\0".encode())
        digest.update(b"no resource config" if resource_config is None else resource_config)
        return "sha256:" + digest.hexdigest()


def frontend_keys(graph, salt: str) -> FrontendKeys:
    """The keys of a FlowGraph or GE Graph compiled with the compile salt `salt`."""
    prefix = f"dfir frontend\0salt {salt}\0".encode()
    walk = _Walk()
    if isinstance(graph, FlowGraph):
        walk.flow_graph(graph)
        flow = _digest(walk.flow_lines).hexdigest()
    else:
        walk.add("ge graph", graph.content_key())
        flow = None
    return FrontendKeys("sha256:" + _digest(walk.lines, prefix).hexdigest(), walk.payloads, walk.walk,
                        prefix, walk.points, walk.closures, flow)


def _digest(lines: list[str], prefix: bytes = b""):
    return hashlib.sha256(prefix + "\n".join(lines).encode())


class _Walk:
    """One pass over the frontend objects, writing the `lines` the graph key hashes (everything)
    and the `flow_lines` the flow key hashes (all but the process points' contents); see the
    module docstring."""

    def __init__(self):
        self.lines: list[str] = []
        self.flow_lines: list[str] = []
        self.payloads: dict[int, tuple] = {}
        self.points: dict[int, str] = {}
        self.closures: set[int] = set()
        self.walk: FlowWalk | None = None
        self._pp_index: dict[int, int] = {}
        self._pp_metadata: dict[int, str] = {}
        self._specs: dict[int, tuple[tuple, str]] = {}
        self._subwalks: dict[int, FlowWalk] = {}

    def add(self, *values, flow: bool = True) -> None:
        """Add `values` to the graph key's lines and, unless `flow` is False, the flow key's."""
        line = repr(values)
        self.lines.append(line)
        if flow:
            self.flow_lines.append(line)

    def flow_graph(self, graph: FlowGraph) -> None:
        self.walk = walk_flow_graph(graph)
        self._graph_lines(graph, self.walk)

    def _graph_lines(self, graph: FlowGraph, walk: FlowWalk) -> None:
        self._subwalks.update(walk.subgraphs)
        self.add("flow graph", graph.name, sorted(graph.graph_options.items()), graph.align,
                 graph.exception_catch, graph.contains_n_mapping_node)
        for pp, node in walk.points:
            self._process_point(pp, node)
        data_index = {id(data): i for i, data in enumerate(walk.datas)}
        node_index = {id(node): i for i, node in enumerate(walk.nodes)}

        def source(anchor: FlowData | FlowOutput) -> tuple:
            if isinstance(anchor, FlowData):
                return ("data", data_index[id(anchor)])
            return ("node", node_index[id(anchor.node)], anchor.index)

        for data in walk.datas:
            schema = None if data.schema is None else (data.schema.dtype.name, list(data.schema.shape))
            self.add("data", data.name, data.loc, schema)
        for node in walk.nodes:
            pp = node.process_points[0]
            line = repr(("node", node.name, node.loc, node.alias, node.input_num, node.output_num,
                         sorted(node.attrs.items()), node.balance, _port_map(node.input_map),
                         _port_map(node.output_map), [source(anchor) for anchor in node.input_anchors],
                         sorted(node.input_batches.items())))
            self.lines.append(f"{line} runs {self._pp_index[id(pp)]}")
            self.flow_lines.append(f"{line} runs {self._pp_metadata[id(pp)]}")
        self.add("outputs", [source(output) for output in graph.outputs])

    def _process_point(self, pp, node: FlowNode | None) -> None:
        """Number `pp` (the walk lists each process point once) and put its metadata and
        contents into the graph key."""
        index = self._pp_index[id(pp)] = len(self._pp_index)
        if isinstance(pp, FuncProcessPoint):
            metadata, contents = self._udf(pp, node)
        elif isinstance(pp, FlowGraphProcessPoint):
            metadata, contents = self._sub_flow_graph(pp)
        else:
            metadata, contents = _graph_point(pp)
            self.points[id(pp)] = hashlib.sha256(repr((metadata, contents)).encode()).hexdigest()
        described = self._pp_metadata[id(pp)] = repr(metadata)
        self.lines.append(f"process point {index} {described} {contents!r}")

    def _udf(self, pp: FuncProcessPoint, node: FlowNode) -> tuple[tuple, tuple]:
        """A UDF's (metadata, contents); its invoked closures are described first."""
        closures = []
        for key, closure in sorted(pp.invoked_closures.items()):
            self.closures.add(id(closure))
            closures.append((key, self._pp_index[id(closure)]))
        params = sorted((name, repr(param)) for name, param in pp.init_params.items())
        metadata = ("udf", pp.name, pp.compile_config_path, pp.workspace_dir, params,
                    [key for key, _ in closures])
        if pp.udf is None:
            return metadata, (closures, *_project(pp.compile_config_path))
        spec, payload = self._spec(pp.udf, node)
        return metadata + spec, (closures, payload)

    def _sub_flow_graph(self, pp: FlowGraphProcessPoint) -> tuple[tuple, str]:
        """A sub-FlowGraph's (metadata, contents): its FlowGraph's lines, walked like the graph's."""
        sub = _Walk()
        sub.payloads, sub._specs, sub.points, sub.closures = self.payloads, self._specs, self.points, self.closures
        sub._graph_lines(pp.flow_graph, self._subwalks[id(pp)])
        return ("flow graph", pp.name, _digest(sub.flow_lines).hexdigest()), _digest(sub.lines).hexdigest()

    def _spec(self, udf, node: FlowNode) -> tuple[tuple, str]:
        """A `@pyflow` spec's (functions and resources, payload digest), its payload serialized
        once per compile (and handed to the importer)."""
        described = self._specs.get(id(udf))
        if described is None:
            funcs = [(f.name, list(f.inputs), list(f.outputs), f.stream_input) for f in udf.funcs]
            resources = sorted((str(k), str(v)) for k, v in (udf.resources or {}).items())
            if id(udf.payload) not in self.payloads:
                self.payloads[id(udf.payload)] = (udf.payload, encode_payload(udf, node))
            data = canonical_payload(base64.b64decode(self.payloads[id(udf.payload)][1]))
            described = self._specs[id(udf)] = ((funcs, resources), hashlib.sha256(data).hexdigest())
        return described


def _port_map(ports: dict) -> list:
    """A node's input or output map as (node port, process point port) pairs."""
    return sorted((index, pp_index) for index, (_, pp_index) in ports.items())


def _graph_point(pp: GraphProcessPoint) -> tuple[tuple, tuple]:
    """A graph process point's (metadata, contents)."""
    metadata = ("graph", pp.name, pp.framework.name, sorted(pp.load_params.items()), pp.compile_config_path)
    return metadata, (_file_digest(pp.compile_config_path), pp.graph.content_key())


def _project(path: str) -> tuple:
    """What a UDF project's compile config loads (`dfir.frontend.udf.project.load_project`), as shipped."""
    spec = load_project(path)
    config = spec.config
    funcs = [(f.name, list(f.inputs), list(f.outputs), f.stream_input) for f in config.funcs]
    return (spec.kind, funcs, config.input_num, config.output_num, sorted(spec.facts.items()),
            hashlib.sha256(spec.payload).hexdigest())


def _file_digest(path: str | None) -> str | None:
    """The SHA-256 of a file's bytes; for a file that cannot be read, why (the importer then
    reports it)."""
    if not path:
        return None
    try:
        with open(path, "rb") as file:
            return hashlib.sha256(file.read()).hexdigest()
    except OSError as error:
        return f"unreadable: {error.strerror}"
