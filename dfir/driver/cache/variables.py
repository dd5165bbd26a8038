"""The variable format file `<key>_<timestamp>.rdcpkt`: the variables a cached model was built with.

Written next to a cached model when its graph has `ge.variable` ops, as JSON (GE writes a
protobuf `VarMatchInfo`; dfir keeps the same facts in text):

    {"format": 1, "variables": [{"graph": "mlp", "name": "fc1.weight", "dtype": "DT_FLOAT",
                                 "format": "ND", "shape": [4, 8]}]}

A cached model is used only when this file lists exactly the variables its manifest records
(name, data type, format, shape): a file that was changed makes the model compile again.
"""
from __future__ import annotations

import json
from typing import Mapping

from xdsl.dialects.builtin import ModuleOp

from dfir.dialects import ge

__all__ = ["RDCPKT_FORMAT", "rdcpkt_bytes", "read_rdcpkt", "variable_descs"]

RDCPKT_FORMAT = 1


def variable_descs(module: ModuleOp, reused: Mapping[str, list[dict]] | None = None) -> list[dict]:
    """Every `ge.variable` of every `ge.graph`, in module order, as the file lists them. `reused`
    gives, by the symbol of a top-level op, the variables of graphs the compile cache did not
    import, which go in that op's place."""
    descs = []
    for graph in module.ops:
        symbol = getattr(graph, "sym_name", None)
        if reused is not None and symbol is not None and symbol.data in reused:
            descs.extend(reused[symbol.data])
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
