"""Contractions: MatMul, Gemm and Einsum."""
from __future__ import annotations

import math
import string
from typing import TYPE_CHECKING

import onnx

from dfir.frontend.ge.onnx.attributes import attribute, attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Value
    from dfir.frontend.ge.onnx.importer import Importer


def _matmul(imp, node):
    return [matmul_of(imp, node, imp.tensor(node, 0), imp.tensor(node, 1))]


def matmul_of(imp: Importer, node: onnx.NodeProto, x: Value, y: Value, suffix: str = "") -> Value:
    """numpy matmul: a 1-D operand gains a dimension of 1 for the product and loses it after."""
    dropped = []
    if x.type.rank == 1:
        x, dropped = imp.g.unsqueeze(x, [0], name=imp.name(node, "/lhs")), dropped + [-2]
    if y.type.rank == 1:
        y, dropped = imp.g.unsqueeze(y, [1], name=imp.name(node, "/rhs")), dropped + [-1]
    if not dropped:
        return imp.g.matmul(x, y, name=imp.name(node, suffix))
    product = imp.g.matmul(x, y, name=imp.name(node, "/matmul"))
    return imp.g.squeeze(product, dropped, name=imp.name(node, suffix))


def _gemm(imp, node):
    attrs = attributes_of(node)
    return [imp.g.gemm(imp.tensor(node, 0), imp.tensor(node, 1), imp.tensor(node, 2),
                       alpha=attrs.get("alpha", 1.0), beta=attrs.get("beta", 1.0),
                       trans_a=bool(attrs.get("transA", 0)), trans_b=bool(attrs.get("transB", 0)),
                       name=imp.name(node))]


def _einsum(imp, node):
    """One or two operands, as ONNX Einsum: sum out the letters of one operand that neither the
    other nor the result has, multiply two operands as a matmul of [batch..., left, contracted] by
    [batch..., contracted, right] (transposes and reshapes around it), and transpose to the
    result's order. A letter repeated within one operand (a diagonal) is refused."""
    operands = [imp.tensor(node, i) for i in range(len(node.input))]
    if len(operands) not in (1, 2):
        raise imp.node_error(node, f"only one or two operands are supported, got {len(operands)}")
    inputs, output = _einsum_terms(imp, node, [v.type.rank for v in operands])
    terms = []
    for i, (value, letters) in enumerate(zip(operands, inputs)):
        others = "".join(inputs[:i] + inputs[i + 1:])
        summed = [a for a, letter in enumerate(letters) if letter not in output and letter not in others]
        if summed:
            value = imp.g.reduce_sum(value, summed, name=imp.name(node, f"/sum{i}"))
            letters = "".join(letter for a, letter in enumerate(letters) if a not in summed)
        terms.append((value, letters))
    if len(terms) == 2:
        terms = [_einsum_product(imp, node, *terms[0], *terms[1], output)]
    value, letters = terms[0]
    perm = [letters.index(letter) for letter in output]
    if perm == list(range(len(perm))):
        return [imp.g.identity(value, name=imp.name(node))]
    return [imp.g.transpose(value, perm, name=imp.name(node))]


def _einsum_terms(imp: Importer, node: onnx.NodeProto, ranks: list[int]) -> tuple[list[str], str]:
    """The operands' letters and the result's, with `...` spelled as upper-case letters."""
    equation = attribute(node, "equation").replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(ranks):
        raise imp.node_error(node, f"equation '{equation}' names {len(inputs)} operands, the node has {len(ranks)}")
    spread = max((rank - len(term.replace("...", "")) for term, rank in zip(inputs, ranks) if "..." in term), default=0)
    ellipsis = string.ascii_uppercase[:spread]
    spelled = [term.replace("...", ellipsis[spread - (rank - len(term.replace("...", ""))):])
               for term, rank in zip(inputs, ranks)]
    for term, rank in zip(spelled, ranks):
        if len(term) != rank:
            raise imp.node_error(node, f"equation '{equation}' gives an operand of rank {rank} the letters '{term}'")
        if len(set(term)) != len(term):
            raise imp.node_error(node, f"equation '{equation}' repeats a letter within an operand (a diagonal), "
                                       "which is not supported")
    if arrow:
        return spelled, rhs.replace("...", ellipsis)
    counts = "".join(spelled)
    return spelled, ellipsis + "".join(sorted(c for c in set(counts) if counts.count(c) == 1 and c.islower()))


def _einsum_product(imp: Importer, node: onnx.NodeProto, a: Value, a_letters: str, b: Value, b_letters: str,
                    output: str) -> tuple[Value, str]:
    batch = [c for c in a_letters if c in b_letters and c in output]
    contracted = [c for c in a_letters if c in b_letters and c not in output]
    left = [c for c in a_letters if c not in b_letters]
    right = [c for c in b_letters if c not in a_letters]
    g = imp.g

    def arranged(value: Value, letters: str, order: list[str], i: int) -> Value:
        perm = [letters.index(c) for c in order]
        return value if perm == list(range(len(perm))) else g.transpose(value, perm, name=imp.name(node, f"/order{i}"))

    def sizes(value: Value, letters: str, group: list[str]) -> list[int]:
        found = [value.shape[letters.index(c)] for c in group]
        if -1 in found:
            raise imp.node_error(node, f"the sizes of '{''.join(group)}' must be fixed, got shape {value.shape}")
        return found

    a_sizes, k_sizes = sizes(a, a_letters, left), sizes(a, a_letters, contracted)
    r_sizes = sizes(b, b_letters, right)
    keep = [0] * len(batch)
    lhs = g.reshape(arranged(a, a_letters, batch + left + contracted, 0),
                    keep + [math.prod(a_sizes), math.prod(k_sizes)], name=imp.name(node, "/lhs"))
    rhs = g.reshape(arranged(b, b_letters, batch + contracted + right, 1),
                    keep + [math.prod(k_sizes), math.prod(r_sizes)], name=imp.name(node, "/rhs"))
    product = g.matmul(lhs, rhs, name=imp.name(node, "/matmul"))
    result = g.reshape(product, keep + a_sizes + r_sizes, name=imp.name(node, "/unflatten"))
    return result, "".join(batch + left + right)


CONVERTERS: dict[str, Converter] = {
    "MatMul": _matmul, "Gemm": _gemm, "Einsum": _einsum,
}
