"""Contractions: MatMul and Gemm."""
from __future__ import annotations

from dfir.frontend.ge.onnx.attributes import attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter


def _matmul(imp, node):
    """numpy matmul: a 1-D operand gains a dimension of 1 for the product and loses it after."""
    x, y = imp.tensor(node, 0), imp.tensor(node, 1)
    dropped = []
    if x.type.rank == 1:
        x, dropped = imp.g.unsqueeze(x, [0], name=imp.name(node, "/lhs")), dropped + [-2]
    if y.type.rank == 1:
        y, dropped = imp.g.unsqueeze(y, [1], name=imp.name(node, "/rhs")), dropped + [-1]
    if not dropped:
        return [imp.g.matmul(x, y, name=imp.name(node))]
    product = imp.g.matmul(x, y, name=imp.name(node, "/matmul"))
    return [imp.g.squeeze(product, dropped, name=imp.name(node))]


def _gemm(imp, node):
    attrs = attributes_of(node)
    return [imp.g.gemm(imp.tensor(node, 0), imp.tensor(node, 1), imp.tensor(node, 2),
                       alpha=attrs.get("alpha", 1.0), beta=attrs.get("beta", 1.0),
                       trans_a=bool(attrs.get("transA", 0)), trans_b=bool(attrs.get("transB", 0)),
                       name=imp.name(node))]


CONVERTERS: dict[str, Converter] = {
    "MatMul": _matmul, "Gemm": _gemm,
}
