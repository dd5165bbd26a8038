"""The execution plan (the FLOW_MODEL partition, docs/execution-plan.md) as frozen dataclasses.

Lowering builds a `Plan` and writes `plan.to_bytes()`; `dfir.load` reads it back with
`Plan.from_json`, the plan's one validator, before anything starts, and the runtime reads only
the typed attributes. `Plan.from_json(data, where="plan")`:

1. decodes the JSON (bytes) and reads every object field by field: its type, the range of every
   number, the spelling of every name with a fixed set of values (kinds, dispatch rules, data
   types, devices); a missing field, except the few an older compile or a hand-written plan
   leaves out (`OPTIONAL_NODE_FIELDS`, `OPTIONAL_PLAN_FIELDS`), or an unknown one is an error;
   a plan of the older format 1 (`FORMATS`), whose nodes placed their instances themselves
   (`FORMAT_1_NODE_FIELDS`), reads as format 2: each node's `instances` become its `units`;
2. checks every reference (`Plan.check`): node inputs and graph outputs name existing graph
   inputs, nodes and ports; `units` list each node's instances in node and instance order,
   every node with one at least; `order` is a topological permutation of the nodes; every `udf`,
   `graph`, `so` and closure index lies in its table; func ports in their node's; each GE graph
   numbers its values once and uses them after they are defined, and its slots lie in its arena;
   a GE graph with an IREE backend names an `executables` entry of that backend; `udf_timeouts`
   names nodes that run no GE graph.

A defect raises a `GeError` whose message starts with the JSON path of the value and says what
was expected: ``plan.nodes[3].inputs[1].node: 7 is out of range [0, 5)``.
`check_partitions` then checks the plan against the model's partitions (UDF payloads, C++ UDF
libraries, IREE executables, weights). `to_json()` gives back the JSON document (`to_bytes()` its canonical bytes:
`sort_keys`, separators `(",", ":")`), exactly as lowering wrote it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, ClassVar, Generic, Mapping, NoReturn, Sequence, TypeVar, Union

from dfir.core import data_type as dt
from dfir.core.backends import COMPILED_BACKENDS, GE_BACKENDS, REFERENCE
from dfir.core.batching import BatchSpec, CountBatchSpec, TimeBatchSpec
from dfir.core.errors import GeError
from dfir.core.udf_params import INT64_RANGE, LIST_TAGS, SCALAR_TAGS, TAGS, InitParam
from dfir.core.udf_timeout import MAX_UDF_TIMEOUT_MS

FORMAT = 2                  # the plan's shape: 2 since `units` (1: each node's `device` and `instances`)
FORMATS = (1, FORMAT)       # the formats `Plan.from_json` reads (a format-1 plan reads as its format-2 shape)
MAX_CACHE = 1024            # align.cache: at most this many incomplete groups (GE's limit)
MAX_TIMEOUT_MS = 600_000    # align.timeout: -1 (never) or 1..this
MAX_PORTS = 1 << 16         # inputs or outputs of one node
WEIGHT_ALIGNMENT = 64
DISPATCH_RULES = ("round_robin", "route_label")
BALANCE_ROLES = ("scatter", "gather")
VIEW = "view"               # a `slots` entry: a view of its operand's memory
MAX_GE_THREADS = 1024       # a GE graph's intra-op threads: 1..this
IREE_PARAMETER_SCOPE = "dfir"
"""The scope of the named parameters an IREE executable reads its weight blobs from: a `const`
with `attrs.blob` is the parameter of that key, its bytes the const's weight."""

OPTIONAL_NODE_FIELDS: Mapping[str, Any] = MappingProxyType({
    "alias": None, "loc": None, "attrs": {}, "dispatch": "round_robin", "balance": None, "align": None,
    "invokes": {}, "batch": []})
"""Node fields a plan may leave out, and what an absent one reads as."""
FORMAT_1_NODE_FIELDS: Mapping[str, Any] = MappingProxyType({**OPTIONAL_NODE_FIELDS, "device": None, "instances": []})
"""The node fields of a format-1 plan, which placed a node's instances on the node (`device`:
`instances[0]`, else the host; `instances`: `[device]`) where format 2 has `units`."""
DEFAULT_CHANNEL_DEPTH = 128
MAX_CHANNEL_DEPTH = 65536
SHARED_ARENA_BYTES = (1024, 256 << 30)
"""The range of `shared_arena_bytes` (GE's `ge.flowGraphMemMaxSize`: pools of 1 KiB to 256 GiB in all)."""
OPTIONAL_PLAN_FIELDS: Mapping[str, Any] = MappingProxyType({
    "order": None, "align": None, "udfs": [], "ge_graphs": [], "so_bins": [], "executables": [],
    "channel_depth": DEFAULT_CHANNEL_DEPTH, "closures": [], "n_mapping": False, "cluster": None,
    "shared_arena_bytes": None, "exception_catch": False, "recover": "restart", "udf_timeouts": {}, "trace": 0.0})
"""Plan fields a plan may leave out, and what an absent one reads as (`order`: node order)."""
OPTIONAL_GE_FIELDS: Mapping[str, Any] = MappingProxyType({
    "weights": [], "arena_bytes": None, "output_max_bytes": None, "backend": REFERENCE, "executable": None,
    "output_dtypes": None, "threads": None, "auto": None, "external_weights": None})
"""GE graph fields an entry may leave out: `weights` when it has no consts, the memory plan and
output bounds when unplanned (None in the dataclass: absent), `backend`, `executable` and
`output_dtypes` when the reference kernels run it, `threads` when the graph may use the cores of
the process that runs it, `auto` when no measuring `auto` chose the backend."""

_DEVICE = re.compile(r"-1|(0|[1-9]\d*):(0|[1-9]\d*):(-1|0|[1-9]\d*)(:(0|[1-9]\d*))?")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_INT64_MIN, _INT64_MAX = INT64_RANGE
_NO_DEFAULTS: Mapping[str, Any] = MappingProxyType({})


# -- values ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Input:
    """A graph input, in feed order (`index` is its position); dtype and shape from its schema."""

    name: str
    index: int
    dtype: str | None
    shape: tuple[int, ...] | None

    def to_json(self) -> dict:
        return {"name": self.name, "index": self.index, "dtype": self.dtype,
                "shape": None if self.shape is None else list(self.shape)}

    @classmethod
    def from_json(cls, value: Any, path: str) -> Input:
        o = _Object(value, path, ("name", "index", "dtype", "shape"))
        return cls(o.read("name", _str), o.read("index", _count), o.read("dtype", _optional(_dtype_name)),
                   o.read("shape", _optional(_dims(-1))))


@dataclass(frozen=True)
class DataRef:
    """`{"data": k}`: graph input k."""

    data: int

    def to_json(self) -> dict:
        return {"data": self.data}


@dataclass(frozen=True)
class NodeRef:
    """`{"node": n, "port": p}`: output p of node n."""

    node: int
    port: int

    def to_json(self) -> dict:
        return {"node": self.node, "port": self.port}


@dataclass(frozen=True)
class ClosureRef:
    """`{"closure": c, "input": i}`: input i of flow closure c (what `run_flow_model` feeds)."""

    closure: int
    input: int

    def to_json(self) -> dict:
        return {"closure": self.closure, "input": self.input}


Ref = Union[DataRef, NodeRef, ClosureRef]


