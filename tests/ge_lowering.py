"""Run a GE graph lowered by `convert-ge-to-linalg` through IREE and the reference kernels.

`lowered_outputs(graph, inputs)` compiles the graph's `codegen` func for the host CPU (as
lowering does) and returns what it computes; `reference_outputs` runs the same graph on the numpy
kernels; `assert_lowering_matches` compares the two (and the dtypes and shapes exactly).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import iree.runtime
import numpy as np
from xdsl.dialects.builtin import ModuleOp

from dfir.core.data_type import from_numpy
from dfir.driver.job import make_context
from dfir.frontend.ge.graph import Graph
from dfir.lowering.codegen import codegen_module_text, parameter_values
from dfir.lowering.ge_graph import ge_graph_entry
from dfir.lowering.iree_executable import compile_executable
from dfir.om.plan import WEIGHT_ALIGNMENT, Weight
from dfir.passes.convert_ge_to_linalg import ConvertGeToLinalg
from dfir.passes.infer_shape_ranges import InferShapeRanges
from dfir.runtime.ge.graph_runner import GeGraphRunner
from dfir.runtime.ge.iree_device import parameters_module


def converted(graph: Graph, backend: str = "iree-cpu") -> ModuleOp:
    """The module of `graph` after shape inference and `convert-ge-to-linalg`."""
    module = ModuleOp([graph.to_ir()])
    ctx = make_context()
    InferShapeRanges().apply(ctx, module)
    ConvertGeToLinalg(backend=backend).apply(ctx, module)
    module.verify()
    return module


def codegen_text(module: ModuleOp) -> str:
    """The codegen func of the module's one graph, as a generic-form upstream module."""
    (graph,) = module.ops
    return codegen_module_text(graph)


def lowered_outputs(graph: Graph, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """What the compiled graph returns, viewed as the graph's output dtypes (IREE returns an
    unsigned integer as the signless, i.e. signed, integer of its width)."""
    module = converted(graph)
    (graph_op,) = module.ops
    dtypes = [v.type.numpy_dtype for v in graph_op.output_op.outputs]
    vmfb = compile_executable(codegen_text(module), "iree-cpu").vmfb
    config = iree.runtime.Config("local-sync")
    context = iree.runtime.SystemContext(vm_modules=[parameters_module(config, parameter_values(graph_op)),
                                                     iree.runtime.VmModule.copy_buffer(config.vm_instance, vmfb)],
                                         config=config)
    results = context.modules.module.main(*inputs)
    results = results if isinstance(results, (list, tuple)) else [results]
    # to_host() maps the device buffer, which dies with the context: copy out.
    return [np.array(r.to_host()).view(dtype) for r, dtype in zip(results, dtypes)]


def reference_outputs(graph: Graph, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    (graph_op,) = converted(graph, backend="reference").ops
    entry, arrays = ge_graph_entry(graph_op)
    blob = bytearray()
    weights = []
    for array in arrays:
        blob.extend(b"\0" * (-len(blob) % WEIGHT_ALIGNMENT))
        weights.append(Weight(len(blob), array.nbytes, from_numpy(array.dtype).name, tuple(array.shape)))
        blob.extend(np.ascontiguousarray(array).tobytes())
    runner = GeGraphRunner(replace(entry, weights=tuple(weights)), memoryview(bytes(blob)))
    return list(runner.run(list(inputs)))


def assert_lowering_matches(graph: Graph, inputs: Sequence[np.ndarray], rtol: float = 1e-5,
                            atol: float = 1e-6) -> None:
    got, want = lowered_outputs(graph, inputs), reference_outputs(graph, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
