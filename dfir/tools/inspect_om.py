"""`dfir inspect`: a stable, line-oriented text report of an `.om` file.

The report lists the header fields, the file's signature (`signature unsigned`, or the
signer's key fingerprint and whether the signature verifies with that key), each partition
table (type names, offsets, sizes) and, for every model with a FLOW_MODEL partition, its
execution plan (docs/execution-plan.md): inputs, outputs, nodes with their process-point
kind, inputs and device (a replicated node also the device of each instance, from the plan's
`units`), how messages reach it where that is not the default (dispatch, balance role, input
alignment, as `dfir view` shows them; the graph's alignment has a line of its own), and GE
graphs with their backend (and, compiled by IREE, the target and size of their executable).
Bundle members follow, indented. Text values are JSON-quoted, so the
output is ASCII and stable enough for lit/FileCheck. It never unpickles UDF payloads nor
imports user code.
"""
from __future__ import annotations

import json
from typing import Any, Iterator, NoReturn

from dfir.core.errors import GeError
from dfir.om.schema import PartitionType
from dfir.runtime.om import OmFile, OmHeader, OmModel, Source, read_om

INDENT = "  "


def inspect_om(source: Source) -> str:
    """The report of the `.om` file at `source` (path or bytes-like); GeError if it is invalid."""
    return "\n".join(_file_lines(read_om(source), "")) + "\n"


def _signature_line(om: OmFile) -> str:
    """Who signed the file (a key fingerprint) and whether the signature verifies with that key:
    a signer is only as good as the trust in its key, which `dfir.load` checks."""
    if om.signature is None:
        return "signature unsigned"
    status = "valid" if om.signature.verifies(om.data) else "bad (does not verify with the signer's key)"
    return f"signature ed25519 signer={om.signature.signer} {status}"


def _file_lines(om: OmFile, indent: str) -> Iterator[str]:
    yield from _header_lines(om.header, indent)
    if not indent:  # bundle members carry no signature: the bundle's covers them
        yield _signature_line(om)
    if om.is_bundle:
        yield f"{indent}var_size {om.var_size}"
        yield f"{indent}bundle table"
        yield from _partition_lines(om.models[0], indent + INDENT)
        for index, (name, member) in enumerate(om.bundle):
            yield f"{indent}bundle model {index} {_quoted(name)}"
            yield from _file_lines(member, indent + INDENT)
        return
    for model in om.models:
        yield f"{indent}model {model.index}"
        yield from _partition_lines(model, indent + INDENT)
        yield from _plan_lines(model, indent + INDENT)


def _header_lines(header: OmHeader, indent: str) -> Iterator[str]:
    inner = indent + INDENT
    yield f"{indent}header"
    yield f"{inner}magic 0x{header.magic:08X}"
    yield f"{inner}headsize {header.headsize}"
    yield f"{inner}version 0x{header.version:08X}"
    yield (f"{inner}checksum content=sha256:{header.content_digest.hex()} "
           f"header=sha256:{header.header_digest.hex()}")
    yield f"{inner}length {header.length}"
    yield f"{inner}is_encrypt {header.is_encrypt}"
    yield f"{inner}is_checksum {header.is_checksum}"
    yield f"{inner}modeltype {int(header.modeltype)} {header.modeltype.name}"
    yield f"{inner}genmode {header.genmode}"
    yield f"{inner}name {_quoted(header.name)}"
    yield f"{inner}ops {header.ops}"
    yield f"{inner}userdefineinfo {header.userdefineinfo.hex()}"
    yield f"{inner}om_ir_version {header.om_ir_version}"
    yield f"{inner}model_num {header.model_num}"
    yield f"{inner}platform_version {_quoted(header.platform_version)}"
    yield f"{inner}platform_type {header.platform_type}"
    yield f"{inner}model_length {header.model_length}"
    yield f"{inner}need_check_os_cpu_info {header.need_check_os_cpu_info}"
    yield f"{inner}is_unknow_model {header.is_unknow_model}"


def _partition_lines(model: OmModel, indent: str) -> Iterator[str]:
    for index, partition in enumerate(model.partitions):
        yield (f"{indent}partition {index} {partition.type.name} offset={partition.offset} "
               f"size={partition.size}")


