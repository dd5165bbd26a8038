"""The variable format file `<key>_<timestamp>.rdcpkt`: the variables a cached model was built with.

Written next to a cached model when its graph has `ge.variable` ops, as JSON (GE writes a
protobuf `VarMatchInfo`; dfir keeps the same facts in text):

    {"format": 1, "variables": [{"graph": "mlp", "name": "fc1.weight", "dtype": "DT_FLOAT",
                                 "format": "ND", "shape": [4, 8]}]}

A cached entry is used only when the variables of the graph being compiled match this list
exactly (name, data type, format, shape); otherwise it is compiled again.
"""
from __future__ import annotations

import json

from xdsl.dialects.builtin import ModuleOp

from dfir.dialects import ge

__all__ = ["RDCPKT_FORMAT", "rdcpkt_bytes", "read_rdcpkt", "variable_descs"]

RDCPKT_FORMAT = 1


def variable_descs(module: ModuleOp) -> list[dict]:
    """Every `ge.variable` of every `ge.graph`, in module order, as the file lists them."""
    descs = []
    for graph in module.ops:
        if not isinstance(graph, ge.GraphOp):
            continue
        for op in graph.block.ops:
            if isinstance(op, ge.VariableOp):
                result = op.result.type
                descs.append({"graph": graph.sym_name.data, "name": op.var_name.data,
                              "dtype": result.dtype.name, "format": result.tensor_format,
                              "shape": list(result.shape)})
    return descs


def rdcpkt_bytes(descs: list[dict]) -> bytes:
    return json.dumps({"format": RDCPKT_FORMAT, "variables": descs}, sort_keys=True, indent=1).encode()


def read_rdcpkt(data: bytes) -> list[dict] | None:
    """The variables listed in a `.rdcpkt`, or None when it is not one dfir wrote."""
    try:
        document = json.loads(data)
    except ValueError:
        return None
    if not isinstance(document, dict) or document.get("format") != RDCPKT_FORMAT:
        return None
    variables = document.get("variables")
    return variables if isinstance(variables, list) else None
