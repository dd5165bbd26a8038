"""Reads and writes at computed positions: GatherElements, GatherND, ScatterElements (and the older
Scatter, which conversion turns into it), ScatterND, TensorScatter, ReverseSequence and OneHot.

All but ScatterElements and OneHot are compositions over the flattened data: each index tuple
becomes a flat position (negative indices counting from the end), and then one `gather` reads, or
one `scatter_elements` writes, at those positions. An index out of range becomes the position just
past the data, which the `gather` and `scatter_elements` kernels refuse: the run fails rather than
touching a neighbouring row. These compositions need the shapes fixed at import.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx

from dfir.core import data_type as dt
from dfir.frontend.ge.onnx.attributes import attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Value
    from dfir.frontend.ge.onnx.importer import Importer


class _Positions:
    """Graph ops that turn indices into flat positions, named after the node being converted."""

    def __init__(self, imp: Importer, node: onnx.NodeProto, index_type: np.dtype):
        self.imp, self.node, self.g, self.index_type = imp, node, imp.g, np.dtype(index_type)

    def const(self, value, suffix: str) -> Value:
        return self.g.const(np.asarray(value, self.index_type), name=self.name(suffix))

    def name(self, suffix: str) -> str:
        return self.imp.name(self.node, suffix)

    def wrapped(self, indices: Value, extent) -> Value:
        """`indices` with negative ones counted from `extent` (an int, or one per last-axis entry)."""
        negative = self.g.less(indices, self.const(0, "/zero"), name=self.name("/negative"))
        from_end = self.g.add(indices, self.const(extent, "/extent"), name=self.name("/from_end"))
        return self.g.select(negative, from_end, indices, name=self.name("/wrapped"))

    def outside(self, wrapped: Value, extent) -> Value:
        """Where wrapped indices are still outside [0, extent)."""
        g = self.g
        return g.logical_or(g.less(wrapped, self.const(0, "/first"), name=self.name("/below")),
                            g.greater_equal(wrapped, self.const(extent, "/end"), name=self.name("/above")),
                            name=self.name("/outside"))

    def past_end_where(self, outside: Value, positions: Value, size: int) -> Value:
        """`positions`, with `size` (the position just past the data) where `outside` holds."""
        return self.g.select(outside, self.const(size, "/past_end"), positions, name=self.name("/positions"))

    def of_tuples(self, indices: Value, dims: list[int], batch_dims: int = 0) -> Value:
        """The flat position in the data's leading `batch_dims + K` dimensions of each index tuple
        (the last axis of `indices`, K entries, after the `batch_dims` leading batch coordinates),
        the last axis kept (of size 1: a single tuple gives a vector, not a scalar)."""
        g, k = self.g, indices.shape[-1]
        addressed = dims[batch_dims:batch_dims + k]
        strides = [int(np.prod(addressed[d + 1:])) for d in range(k)]
        wrapped = self.wrapped(indices, addressed)
        outside = self.outside(wrapped, addressed)
        within = g.reduce_sum(g.mul(wrapped, self.const(strides, "/strides"), name=self.name("/scaled")), [-1],
                              keep_dims=True, name=self.name("/within"))
        batch = np.indices(indices.shape[:-1], self.index_type)[:batch_dims]
        block = int(np.prod(addressed))
        offsets = np.ravel_multi_index(tuple(batch), dims[:batch_dims])[..., None] * block if batch_dims else 0
        flat = g.add(within, self.const(offsets, "/batch_offsets"), name=self.name("/flat"))
        any_outside = g.reduce_max(g.cast(outside, dt.from_numpy(self.index_type), name=self.name("/outside_count")),
                                   [-1], keep_dims=True, name=self.name("/any_outside"))
        return self.past_end_where(g.greater(any_outside, self.const(0, "/none_outside"), name=self.name("/refused")),
                                   flat, int(np.prod(dims[:batch_dims + k])))


def _fixed(imp: Importer, node: onnx.NodeProto, values: dict[str, Value]) -> None:
    dynamic = {what: v.shape for what, v in values.items() if -1 in v.shape}
    if dynamic:
        listed = " and ".join(f"{what} {shape}" for what, shape in dynamic.items())
        raise imp.node_error(node, f"{' and '.join(values)} shapes must be fixed, got {listed}")


def _axis(imp: Importer, node: onnx.NodeProto, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise imp.node_error(node, f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def _element_offsets(shape, strides, skip: int, index_type) -> np.ndarray:
    """The flat offset of each position of `shape` from every coordinate but `skip`."""
    grid = np.indices(shape, index_type)
    return sum((grid[d] * strides[d] for d in range(len(shape)) if d != skip), np.zeros(shape, index_type))


def _gather_elements(imp, node):
    """A `gather` from the flattened data at `index * stride` along the axis plus the constant
    offset of each index's other coordinates."""
    data, indices = imp.tensor(node, 0), imp.tensor(node, 1)
    if -1 in data.shape or -1 in indices.shape:
        raise imp.node_error(node, f"data and indices shapes must be fixed, got {data.shape} and {indices.shape}")
    axis = _axis(imp, node, attributes_of(node).get("axis", 0), data.type.rank)
    p = _Positions(imp, node, dt.to_numpy(indices.dtype))
    strides = [int(np.prod(data.shape[d + 1:])) for d in range(data.type.rank)]
    wrapped = p.wrapped(indices, data.shape[axis])
    outside = p.outside(wrapped, data.shape[axis])
    along = imp.g.mul(wrapped, p.const(strides[axis], "/stride"), name=p.name("/along"))
    in_range = imp.g.add(along, p.const(_element_offsets(indices.shape, strides, axis, p.index_type), "/offsets"),
                         name=p.name("/in_range"))
    positions = p.past_end_where(outside, in_range, int(np.prod(data.shape)))
    return [imp.g.gather(imp.g.reshape(data, [-1], name=p.name("/flat")), positions, 0, name=imp.name(node))]


