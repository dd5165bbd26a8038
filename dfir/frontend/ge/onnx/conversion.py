"""Conversion: a model of an older opset becomes one of the opset the importer reads, and its
shapes are inferred.

1. A default-domain opset below `READ_OPSET` (from opset 1 on) is converted to `READ_OPSET` by
   `onnx.version_converter` (a note on the `dfir.onnx` logger says from which opset to which).
   A node the converter cannot convert is a GeError naming its op and node. What the converter
   misreads is restated before or after it: opsets 1 to 6 broadcast a second input along an
   `axis` (a PRelu slope along the channels), which an Unsqueeze aligns with the last
   dimensions for opset 7's numpy broadcasting; Resize nodes made from Upsample or Resize-10
   keep those ops' coordinate mapping.
2. ONNX shape inference (with data propagation) annotates the tensors with their types and
   shapes, which folding and the importer use.
"""
from __future__ import annotations

import logging
import re

import onnx
from onnx import defs, helper, shape_inference, version_converter

from dfir.core.errors import GeError
from dfir.frontend.ge.onnx.attributes import node_label

MIN_OPSET = 1
"""The oldest default-domain opset dfir imports, the first ONNX defines (opsets up to `READ_OPSET`
are converted)."""

READ_OPSET = 13
"""The opset the op mapping reads: models of an older opset are converted to it."""

_log = logging.getLogger("dfir.onnx")


def default_opset(proto: onnx.ModelProto) -> int | None:
    versions = [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")]
    return versions[0] if versions else None


def converted(proto: onnx.ModelProto, label: str) -> onnx.ModelProto:
    """`proto` at `READ_OPSET` or later (converted if older), see the module docstring."""
    opset = default_opset(proto)
    if opset is None or opset >= READ_OPSET:  # without default-domain ops there is nothing to convert
        return proto
    try:
        result = _converted_in_steps(proto, opset)
    except Exception as error:  # the converter raises ConvertError, or RuntimeError for a failed check
        raise GeError(f"ONNX model '{label}' cannot be converted from opset {opset} to {READ_OPSET}: "
                      f"{_culprit(proto, str(error))}") from None
    _check_same_interface(proto, result, label, opset)
    if opset < 11:
        _keep_resize_10_semantics(result)
    _log.warning("ONNX model '%s': converted from opset %d to opset %d (onnx.version_converter)",
                 label, opset, READ_OPSET)
    return result


def _converted_in_steps(proto: onnx.ModelProto, opset: int) -> onnx.ModelProto:
    """`proto` converted to `READ_OPSET`, through opset 6 if older (where shape inference gives
    the ranks that restating the old broadcasts needs)."""
    if opset < 6:
        proto, opset = version_converter.convert_version(proto, 6), 6
    return version_converter.convert_version(_with_old_forms_restated(proto, opset), READ_OPSET)


def _with_old_forms_restated(proto: onnx.ModelProto, opset: int) -> onnx.ModelProto:
    """`proto` with what the converter misreads from opsets 1 to 6 restated so that opset 7's
    numpy broadcasting reads it the same, by an Unsqueeze of the second input:

    - a PRelu's one-dimensional slope, one per channel (axis 1), becomes [C, 1, ...];
    - the second input of an op with `broadcast` and an `axis` that does not align it with the
      last dimensions gets the trailing dimensions of size 1 that align it, and the `axis` goes
      (the converter's adapter would add as many dimensions as the ranks differ by)."""
    if opset >= 7:
        return proto
    ranks = _ranks(proto)
    nodes = []
    for index, node in enumerate(proto.graph.node):
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        x_rank, b_rank = (ranks.get(name) for name in (list(node.input) + ["", ""])[:2])
        axes: list[int] = []
        if x_rank is not None and b_rank is not None:
            if node.op_type == "PRelu" and b_rank == 1 and x_rank > 2:
                axes = list(range(1, x_rank - 1))
            elif attrs.get("broadcast") and "axis" in attrs:
                axes = list(range(b_rank, x_rank - attrs["axis"] % x_rank))
        if axes:
            aligned = f"{node.input[1]}/aligned_{index}"
            nodes.append(helper.make_node("Unsqueeze", [node.input[1]], [aligned], name=f"{node.name or index}/aligned",
                                          axes=axes))
            restated = onnx.NodeProto()
            restated.CopyFrom(node)
            restated.input[1] = aligned
            kept = [a for a in node.attribute if a.name != "axis"]
            del restated.attribute[:]
            restated.attribute.extend(kept)
            node = restated
        nodes.append(node)
    result = onnx.ModelProto()
    result.CopyFrom(proto)
    del result.graph.node[:]
    result.graph.node.extend(nodes)
    return result


def _ranks(proto: onnx.ModelProto) -> dict[str, int]:
    """The rank of each tensor of `proto` that shape inference (or an initializer) gives."""
    inferred = shape_inference.infer_shapes(proto)
    infos = [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]
    ranks = {vi.name: len(vi.type.tensor_type.shape.dim) for vi in infos
             if vi.type.WhichOneof("value") == "tensor_type" and vi.type.tensor_type.HasField("shape")}
    ranks.update((t.name, len(t.dims)) for t in proto.graph.initializer)
    return ranks


def _check_same_interface(before: onnx.ModelProto, after: onnx.ModelProto, label: str, opset: int) -> None:
    """The converter must not change what the model takes and gives (its Scan-8 adapter drops the
    batch dimension of the inputs): such a model is refused rather than run on other shapes."""
    for what, old, new in (("input", before.graph.input, after.graph.input),
                           ("output", before.graph.output, after.graph.output)):
        for a, b in zip(old, new):
            if not _same_type(a, b):
                changed = [node_label(n, i) for i, n in enumerate(before.graph.node) if _redefined(n, opset)]
                raise GeError(f"ONNX model '{label}' cannot be converted from opset {opset} to {READ_OPSET}: the "
                              f"converter changes {what} '{a.name}' from {_spelled(a)} to {_spelled(b)} (ops "
                              f"redefined in between: nodes {', '.join(changed)})")


def _same_type(before: onnx.ValueInfoProto, after: onnx.ValueInfoProto) -> bool:
    """Whether the converter kept the type of an input or output: the converter may name a
    dimension the model left unnamed (`unk__0`), which changes nothing."""
    if before.type == after.type:
        return True
    old, new = before.type.tensor_type, after.type.tensor_type
    if (before.type.WhichOneof("value") != "tensor_type" or after.type.WhichOneof("value") != "tensor_type"
            or old.elem_type != new.elem_type or old.HasField("shape") != new.HasField("shape")
            or len(old.shape.dim) != len(new.shape.dim)):
        return False
    return all(a == b or not (a.HasField("dim_value") or a.HasField("dim_param")) and b.HasField("dim_param")
               for a, b in zip(old.shape.dim, new.shape.dim))


def _redefined(node: onnx.NodeProto, opset: int) -> bool:
    """Whether the op of `node` has another definition at `READ_OPSET` than at `opset`."""
    try:
        return defs.get_schema(node.op_type, opset).since_version != defs.get_schema(node.op_type, READ_OPSET).since_version
    except defs.SchemaError:
        return False


def _spelled(info: onnx.ValueInfoProto) -> str:
    dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in info.type.tensor_type.shape.dim]
    return str(dims).replace("'", "")


