"""A GE graph's build settings: the GraphProcessPoint compile config and the shape options.

The compile config is the JSON file a `GraphProcessPoint(..., compile_config_path=...)` names:

    {"build_options": {"ge.inputShape": "1,3,1~1728,1~1728;2", "ge.outputMaxSize": "107495424"},
     "inputs_tensor_desc": [{"data_type": "DT_FLOAT", "shape": [1, 3, -1, -1], "format": "NCHW"},
                            {"data_type": "DT_INT32", "shape": [2], "format": "ND"}]}

`build_options` are options like any other (validated by `dfir.frontend.options`); `inputs_tensor_desc`
has one entry per graph input, in index order (`data_type` defaults to DT_FLOAT, `format` to
ND; `shape` marks dynamic dimensions with -1). Errors name the file and the JSON path.

Applying settings to a `ge.graph` (`apply_graph_settings`), in this order:
1. `inputs_tensor_desc` replaces each `ge.data` type's data type, shape and format (as GE's does:
   a graph file whose input is float can be compiled for int32 inputs).
2. `ge.inputShape` replaces the dimensions of the inputs it names (by name or by index); it may
   give a range only where the descriptor (if any) says -1.
3. `ge.outputMaxSize` (`;`-separated bytes per output, an empty entry or 0 for none, as GE
   reads it) is recorded on the graph as `output_max_size = array<i64: ...>` (-1 = not given)
   for `plan-output-size`.
4. `dfir.ge.backend` is recorded on the graph as `requested_backend` for
   `convert-ge-to-linalg` (a graph's own setting wins over the compile's).
5. Every op is re-typed from the new inputs by its shape function; an op the new shapes do not
   fit is an error naming the settings' source, the op and the shapes.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from xdsl.dialects.builtin import DenseArrayBase, StringAttr, i64
from xdsl.rewriter import Rewriter

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.core.json_text import NotJson, decode_json
from dfir.dialects import ge
from dfir.dialects.ge_shape_inference import ShapeMismatch, infer_graph_ranges
from dfir.dialects.ge_types import FORMATS, DimRange, GeTensorType, element_type_of, format_dims
from dfir.frontend.ge.input_shape import InputShape, parse_input_shape, resolve_input_shape
from dfir.frontend.ge.output_max_size import parse_output_max_size
from dfir.frontend.options import BACKEND_OPTION, validate_options

__all__ = ["GraphConfig", "InputDesc", "OUTPUT_MAX_SIZE_ATTR", "SHAPE_OPTIONS", "apply_graph_settings",
           "load_graph_config", "parse_graph_config", "parse_output_max_size"]

SHAPE_OPTIONS = ("ge.inputShape", "ge.outputMaxSize")
"""The shape options, which `apply_graph_settings` acts on (and on `dfir.ge.backend`)."""

OUTPUT_MAX_SIZE_ATTR = "output_max_size"
"""The ge.graph attribute holding the user's `ge.outputMaxSize`, one entry per output, -1 = none."""


@dataclass(frozen=True)
class InputDesc:
    """One `inputs_tensor_desc` entry: the input's data type, shape (-1 = dynamic) and format."""

    dtype: dt.DType
    shape: tuple[int, ...]
    format: str


@dataclass(frozen=True)
class GraphConfig:
    """A parsed compile config; `inputs` is None when the file has no `inputs_tensor_desc`."""

    source: str
    build_options: dict[str, str]
    inputs: tuple[InputDesc, ...] | None


