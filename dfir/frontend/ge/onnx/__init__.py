"""ONNX import: an ONNX model becomes a `Graph`.

    g = import_onnx("model.onnx", Graph)    # what Graph.from_onnx("model.onnx") does

One module per concern:

- `loading`: read the model (a path or an `onnx.ModelProto`, with weights in side files as
  external data), check it with the ONNX checker (a missing, unreadable or invalid file is a
  GeError naming the file).
- `conversion`: convert a model of an older opset (1 on) to the opset the op mapping reads, and
  infer its shapes.
- `known`: values known at import time, with the dimensions of dynamic inputs as symbols.
- `functions`: a node of an op the mapping lacks but ONNX defines as a function of other ops is
  replaced by the function's body.
- `folding`: nodes that compute shapes or constants are folded, their values computed here (by
  onnx's reference implementation for nodes of constants).
- `ops`: the op mapping, one module per op family: how a node of each ONNX op type becomes
  `Graph` ops.
- `importer`: one import, walking the nodes the graph outputs need.

Unsupported ops are refused up front: one GeError lists every unsupported op type with the nodes
using it.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Mapping

import onnx

from dfir.frontend.ge.onnx.conversion import MIN_OPSET, READ_OPSET, converted, with_inferred_shapes
from dfir.frontend.ge.onnx.functions import expanded
from dfir.frontend.ge.onnx.importer import Importer, check_supported, unsupported_nodes
from dfir.frontend.ge.onnx.loading import load, with_constant_inputs
from dfir.frontend.ge.onnx.ops import CONVERTERS

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Graph

__all__ = ["import_onnx", "CONVERTERS", "MIN_OPSET", "READ_OPSET"]


def import_onnx(model: str | os.PathLike | onnx.ModelProto, new_graph: Callable[[str], Graph],
                name: str | None = None, constant_inputs: Mapping[str, object] | None = None) -> Graph:
    """The graph of an ONNX model, built into `new_graph(name)` (a `Graph`, through its builder
    methods); `name` defaults to the file's stem or the graph's name; the inputs named in
    `constant_inputs` are fixed to the values given (see `loading`)."""
    proto, label, default_name = load(model)
    if constant_inputs:
        proto = with_constant_inputs(proto, constant_inputs, label)
    proto = with_inferred_shapes(converted(proto, label), label)
    proto = expanded(proto, unsupported_nodes, lambda p: with_inferred_shapes(p, label))
    check_supported(proto, label)
    return Importer(proto, label, new_graph(name or default_name)).run()