def _plan_lines(model: OmModel, indent: str) -> Iterator[str]:
    plans = model.partitions_of(PartitionType.FLOW_MODEL)
    if not plans:
        yield f"{indent}plan none"
        return
    plan = _PlanValue(_parsed_plan(model), "", model.index)
    inner = indent + INDENT
    yield f"{indent}plan {_quoted(plan.get('name').text())} format={plan.get('format').integer()}"
    for entry in plan.get("inputs").items():
        yield (f"{inner}input {entry.get('index').integer()} {_quoted(entry.get('name').text())} "
               f"dtype={_compact(entry.get('dtype').value)} shape={_compact(entry.get('shape').value)}")
    for index, entry in enumerate(plan.get("outputs").items()):
        yield f"{inner}output {index} node={entry.get('node').integer()} port={entry.get('port').integer()}"
    align = plan.optional("align", None)
    if align.value is not None:
        yield f"{inner}align {_align_summary(align)}"
    nodes = plan.get("nodes").items()
    for index, (node, devices) in enumerate(zip(nodes, _instance_devices(plan, nodes))):
        yield f"{inner}node {index} {_node_summary(node, devices)}"
    for index, closure in enumerate(plan.get("closures").items() if "closures" in plan.value else ()):
        outputs = ",".join(_source(source) for source in closure.get("outputs").items())
        yield (f"{inner}closure {index} {_quoted(closure.get('key').text())} node={closure.get('node').integer()} "
               f"inputs={closure.get('inputs').integer()} outputs=[{outputs}]")
    yield f"{inner}order {_compact([step.integer() for step in plan.get('order').items()])}"
    executables = plan.optional("executables", []).items()
    for index, graph in enumerate(plan.optional("ge_graphs", []).items()):
        yield f"{inner}ge_graph {index} {_graph_summary(graph, executables)}"


def _graph_summary(graph: _PlanValue, executables: list[_PlanValue]) -> str:
    """`"name" backend=B`; for a compiled graph its executable's index, target and size and its
    threads when set; for a graph a measuring `auto` chose for, what it measured."""
    summary = f"{_quoted(graph.get('name').text())} backend={graph.optional('backend', 'reference').text()}"
    executable = graph.optional("executable", None)
    if executable.value is not None:
        index = executable.integer()
        if not 0 <= index < len(executables):
            executable._fail(f"is not an index of the {len(executables)} executables")
        entry = executables[index]
        summary += (f" executable={index} target={_quoted(entry.get('target').text())} "
                    f"size={entry.get('size').integer()}")
    threads = graph.optional("threads", None)
    if threads.value is not None:
        summary += f" threads={threads.integer()}"
    auto = graph.optional("auto", None)
    if auto.value is not None:
        summary += f" auto={_quoted(auto.text())}"
    return summary