def ref_from_json(value: Any, path: str) -> Ref:
    """A `DataRef`, `NodeRef` or `ClosureRef`; GeError naming `path` for anything else."""
    if isinstance(value, dict) and set(value) == {"data"}:
        return DataRef(_count(value["data"], f"{path}.data"))
    if isinstance(value, dict) and set(value) == {"node", "port"}:
        return NodeRef(_count(value["node"], f"{path}.node"), _count(value["port"], f"{path}.port"))
    if isinstance(value, dict) and set(value) == {"closure", "input"}:
        return ClosureRef(_count(value["closure"], f"{path}.closure"), _count(value["input"], f"{path}.input"))
    _fail(path, f'expected {{"data": k}}, {{"node": n, "port": p}} or {{"closure": c, "input": i}}, '
                f'got {_show(value)}')


@dataclass(frozen=True)
class FlowClosure:
    """A sub-FlowGraph a UDF invokes (`run_flow_model(key, ...)`), flattened into the plan: node
    `node`'s closure `key` feeds its `inputs` entries (`ClosureRef`s) and fetches `outputs`."""

    node: int
    key: str
    inputs: int
    outputs: tuple[Ref, ...]

    def to_json(self) -> dict:
        return {"node": self.node, "key": self.key, "inputs": self.inputs,
                "outputs": [ref.to_json() for ref in self.outputs]}

    @classmethod
    def from_json(cls, value: Any, path: str) -> FlowClosure:
        o = _Object(value, path, ("node", "key", "inputs", "outputs"))
        return cls(o.read("node", _count), o.read("key", _text), o.read("inputs", _int_in(0, MAX_PORTS)),
                   o.read("outputs", _tuple(ref_from_json)))


@dataclass(frozen=True)
class Align:
    """An input alignment (`set_inputs_align_attrs`): at most `cache` incomplete groups, a group
    older than `timeout` ms (-1: never) fails, or is dropped with `dropout`. A cache of 0 is off."""

    cache: int
    timeout: int
    dropout: bool

    @property
    def active(self) -> bool:
        return self.cache > 0

    def to_json(self) -> dict:
        return {"cache": self.cache, "timeout": self.timeout, "dropout": self.dropout}

    @classmethod
    def from_json(cls, value: Any, path: str) -> Align:
        o = _Object(value, path, ("cache", "timeout", "dropout"))
        return cls(o.read("cache", _int_in(0, MAX_CACHE)), o.read("timeout", _timeout), o.read("dropout", _bool))


@dataclass(frozen=True)
class InputBatch:
    """Node input `input` batched by `spec` (`TimeBatch` / `CountBatch`, dfir.core.batching):
    `{"input": 0, "kind": "count", "batch_size": 32, "slide_stride": 0, "timeout": 0,
    "padding": false}` or `{"input": 1, "kind": "time", "time_window": 5, "batch_dim": -1,
    "drop_remainder": false}`."""

    input: int
    spec: BatchSpec

    def to_json(self) -> dict:
        kind = "count" if isinstance(self.spec, CountBatchSpec) else "time"
        return {"input": self.input, "kind": kind, **dataclasses.asdict(self.spec)}

    @classmethod
    def from_json(cls, value: Any, path: str) -> InputBatch:
        kind = _Object(value, path, ("input", "kind", *_BATCH_FIELDS["count"], *_BATCH_FIELDS["time"])).read(
            "kind", _choice(*_BATCH_FIELDS))
        o = _Object(value, path, ("input", "kind", *_BATCH_FIELDS[kind]))
        if kind == "count":
            spec: BatchSpec = CountBatchSpec(o.read("batch_size", _int), o.read("slide_stride", _int),
                                             o.read("timeout", _int), o.read("padding", _bool))
        else:
            spec = TimeBatchSpec(o.read("time_window", _int), o.read("batch_dim", _int),
                                 o.read("drop_remainder", _bool))
        problem = spec.problem()
        if problem is not None:
            _fail(path, problem)
        return cls(o.read("input", _count), spec)


_BATCH_FIELDS = {"count": ("batch_size", "slide_stride", "timeout", "padding"),
                 "time": ("time_window", "batch_dim", "drop_remainder")}


# -- process points -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Func:
    """An entry point of a UDF: the node inputs it consumes and the node outputs it produces."""

    name: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    stream_input: bool

    def to_json(self) -> dict:
        return {"name": self.name, "inputs": list(self.inputs), "outputs": list(self.outputs),
                "stream_input": self.stream_input}

    @classmethod
    def from_json(cls, value: Any, path: str) -> Func:
        o = _Object(value, path, ("name", "inputs", "outputs", "stream_input"))
        return cls(o.read("name", _str), o.read("inputs", _tuple(_count)), o.read("outputs", _tuple(_count)),
                   o.read("stream_input", _bool))


@dataclass(frozen=True)
class PyUdf:
    """`py_udf`: a Python UDF; `udf` indexes `Plan.udfs`."""

    kind: ClassVar[str] = "py_udf"
    udf: int
    funcs: tuple[Func, ...]

    def to_json(self) -> dict:
        return {"kind": self.kind, "udf": self.udf, "funcs": [f.to_json() for f in self.funcs]}

    @classmethod
    def from_json(cls, o: _Object) -> PyUdf:
        return cls(o.read("udf", _count), o.read("funcs", _tuple(Func.from_json)))


@dataclass(frozen=True)
class PyProject:
    """`py_project`: a Python UDF project; `udf` indexes `Plan.udfs` (its packed sources),
    `closures` maps invoked closure keys to `Plan.ge_graphs` indexes, `methods` names the method
    serving a func whose name is not its own (as a C++ wrapper around the class maps them; written
    only when there are any)."""

    kind: ClassVar[str] = "py_project"
    udf: int
    py_module: str
    py_class: str
    funcs: tuple[Func, ...]
    init_params: Mapping[str, InitParam]
    closures: Mapping[str, int]
    methods: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        methods = {"methods": dict(self.methods)} if self.methods else {}
        return {"kind": self.kind, "udf": self.udf, "py_module": self.py_module, "py_class": self.py_class,
                **_project_json(self), **methods}

    @classmethod
    def from_json(cls, o: _Object) -> PyProject:
        return cls(o.read("udf", _count), o.read("py_module", _text), o.read("py_class", _text),
                   *_project_fields(o), o.read("methods", _mapping(_text)))


@dataclass(frozen=True)
class CppProject:
    """`cpp_project`: a C++ UDF project; `so` indexes `Plan.so_bins`."""

    kind: ClassVar[str] = "cpp_project"
    so: int
    resource_type: str
    funcs: tuple[Func, ...]
    init_params: Mapping[str, InitParam]
    closures: Mapping[str, int]

    def to_json(self) -> dict:
        return {"kind": self.kind, "so": self.so, "resource_type": self.resource_type, **_project_json(self)}

    @classmethod
    def from_json(cls, o: _Object) -> CppProject:
        return cls(o.read("so", _count), o.read("resource_type", _text), *_project_fields(o))


@dataclass(frozen=True)
class GraphPoint:
    """`ge_graph`: a GE graph; `graph` indexes `Plan.ge_graphs`."""

    kind: ClassVar[str] = "ge_graph"
    graph: int

    def to_json(self) -> dict:
        return {"kind": self.kind, "graph": self.graph}

    @classmethod
    def from_json(cls, o: _Object) -> GraphPoint:
        return cls(o.read("graph", _count))


ProcessPoint = Union[PyUdf, PyProject, CppProject, GraphPoint]
_PP_FIELDS: dict[type, tuple[str, ...]] = {
    PyUdf: ("udf", "funcs"),
    PyProject: ("udf", "py_module", "py_class", "funcs", "init_params", "closures", "methods"),
    CppProject: ("so", "resource_type", "funcs", "init_params", "closures"),
    GraphPoint: ("graph",),
}
_PP_DEFAULTS: dict[type, Mapping[str, Any]] = {PyProject: {"methods": {}}}
METHOD_FACT = "method:"  # a UDF project fact `method:<func>` = the method serving that func (PyProject.methods)
PROCESS_POINTS: Mapping[str, type] = {cls.kind: cls for cls in _PP_FIELDS}


