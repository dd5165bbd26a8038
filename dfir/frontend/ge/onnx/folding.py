"""Folding: values computed at import time.

1. Nodes that compute shapes (Constant, Shape, Gather, Slice, Concat, Unsqueeze, Squeeze,
   Reshape, Cast, Identity, integer arithmetic, Where) have a folder here that works on symbols too:
   the dimensions of dynamic inputs are `Dim`s. A folder returns None where it cannot (a
   symbolic entry where a number is needed): the node is then converted into graph ops.
2. Any other deterministic node of the default domain whose inputs are all numbers (constants,
   static shapes, values folded before it: ConstantOfShape, Range, Expand or Tile of constants,
   comparisons and logic of constants...) is evaluated by onnx's reference implementation
   (`onnx.reference.ReferenceEvaluator`), unless a result would exceed `MAX_FOLDED_ELEMENTS`
   (not computed at all where shape inference says so). Such a node is converted if it can be
   (a ConstantOfShape becomes a fill at run time), else refused naming it.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from dfir.core.shape_arith import slice_bounds
from dfir.frontend.ge.onnx.attributes import attribute, attributes_of
from dfir.frontend.ge.onnx.known import Known

if TYPE_CHECKING:
    from dfir.frontend.ge.onnx.importer import Importer

Folder = Callable[["Importer", onnx.NodeProto, list], "Known | None"]


def _fold_constant(imp: Importer, node: onnx.NodeProto, inputs: list) -> Known:
    attrs = attributes_of(node)
    if "value" in attrs:
        return Known.of(numpy_helper.to_array(attrs["value"]))
    for key, dtype in (("value_float", np.float32), ("value_floats", np.float32),
                       ("value_int", np.int64), ("value_ints", np.int64)):
        if key in attrs:
            return Known.of(np.array(attrs[key], dtype))
    raise imp.node_error(node, f"only tensor, float and int values are supported, got {sorted(attrs)}")


def _fold_identity(imp, node, inputs):
    return inputs[0]


def _fold_shape(imp: Importer, node: onnx.NodeProto, inputs: list) -> Known:
    dims = imp.dims(node.input[0])
    start, end = attribute(node, "start", 0), attribute(node, "end", None)
    picked = dims[slice_bounds(len(dims), start, len(dims) if end is None else end, 1)]
    return Known.of(np.array(picked, dtype=object).reshape(len(picked)), np.int64)


def _fold_cast(imp, node, inputs):
    (x,) = inputs
    to = helper.tensor_dtype_to_np_dtype(attribute(node, "to"))
    if x.is_constant:
        return Known.of(x.array.astype(to))
    return Known(x.array, to) if to.kind in "iu" else None


def _fold_cast_like(imp, node, inputs):
    """CastLike reads only the element type of its second input, which shape inference gives."""
    target = imp.inferred_type(node.input[1])
    if target is None:
        return None
    cast = onnx.NodeProto()
    cast.CopyFrom(node)
    del cast.attribute[:]
    cast.attribute.append(helper.make_attribute("to", target))
    return _fold_cast(imp, cast, inputs[:1])


def _fold_gather(imp, node, inputs):
    x, indices = inputs
    if not indices.is_constant:
        return None
    axis = attribute(node, "axis", 0) % max(x.array.ndim, 1)
    size = x.array.shape[axis]
    if ((indices.array < -size) | (indices.array >= size)).any():
        raise imp.node_error(node, f"indices {indices.ints()} are out of range for {size} entries")
    return Known.of(np.asarray(np.take(x.array, indices.array, axis=axis), x.array.dtype), x.dtype)


def _fold_slice(imp, node, inputs):
    x, starts, ends, axes, steps = (inputs + [None, None])[:5]
    if not all(k is None or k.is_constant for k in (starts, ends, axes, steps)):
        return None
    index = [slice(None)] * x.array.ndim
    starts, ends = starts.ints(), ends.ints()
    axes = axes.ints() if axes is not None else list(range(len(starts)))
    steps = steps.ints() if steps is not None else [1] * len(starts)
    for axis, start, end, step in zip(axes, starts, ends, steps):
        index[axis] = slice_bounds(x.array.shape[axis], start, end, step)
    return Known.of(x.array[tuple(index)], x.dtype)


def _fold_concat(imp, node, inputs):
    return Known.of(np.concatenate([k.array for k in inputs], axis=attribute(node, "axis")), inputs[0].dtype)


def _fold_unsqueeze(imp, node, inputs):
    x, axes = inputs
    return Known.of(np.expand_dims(x.array, tuple(axes.ints())), x.dtype) if axes.is_constant else None


def _fold_squeeze(imp, node, inputs):
    x, *axes = inputs
    if axes and axes[0] is not None and not axes[0].is_constant:
        return None
    axes = tuple(axes[0].ints()) if axes and axes[0] is not None else None
    return Known.of(np.squeeze(x.array, axis=axes), x.dtype)


def _fold_reshape(imp, node, inputs):
    x, shape = inputs
    if not shape.is_constant:
        return None
    target = [x.array.shape[i] if s == 0 else s for i, s in enumerate(shape.ints())]
    return Known.of(x.array.reshape(target), x.dtype)


def _fold_arithmetic(combine: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Folder:
    def fold(imp, node, inputs):
        x, y = inputs
        try:
            result = combine(x.array, y.array)
        except TypeError:  # a symbolic dimension in the arithmetic: compute it at run time
            return None
        return Known.of(np.asarray(result), np.result_type(x.dtype, y.dtype))
    return fold


def _truncating_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "f" or y.dtype.kind == "f":
        return x / y
    quotient = np.floor_divide(x, y)
    return quotient + ((quotient * y != x) & ((x < 0) != (y < 0)))


def _fold_where(imp, node, inputs):
    condition, x, y = inputs
    if not condition.is_constant:
        return None
    return Known.of(np.asarray(np.where(condition.array, x.array, y.array)), np.result_type(x.dtype, y.dtype))


FOLDERS: dict[str, Folder] = {
    "Constant": _fold_constant, "Identity": _fold_identity, "Shape": _fold_shape, "Cast": _fold_cast,
    "Gather": _fold_gather, "Slice": _fold_slice, "Concat": _fold_concat, "Unsqueeze": _fold_unsqueeze,
    "Squeeze": _fold_squeeze, "Reshape": _fold_reshape,
    "Add": _fold_arithmetic(np.add), "Sub": _fold_arithmetic(np.subtract),
    "Mul": _fold_arithmetic(np.multiply), "Div": _fold_arithmetic(_truncating_divide),
    "Where": _fold_where, "CastLike": _fold_cast_like,
}
"""Op type -> how it computes its value at import time when its inputs are known (None: it cannot)."""

TYPE_ONLY_INPUTS = {"Shape": frozenset({0}), "CastLike": frozenset({1})}
"""Op type -> the inputs whose shape or element type its folder reads, not their values."""


NOT_FOLDED = frozenset({"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli",
                        "Multinomial", "Dropout"})
"""Ops never evaluated at import: their results are random (Dropout is random in training mode)."""

MAX_FOLDED_ELEMENTS = 1 << 24
"""A value folded by evaluation holds at most this many elements (it becomes a weight)."""


def evaluable(node: onnx.NodeProto) -> bool:
    """Whether `node` may be evaluated at import when its inputs are numbers (step 2)."""
    return (node.domain in ("", "ai.onnx") and node.op_type not in NOT_FOLDED
            and not any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute))


def evaluate(imp: Importer, node: onnx.NodeProto, inputs: list[Known | None], required: bool) -> list[Known] | None:
    """The outputs of `node` computed by the reference implementation from numeric `inputs`
    (None: a result is too large to keep as a weight, or the evaluation failed and the node is
    not `required` to fold: it has a converter). A failure of a required fold is a GeError
    naming the node."""
    if any(_inferred_size(imp, name) > MAX_FOLDED_ELEMENTS for name in node.output if name):
        return None  # known too large before it is computed
    feeds = {name: known.array for name, known in zip(node.input, inputs) if name}
    try:
        results = ReferenceEvaluator(node, opsets={"": imp.opset}).run(None, feeds)
    except Exception as error:  # the reference ops raise whatever numpy raises
        if not required:
            return None
        raise imp.node_error(node, f"cannot be computed at import from its constant inputs: "
                                   f"{type(error).__name__}: {error}") from None
    arrays = [np.asarray(r) for r in results]
    if any(a.size > MAX_FOLDED_ELEMENTS for a in arrays):
        return None
    return [Known.of(_as_declared(imp, name, a)) for name, a in zip(node.output, arrays)]


def _inferred_size(imp: Importer, name: str) -> int:
    """How many elements shape inference gives tensor `name` (0 where a dimension is not fixed)."""
    tensor_type = imp.types.get(name)
    dims = list(tensor_type.shape.dim) if tensor_type is not None and tensor_type.HasField("shape") else [None]
    return math.prod(d.dim_value for d in dims) if all(d is not None and d.HasField("dim_value") for d in dims) else 0


def _as_declared(imp: Importer, name: str, array: np.ndarray) -> np.ndarray:
    """`array` in the element type shape inference gives tensor `name` (the reference ops may
    return numpy's default types)."""
    elem = imp.inferred_type(name)
    return array if elem is None else array.astype(helper.tensor_dtype_to_np_dtype(elem), copy=False)


def numeric_tensors(proto: onnx.ModelProto, static_shape: Callable[[onnx.NodeProto], bool]) -> set[str]:
    """The tensors that folding computes as numbers, as far as the model says before the walk:
    initializers, Constant outputs, Shape outputs where `static_shape(node)`, and the outputs of
    nodes of `FOLDERS` or `evaluable` ones whose inputs are all such tensors."""
    numeric = {t.name for t in proto.graph.initializer}
    for node in proto.graph.node:
        inputs_numeric = all(not i or i in numeric for i in node.input)
        read = [i for position, i in enumerate(node.input) if position not in TYPE_ONLY_INPUTS.get(node.op_type, ())]
        if (node.op_type == "Constant" or (node.op_type == "Shape" and static_shape(node))
                or (node.op_type == "CastLike" and all(not i or i in numeric for i in read))
                or (inputs_numeric and (node.op_type in FOLDERS or evaluable(node)))):
            numeric.update(o for o in node.output if o)
    return numeric
