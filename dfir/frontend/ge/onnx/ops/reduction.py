"""Reductions over axes."""
from __future__ import annotations

from dfir.frontend.ge.onnx.attributes import attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter


def _reduce(method: str) -> Converter:
    def convert(imp, node):
        x = imp.tensor(node, 0)
        attrs = attributes_of(node)
        axes = imp.static_ints(node, 1, "axes") if len(node.input) > 1 else attrs.get("axes")
        if not axes:
            if attrs.get("noop_with_empty_axes", 0):
                return [imp.g.identity(x, name=imp.name(node))]
            axes = list(range(x.type.rank))
        return [getattr(imp.g, method)(x, list(axes), keep_dims=bool(attrs.get("keepdims", 1)), name=imp.name(node))]
    return convert


CONVERTERS: dict[str, Converter] = {
    "ReduceSum": _reduce("reduce_sum"), "ReduceMean": _reduce("reduce_mean"), "ReduceMax": _reduce("reduce_max"),
}