def process_point_from_json(value: Any, path: str) -> ProcessPoint:
    """The process point (`pp`) at `path`, of the class its `kind` names."""
    kind = _Object(value, path, ("kind", *{f for fields in _PP_FIELDS.values() for f in fields})).read(
        "kind", _choice(*PROCESS_POINTS))
    cls = PROCESS_POINTS[kind]
    return cls.from_json(_Object(value, path, ("kind", *_PP_FIELDS[cls]), _PP_DEFAULTS.get(cls, _NO_DEFAULTS)))


def _project_json(pp: PyProject | CppProject) -> dict:
    return {"funcs": [f.to_json() for f in pp.funcs],
            "init_params": {name: param.to_plan() for name, param in pp.init_params.items()},
            "closures": dict(pp.closures)}


def _project_fields(o: _Object) -> tuple:
    return (o.read("funcs", _tuple(Func.from_json)), o.read("init_params", _mapping(_init_param)),
            o.read("closures", _mapping(_count)))


# -- nodes ----------------------------------------------------------------------------------------

PP = TypeVar("PP")


@dataclass(frozen=True)
class Node(Generic[PP]):
    """A logical node (however many instances it has) and its process point; its instances, and
    the devices they run on, are the plan's `units` of this node (`Plan.units_of`). `align` is
    None unless the node pairs its inputs; `batch` lists its batched inputs, by increasing input
    index."""

    name: str
    alias: str | None
    loc: str | None
    input_num: int
    output_num: int
    inputs: tuple[Ref, ...]
    dispatch: str
    balance: str | None
    align: Align | None
    invokes: Mapping[str, tuple[str, ...]]
    attrs: Mapping[str, Any]
    pp: PP
    batch: tuple[InputBatch, ...] = ()

    def to_json(self) -> dict:
        document = {"name": self.name, "alias": self.alias, "loc": self.loc, "input_num": self.input_num,
                "output_num": self.output_num, "inputs": [ref.to_json() for ref in self.inputs],
                "dispatch": self.dispatch,
                "balance": self.balance, "align": None if self.align is None else self.align.to_json(),
                "invokes": {key: list(devices) for key, devices in self.invokes.items()},
                "attrs": dict(self.attrs), "pp": self.pp.to_json()}
        if self.batch:
            document["batch"] = [batch.to_json() for batch in self.batch]
        return document

    @classmethod
    def from_json(cls, value: Any, path: str, read_pp: Callable[[Any, str], PP] = process_point_from_json,
                  version: int = FORMAT) -> Node[PP]:
        """The node at `path`; `read_pp` reads its `pp` (a `ProcessPoint` in a plan). Of a plan of
        format `version`: a format-1 node may place its instances itself (`device`, `instances`),
        which `Plan.from_json` reads as the node's units (`_format_1_units`)."""
        fields = FORMAT_1_NODE_FIELDS if version == 1 else OPTIONAL_NODE_FIELDS
        o = _Object(value, path, ("name", "input_num", "output_num", "inputs", "pp", *fields), fields)
        inputs = o.read("inputs", _tuple(ref_from_json))
        input_num = o.read("input_num", _int_in(0, MAX_PORTS))
        if input_num != len(inputs):
            _fail(f"{path}.input_num", f"{input_num} does not match the {len(inputs)} entries of inputs")
        return cls(o.read("name", _str), o.read("alias", _optional(_str)), o.read("loc", _optional(_str)),
                   input_num, o.read("output_num", _int_in(0, MAX_PORTS)), inputs,
                   o.read("dispatch", _choice(*DISPATCH_RULES)), o.read("balance", _optional(_choice(*BALANCE_ROLES))),
                   o.read("align", _optional(Align.from_json)), o.read("invokes", _mapping(_tuple(_device))),
                   o.read("attrs", _mapping(_scalar)), o.read("pp", read_pp),
                   o.read("batch", _tuple(InputBatch.from_json)))


@dataclass(frozen=True)
class Unit:
    """A `units` entry: instance `instance` of plan node `node`, run on `device`. The units are
    the instances `replicate-instances` made (one per `df.node` clone; one for a node it did not
    replicate), in node order and, within a node, in instance order; the runtime runs each one
    as it is (docs/runtime.md, "Instances, dispatch and gather")."""

    node: int
    instance: int
    device: str

    def to_json(self) -> dict:
        return {"node": self.node, "instance": self.instance, "device": self.device}

    @classmethod
    def from_json(cls, value: Any, path: str) -> Unit:
        o = _Object(value, path, ("node", "instance", "device"))
        return cls(o.read("node", _count), o.read("instance", _count), o.read("device", _device))


def device_id(device: str) -> int:
    """The device id of a logical device `cluster:server:device[:numa]`; -1 for the host (and a
    server's host CPU)."""
    parts = device.split(":")
    return int(parts[2]) if len(parts) >= 3 else -1


def _format_1_units(nodes: Sequence[Any], path: str) -> tuple[Unit, ...]:
    """The units of a format-1 plan's `nodes` (JSON objects `Node.from_json` read): each node's
    `instances`, in order, instance 0 on its `device`; a node may leave out either (one instance,
    on its `device`, else the host)."""
    units = []
    for n, value in enumerate(nodes):
        o = _Object(value, f"{path}[{n}]", tuple(value), FORMAT_1_NODE_FIELDS)
        device = o.read("device", _optional(_device))
        instances = o.read("instances", _tuple(_device)) or ((device or "-1"),)
        if device is not None and device != instances[0]:
            _fail(f"{path}[{n}].device", f"{_show(device)} is not instance 0's device {_show(instances[0])}")
        units += (Unit(n, k, placed) for k, placed in enumerate(instances))
    return tuple(units)


# -- tables ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class UdfBlob:
    """A `udfs` entry: the UDF payload in UDF_PAYLOAD partition `partition`, its SHA-256 and size."""

    partition: int
    sha256: str
    size: int

    def to_json(self) -> dict:
        return {"partition": self.partition, "sha256": self.sha256, "size": self.size}

    @classmethod
    def from_json(cls, value: Any, path: str) -> UdfBlob:
        o = _Object(value, path, ("partition", "sha256", "size"))
        return cls(o.read("partition", _count), o.read("sha256", _sha256), o.read("size", _count))


@dataclass(frozen=True)
class SoBin:
    """A `so_bins` entry: the C++ UDF library in SO_BINS partition `partition`."""

    partition: int
    name: str
    sha256: str
    size: int
    resource_type: str

    def to_json(self) -> dict:
        return {"partition": self.partition, "name": self.name, "sha256": self.sha256, "size": self.size,
                "resource_type": self.resource_type}

    @classmethod
    def from_json(cls, value: Any, path: str) -> SoBin:
        o = _Object(value, path, ("partition", "name", "sha256", "size", "resource_type"))
        return cls(o.read("partition", _count), o.read("name", _text), o.read("sha256", _sha256),
                   o.read("size", _count), o.read("resource_type", _text))