def _keep_resize_10_semantics(proto: onnx.ModelProto) -> None:
    """Upsample and Resize-10 map output to input coordinates as `asymmetric` (nearest: `floor`);
    the converter leaves Resize-11's defaults (`half_pixel`, `round_prefer_floor`) in their place,
    which moves every pixel: state the old behaviour on each Resize it made."""
    for node in proto.graph.node:
        if node.op_type != "Resize":
            continue
        present = {a.name for a in node.attribute}
        if "coordinate_transformation_mode" not in present:
            node.attribute.append(helper.make_attribute("coordinate_transformation_mode", "asymmetric"))
        if "nearest_mode" not in present:
            node.attribute.append(helper.make_attribute("nearest_mode", "floor"))


def _culprit(proto: onnx.ModelProto, message: str) -> str:
    """The converter's message (its failed check, without the C++ source location), led by the
    nodes it is about: those of the op type it names, else those with the attribute it names."""
    lines = message.strip().splitlines()
    detail = lines[-1].split("failed: ", 1)[-1] if lines else "the converter failed"
    attribute_named = re.search(r"Attribute (\w+)", detail)
    nodes = list(enumerate(proto.graph.node))
    culprits = ([(i, n) for i, n in nodes if re.search(rf"\b{n.op_type}\b", message)]
                or [(i, n) for i, n in nodes if attribute_named and any(a.name == attribute_named.group(1)
                                                                        for a in n.attribute)])
    if not culprits:
        return detail
    ops = ", ".join(dict.fromkeys(n.op_type for _, n in culprits))
    labels = [node_label(n, i) for i, n in culprits]
    return f"{ops} ({'node' if len(labels) == 1 else 'nodes'} {', '.join(labels)}): {detail}"


def with_inferred_shapes(proto: onnx.ModelProto, label: str) -> onnx.ModelProto:
    """`proto` with the type and shape of every tensor inferred (`value_info`) where it can be.

    Strict inference stops at the first node it cannot infer, which onnx's own inference of
    some function bodies does for valid models: then the shapes are inferred leniently, and the
    op mapping's checks (and the GE verifiers) judge the model."""
    try:
        return shape_inference.infer_shapes(proto, check_type=True, strict_mode=True, data_prop=True)
    except shape_inference.InferenceError as error:
        _log.warning("ONNX model '%s': shape inference failed (%s); importing with the shapes it could infer",
                     label, str(error).strip().splitlines()[0])
        return shape_inference.infer_shapes(proto, data_prop=True)
