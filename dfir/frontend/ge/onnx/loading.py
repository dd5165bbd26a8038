"""Reading an ONNX model: a path or an `onnx.ModelProto`, checked by the ONNX checker.

Weights stored as external data (side files next to the `.onnx`, as `onnx.save(...,
save_as_external_data=True)` writes them) are read from the model file's folder; a side file
that is missing, outside that folder or too short is a GeError naming the weight and the file.
"""
from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import external_data_helper, helper

from dfir.core.errors import GeError


def load(model: object) -> tuple[onnx.ModelProto, str, str]:
    """(checked model, how errors name it, default graph name)."""
    if isinstance(model, onnx.ModelProto):
        label = model.graph.name or "<onnx.ModelProto>"
        _check_no_external_data(model, label)
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
        proto = onnx.load(path, load_external_data=False)
    except OSError as e:
        raise GeError(f"ONNX model file '{path}' cannot be read: {e.strerror or e}") from None
    except Exception as e:  # protobuf decoding raises several unrelated types
        raise GeError(f"ONNX model file '{path}' is not a valid ONNX model: {e}") from None
    _load_external_data(proto, path)
    return proto


def _external_tensors(proto: onnx.ModelProto) -> list[onnx.TensorProto]:
    """The weights of the main graph (initializers and node attributes) kept in side files."""
    tensors = [*proto.graph.initializer, *(a.t for n in proto.graph.node for a in n.attribute if a.HasField("t"))]
    return [t for t in tensors if external_data_helper.uses_external_data(t)]


def _check_no_external_data(proto: onnx.ModelProto, label: str) -> None:
    """An in-memory model must hold its weights: it has no folder to read side files from."""
    external = _external_tensors(proto)
    if external:
        raise GeError(f"ONNX model '{label}' keeps weight '{external[0].name}' in the external file "
                      f"'{_location(external[0])}'; give the model's path so its side files are read")


def _load_external_data(proto: onnx.ModelProto, path: str) -> None:
    """Read every external weight from its side file in the model's folder, checking each file."""
    external = [(tensor, _location(tensor)) for tensor in _external_tensors(proto)]
    folder = os.path.dirname(os.path.abspath(path))
    for tensor, location in external:
        if not os.path.isfile(os.path.join(folder, location)):
            raise GeError(f"ONNX model file '{path}': weight '{tensor.name}' is stored in the side file "
                          f"'{location}', which does not exist next to the model")
    try:
        external_data_helper.load_external_data_for_model(proto, folder)
    except (onnx.checker.ValidationError, OSError, ValueError) as e:  # ValueError: a side file too short
        raise GeError(f"ONNX model file '{path}': its external data cannot be read: {e}") from None
    for tensor, location in external:
        expected = int(np.prod(tensor.dims, dtype=np.int64)) * helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
        if len(tensor.raw_data) != expected:
            raise GeError(f"ONNX model file '{path}': weight '{tensor.name}' needs {expected} bytes of its side "
                          f"file '{location}', which holds {len(tensor.raw_data)}")


def _location(tensor: onnx.TensorProto) -> str:
    return next(e.value for e in tensor.external_data if e.key == "location")