@dataclass(frozen=True)
class Executable:
    """An `executables` entry: a GE graph compiled for `backend` and `target` (the CPU or GPU and
    the code variant an IREE vmfb was compiled for; the ONNX opset of an onnxruntime model), in
    GE_EXECUTABLE partition `partition` (an IREE vmfb, or an ONNX model for `onnxruntime`)."""

    partition: int
    backend: str
    target: str
    sha256: str
    size: int

    def to_json(self) -> dict:
        return {"partition": self.partition, "backend": self.backend, "target": self.target,
                "sha256": self.sha256, "size": self.size}

    @classmethod
    def from_json(cls, value: Any, path: str) -> Executable:
        o = _Object(value, path, ("partition", "backend", "target", "sha256", "size"))
        return cls(o.read("partition", _count), o.read("backend", _choice(*COMPILED_BACKENDS)),
                   o.read("target", _text), o.read("sha256", _sha256), o.read("size", _count))


# -- GE graphs ------------------------------------------------------------------------------------


def external_weight_name(index: int) -> str:
    """The initializer of an `onnxruntime` graph's ONNX model that holds weight `index` of its
    entry: external data, which the runtime serves from WEIGHTS_DATA."""
    return f"weight_{index}"


@dataclass(frozen=True)
class GeInput:
    """A GE graph input: it defines value `value`; `ranges` bounds each dimension ([lo, hi], hi -1:
    unbounded)."""

    name: str
    index: int
    dtype: str
    shape: tuple[int, ...]
    ranges: tuple[tuple[int, int], ...]
    value: int

    def to_json(self) -> dict:
        return {"name": self.name, "index": self.index, "dtype": self.dtype, "shape": list(self.shape),
                "ranges": [list(r) for r in self.ranges], "value": self.value}

    @classmethod
    def from_json(cls, value: Any, path: str) -> GeInput:
        o = _Object(value, path, ("name", "index", "dtype", "shape", "ranges", "value"))
        shape, ranges = o.read("shape", _dims(-1)), o.read("ranges", _tuple(_range))
        if len(ranges) != len(shape):
            _fail(f"{path}.ranges", f"has {len(ranges)} entries for a shape of {len(shape)} dimensions")
        return cls(o.read("name", _str), o.read("index", _count), o.read("dtype", _dtype_name), shape, ranges,
                   o.read("value", _count))


@dataclass(frozen=True)
class ArenaSlot:
    """A planned value's bytes in its graph's arena: `[offset, size]`."""

    offset: int
    size: int

    def to_json(self) -> list:
        return [self.offset, self.size]


Slot = Union[ArenaSlot, str, None]
"""An `ArenaSlot`, `VIEW`, or None (allocated when computed)."""


@dataclass(frozen=True)
class GeOp:
    """An op of a GE graph: what it computes (`op`, `attrs`: its IR properties as JSON), the values
    it reads and defines, and, when planned, a slot per output."""

    op: str
    name: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    attrs: Mapping[str, Any]
    slots: tuple[Slot, ...] | None = None

    @property
    def weight(self) -> int:
        """A const's index into its graph's `weights` (`attrs.weight`)."""
        return self.attrs["weight"]

    def to_json(self) -> dict:
        entry = {"op": self.op, "name": self.name, "inputs": list(self.inputs), "outputs": list(self.outputs),
                 "attrs": dict(self.attrs)}
        if self.slots is not None:
            entry["slots"] = [slot.to_json() if isinstance(slot, ArenaSlot) else slot for slot in self.slots]
        return entry

    @classmethod
    def from_json(cls, value: Any, path: str) -> GeOp:
        o = _Object(value, path, ("op", "name", "inputs", "outputs", "attrs", "slots"), {"slots": None})
        op = cls(o.read("op", _text), o.read("name", _str), o.read("inputs", _tuple(_count)),
                 o.read("outputs", _tuple(_count)), o.read("attrs", _mapping(_attr_value)),
                 o.read("slots", _optional(_tuple(_slot))))
        if op.slots is not None and len(op.slots) != len(op.outputs):
            _fail(f"{path}.slots", f"has {len(op.slots)} entries for {len(op.outputs)} outputs")
        return op


@dataclass(frozen=True)
class Weight:
    """A `const`'s data: `size` bytes at `offset` of the model's WEIGHTS_DATA partition."""

    offset: int
    size: int
    dtype: str
    shape: tuple[int, ...]

    def to_json(self) -> dict:
        return {"offset": self.offset, "size": self.size, "dtype": self.dtype, "shape": list(self.shape)}

    @classmethod
    def from_json(cls, value: Any, path: str) -> Weight:
        o = _Object(value, path, ("offset", "size", "dtype", "shape"))
        weight = cls(o.read("offset", _count), o.read("size", _count), o.read("dtype", _dtype_name),
                     o.read("shape", _dims(0)))
        if weight.offset % WEIGHT_ALIGNMENT:
            _fail(f"{path}.offset", f"{weight.offset} is not a multiple of {WEIGHT_ALIGNMENT}")
        itemsize = _itemsize(weight.dtype, f"{path}.dtype")
        if weight.size != math.prod(weight.shape) * itemsize:
            _fail(f"{path}.size", f"{weight.size} is not the {math.prod(weight.shape) * itemsize} bytes of "
                                  f"a {weight.dtype} {list(weight.shape)} tensor")
        return weight