def _tuple_indices(imp, node, data, indices, batch_dims: int = 0) -> int:
    """Checks GatherND / ScatterND shapes; the tuple length K."""
    _fixed(imp, node, {"data": data, "indices": indices})
    k = indices.shape[-1] if indices.type.rank else 0
    if indices.type.rank < batch_dims + 1 or not 1 <= k <= data.type.rank - batch_dims:
        raise imp.node_error(node, f"indices {indices.shape} must end in a tuple of 1..{data.type.rank - batch_dims} "
                                   f"entries after {batch_dims} batch dimensions")
    if indices.shape[:batch_dims] != data.shape[:batch_dims]:
        raise imp.node_error(node, f"the {batch_dims} batch dimensions of data {data.shape} and indices "
                                   f"{indices.shape} differ")
    return k


def _gather_nd(imp, node):
    """A `gather` of rows of the data viewed as [positions, the rest] at the tuples' flat positions."""
    data, indices = imp.tensor(node, 0), imp.tensor(node, 1)
    batch_dims = attributes_of(node).get("batch_dims", 0)
    k = _tuple_indices(imp, node, data, indices, batch_dims)
    p = _Positions(imp, node, dt.to_numpy(indices.dtype))
    rest = data.shape[batch_dims + k:]
    rows = imp.g.reshape(data, [int(np.prod(data.shape[:batch_dims + k])), int(np.prod(rest))], name=p.name("/rows"))
    # [indices' leading dimensions..., 1, rest]: a tuple's position keeps its axis
    picked = imp.g.gather(rows, p.of_tuples(indices, data.shape, batch_dims), 0, name=p.name("/picked"))
    return [imp.g.reshape(picked, [*indices.shape[:-1], *rest], name=imp.name(node))]


def _scatter_elements(imp, node):
    attrs = attributes_of(node)
    return [imp.g.scatter_elements(imp.tensor(node, 0), imp.tensor(node, 1), imp.tensor(node, 2), attrs.get("axis", 0),
                                   attrs.get("reduction", "none"), name=imp.name(node))]


def _scatter_nd(imp, node):
    """A `scatter_elements` along axis 0 of the data viewed as [positions, the rest]: each row of
    the updates lands whole at its tuple's flat position."""
    data, indices, updates = (imp.tensor(node, i) for i in range(3))
    k = _tuple_indices(imp, node, data, indices)
    rest = data.shape[k:]
    expected = [*indices.shape[:-1], *rest]
    if updates.shape != expected:
        raise imp.node_error(node, f"updates must have shape {expected} (indices {indices.shape}, data "
                                   f"{data.shape}), got {updates.shape}")
    p, g = _Positions(imp, node, dt.to_numpy(indices.dtype)), imp.g
    count, width = int(np.prod(indices.shape[:-1])), int(np.prod(rest))
    positions = g.reshape(p.of_tuples(indices, data.shape), [count, 1], name=p.name("/column"))
    rows = g.scatter_elements(g.reshape(data, [int(np.prod(data.shape[:k])), width], name=p.name("/rows")),
                              g.expand(positions, [count, width], name=p.name("/targets")),
                              g.reshape(updates, [count, width], name=p.name("/update_rows")), 0,
                              attributes_of(node).get("reduction", "none"), name=p.name("/scattered"))
    return [g.reshape(rows, data.shape, name=imp.name(node))]


