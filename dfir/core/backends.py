"""The backends that run a GE graph, named in this one place: the dialect, the options, the passes,
the lowering, the plan and the runtime spell them from here.

- `reference`: the numpy kernels (`dfir.runtime.ge.kernels`), which run every op;
- `iree-cpu`, `iree-cuda`: an IREE module compiled from the graph's linalg form;
- `onnxruntime`: the graph exported as an ONNX model.

`auto` is no backend but the build option's value asking dfir to measure and keep the fastest.
"""
from __future__ import annotations

__all__ = ["AUTO", "BACKEND_CHOICES", "COMPILED_BACKENDS", "GE_BACKENDS", "IREE_BACKENDS", "IREE_CPU", "IREE_CUDA",
           "ONNXRUNTIME", "REFERENCE"]

REFERENCE = "reference"
IREE_CPU = "iree-cpu"
IREE_CUDA = "iree-cuda"
ONNXRUNTIME = "onnxruntime"
AUTO = "auto"

GE_BACKENDS = (REFERENCE, IREE_CPU, IREE_CUDA, ONNXRUNTIME)
"""What runs a GE graph."""
COMPILED_BACKENDS = (IREE_CPU, IREE_CUDA, ONNXRUNTIME)
"""The backends that run compiled code (a plan's `executables` entry: an IREE vmfb, an ONNX model)."""
IREE_BACKENDS = (IREE_CPU, IREE_CUDA)
"""The backends that run an IREE vmfb compiled from the graph's `codegen` region."""
BACKEND_CHOICES = (AUTO, *GE_BACKENDS)
"""The values of the `dfir.ge.backend` option."""
