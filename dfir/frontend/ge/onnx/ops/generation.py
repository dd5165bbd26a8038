"""Tensors made from shapes and positions: EyeLike and Size (constants when the shape is fixed),
Hardmax (rows of an identity matrix gathered at the arg max) and ConstantOfShape where its
result is too large to fold (its value broadcast to the shape at run time)."""
from __future__ import annotations

import math

import numpy as np
from onnx import helper, numpy_helper

from dfir.core import data_type as dt
from dfir.frontend.ge.onnx.attributes import attribute, attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter


def _eye_like(imp, node):
    x = imp.tensor(node, 0)
    if x.type.rank != 2 or -1 in x.shape:
        raise imp.node_error(node, f"the input must be a matrix of fixed shape, got shape {x.shape}")
    attrs = attributes_of(node)
    dtype = helper.tensor_dtype_to_np_dtype(attrs["dtype"]) if "dtype" in attrs else dt.to_numpy(x.dtype)
    return [imp.g.const(np.eye(*x.shape, k=attrs.get("k", 0), dtype=dtype), name=imp.name(node))]


def _size(imp, node):
    x = imp.tensor(node, 0)
    if -1 not in x.shape:
        return [imp.g.const(np.array(math.prod(x.shape), np.int64), name=imp.name(node))]
    return [imp.g.reduce_prod(imp.g.shape(x, name=imp.name(node, "/shape")), [0], name=imp.name(node))]


def _hardmax(imp, node):
    """1 at the first maximum along `axis`, 0 elsewhere."""
    x = imp.tensor(node, 0)
    rank = x.type.rank
    axis = attribute(node, "axis", -1) % max(rank, 1)
    size = x.shape[axis]
    if size == -1:
        raise imp.node_error(node, f"dimension {axis} must be fixed, got shape {x.shape}")
    g = imp.g
    positions = g.arg_max(x, axis, keep_dims=False, name=imp.name(node, "/arg_max"))
    identity = g.const(np.eye(size, dtype=dt.to_numpy(x.dtype)), name=imp.name(node, "/identity"))
    rows = g.gather(identity, positions, 0, name=imp.name(node, "/rows"))
    if axis == rank - 1:
        return [g.identity(rows, name=imp.name(node))]
    perm = [i if i < axis else rank - 1 if i == axis else i - 1 for i in range(rank)]
    return [g.transpose(rows, perm, name=imp.name(node))]


def _constant_of_shape(imp, node):
    """A fill folding leaves to run time (it holds more than `folding.MAX_FOLDED_ELEMENTS`): the
    value, a one-element tensor (0.0 when absent), `expand`ed to the shape."""
    value = attributes_of(node).get("value")
    fill = numpy_helper.to_array(value).reshape(()) if value is not None else np.array(0, np.float32)
    shape = imp.static_ints(node, 0, "the shape")
    return [imp.g.expand(imp.g.const(fill, name=imp.name(node, "/value")), shape, name=imp.name(node))]


CONVERTERS: dict[str, Converter] = {"EyeLike": _eye_like, "Size": _size, "Hardmax": _hardmax,
                                    "ConstantOfShape": _constant_of_shape}
