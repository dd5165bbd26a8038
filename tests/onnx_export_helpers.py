"""Run a GE graph exported to ONNX (`dfir.lowering.onnx_export`) on onnxruntime, and compare it
with the reference kernels.

`exported(graph)` gives the model and its weight arrays, `run_exported` runs such a model with
the weights handed over as external initializers (as the onnxruntime backend does), and
`assert_export_matches` checks the result against `reference_outputs` (dtypes and shapes exactly).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np
import onnx
import onnxruntime as ort

from dfir.core.data_type import from_numpy
from dfir.frontend.ge.graph import Graph
from dfir.lowering.ge_graph import ge_graph_entry
from dfir.lowering.onnx_export import export_onnx, weight_name
from dfir.om.plan import WEIGHT_ALIGNMENT, GeGraph, Weight
from ge_lowering import converted, reference_outputs


def packed_entry(graph: Graph) -> tuple[GeGraph, list[np.ndarray], list[str]]:
    """The plan entry of `graph` (weights packed as the .om packs them), its weight arrays and its
    output dtypes."""
    (graph_op,) = converted(graph, backend="reference").ops
    entry, arrays = ge_graph_entry(graph_op)
    offset, weights = 0, []
    for array in arrays:
        offset += -offset % WEIGHT_ALIGNMENT
        weights.append(Weight(offset, array.nbytes, from_numpy(array.dtype).name, tuple(array.shape)))
        offset += array.nbytes
    return replace(entry, weights=tuple(weights)), arrays, [v.type.dtype.name for v in graph_op.output_op.outputs]


def exported(graph: Graph) -> tuple[onnx.ModelProto, list[np.ndarray]]:
    entry, arrays, output_dtypes = packed_entry(graph)
    return export_onnx(entry, output_dtypes), arrays


def session(model: onnx.ModelProto, weights: Sequence[np.ndarray]) -> ort.InferenceSession:
    """An onnxruntime session of `model` with its external weights supplied from `weights`."""
    external = [t.name for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    options = ort.SessionOptions()
    # np.require, not np.ascontiguousarray, which makes a 0-d array 1-d
    arrays = {weight_name(i): np.require(a, requirements="C") for i, a in enumerate(weights)}
    values = [ort.OrtValue.ortvalue_from_numpy(arrays[name]) for name in external]
    if external:
        options.add_external_initializers(external, values)
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def run_exported(model: onnx.ModelProto, weights: Sequence[np.ndarray], inputs: Sequence[np.ndarray]) -> list:
    names = [i.name for i in model.graph.input]
    return session(model, weights).run(None, dict(zip(names, inputs, strict=True)))


def embedded(model: onnx.ModelProto, weights: Sequence[np.ndarray]) -> onnx.ModelProto:
    """A copy of `model` with its weights' bytes inside and its outputs' shapes present, though
    empty (what `onnx.checker` can check: it wants both)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for output in copy.graph.output:
        output.type.tensor_type.shape.SetInParent()
    for tensor in copy.graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            tensor.raw_data = weights[int(tensor.name.removeprefix("weight_"))].tobytes()
            tensor.data_location = onnx.TensorProto.DEFAULT
            del tensor.external_data[:]
    return copy


def assert_export_matches(graph: Graph, inputs: Sequence[np.ndarray], rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """The exported model passes the checker and computes what the reference kernels compute
    (to at least float32 rounding: onnxruntime computes float32 in float32, some kernels in float64)."""
    model, weights = exported(graph)
    onnx.checker.check_model(embedded(model, weights))
    got, want = run_exported(model, weights, inputs), reference_outputs(graph, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        tolerance = 1e-3 if w.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(g, w, rtol=max(rtol, tolerance), atol=max(atol, tolerance / 10))
