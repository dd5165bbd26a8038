"""Reading an ONNX model: a path or an `onnx.ModelProto`, checked by the ONNX checker.

Weights stored as external data (side files next to the `.onnx`, as `onnx.save(...,
save_as_external_data=True)` writes them) are read from the model file's folder; a side file
that is missing, outside that folder or too short is a GeError naming the weight and the file.

Inputs given values at import (`constant_inputs`) become weights of those values: a model whose
axes, shape or k is an input imports as the model for those values (a GeError names an input the
model lacks, or a value of another type or shape than the input declares).
"""
from __future__ import annotations

import os
from typing import Mapping

import numpy as np
import onnx
from onnx import external_data_helper, helper, numpy_helper

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


def with_constant_inputs(proto: onnx.ModelProto, values: Mapping[str, object], label: str) -> onnx.ModelProto:
    """A copy of `proto` whose inputs named in `values` are weights holding those values."""
    inputs = {vi.name: vi for vi in proto.graph.input}
    unknown = [name for name in values if name not in inputs]
    if unknown:
        listed = ", ".join(f"'{name}'" for name in inputs) or "none"
        raise GeError(f"ONNX model '{label}' has no input '{unknown[0]}' to make constant; its inputs: {listed}")
    result = onnx.ModelProto()
    result.CopyFrom(proto)
    weights = [_constant_input(inputs[name], value, label) for name, value in values.items()]
    kept = [vi for vi in proto.graph.input if vi.name not in values]
    del result.graph.input[:]
    result.graph.input.extend(kept)
    result.graph.initializer.extend(weights)
    return result


def _constant_input(info: onnx.ValueInfoProto, value: object, label: str) -> onnx.TensorProto:
    kind = info.type.WhichOneof("value")
    if kind != "tensor_type":
        raise GeError(f"ONNX model '{label}': input '{info.name}' is a {kind}; only tensor inputs can be constant")
    array = np.asarray(value)
    declared = info.type.tensor_type
    dtype = helper.tensor_dtype_to_np_dtype(declared.elem_type)
    dims = [d.dim_value if d.HasField("dim_value") else None for d in declared.shape.dim]
    fits = (array.dtype == dtype and (not declared.HasField("shape") or
            (array.ndim == len(dims) and all(d is None or d == n for d, n in zip(dims, array.shape)))))
    if not fits:
        shape = "" if not declared.HasField("shape") else str(["?" if d is None else d for d in dims]).replace("'", "")
        raise GeError(f"ONNX model '{label}': constant input '{info.name}' is {array.dtype}{list(array.shape)}, "
                      f"but the model declares {dtype}{shape}")
    return numpy_helper.from_array(array, info.name)


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
