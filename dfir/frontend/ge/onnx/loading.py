"""Reading an ONNX model: a path or an `onnx.ModelProto`, checked by the ONNX checker."""
from __future__ import annotations

import os

import onnx

from dfir.core.errors import GeError

MIN_OPSET = 13
"""The oldest default-domain opset the importer reads (attribute/input forms of ops before it differ)."""


def load(model: object) -> tuple[onnx.ModelProto, str, str]:
    """(checked model, how errors name it, default graph name)."""
    if isinstance(model, onnx.ModelProto):
        label = model.graph.name or "<onnx.ModelProto>"
        proto = model
    elif isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        label = path
        proto = _read(path)
    else:
        raise GeError(f"an ONNX model must be a file path or an onnx.ModelProto, got {type(model).__name__}")
    try:
        onnx.checker.check_model(proto)
    except onnx.checker.ValidationError as e:
        raise GeError(f"ONNX model '{label}' is not a valid ONNX model: {str(e).strip().splitlines()[0]}") from None
    default = os.path.splitext(os.path.basename(label))[0] if proto is not model else (proto.graph.name or "onnx_graph")
    return proto, label, default


def _read(path: str) -> onnx.ModelProto:
    if not os.path.exists(path):
        raise GeError(f"ONNX model file '{path}' does not exist")
    if os.path.isdir(path):
        raise GeError(f"ONNX model file '{path}' is a directory")
    try:
        return onnx.load(path)
    except OSError as e:
        raise GeError(f"ONNX model file '{path}' cannot be read: {e.strerror or e}") from None
    except Exception as e:  # protobuf decoding raises several unrelated types
        raise GeError(f"ONNX model file '{path}' is not a valid ONNX model: {e}") from None


def check_opset(proto: onnx.ModelProto, label: str) -> None:
    versions = [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")]
    if not versions or versions[0] < MIN_OPSET:
        found = f"opset {versions[0]}" if versions else "no opset"
        raise GeError(f"ONNX model '{label}' uses {found} of the default domain; dfir imports opset "
                      f"{MIN_OPSET} or later (onnx.version_converter can upgrade it)")
