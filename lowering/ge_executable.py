"""The compiled code of a GE graph for one backend: what a `GE_EXECUTABLE` partition holds.

    compile_graph(graph_op, entry, "iree-cpu", "tiled")   # IREE: the codegen module compiled
    compile_graph(graph_op, entry, "onnxruntime")         # the plan entry exported as ONNX

An IREE backend compiles the graph's `codegen` region (`convert-ge-to-linalg` made it) with the
flags of the variant (`dfir.lowering.iree_executable`); `onnxruntime` exports the graph's plan
entry as an ONNX model whose weights are external initializers (`dfir.lowering.onnx_export`),
which the runtime serves from `WEIGHTS_DATA`. `candidates` lists what a measuring `auto` may
choose for a graph. Failures are GeErrors naming the graph and the reason.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import onnx

from dfir.core.backends import IREE_BACKENDS, IREE_CPU, ONNXRUNTIME, REFERENCE
from dfir.core.errors import GeError
from dfir.dialects import ge
from dfir.lowering import iree_executable
from dfir.lowering.codegen import codegen_module_text
from dfir.lowering.iree_executable import DEFAULT_VARIANT
from dfir.lowering.onnx_export import ONNX_OPSET, NoExport, export_onnx
from dfir.om.plan import GeGraph, external_weight_name

__all__ = ["DEFAULT_VARIANT", "GraphCode", "candidate_label", "candidates", "compile_graph", "output_dtypes"]


@dataclass(frozen=True)
class GraphCode:
    """A graph compiled for `backend` (`variant`: the IREE flag set): the partition's bytes, the
    target they run on, how long compiling took and, for an ONNX model, the weights it reads as
    external data (the entry's `external_weights`)."""

    backend: str
    variant: str
    target: str
    code: bytes
    seconds: float
    external_weights: tuple[int, ...] | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.code).hexdigest()


def candidate_label(backend: str, variant: str) -> str:
    """`backend`, or `backend/variant` for a variant other than the default (`iree-cpu/tiled`)."""
    return backend if variant == DEFAULT_VARIANT else f"{backend}/{variant}"


def output_dtypes(graph_op: ge.GraphOp) -> tuple[str, ...]:
    """The data type names of the graph's outputs (`DT_FLOAT`, ...)."""
    return tuple(value.type.dtype.name for value in graph_op.output_op.outputs)


def compile_graph(graph_op: ge.GraphOp, entry: GeGraph, backend: str, variant: str = DEFAULT_VARIANT) -> GraphCode:
    """`graph_op` (whose plan entry is `entry`, weights packed) compiled for `backend`."""
    name = graph_op.sym_name.data
    if backend == ONNXRUNTIME:
        start = time.perf_counter()
        try:
            model = export_onnx(entry, output_dtypes(graph_op))
        except NoExport as missing:
            raise GeError(f"ge.graph @{name}: backend onnxruntime cannot run {missing}; use backend "
                          f"reference or auto for this graph") from None
        return GraphCode(backend, variant, f"onnx opset {ONNX_OPSET}", model.SerializeToString(),
                         time.perf_counter() - start, _external_weights(model, entry))
    assert backend in IREE_BACKENDS, f"{backend} runs no compiled code"  # lowering asks for compiled backends only
    text = codegen_module_text(graph_op)
    if text is None:
        raise GeError(f"ge.graph @{name}: backend {backend!r} runs compiled code, but the graph has no "
                      f"codegen region (convert-ge-to-linalg makes it)")
    compiled = iree_executable.compile_executable(text, backend, graph=name, variant=variant)
    return GraphCode(backend, variant, compiled.target, compiled.vmfb, compiled.compile_seconds)


def candidates(graph_op: ge.GraphOp, backend: str) -> list[tuple[str, str]]:
    """What a measuring `auto` may run the graph with, as (backend, variant): the IREE variants
    of `backend` when it is an IREE backend and the graph has a codegen region, then onnxruntime
    on the CPU (its export is tried when it is measured)."""
    found = []
    if backend in IREE_BACKENDS and graph_op.codegen is not None:
        variants = iree_executable.AUTO_CPU_VARIANTS if backend == IREE_CPU else (DEFAULT_VARIANT,)
        found += [(backend, variant) for variant in variants]
    if backend in (IREE_CPU, REFERENCE):
        found.append((ONNXRUNTIME, DEFAULT_VARIANT))
    return found


def _external_weights(model: onnx.ModelProto, entry: GeGraph) -> tuple[int, ...]:
    """The weights of `entry` that `model` reads as external data, in initializer order."""
    index_of = {external_weight_name(k): k for k in range(len(entry.weights))}
    return tuple(index_of[tensor.name] for tensor in model.graph.initializer
                 if tensor.data_location == onnx.TensorProto.EXTERNAL)