@dataclass(frozen=True)
class GeGraph:
    """A `ge_graphs` entry: inputs, ops in execution order, outputs (value ids), the weights its
    `const`s refer to, and its memory plan (`arena_bytes`, per-op `slots`; None: unplanned),
    output bounds (`output_max_bytes`, -1: none; None: not given), what runs it (`backend`) and,
    for a compiled backend, its compiled code (`executable`, an index into `Plan.executables`) and
    the dtypes of its outputs (`output_dtypes`: compiled code computes unsigned integers as
    signless ones, which the runner gives back as the graph's dtypes); the intra-op threads a
    compiled backend runs it with (`threads`; None: the cores of the process that runs it),
    when a measuring `auto` chose the backend, what it measured (`auto`, one line of text), and
    for an ONNX executable the weights it reads as external data (`external_weights`: indexes
    into `weights`, its initializers `weight_<k>`; None: none)."""

    name: str
    inputs: tuple[GeInput, ...]
    ops: tuple[GeOp, ...]
    outputs: tuple[int, ...]
    weights: tuple[Weight, ...] = ()
    arena_bytes: int | None = None
    output_max_bytes: tuple[int, ...] | None = None
    backend: str = REFERENCE
    executable: int | None = None
    output_dtypes: tuple[str, ...] | None = None
    threads: int | None = None
    auto: str | None = None
    external_weights: tuple[int, ...] | None = None

    def to_json(self) -> dict:
        entry = {"name": self.name, "inputs": [i.to_json() for i in self.inputs],
                 "ops": [op.to_json() for op in self.ops], "outputs": list(self.outputs),
                 "weights": [w.to_json() for w in self.weights]}
        if self.arena_bytes is not None:
            entry["arena_bytes"] = self.arena_bytes
        if self.output_max_bytes is not None:
            entry["output_max_bytes"] = list(self.output_max_bytes)
        if self.backend != REFERENCE:
            entry["backend"] = self.backend
        if self.executable is not None:
            entry["executable"] = self.executable
        if self.output_dtypes is not None:
            entry["output_dtypes"] = list(self.output_dtypes)
        if self.threads is not None:
            entry["threads"] = self.threads
        if self.auto is not None:
            entry["auto"] = self.auto
        if self.external_weights is not None:
            entry["external_weights"] = list(self.external_weights)
        return entry

    @classmethod
    def from_json(cls, value: Any, path: str = "ge_graph") -> GeGraph:
        """The validated entry at `path` (its own references included, see `check`)."""
        graph = cls._read(value, path)
        graph.check(path)
        return graph

    @classmethod
    def _read(cls, value: Any, path: str) -> GeGraph:
        """The entry at `path`, its fields checked but not its references."""
        o = _Object(value, path, ("name", "inputs", "ops", "outputs", *OPTIONAL_GE_FIELDS),
                    OPTIONAL_GE_FIELDS)
        return cls(o.read("name", _str), o.read("inputs", _tuple(GeInput.from_json)),
                   o.read("ops", _tuple(GeOp.from_json)), o.read("outputs", _tuple(_count)),
                   o.read("weights", _tuple(Weight.from_json)), o.read("arena_bytes", _optional(_count)),
                   o.read("output_max_bytes", _optional(_tuple(_int_in(-1, _INT64_MAX)))),
                   o.read("backend", _choice(*GE_BACKENDS)), o.read("executable", _optional(_count)),
                   o.read("output_dtypes", _optional(_tuple(_dtype_name))),
                   o.read("threads", _optional(_int_in(1, MAX_GE_THREADS))), o.read("auto", _optional(_text)),
                   o.read("external_weights", _optional(_tuple(_count))))

    def check(self, path: str) -> None:
        """GeError unless inputs are in index order, every value is defined once (ids 0..N-1) and
        read after it is defined, consts name weights, slots lie in the arena, and the graph has
        an executable exactly when a compiled backend runs it."""
        for k, graph_input in enumerate(self.inputs):
            if graph_input.index != k:
                _fail(f"{path}.inputs[{k}].index", f"{graph_input.index} is not its position {k}")
        defined = {graph_input.value: f"{path}.inputs[{k}].value" for k, graph_input in enumerate(self.inputs)}
        for i, op in enumerate(self.ops):
            self._check_op(op, f"{path}.ops[{i}]", defined)
        count = len(defined)
        for value_id, where in defined.items():
            _check_index(value_id, where, count)
        for j, value_id in enumerate(self.outputs):
            if value_id not in defined:
                _fail(f"{path}.outputs[{j}]", f"value {value_id} is not defined by an input or op")
        for field_name in ("output_max_bytes", "output_dtypes"):
            per_output = getattr(self, field_name)
            if per_output is not None and len(per_output) != len(self.outputs):
                _fail(f"{path}.{field_name}", f"has {len(per_output)} entries for {len(self.outputs)} outputs")
        if self.executable is None and self.backend in COMPILED_BACKENDS:
            _fail(path, f'missing field "executable": the backend {_show(self.backend)} runs compiled code')
        if self.executable is not None and self.backend not in COMPILED_BACKENDS:
            _fail(f"{path}.executable", f"{self.executable}: the backend {_show(self.backend)} runs no executable")
        for j, weight in enumerate(self.external_weights or ()):
            _check_index(weight, f"{path}.external_weights[{j}]", len(self.weights))

    def _check_op(self, op: GeOp, path: str, defined: dict[int, str]) -> None:
        for j, value_id in enumerate(op.inputs):
            if value_id not in defined:
                _fail(f"{path}.inputs[{j}]", f"value {value_id} is not defined before this op")
        for j, value_id in enumerate(op.outputs):
            if value_id in defined:
                _fail(f"{path}.outputs[{j}]", f"value {value_id} is already defined by {defined[value_id]}")
            defined[value_id] = f"{path}.outputs[{j}]"
        if op.op == "const":
            self._check_const(op, path)
        arena = self.arena_bytes or 0
        for k, slot in enumerate(op.slots or ()):
            if isinstance(slot, ArenaSlot) and slot.offset + slot.size > arena:
                _fail(f"{path}.slots[{k}]", f"{_show(slot.to_json())} lies outside the arena of {arena} bytes")

    def _check_const(self, op: GeOp, path: str) -> None:
        if op.inputs or len(op.outputs) != 1:
            _fail(path, f"a const takes no inputs and defines one value, this one {len(op.inputs)} and "
                        f"{len(op.outputs)}")
        if "weight" not in op.attrs:
            _fail(f"{path}.attrs", 'a const needs "weight", the index of its data in weights')
        _check_index(_count(op.attrs["weight"], f"{path}.attrs.weight"), f"{path}.attrs.weight",
                     len(self.weights))
        if "variable" in op.attrs:
            _text(op.attrs["variable"], f"{path}.attrs.variable")
        if "blob" in op.attrs:
            _text(op.attrs["blob"], f"{path}.attrs.blob")


# -- the plan -------------------------------------------------------------------------------------

CLUSTER_KINDS = ("local", "ray")
RECOVER_CHOICES = ("restart", "off")
"""What the runtime does when a worker dies (`Plan.recover`, the option `dfir.runtime.recover`):
start it again with its nodes initialised anew, or fail the model."""
DEFAULT_RECOVER = "restart"
TRACE_OPTION = "dfir.runtime.trace"
"""Whether the runtime traces the model: off (the default), on, or a sampling rate in (0, 1] (the
plan's `trace`; the environment variable DFIR_TRACE replaces it when the model loads)."""
TRACE_CHOICES = ("off", "on")
"""The words of the option `dfir.runtime.trace`, besides a sampling rate in (0, 1]."""


def trace_rate(value: str) -> float | None:
    """The share of transactions the option `dfir.runtime.trace` = `value` traces (0.0: off, 1.0:
    on), or None when it is neither word nor a rate in (0, 1]."""
    if value in TRACE_CHOICES:
        return float(TRACE_CHOICES.index(value))
    try:
        rate = float(value)
    except ValueError:
        return None
    return rate if 0.0 < rate <= 1.0 else None


@dataclass(frozen=True)
class Cluster:
    """Where the model's servers run (the options `dfir.runtime.cluster` and
    `dfir.runtime.ray_address`): `local`, every worker a process of this machine, or `ray`, the
    servers' workers in actors of the Ray cluster at `ray_address` (empty: `RAY_ADDRESS`, else
    a local Ray)."""

    kind: str = "local"
    ray_address: str = ""

    def to_json(self) -> dict:
        return {"kind": self.kind, "ray_address": self.ray_address}

    @classmethod
    def from_json(cls, value: Any, path: str) -> Cluster:
        o = _Object(value, path, ("kind", "ray_address"), {"ray_address": ""})
        kind = o.read("kind", _str)
        if kind not in CLUSTER_KINDS:
            _fail(f"{path}.kind", f"{_show(kind)} is not a cluster kind: one of {list(CLUSTER_KINDS)}")
        return cls(kind, o.read("ray_address", _str))


