"""GE graph construction: `Graph` builds a tensor-level graph op by op, or imports it from ONNX."""
from dfir.frontend.ge.graph import Graph, GraphInput, Value  # noqa: F401

__all__ = ["Graph", "GraphInput", "Value"]