def _parsed_plan(model: OmModel) -> Any:
    data = model.partition(PartitionType.FLOW_MODEL).data
    try:
        return json.loads(bytes(data).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise GeError(f"model {model.index}: the FLOW_MODEL partition is not a JSON execution plan "
                      f"({error})") from None


def _instance_devices(plan: _PlanValue, nodes: list[_PlanValue]) -> list[list[str]]:
    """The device of each instance of each node: its `units` (a format-1 plan: the node's own
    `instances`, else its `device`, else the host)."""
    if "units" not in plan.value:
        return [[item.text() for item in node.optional("instances", []).items()]
                or [node.optional("device", "-1").text()] for node in nodes]
    devices: list[list[str]] = [[] for _ in nodes]
    for unit in plan.get("units").items():
        index = unit.get("node").integer()
        if not 0 <= index < len(nodes):
            unit.get("node")._fail(f"is not an index of the {len(nodes)} nodes")
        devices[index].append(unit.get("device").text())
    for node, placed in zip(nodes, devices):
        if not placed:
            node._fail("has no unit in units")
    return devices


def _node_summary(node: _PlanValue, devices: list[str]) -> str:
    """`"name" pp=KIND device="D" inputs=[...]`, then the devices of a replicated node's
    instances (`instances=["0:0:0","0:0:1"]`), its routing (`_routing_summary`) and what its
    kind adds."""
    pp = node.get("pp")
    kind = pp.get("kind").text()
    sources = ",".join(_source(source) for source in node.get("inputs").items())
    summary = f"{_quoted(node.get('name').text())} pp={kind} device={_quoted(devices[0])} inputs=[{sources}]"
    if len(devices) > 1:
        summary += f" instances={_compact(devices)}"
    summary += _routing_summary(node)
    if kind == "py_udf":
        funcs = ",".join(func.get("name").text() for func in pp.get("funcs").items())
        summary += f" udf={pp.get('udf').integer()} funcs=[{funcs}]"
    elif kind == "ge_graph":
        summary += f" graph={pp.get('graph').integer()}"
    batches = node.optional("batch", []).items()
    if batches:
        summary += f" batch=[{','.join(_batch_summary(batch) for batch in batches)}]"
    return summary


def _routing_summary(node: _PlanValue) -> str:
    """What `dfir view` shows of how messages reach and leave a node, where it is not the
    default: ` dispatch=route_label` (how a replica is picked, when not round robin),
    ` balance=scatter|gather`, ` align={...}` (its inputs paired by the graph's alignment)."""
    summary = ""
    dispatch = node.optional("dispatch", "round_robin").text()
    if dispatch != "round_robin":
        summary += f" dispatch={dispatch}"
    balance = node.optional("balance", None)
    if balance.value is not None:
        summary += f" balance={balance.text()}"
    align = node.optional("align", None)
    if align.value is not None:
        summary += f" align={_align_summary(align)}"
    return summary


def _align_summary(align: _PlanValue) -> str:
    """`{"cache":8,"dropout":true,"timeout":1000}`: an alignment's fields, checked."""
    align.get("cache").integer()
    align.get("timeout").integer()
    if not isinstance(align.get("dropout").value, bool):
        align.get("dropout")._fail("must be a boolean")
    return _compact(align.value)


def _batch_summary(batch: _PlanValue) -> str:
    """`input0:count(batch_size=32,padding=false,slide_stride=0,timeout=0)`: a batched input and
    its fields, in the plan's (sorted) order."""
    head = f"input{batch.get('input').integer()}:{batch.get('kind').text()}"
    fields = ",".join(f"{key}={_compact(value)}" for key, value in batch.value.items() if key not in ("input", "kind"))
    return f"{head}({fields})"


def _source(source: _PlanValue) -> str:
    """`data:K` for graph input K, `closure:C.I` for input I of flow closure C, `node:N.P` for
    port P of node N."""
    if isinstance(source.value, dict) and "data" in source.value:
        return f"data:{source.get('data').integer()}"
    if isinstance(source.value, dict) and "closure" in source.value:
        return f"closure:{source.get('closure').integer()}.{source.get('input').integer()}"
    return f"node:{source.get('node').integer()}.{source.get('port').integer()}"


class _PlanValue:
    """A value of the plan JSON with its path; a missing or mistyped one is a GeError naming it."""

    def __init__(self, value: Any, path: str, model_index: int):
        self.value = value
        self._path = path
        self._model_index = model_index

    def get(self, key: str) -> _PlanValue:
        if not isinstance(self.value, dict) or key not in self.value:
            self._fail(f"has no key {key!r}" if isinstance(self.value, dict) else "must be an object")
        return _PlanValue(self.value[key], f"{self._path}.{key}" if self._path else key, self._model_index)

    def optional(self, key: str, default: Any) -> _PlanValue:
        """`get(key)`, or `default` when this object has no `key`."""
        if isinstance(self.value, dict) and key not in self.value:
            return _PlanValue(default, f"{self._path}.{key}" if self._path else key, self._model_index)
        return self.get(key)

    def items(self) -> list[_PlanValue]:
        if not isinstance(self.value, list):
            self._fail("must be a list")
        return [_PlanValue(item, f"{self._path}[{i}]", self._model_index)
                for i, item in enumerate(self.value)]

    def text(self) -> str:
        if not isinstance(self.value, str):
            self._fail("must be a string")
        return self.value

    def integer(self) -> int:
        if not isinstance(self.value, int) or isinstance(self.value, bool):
            self._fail("must be an integer")
        return self.value

    def _fail(self, problem: str) -> NoReturn:
        where = self._path or "the plan"
        raise GeError(f"model {self._model_index} execution plan: {where} {problem}, "
                      f"got {_compact(self.value):.60}")


def _quoted(text: str) -> str:
    return json.dumps(text)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