@dataclass(frozen=True)
class Plan(Generic[PP]):
    """A model's execution plan (docs/execution-plan.md); its nodes' `pp` are `ProcessPoint`s
    (lowering's plan skeleton has another kind, see `Node.from_json`)."""

    name: str
    inputs: tuple[Input, ...]
    outputs: tuple[Ref, ...]
    nodes: tuple[Node[PP], ...]
    order: tuple[int, ...]
    align: Align | None = None
    udfs: tuple[UdfBlob, ...] = ()
    ge_graphs: tuple[GeGraph, ...] = ()
    so_bins: tuple[SoBin, ...] = ()
    format: int = FORMAT
    channel_depth: int = DEFAULT_CHANNEL_DEPTH
    closures: tuple[FlowClosure, ...] = ()
    executables: tuple[Executable, ...] = ()
    n_mapping: bool = False
    cluster: Cluster = Cluster()
    units: tuple[Unit, ...] = ()
    shared_arena_bytes: int | None = None  # the runtime's tensor arena; None: the runtime's default
    exception_catch: bool = False  # UDFs may raise_exception (set_exception_catch(True))
    recover: str = DEFAULT_RECOVER  # one of RECOVER_CHOICES
    udf_timeouts: Mapping[str, int] = field(default_factory=dict)
    """UDF node name -> the milliseconds one call of it may take (a node not listed: no limit)."""
    trace: float = 0.0  # the share of transactions the runtime traces (0.0: none; docs/tracing.md)

    def to_json(self) -> dict:
        document = {"format": self.format, "name": self.name, "inputs": [i.to_json() for i in self.inputs],
                    "outputs": [ref.to_json() for ref in self.outputs],
                    "nodes": [node.to_json() for node in self.nodes], "units": [u.to_json() for u in self.units],
                    "order": list(self.order),
                    "align": None if self.align is None else self.align.to_json(),
                    "udfs": [u.to_json() for u in self.udfs], "ge_graphs": [g.to_json() for g in self.ge_graphs]}
        if self.so_bins:
            document["so_bins"] = [s.to_json() for s in self.so_bins]
        if self.channel_depth != DEFAULT_CHANNEL_DEPTH:
            document["channel_depth"] = self.channel_depth
        if self.closures:
            document["closures"] = [c.to_json() for c in self.closures]
        if self.executables:
            document["executables"] = [e.to_json() for e in self.executables]
        if self.n_mapping:
            document["n_mapping"] = True
        if self.cluster != Cluster():
            document["cluster"] = self.cluster.to_json()
        if self.shared_arena_bytes is not None:
            document["shared_arena_bytes"] = self.shared_arena_bytes
        if self.exception_catch:
            document["exception_catch"] = True
        if self.recover != DEFAULT_RECOVER:
            document["recover"] = self.recover
        if self.udf_timeouts:
            document["udf_timeouts"] = dict(sorted(self.udf_timeouts.items()))
        if self.trace:
            document["trace"] = self.trace
        return document

    def to_bytes(self) -> bytes:
        """The canonical JSON: the FLOW_MODEL partition's bytes."""
        return canonical_json(self.to_json())

    @classmethod
    def from_json(cls, data: bytes | bytearray | memoryview | str | Mapping, where: str = "plan",
                  read_pp: Callable[[Any, str], PP] = process_point_from_json) -> Plan[PP]:
        """The validated plan of `data` (JSON bytes or text, or the decoded document); GeError
        naming the JSON path (from `where`) of the first defect (see the module docstring).
        `read_pp` reads each node's `pp`. A format-1 plan reads as the format-2 plan of the same
        graph: each node's `instances` become its units."""
        document = _decoded(data, where)
        version = _format(document, where)
        fields = ("format", "name", "inputs", "outputs", "nodes", *(("units",) if version >= 2 else ()))
        o = _Object(document, where, (*fields, *OPTIONAL_PLAN_FIELDS), OPTIONAL_PLAN_FIELDS)
        o.read("format", _int)
        nodes = o.read("nodes", _tuple(lambda value, path: Node.from_json(value, path, read_pp, version)))
        units = (o.read("units", _tuple(Unit.from_json)) if version >= 2 else
                 _format_1_units(document["nodes"], f"{where}.nodes"))
        plan = cls(o.read("name", _str), o.read("inputs", _tuple(Input.from_json)),
                   o.read("outputs", _tuple(ref_from_json)), nodes,
                   o.read("order", _optional(_tuple(_count))) or tuple(range(len(nodes))),
                   o.read("align", _optional(Align.from_json)), o.read("udfs", _tuple(UdfBlob.from_json)),
                   o.read("ge_graphs", _tuple(GeGraph._read)), o.read("so_bins", _tuple(SoBin.from_json)),
                   FORMAT, o.read("channel_depth", _int_in(1, MAX_CHANNEL_DEPTH)),
                   o.read("closures", _tuple(FlowClosure.from_json)),
                   o.read("executables", _tuple(Executable.from_json)), o.read("n_mapping", _bool),
                   o.read("cluster", _optional(Cluster.from_json)) or Cluster(), units,
                   o.read("shared_arena_bytes", _optional(_int_in(*SHARED_ARENA_BYTES))),
                   o.read("exception_catch", _bool), o.read("recover", _choice(*RECOVER_CHOICES)),
                   o.read("udf_timeouts", _mapping(_int_in(1, MAX_UDF_TIMEOUT_MS))), o.read("trace", _rate))
        plan.check(where)
        return plan

    @classmethod
    def of(cls, plan: Plan | Mapping, where: str = "plan") -> Plan:
        """`plan` itself, or the validated plan of its JSON document."""
        return plan if isinstance(plan, Plan) else cls.from_json(plan, where)

    def udf_timeout_ms(self, node: int) -> int | None:
        """The milliseconds one call of node `node` may take (`udf_timeouts`); None: no limit."""
        return self.udf_timeouts.get(self.nodes[node].name)

    def units_of(self, node: int) -> tuple[Unit, ...]:
        """The units of node `node`, in instance order: where each of its instances runs."""
        return tuple(unit for unit in self.units if unit.node == node)

    def check(self, where: str = "plan") -> None:
        """GeError naming the path of the first reference that does not hold (module docstring, 2)."""
        self._check_tables(where)
        self._check_units(where)
        for k, graph_input in enumerate(self.inputs):
            if graph_input.index != k:
                _fail(f"{where}.inputs[{k}].index", f"{graph_input.index} is not its position {k}")
        for j, ref in enumerate(self.outputs):
            self._check_ref(ref, f"{where}.outputs[{j}]")
        for i, node in enumerate(self.nodes):
            self._check_node(node, f"{where}.nodes[{i}]")
        for c, closure in enumerate(self.closures):
            self._check_closure(closure, f"{where}.closures[{c}]")
        self._check_order(where)
        self._check_recovery(where)

    def check_partitions(self, udf_payloads: Sequence[bytes | memoryview], so_bins: Sequence[bytes | memoryview],
                         weights: bytes | memoryview | None, where: str = "plan",
                         executables: Sequence[bytes | memoryview] = ()) -> None:
        """GeError unless `udfs`, `so_bins` and `executables` describe the model's UDF_PAYLOAD,
        SO_BINS and GE_EXECUTABLE partitions (count, size, SHA-256) and every weight lies inside
        its WEIGHTS_DATA."""
        _check_blobs(self.udfs, udf_payloads, f"{where}.udfs", "UDF_PAYLOAD")
        _check_blobs(self.so_bins, so_bins, f"{where}.so_bins", "SO_BINS")
        _check_blobs(self.executables, executables, f"{where}.executables", "GE_EXECUTABLE")
        available = 0 if weights is None else memoryview(weights).nbytes
        for g, graph in enumerate(self.ge_graphs):
            for w, weight in enumerate(graph.weights):
                if weight.offset + weight.size > available:
                    _fail(f"{where}.ge_graphs[{g}].weights[{w}]",
                          f"{weight.size} bytes at offset {weight.offset} do not fit the model's "
                          f"WEIGHTS_DATA of {available} bytes")

    def _check_units(self, where: str) -> None:
        """`units` lists every node's instances, node by node, each node's from instance 0 up."""
        previous = Unit(-1, 0, "-1")
        for u, unit in enumerate(self.units):
            path = f"{where}.units[{u}]"
            _check_index(unit.node, f"{path}.node", len(self.nodes))
            if unit.node not in (previous.node, previous.node + 1):
                _fail(f"{path}.node", f"{unit.node} does not follow node {previous.node}: units list every "
                                      "node's instances, in node order")
            expected = previous.instance + 1 if unit.node == previous.node else 0
            if unit.instance != expected:
                _fail(f"{path}.instance", f"{unit.instance} is not {expected}, the next instance of node {unit.node}")
            previous = unit
        if previous.node != len(self.nodes) - 1:
            _fail(f"{where}.units", f"node {previous.node + 1} has no unit: every node runs at least one instance")

    def _check_ref(self, ref: Ref, path: str) -> None:
        if isinstance(ref, DataRef):
            _check_index(ref.data, f"{path}.data", len(self.inputs))
            return
        if isinstance(ref, ClosureRef):
            _check_index(ref.closure, f"{path}.closure", len(self.closures))
            _check_index(ref.input, f"{path}.input", self.closures[ref.closure].inputs)
            return
        _check_index(ref.node, f"{path}.node", len(self.nodes))
        _check_index(ref.port, f"{path}.port", self.nodes[ref.node].output_num)

    def _check_node(self, node: Node[PP], path: str) -> None:
        for j, ref in enumerate(node.inputs):
            self._check_ref(ref, f"{path}.inputs[{j}]")
        pp, at = node.pp, f"{path}.pp"
        for f, func in enumerate(getattr(pp, "funcs", ())):
            for j, port in enumerate(func.inputs):
                _check_index(port, f"{at}.funcs[{f}].inputs[{j}]", node.input_num)
            for j, port in enumerate(func.outputs):
                _check_index(port, f"{at}.funcs[{f}].outputs[{j}]", node.output_num)
        if isinstance(pp, (PyUdf, PyProject)):
            _check_index(pp.udf, f"{at}.udf", len(self.udfs))
        if isinstance(pp, (PyProject, CppProject)):
            for key, graph in pp.closures.items():
                _check_index(graph, _key_path(f"{at}.closures", key), len(self.ge_graphs))
        if isinstance(pp, CppProject):
            _check_index(pp.so, f"{at}.so", len(self.so_bins))
            built_for = self.so_bins[pp.so].resource_type
            if pp.resource_type != built_for:
                _fail(f"{at}.resource_type", f"{_show(pp.resource_type)} is not so_bins[{pp.so}]'s "
                                             f"{_show(built_for)}")
        if isinstance(pp, GraphPoint):
            self._check_graph_point(node, pp, path)
        for b, batch in enumerate(node.batch):
            _check_index(batch.input, f"{path}.batch[{b}].input", node.input_num)
            if b and batch.input <= node.batch[b - 1].input:
                _fail(f"{path}.batch[{b}].input", f"{batch.input} does not follow {node.batch[b - 1].input}: "
                                                  "batched inputs are distinct, in increasing order")

    def _check_closure(self, closure: FlowClosure, path: str) -> None:
        """A flow closure belongs to a UDF project node and its outputs are refs of the plan."""
        _check_index(closure.node, f"{path}.node", len(self.nodes))
        if isinstance(self.nodes[closure.node].pp, (PyUdf, GraphPoint)):
            _fail(f"{path}.node", f"node {closure.node} is not a UDF project; only a UDF invokes a closure")
        for j, ref in enumerate(closure.outputs):
            self._check_ref(ref, f"{path}.outputs[{j}]")

    def _check_graph_point(self, node: Node[ProcessPoint], pp: GraphPoint, path: str) -> None:
        _check_index(pp.graph, f"{path}.pp.graph", len(self.ge_graphs))
        graph = self.ge_graphs[pp.graph]
        for field_name, count, ports in (("input_num", node.input_num, graph.inputs),
                                         ("output_num", node.output_num, graph.outputs)):
            if count != len(ports):
                _fail(f"{path}.{field_name}", f"{count} does not match the {len(ports)} "
                                              f"{field_name.split('_')[0]}s of ge_graphs[{pp.graph}]")

    def _check_recovery(self, where: str) -> None:
        """`recover` is one of RECOVER_CHOICES; `udf_timeouts` names UDF nodes of the plan, each
        with a timeout in [1, MAX_UDF_TIMEOUT_MS]."""
        if self.recover not in RECOVER_CHOICES:
            _fail(f"{where}.recover", f"{_show(self.recover)} is not one of {', '.join(map(_show, RECOVER_CHOICES))}")
        nodes = {node.name: node for node in self.nodes}
        for name, milliseconds in self.udf_timeouts.items():
            path = _key_path(f"{where}.udf_timeouts", name)
            node = nodes.get(name)
            if node is None:
                _fail(path, f"no node is named {_show(name)}; the nodes are {_show(sorted(nodes))}")
            if isinstance(node.pp, GraphPoint):
                _fail(path, f"node {_show(name)} runs a GE graph; only a UDF node has a timeout")
            _int_in(1, MAX_UDF_TIMEOUT_MS)(milliseconds, path)

    def _check_order(self, where: str) -> None:
        count = len(self.nodes)
        if sorted(self.order) != list(range(count)):
            _fail(f"{where}.order", f"{_show(list(self.order))} is not a permutation of the {count} node indexes")
        position = {node: k for k, node in enumerate(self.order)}
        for k, n in enumerate(self.order):
            for ref in self.nodes[n].inputs:
                if isinstance(ref, NodeRef) and position[ref.node] >= k:
                    _fail(f"{where}.order[{k}]", f"node {n} comes before node {ref.node}, which feeds it")

    def _check_tables(self, where: str) -> None:
        for g, graph in enumerate(self.ge_graphs):
            graph.check(f"{where}.ge_graphs[{g}]")
            self._check_executable(graph, f"{where}.ge_graphs[{g}]")
        for table_name in ("udfs", "so_bins", "executables"):
            for k, entry in enumerate(getattr(self, table_name)):
                if entry.partition != k:
                    _fail(f"{where}.{table_name}[{k}].partition", f"{entry.partition} is not its position {k}")

    def _check_executable(self, graph: GeGraph, path: str) -> None:
        if graph.executable is None:
            return
        _check_index(graph.executable, f"{path}.executable", len(self.executables))
        compiled_for = self.executables[graph.executable].backend
        if graph.backend != compiled_for:
            _fail(f"{path}.backend", f"{_show(graph.backend)} is not executables[{graph.executable}]'s "
                                     f"{_show(compiled_for)}")


