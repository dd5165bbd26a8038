"""Data movement kernels: reshapes, transposes, joins, splits, slices, gathers, pads and shape."""
from __future__ import annotations

import numpy as np
from dfir.runtime.ge.kernels.kernel import Kernel

from dfir.core.errors import GeError
from dfir.core.shape_arith import element_count, slice_bounds


def _reshape(args, attrs):
    (x,) = args
    shape = [x.shape[i] if size == 0 else size for i, size in enumerate(attrs["shape"])]
    return (x.reshape(shape),)


def _transpose(args, attrs):
    return (np.transpose(args[0], attrs["perm"]),)


def _concat(args, attrs):
    return (np.concatenate(args, axis=attrs["axis"]),)


def _split(args, attrs):
    (x,) = args
    axis, sizes = attrs["axis"] % x.ndim, list(attrs["sizes"])
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[axis] - sum(s for s in sizes if s != -1)
    if min(sizes) < 0 or sum(sizes) != x.shape[axis]:
        raise GeError(f"split: sizes {attrs['sizes']} do not cut dimension {axis} of {list(x.shape)}")
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


def _slice(args, attrs):
    (x,) = args
    index = [slice(None)] * x.ndim
    for axis, start, end, step in zip(attrs["axes"], attrs["starts"], attrs["ends"], attrs["steps"]):
        index[axis % x.ndim] = slice_bounds(x.shape[axis % x.ndim], start, end, step)
    return (x[tuple(index)],)


def _gather(args, attrs):
    x, indices = args
    axis = attrs["axis"] % x.ndim
    size = x.shape[axis]
    outside = (indices < -size) | (indices >= size)
    if outside.any():
        raise GeError(f"gather: index {indices[outside].flat[0]} is out of range for dimension {axis} "
                      f"of {list(x.shape)}")
    return (np.asarray(np.take(x, indices, axis=axis)),)  # a scalar index of a vector gives a numpy scalar


_SCATTER_COMBINE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _scatter_elements(args, attrs):
    data, indices, updates = args
    axis = attrs["axis"] % data.ndim
    _check_scatter_shapes(data.shape, indices.shape, updates.shape, axis)
    size = data.shape[axis]
    outside = (indices < -size) | (indices >= size)
    if outside.any():
        raise GeError(f"scatter_elements: index {indices[outside].flat[0]} is out of range for dimension {axis} "
                      f"of {list(data.shape)}")
    target = list(np.indices(indices.shape))
    target[axis] = indices % size
    positions = np.ravel_multi_index(tuple(target), data.shape).ravel()
    values = updates.ravel()
    result = data.copy()
    combine = _SCATTER_COMBINE.get(attrs["reduction"])
    if combine is not None:
        combine.at(result.reshape(-1), positions, values)
        return (result,)
    _, first_from_end = np.unique(positions[::-1], return_index=True)
    last = len(positions) - 1 - first_from_end  # of updates landing on one element, the last wins
    result.reshape(-1)[positions[last]] = values[last]
    return (result,)


def _check_scatter_shapes(data, indices, updates, axis: int) -> None:
    if indices != updates:
        raise GeError(f"scatter_elements: indices {list(indices)} and updates {list(updates)} differ in shape")
    for d, (i, x) in enumerate(zip(indices, data)):
        if d != axis and i > x:
            raise GeError(f"scatter_elements: indices {list(indices)} exceed data {list(data)} in dimension {d}, "
                          "which is not the axis")


def _squeeze(args, attrs):
    (x,) = args
    axes = tuple(a % x.ndim for a in attrs["axes"])
    for a in axes:
        if x.shape[a] != 1:
            raise GeError(f"squeeze: dimension {a} of {list(x.shape)} is {x.shape[a]}, not 1")
    return (np.squeeze(x, axis=axes),)


def _unsqueeze(args, attrs):
    return (np.expand_dims(args[0], tuple(attrs["axes"])),)


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "edge"}


def _pad(args, attrs):
    (x,) = args
    begins, ends = attrs["pads"][:x.ndim], attrs["pads"][x.ndim:]
    cropped = x[tuple(slice(max(0, -b), size - max(0, -e)) for b, e, size in zip(begins, ends, x.shape))]
    widths = [(max(0, b), max(0, e)) for b, e in zip(begins, ends)]
    mode = _PAD_MODES[attrs["mode"]]
    if mode == "constant":
        return (np.pad(cropped, widths, constant_values=x.dtype.type(attrs["value"])),)
    return (np.pad(cropped, widths, mode=mode),)


def _flatten(args, attrs):
    (x,) = args
    axis = attrs["axis"] + x.ndim if attrs["axis"] < 0 else attrs["axis"]
    return (x.reshape(element_count(x.shape[:axis]), element_count(x.shape[axis:])),)


def _shape(args, attrs):
    return (np.array(args[0].shape, dtype=np.int64),)


def _expand(args, attrs):
    (x,) = args
    return (np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(attrs["shape"]))),)


def _tile(args, attrs):
    return (np.tile(args[0], attrs["repeats"]),)


def _trilu(args, attrs):
    (x,) = args
    rows, cols = x.shape[-2:]
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    keep = offset >= attrs["k"] if attrs.get("upper", False) else offset <= attrs["k"]
    return (np.where(keep, x, x.dtype.type(0)),)


KERNELS: dict[str, Kernel] = {
    "reshape": _reshape,
    "transpose": _transpose,
    "concat": _concat,
    "split": _split,
    "slice": _slice,
    "gather": _gather,
    "scatter_elements": _scatter_elements,
    "squeeze": _squeeze,
    "unsqueeze": _unsqueeze,
    "pad": _pad,
    "flatten": _flatten,
    "shape": _shape,
    "expand": _expand,
    "tile": _tile,
    "trilu": _trilu,
}