def load_graph_config(path: str | os.PathLike) -> GraphConfig:
    """Read and validate a compile config file; a GeError naming the file and JSON path."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as stream:
            data = decode_json(stream.read())
    except OSError as error:
        raise GeError(f"compile config {source} cannot be read: {error.strerror}",
                      context={"file": source}) from None
    except NotJson as error:
        raise GeError(f"compile config {source} is not valid JSON: {error}", context={"file": source}) from None
    return parse_graph_config(data, source)


def parse_graph_config(data: Any, source: str) -> GraphConfig:
    """Validate a compile config already decoded from JSON; `source` names it in errors."""
    _expect(isinstance(data, dict), source, "$", "an object", data)
    unknown = sorted(set(data) - {"build_options", "inputs_tensor_desc"})
    if unknown:
        _fail(source, f"$.{unknown[0]}", "is not a graph compile config key; expected build_options "
              "or inputs_tensor_desc")
    options = _build_options(data.get("build_options", {}), source)
    descs = data.get("inputs_tensor_desc")
    if descs is not None:
        _expect(isinstance(descs, list), source, "$.inputs_tensor_desc", "a list", descs)
        descs = tuple(_input_desc(d, source, f"$.inputs_tensor_desc[{i}]") for i, d in enumerate(descs))
    return GraphConfig(source, options, descs)


def _build_options(options: Any, source: str) -> dict[str, str]:
    _expect(isinstance(options, dict), source, "$.build_options", "an object", options)
    for key, value in options.items():
        try:
            validate_options({key: value}, api="")
        except GeError as error:
            raise GeError(f"compile config {source}: $.build_options[\"{key}\"]: {error.error_message}",
                          context={"file": source}) from None
    return dict(options)


def _input_desc(desc: Any, source: str, path: str) -> InputDesc:
    _expect(isinstance(desc, dict), source, path, "an object", desc)
    unknown = sorted(set(desc) - {"data_type", "shape", "format"})
    if unknown:
        _fail(source, f"{path}.{unknown[0]}", "is not a tensor desc key; expected data_type, shape or format")
    name = desc.get("data_type", "DT_FLOAT")
    dtype = _tensor_dtype(name)
    _expect(dtype is not None, source, f"{path}.data_type", "a tensor data type such as \"DT_FLOAT\"", name)
    shape = desc.get("shape")
    _expect(isinstance(shape, list) and all(type(d) is int and d >= -1 for d in shape), source,
            f"{path}.shape", "a list of ints >= -1 (-1 = dynamic)", shape)
    format = desc.get("format", "ND")
    _expect(format in FORMATS, source, f"{path}.format", f"one of {', '.join(FORMATS)}", format)
    return InputDesc(dtype, tuple(shape), format)


def _tensor_dtype(name: Any) -> dt.DType | None:
    """The DType a `data_type` string names, when a ge tensor can hold it."""
    try:
        dtype = dt.from_name(name) if isinstance(name, str) else None
        return dtype if dtype is not None and element_type_of(dtype) else None
    except (GeError, ValueError):
        return None


def _expect(ok: bool, source: str, path: str, expected: str, got: Any) -> None:
    if not ok:
        _fail(source, path, f"expected {expected}, got {json.dumps(got)}")


def _fail(source: str, path: str, problem: str) -> None:
    raise GeError(f"compile config {source}: {path} {problem}" if problem.startswith("is ")
                  else f"compile config {source}: {path}: {problem}", context={"file": source})


def apply_graph_settings(graph: ge.GraphOp, options: Mapping[str, str],
                         inputs: Sequence[InputDesc] | None, source: str) -> None:
    """Apply input descriptors and the shape options to `graph` in place (module docstring).

    `source` names where the settings come from ("compile config cfg.json", "compile options")
    in every error.
    """
    where = f"{source}: graph {graph.sym_name.data}"
    data_ops = graph.data_ops
    types = {d: d.result.type for d in data_ops}
    if inputs is not None:
        types = _described_types(data_ops, inputs, where)
    if "ge.inputShape" in options:
        types = _shaped_types(graph, types, parse_input_shape(options["ge.inputShape"]), inputs, where)
    for data, new_type in types.items():
        if new_type != data.result.type:
            Rewriter.replace_value_with_new_type(data.result, new_type)
    if "ge.outputMaxSize" in options:
        graph.attributes[OUTPUT_MAX_SIZE_ATTR] = _output_max_sizes(graph, options["ge.outputMaxSize"], where)
    if BACKEND_OPTION in options:
        graph.attributes[ge.REQUESTED_BACKEND_ATTR] = StringAttr(options[BACKEND_OPTION])
    _retype(graph, where)


def _described_types(data_ops: list[ge.DataOp], inputs: Sequence[InputDesc], where: str
                     ) -> dict[ge.DataOp, GeTensorType]:
    if len(inputs) != len(data_ops):
        raise GeError(f"{where}: inputs_tensor_desc describes {_count(len(inputs), 'input')} but the graph "
                      f"has {_count(len(data_ops), 'input')}")
    # As GE's: the descriptor replaces the data type too (a graph file's float input read as int32)
    return {data: GeTensorType.from_shape(desc.shape, desc.dtype, desc.format)
            for data, desc in zip(data_ops, inputs)}


def _shaped_types(graph: ge.GraphOp, types: dict[ge.DataOp, GeTensorType], spec: InputShape,
                  inputs: Sequence[InputDesc] | None, where: str) -> dict[ge.DataOp, GeTensorType]:
    data_ops = graph.data_ops
    try:
        dims_of = resolve_input_shape(spec, [(d.data_name.data, d.index.value.data) for d in data_ops],
                                      graph.sym_name.data)
    except GeError as error:
        raise GeError(f"{where}: {error.error_message}", context=error.context) from None
    shaped = dict(types)
    for data in data_ops:
        index = data.index.value.data
        if index not in dims_of:
            continue
        dims, current = dims_of[index], types[data]
        name = data.data_name.data
        if len(dims) != current.rank:
            raise GeError(f"{where}: ge.inputShape gives input '{name}' {_count(len(dims), 'dimension')}, "
                          f"but it has {current.rank} ({format_dims(current.dims)})")
        if inputs is not None:
            _check_against_desc(name, index, dims, inputs[index], where)
        shaped[data] = current.with_dims(dims)
    return shaped


def _check_against_desc(name: str, index: int, dims: Sequence[DimRange], desc: InputDesc,
                        where: str) -> None:
    """A dimension the descriptor fixes must be given that same size by ge.inputShape."""
    for axis, (size, dim) in enumerate(zip(desc.shape, dims)):
        if size != -1 and dim != DimRange.fixed(size):
            spelled = str(dim).replace(":", "~")
            raise GeError(f"{where}: ge.inputShape gives dimension {axis} of input '{name}' as {spelled}, "
                          f"but inputs_tensor_desc[{index}].shape fixes it at {size} (use -1 there to "
                          "make it dynamic)")


def _output_max_sizes(graph: ge.GraphOp, text: str, where: str) -> DenseArrayBase:
    try:
        sizes = parse_output_max_size(text)
    except ValueError as error:
        raise GeError(f"{where}: ge.outputMaxSize '{text}': {error}") from None
    outputs = len(graph.output_op.outputs)
    if len(sizes) < outputs:
        raise GeError(f"{where}: ge.outputMaxSize '{text}' gives {_count(len(sizes), 'size')} but the "
                      f"graph has {_count(outputs, 'output')}")
    if any(s is not None for s in sizes[outputs:]):
        raise GeError(f"{where}: ge.outputMaxSize '{text}' gives {_count(len(sizes), 'size')} but the "
                      f"graph has only {_count(outputs, 'output')}")
    return DenseArrayBase.from_list(i64, [s if s else -1 for s in sizes[:outputs]])


def _retype(graph: ge.GraphOp, where: str) -> None:
    try:
        infer_graph_ranges(graph, keep_declared=False)
    except ShapeMismatch as error:
        node = ge.op_name_of(error.op)
        at = f" at op '{node}'" if node else ""
        raise GeError(f"{where}: the graph does not fit its input shapes{at}: {error}",
                      context={"node": node} if node else None) from None


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")