def _tensor_scatter(imp, node):
    """A `scatter_elements` along the sequence axis: update position i of batch b lands at
    `write_indices[b] + i` (modulo the cache length in "circular" mode; in "linear" mode one past
    the cache fails the run)."""
    attrs = attributes_of(node)
    cache, update, write = imp.tensor(node, 0), imp.tensor(node, 1), imp.tensor(node, 2)
    _fixed(imp, node, {"past_cache": cache, "update": update})
    rank, mode = cache.type.rank, attrs.get("mode", "linear")
    if mode not in ("linear", "circular"):
        raise imp.node_error(node, f"mode must be 'linear' or 'circular', got '{mode}'")
    axis = _axis(imp, node, attrs.get("axis", -2), rank)
    if axis == 0:
        raise imp.node_error(node, "axis 0 is the batch axis; the sequence axis must come after it")
    if update.type.rank != rank or any(u != c for d, (u, c) in enumerate(zip(update.shape, cache.shape)) if d != axis):
        raise imp.node_error(node, f"update {update.shape} must match past_cache {cache.shape} outside axis {axis}")
    p, g = _Positions(imp, node, np.int64), imp.g
    along = [1] * rank
    along[axis] = update.shape[axis]
    targets = p.const(np.arange(update.shape[axis]).reshape(along), "/sequence")
    if write is not None:
        starts = g.reshape(write, [-1] + [1] * (rank - 1), name=p.name("/starts"))
        targets = g.add(g.cast(starts, dt.DT_INT64, name=p.name("/starts64")) if write.dtype != dt.DT_INT64
                        else starts, targets, name=p.name("/targets"))
    if mode == "circular":
        targets = g.mod(targets, p.const(cache.shape[axis], "/length"), name=p.name("/wrapped"))
    targets = g.expand(targets, update.shape, name=p.name("/indices"))
    return [g.scatter_elements(cache, targets, update, axis, name=imp.name(node))]


def _reverse_sequence(imp, node):
    """A `gather` from the flattened input: at time t < lens[b] of batch b it reads time
    `lens[b] - 1 - t`, elsewhere time t; a length beyond the time axis fails the run."""
    attrs = attributes_of(node)
    x, lens = imp.tensor(node, 0), imp.tensor(node, 1)
    _fixed(imp, node, {"input": x})
    rank = x.type.rank
    batch_axis, time_axis = (_axis(imp, node, attrs.get(a, d), rank) for a, d in (("batch_axis", 1), ("time_axis", 0)))
    if batch_axis == time_axis:
        raise imp.node_error(node, f"batch_axis and time_axis must differ, both are {batch_axis}")
    p, g = _Positions(imp, node, dt.to_numpy(lens.dtype)), imp.g
    batch_shape, time_shape = [1] * rank, [1] * rank
    batch_shape[batch_axis], time_shape[time_axis] = -1, x.shape[time_axis]
    length = g.reshape(lens, batch_shape, name=p.name("/lengths"))
    time = p.const(np.arange(x.shape[time_axis]).reshape(time_shape), "/time")
    reversed_time = g.sub(g.sub(length, p.const(1, "/one"), name=p.name("/last")), time, name=p.name("/reversed"))
    source = g.select(g.less(time, length, name=p.name("/within")), reversed_time, time, name=p.name("/source"))
    strides = [int(np.prod(x.shape[d + 1:])) for d in range(rank)]
    in_range = g.add(g.mul(source, p.const(strides[time_axis], "/stride"), name=p.name("/along")),
                     p.const(_element_offsets(x.shape, strides, time_axis, p.index_type), "/offsets"),
                     name=p.name("/in_range"))
    outside = g.greater_equal(source, p.const(x.shape[time_axis], "/end"), name=p.name("/too_long"))
    positions = p.past_end_where(outside, in_range, int(np.prod(x.shape)))
    return [g.gather(g.reshape(x, [-1], name=p.name("/flat")), positions, 0, name=imp.name(node))]


def _one_hot(imp, node):
    """`select(indices == position, on, off)` along the new axis, the indices compared in their own
    type (negative ones counting from the end; others out of range are all off), `depth` known at
    import."""
    indices, values = imp.tensor(node, 0), imp.tensor(node, 2)
    depth = imp.static(node, 1, "depth").array.reshape(-1)
    if depth.size != 1 or depth[0] < 1:
        raise imp.node_error(node, f"depth must be one value >= 1, got {depth.tolist()}")
    depth = int(depth[0])
    rank = indices.type.rank
    axis = attributes_of(node).get("axis", -1)
    if not -rank - 1 <= axis <= rank:
        raise imp.node_error(node, f"axis {axis} is out of range for rank {rank} + 1")
    axis %= rank + 1
    if values.shape not in ([2], [-1]):
        raise imp.node_error(node, f"values must hold [off, on], got shape {values.shape}")
    p, g = _Positions(imp, node, dt.to_numpy(indices.dtype)), imp.g
    wrapped = p.wrapped(indices, depth)
    along = [1] * (rank + 1)
    along[axis] = depth
    hot = g.equal(g.unsqueeze(wrapped, [axis], name=p.name("/expanded")),
                  p.const(np.arange(depth).reshape(along), "/classes"), name=p.name("/hot"))
    on, off = (g.gather(values, g.const(np.array(i, np.int64), name=p.name(f"/at{i}")), 0, name=p.name(f"/{what}"))
               for i, what in ((1, "on"), (0, "off")))
    return [g.select(hot, on, off, name=imp.name(node))]


CONVERTERS: dict[str, Converter] = {
    "GatherElements": _gather_elements, "GatherND": _gather_nd, "ScatterElements": _scatter_elements,
    "ScatterND": _scatter_nd, "TensorScatter": _tensor_scatter, "ReverseSequence": _reverse_sequence,
    "OneHot": _one_hot,
}
