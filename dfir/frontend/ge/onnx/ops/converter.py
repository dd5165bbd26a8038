"""What every op family's converters share: the converter's type, the plain one-op converters and
the checks several families make."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import onnx

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Value
    from dfir.frontend.ge.onnx.importer import Importer

Converter = Callable[["Importer", onnx.NodeProto], Sequence["Value"]]
"""How a node becomes graph ops: its outputs' values, in order."""


def binary(method: str) -> Converter:
    def convert(imp, node):
        return [getattr(imp.g, method)(imp.tensor(node, 0), imp.tensor(node, 1), name=imp.name(node))]
    return convert


def unary(method: str) -> Converter:
    def convert(imp, node):
        return [getattr(imp.g, method)(imp.tensor(node, 0), name=imp.name(node))]
    return convert


def require_image(imp: Importer, node: onnx.NodeProto, x: Value) -> None:
    if x.type.rank != 4:
        raise imp.node_error(node, f"only 2-D inputs (rank 4, NCHW) are supported, got shape {x.shape}")


def only_first_output(imp: Importer, node: onnx.NodeProto) -> None:
    if any(node.output[1:]):
        raise imp.node_error(node, f"only the first output is supported, the node also produces "
                                   f"{[o for o in node.output[1:] if o]}")