def list_from_json(value: Any, path: str, read: Callable[[Any, str], Any]) -> tuple:
    """The JSON list at `path` with each item read by `read(item, item_path)`."""
    return _tuple(read)(value, path)


def canonical_json(document: Any) -> bytes:
    """`document` as canonical JSON bytes (sorted keys, no spaces): the same document, the same bytes."""
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def _check_blobs(entries: Sequence[UdfBlob | SoBin | Executable], blobs: Sequence[bytes | memoryview], path: str,
                 partition: str) -> None:
    if len(entries) != len(blobs):
        _fail(path, f"lists {len(entries)} entries, but the model has {len(blobs)} {partition} partitions")
    for k, (entry, blob) in enumerate(zip(entries, blobs)):
        size = memoryview(blob).nbytes
        if entry.size != size:
            _fail(f"{path}[{k}].size", f"{entry.size} is not the {size} bytes of {partition} partition {k}")
        digest = hashlib.sha256(blob).hexdigest()
        if entry.sha256 != digest:
            _fail(f"{path}[{k}].sha256", f"{_show(entry.sha256)} is not the SHA-256 of {partition} "
                                         f"partition {k} ({digest})")


# -- reading JSON ---------------------------------------------------------------------------------

class _Object:
    """A JSON object at `path` whose fields are `fields`; `defaults` gives those it may lack."""

    def __init__(self, value: Any, path: str, fields: Sequence[str],
                 defaults: Mapping[str, Any] = _NO_DEFAULTS):
        if not isinstance(value, dict):
            _fail(path, f"expected an object, got {_show(value)}")
        for key in value:
            if key not in fields:
                _fail(path, f"unknown field {_show(key)}; expected {', '.join(sorted(map(_show, fields)))}")
        self.value = value
        self.path = path
        self._defaults = defaults

    def read(self, key: str, reader: Callable[[Any, str], Any]) -> Any:
        """Field `key` read by `reader`; its default when absent and it has one."""
        if key not in self.value:
            if key not in self._defaults:
                _fail(self.path, f"missing field {_show(key)}")
            return reader(self._defaults[key], _key_path(self.path, key))
        return reader(self.value[key], _key_path(self.path, key))


