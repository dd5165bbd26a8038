"""Functions: a node of an op the mapping lacks, but which ONNX defines as a function of other
ops, is replaced by that function's body.

ONNX defines many ops (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, Swish, CenterCropPad,
RotaryEmbedding, AffineGrid, DynamicQuantizeLinear, ...) by a body of simpler ops, some by a
body built for the node at hand (a context-dependent function, which reads the node's attributes
and input types). onnx's own inliner builds the body for the model's opset:

    z = SoftmaxCrossEntropyLoss(x, y)           # node 'loss'
becomes
    loss/Reshape0 ... loss/LogSoftmax2 ...      # nodes named after the node they replace
    z = NegativeLogLikelihoodLoss(...)          # expanded in turn on the next round

Tensors inside a body are named `<node>/<name>`, so bodies never collide with each other or
with the model's tensors. A body is expanded again while it holds such ops, at most
`MAX_ROUNDS` deep. Nodes the mapping converts or folding computes are never expanded: their
direct conversion is what dfir runs best.
"""
from __future__ import annotations

from typing import Callable

import onnx
from onnx import defs, helper, inliner

from dfir.frontend.ge.onnx.attributes import node_label

MAX_ROUNDS = 4
"""How deep bodies are expanded (a body whose ops are functions again is one round more)."""

_DEFAULT_DOMAINS = ("", "ai.onnx")
_DOMAIN = "dfir.expansion"  # the domain a function is inlined from


def expanded(proto: onnx.ModelProto, unsupported: Callable[[onnx.ModelProto], list[int]],
             infer: Callable[[onnx.ModelProto], onnx.ModelProto]) -> onnx.ModelProto:
    """`proto` with each node `unsupported(proto)` lists (by index) replaced by its function body
    where ONNX defines one, then shapes inferred again by `infer`; repeated for bodies."""
    for _ in range(MAX_ROUNDS):
        opset = _default_opset(proto)
        indices = [i for i in unsupported(proto) if _has_body(proto.graph.node[i], opset)]
        if not indices:
            break
        types = _tensor_types(proto)
        bodies = {i: _body(proto, proto.graph.node[i], i, types) for i in indices}
        if not any(bodies.values()):
            break
        nodes = [n for i, node in enumerate(proto.graph.node) for n in (bodies.get(i) or [node])]
        del proto.graph.node[:]
        proto.graph.node.extend(nodes)
        proto = infer(proto)
    return proto


def _tensor_types(proto: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    """The type of every tensor of `proto` that has one: inputs, weights, inferred inner tensors."""
    types = {t.name: helper.make_tensor_type_proto(t.data_type, list(t.dims)) for t in proto.graph.initializer}
    types.update((vi.name, vi.type) for vi in [*proto.graph.input, *proto.graph.value_info, *proto.graph.output])
    return types


def _default_opset(proto: onnx.ModelProto) -> int:
    return next((o.version for o in proto.opset_import if o.domain in _DEFAULT_DOMAINS), 1)


def _schema(node: onnx.NodeProto, opset: int) -> defs.OpSchema | None:
    if node.domain not in _DEFAULT_DOMAINS:
        return None
    try:
        return defs.get_schema(node.op_type, opset, "")
    except defs.SchemaError:
        return None


def _has_body(node: onnx.NodeProto, opset: int) -> bool:
    schema = _schema(node, opset)
    return schema is not None and (schema.has_function or schema.has_context_dependent_function)


def _body(proto: onnx.ModelProto, node: onnx.NodeProto, index: int,
          types: dict[str, onnx.TypeProto]) -> list[onnx.NodeProto] | None:
    """The nodes of `node`'s function body, its tensors renamed into the model; None where the
    body cannot be built (an input of unknown type, or a body with subgraphs)."""
    present = [name for name in node.input if name]
    if any(name not in types for name in present):
        return None  # a context-dependent body needs its input types
    opset = _default_opset(proto)
    call = _with_defaults(node, _schema(node, opset))
    function = _function(call, opset, [types.get(name, onnx.TypeProto()) for name in node.input])
    if function is None:
        return None
    call.domain, call.op_type = function.domain, function.name
    single = helper.make_model(
        helper.make_graph([call], "expand", [helper.make_value_info(name, types[name]) for name in present],
                          [helper.make_value_info(name, onnx.TypeProto()) for name in node.output if name]),
        opset_imports=[*proto.opset_import, helper.make_opsetid(_DOMAIN, 1)], ir_version=proto.ir_version,
        functions=[function])
    try:
        body = inliner.inline_local_functions(single).graph.node
    except Exception:  # noqa: BLE001 - onnx raises its C++ errors untyped; the node stays, and is refused
        return None
    if any(n.domain == _DOMAIN for n in body):
        return None  # the inliner left the call
    outer = {*present, *node.output}
    label = node.name or f"{node.op_type}{node_label(node, index)}"

    inner = {o for n in body for o in n.output if o and o not in outer}

    def rename(name: str) -> str:
        return f"{label}/{name}" if name in inner else name
    renamed = []
    for position, node_of_body in enumerate(body):
        copy = onnx.NodeProto()
        copy.CopyFrom(node_of_body)
        copy.name = f"{label}/{node_of_body.op_type}{position}"
        _rename_uses(copy, rename, defined=set())
        copy.output[:] = [rename(n) for n in copy.output]
        renamed.append(copy)
    return renamed


def _rename_uses(node: onnx.NodeProto, rename: Callable[[str], str], defined: set[str]) -> None:
    """Rename the tensors `node` uses, in its subgraphs too (a Scan's body uses the tensors of the
    function body it is in), except those a subgraph defines itself (`defined`)."""
    node.input[:] = [n if n in defined else rename(n) for n in node.input]
    for attr in node.attribute:
        for graph in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs):
            own = defined | {i.name for i in graph.input} | {t.name for t in graph.initializer} | {
                o for n in graph.node for o in n.output}
            for inner_node in graph.node:
                _rename_uses(inner_node, rename, own)
            for output in graph.output:
                output.name = output.name if output.name in own else rename(output.name)


def _function(node: onnx.NodeProto, opset: int, input_types: list[onnx.TypeProto]) -> onnx.FunctionProto | None:
    """The function defining `node`'s op at `opset` (built for the node where it depends on it),
    as a function of this module's domain; None where ONNX defines none."""
    schema = _schema(node, opset)
    plain = [v for v in schema.function_opset_versions if v <= opset]
    built = [v for v in schema.context_dependent_function_opset_versions if v <= opset]
    if plain and (not built or max(plain) >= max(built)):
        serialized = schema.get_function_with_opset_version(max(plain))
    elif built:
        serialized = schema.get_context_dependent_function_with_opset_version(
            max(built), node.SerializeToString(), [t.SerializeToString() for t in input_types])
    else:
        return None
    function = onnx.FunctionProto()
    function.ParseFromString(serialized)
    if not function.node:
        return None
    function.domain, function.name = _DOMAIN, node.op_type
    return function


def _with_defaults(node: onnx.NodeProto, schema: defs.OpSchema) -> onnx.NodeProto:
    """`node` with every attribute it leaves out at the schema's default, which a body that refers
    to the attribute needs (a body's reference to an absent attribute drops it instead)."""
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    present = {a.name for a in node.attribute}
    for name, spec in schema.attributes.items():
        if name not in present and spec.default_value.type != onnx.AttributeProto.UNDEFINED:
            copy.attribute.append(spec.default_value)
    return copy