def _format(document: Any, where: str) -> int:
    """The `format` of plan `document`, one `Plan.from_json` reads (1 when it is not an object with
    one: reading its fields then says what is wrong)."""
    if not isinstance(document, dict) or "format" not in document:
        return 1
    path = f"{where}.format"
    version = _int(document["format"], path)
    if version not in FORMATS:
        newer = "; a newer dfir wrote it" if version > FORMAT else ""
        _fail(path, f"{version} is not a plan format this dfir reads ({', '.join(map(str, FORMATS))}){newer}")
    return version


def _decoded(data: Any, where: str) -> Any:
    if not isinstance(data, (bytes, bytearray, memoryview, str)):
        return data
    try:
        return json.loads(bytes(data) if isinstance(data, (bytearray, memoryview)) else data)
    except (ValueError, TypeError, RecursionError) as error:
        raise GeError(f"{where} is not valid JSON: {error}") from None


def _fail(path: str, problem: str) -> NoReturn:
    raise GeError(f"{path}: {problem}")


def _show(value: Any) -> str:
    """`value` as compact JSON, cut at 60 characters."""
    try:
        text = json.dumps(value, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if isinstance(key, str) and key.isidentifier() else f"{path}[{_show(key)}]"


def _check_index(value: int, path: str, count: int) -> None:
    if not 0 <= value < count:
        _fail(path, f"{value} is out of range [0, {count})")


def _int(value: Any, path: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        _fail(path, f"expected an integer, got {_show(value)}")
    if not _INT64_MIN <= value <= _INT64_MAX:
        _fail(path, f"{value} does not fit in 64 bits")
    return value


def _int_in(lo: int, hi: int) -> Callable[[Any, str], int]:
    def read(value: Any, path: str) -> int:
        number = _int(value, path)
        if not lo <= number <= hi:
            _fail(path, f"{number} is out of range [{lo}, {hi}]")
        return number
    return read


_count = _int_in(0, _INT64_MAX)


def _dims(lo: int) -> Callable[[Any, str], tuple[int, ...]]:
    return _tuple(_int_in(lo, _INT64_MAX))


def _timeout(value: Any, path: str) -> int:
    timeout = _int(value, path)
    if timeout != -1 and not 1 <= timeout <= MAX_TIMEOUT_MS:
        _fail(path, f"{timeout} is neither -1 nor in [1, {MAX_TIMEOUT_MS}]")
    return timeout


def _range(value: Any, path: str) -> tuple[int, int]:
    pair = _tuple(_int)(value, path)
    if len(pair) != 2 or pair[0] < 0 or not (pair[1] == -1 or pair[1] >= pair[0]):
        _fail(path, f"expected [lo, hi] with 0 <= lo <= hi or hi = -1, got {_show(value)}")
    return pair


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        _fail(path, f"expected true or false, got {_show(value)}")
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        _fail(path, f"expected a string, got {_show(value)}")
    return value


def _text(value: Any, path: str) -> str:
    if not _str(value, path):
        _fail(path, "expected a non-empty string")
    return value


def _choice(*options: str) -> Callable[[Any, str], str]:
    def read(value: Any, path: str) -> str:
        if value not in options or not isinstance(value, str):
            _fail(path, f"{_show(value)} is not one of {', '.join(map(_show, options))}")
        return value
    return read


def _rate(value: Any, path: str) -> float:
    """A share of transactions: 0 (none) up to 1 (all)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        _fail(path, f"expected a number in [0, 1], got {_show(value)}")
    return float(value)


def _optional(reader: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    return lambda value, path: None if value is None else reader(value, path)


def _tuple(reader: Callable[[Any, str], Any]) -> Callable[[Any, str], tuple]:
    def read(value: Any, path: str) -> tuple:
        if not isinstance(value, list):
            _fail(path, f"expected a list, got {_show(value)}")
        return tuple(reader(item, f"{path}[{k}]") for k, item in enumerate(value))
    return read


def _mapping(reader: Callable[[Any, str], Any]) -> Callable[[Any, str], dict]:
    def read(value: Any, path: str) -> dict:
        if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
            _fail(path, f"expected an object, got {_show(value)}")
        return {key: reader(item, _key_path(path, key)) for key, item in value.items()}
    return read


def _scalar(value: Any, path: str) -> Any:
    if value is not None and not isinstance(value, (str, int, float)):
        _fail(path, f"expected a string, number, boolean or null, got {_show(value)}")
    return value


def _attr_value(value: Any, path: str) -> Any:
    """An op attribute: a scalar or a list of scalars."""
    if isinstance(value, list):
        return [_scalar(item, f"{path}[{k}]") for k, item in enumerate(value)]
    return _scalar(value, path)


def _dtype_name(value: Any, path: str) -> str:
    try:
        dt.from_name(_str(value, path))
    except GeError as error:
        _fail(path, error.error_message)
    return value


def _itemsize(name: str, path: str) -> int:
    itemsize = dt.to_numpy(dt.from_name(name)).itemsize if name not in ("DT_STRING", "DT_BF16") else 0
    if not itemsize:
        _fail(path, f"{_show(name)} has no fixed-size numpy form; a weight needs one")
    return itemsize


def _device(value: Any, path: str) -> str:
    if not isinstance(value, str) or not _DEVICE.fullmatch(value):
        _fail(path, f'{_show(value)} is not a device: "-1" (the host) or "cluster:server:device[:numa]"')
    return value


def _sha256(value: Any, path: str) -> str:
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        _fail(path, f"expected a SHA-256 as 64 lowercase hex digits, got {_show(value)}")
    return value


def _slot(value: Any, path: str) -> Slot:
    if value is None or value == VIEW:
        return value
    pair = _tuple(_int)(value, path) if isinstance(value, list) else ()
    if len(pair) != 2 or min(pair) < 0:
        _fail(path, f'expected [offset, size] (both >= 0), "view" or null, got {_show(value)}')
    return ArenaSlot(*pair)


def _init_param(value: Any, path: str) -> InitParam:
    o = _Object(value, path, ("type", "value"))
    tag = o.read("type", _choice(*TAGS))
    return InitParam(tag, o.read("value", _PARAM_VALUES[tag]))


_SCALAR_PARAMS: dict[str, Callable[[Any, str], Any]] = {
    "int": _int,
    "float": lambda value, path: value if isinstance(value, float) else _fail(
        path, f"expected a floating-point number, got {_show(value)}"),
    "bool": _bool,
    "str": _str,
    "dtype": lambda value, path: dt.from_name(_dtype_name(value, path)),
}
_PARAM_VALUES: dict[str, Callable[[Any, str], Any]] = {
    **_SCALAR_PARAMS,
    **{f"list_{tag}": (lambda read: lambda value, path: list(_tuple(read)(value, path)))(_SCALAR_PARAMS[tag])
       for tag in SCALAR_TAGS},
    "list_list_int": lambda value, path: [list(row) for row in _tuple(_tuple(_int))(value, path)],
    "list_empty": lambda value, path: [] if value == [] else _fail(path, f"expected [], got {_show(value)}"),
}
assert set(_PARAM_VALUES) == set(TAGS) and set(LIST_TAGS) < set(_PARAM_VALUES)
