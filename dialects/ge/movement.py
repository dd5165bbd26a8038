"""Data movement: reshapes and views, transposes, concatenation and splits, slices, gathers and
scatters, padding, tiling, shape."""
from __future__ import annotations

import math
from typing import ClassVar, Sequence

from xdsl.dialects.builtin import DenseArrayBase, Float64Type, FloatAttr, I64, IntegerAttr, StringAttr, UnitAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (VarConstraint, base, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def,
                       traits_def, var_operand_def, var_result_def)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dfir.core.shape_arith import slice_bounds
from dfir.dialects.ge.base import ShapedOp
from dfir.dialects.ge.traits import View
from dfir.dialects.ge_shapes import (broadcast_dims, check_count, check_min, dim_shift, dim_sum, element_range,
                                     format_shape, intersect_dims, known_operands, normalize_axes, normalize_axis,
                                     prop_int, prop_ints, require_index, require_number, require_same_element_types,
                                     slice_dim, slice_params)
from dfir.dialects.ge_types import DimRange, GeTensorType

__all__ = ["ConcatOp", "ExpandOp", "FlattenOp", "GatherOp", "OPS", "PadOp", "ReshapeOp", "SCATTER_REDUCTIONS",
           "ScatterElementsOp", "ShapeOp", "SliceOp", "SplitOp", "SqueezeOp", "TileOp", "TransposeOp", "TriluOp",
           "UnsqueezeOp"]


@irdl_op_definition
class ReshapeOp(ShapedOp):
    """The input's elements in a new shape, as ONNX Reshape (allowzero = 0) defines it.

    In the target `shape`, 0 copies the input dimension at the same index and one -1 takes
    whatever size keeps the element count; when the counts are static they must agree.

        %y = ge.reshape %x to [0, -1] : !ge.tensor<[2, 3, 4], f32> -> !ge.tensor<[2, 12], f32>
    """

    name = "ge.reshape"

    input = operand_def(GeTensorType)
    shape = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure(), View())

    assembly_format = "$input `to` $shape attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, shape: Sequence[int], result_type: GeTensorType):
        super().__init__(operands=[input], properties={"shape": DenseArrayBase.from_list(i64, shape)},
                         result_types=[result_type])

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (source,) = operand_types
        target = list(properties["shape"].get_values())
        _check_reshape_target(source, target)
        dims = [source.dims[i] if s == 0 else DimRange.fixed(s) for i, s in enumerate(target) if s != -1]
        if -1 in target:
            dims.insert(target.index(-1), _inferred_reshape_dim(source, target, element_range(dims)))
        elif element_range(dims).intersect(element_range(source.dims)) is None:
            raise VerifyException(f"ge.reshape: cannot reshape {format_shape(source)} "
                                  f"({element_range(source.dims)} elements) to {target} "
                                  f"({element_range(dims)} elements)")
        return [source.with_dims(dims)]


def _check_reshape_target(source: GeTensorType, target: list[int]) -> None:
    if any(s < -1 for s in target):
        raise VerifyException(f"ge.reshape: target shape entries must be >= -1, got {target}")
    if target.count(-1) > 1:
        raise VerifyException(f"ge.reshape: target shape {target} has more than one -1")
    copies = [i for i, s in enumerate(target) if s == 0 and i >= source.rank]
    if copies:
        raise VerifyException(f"ge.reshape: target shape {target} copies dimension {copies[0]} "
                              f"(a 0 at index {copies[0]}) but the input {format_shape(source)} has "
                              f"rank {source.rank}")


def _inferred_reshape_dim(source: GeTensorType, target: list[int], known: DimRange) -> DimRange:
    """The range of the -1 dimension: the source count divided by the other dimensions' count.

    With ranges, a copied dimension (a 0) is the same size on both sides and cancels, so
    `[-1, 8, 1, 1] to [0, -1]` gives 8, not -1: the -1 is the count of the dimensions that are
    not copied divided by the fixed target entries.
    """
    total = element_range(source.dims)
    if total.is_fixed and known.is_fixed:
        if known.lo == 0:
            raise VerifyException(f"ge.reshape: cannot reshape {format_shape(source)} to {target}: the size "
                                  "of -1 is ambiguous when the other dimensions hold 0 elements")
        if total.lo % known.lo:
            raise VerifyException(f"ge.reshape: cannot reshape {format_shape(source)} ({total} elements) "
                                  f"to {target}: {total} is not a multiple of {known}")
        return DimRange.fixed(total.lo // known.lo)
    copied = {i for i, s in enumerate(target) if s == 0}
    rest = element_range([d for i, d in enumerate(source.dims) if i not in copied])
    fixed = math.prod(s for s in target if s > 0)
    return DimRange(-(-rest.lo // fixed), None if rest.hi is None else rest.hi // fixed)


@irdl_op_definition
class TransposeOp(ShapedOp):
    """The input with its dimensions permuted: result dimension i is input dimension `perm[i]`.

        %y = ge.transpose %x perm [0, 2, 1] : !ge.tensor<[-1, 3, 4], f32> -> !ge.tensor<[-1, 4, 3], f32>
    """

    name = "ge.transpose"

    input = operand_def(GeTensorType)
    perm = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure(), View())

    assembly_format = "$input `perm` $perm attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        perm = prop_ints(properties, "perm")
        if sorted(perm) != list(range(x.rank)):
            raise VerifyException(f"{cls.name}: perm {perm} is not a permutation of the {x.rank} "
                                  f"dimensions of {format_shape(x)}")
        return [x.with_dims([x.dims[p] for p in perm])]


@irdl_op_definition
class ConcatOp(ShapedOp):
    """The operands joined along `axis`; other dimensions must agree. The `axis` range is the sum
    of the operands' ranges.

        %y = ge.concat %a, %b axis 1 : (!ge.tensor<[-1, 3], f32>, !ge.tensor<[-1, 1:4], f32>) -> !ge.tensor<[-1, 4:7], f32>
    """

    name = "ge.concat"

    inputs = var_operand_def(GeTensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$inputs `axis` $axis attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        if not operand_types:
            raise VerifyException(f"{cls.name}: needs at least one operand")
        first = operand_types[0]
        require_same_element_types(cls.name, operand_types)
        for i, t in enumerate(operand_types):
            if t.rank != first.rank:
                raise VerifyException(f"{cls.name}: operand {i} {format_shape(t)} has rank {t.rank} but operand 0 "
                                      f"{format_shape(first)} has rank {first.rank}")
        axis = normalize_axis(cls.name, prop_int(properties, "axis"), first)
        dims = list(first.dims)
        for i, t in enumerate(operand_types[1:], 1):
            for d in range(first.rank):
                if d != axis:
                    dims[d] = intersect_dims(cls.name, f"operand {i} {format_shape(t)} differs from "
                                              f"{format_shape(first)} in dimension {d}", dims[d], t.dims[d])
        dims[axis] = dim_sum([t.dims[axis] for t in operand_types])
        return [first.with_dims(dims)]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        known = known_operands(operand_values, len(operand_types))
        if None in known or any(t.rank != 1 for t in operand_types):
            return ()
        return [tuple(v for values in known for v in values)]


@irdl_op_definition
class SplitOp(ShapedOp):
    """The input cut along `axis` into pieces of `sizes`; one size may be -1 (the rest).

        %a, %b = ge.split %x axis 1 sizes [1, -1] : !ge.tensor<[2, 5], f32> -> !ge.tensor<[2, 1], f32>, !ge.tensor<[2, 4], f32>
    """

    name = "ge.split"

    input = operand_def(GeTensorType)
    axis = prop_def(IntegerAttr[I64])
    sizes = prop_def(DenseArrayBase.constr(i64))
    outputs = var_result_def(GeTensorType)

    traits = traits_def(Pure(), View())

    assembly_format = "$input `axis` $axis `sizes` $sizes attr-dict `:` type($input) `->` type($outputs)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        axis = normalize_axis(cls.name, prop_int(properties, "axis"), x)
        sizes = prop_ints(properties, "sizes")
        if not sizes:
            raise VerifyException(f"{cls.name}: sizes must not be empty")
        if any(s < -1 for s in sizes) or sizes.count(-1) > 1:
            raise VerifyException(f"{cls.name}: sizes must be >= 0 with at most one -1, got {sizes}")
        known = sum(s for s in sizes if s != -1)
        total = x.dims[axis]
        if -1 in sizes:
            if total.hi is not None and total.hi < known:
                raise VerifyException(f"{cls.name}: sizes {sizes} need at least {known} elements but "
                                      f"dimension {axis} of {format_shape(x)} is {total}")
            rest = dim_shift(total, -known)
        elif not total.contains(known):
            raise VerifyException(f"{cls.name}: sizes {sizes} sum to {known} but dimension {axis} of "
                                  f"{format_shape(x)} is {total}")
        pieces = [rest if s == -1 else DimRange.fixed(s) for s in sizes]
        return [x.with_dims([*x.dims[:axis], piece, *x.dims[axis + 1:]]) for piece in pieces]


@irdl_op_definition
class SliceOp(ShapedOp):
    """Elements `starts[i]:ends[i]:steps[i]` along `axes[i]`, as ONNX Slice (negative indices
    count from the end, bounds clamp, steps may be negative).

        %y = ge.slice %x starts [1] ends [-1] axes [1] steps [1] : !ge.tensor<[2, 1:10], f32> -> !ge.tensor<[2, 0:8], f32>
    """

    name = "ge.slice"

    input = operand_def(GeTensorType)
    starts = prop_def(DenseArrayBase.constr(i64))
    ends = prop_def(DenseArrayBase.constr(i64))
    axes = prop_def(DenseArrayBase.constr(i64))
    steps = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure(), View())

    assembly_format = ("$input `starts` $starts `ends` $ends `axes` $axes `steps` $steps attr-dict `:` "
                       "type($input) `->` type($result)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        dims = list(x.dims)
        for axis, start, end, step in slice_params(cls.name, x, properties):
            dims[axis] = slice_dim(dims[axis], start, end, step)
        return [x.with_dims(dims)]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        (x,) = operand_types
        (known,) = known_operands(operand_values, 1)
        if known is None or x.rank != 1:
            return ()
        ((_, start, end, step),) = slice_params(cls.name, x, properties)
        return [tuple(known[slice_bounds(len(known), start, end, step)])]


@irdl_op_definition
class GatherOp(ShapedOp):
    """Entries of `input` along `axis` at `indices` (i32 or i64; negative counts from the end).
    The result shape is `input[:axis] + indices + input[axis + 1:]`.

        %y = ge.gather %x, %i axis 0 : (!ge.tensor<[100, 16], f32>, !ge.tensor<[-1, 8], i64>) -> !ge.tensor<[-1, 8, 16], f32>
    """

    name = "ge.gather"

    input = operand_def(GeTensorType)
    indices = operand_def(GeTensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `,` $indices `axis` $axis attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        x, indices = operand_types
        require_index(cls.name, indices, "indices")
        axis = normalize_axis(cls.name, prop_int(properties, "axis"), x)
        return [x.with_dims([*x.dims[:axis], *indices.dims, *x.dims[axis + 1:]])]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        x, indices = operand_types
        known, positions = known_operands(operand_values, 2)
        if known is None or positions is None or x.rank != 1 or not all(p.is_fixed for p in positions):
            return ()
        picked = []
        for p in positions:
            if not -len(known) <= p.lo < len(known):
                raise VerifyException(f"{cls.name}: index {p.lo} is out of range for {format_shape(x)}")
            picked.append(known[p.lo])
        return [tuple(picked)]


SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")
"""How `ge.scatter_elements` combines an update with the element it lands on ("none": replaces it)."""


@irdl_op_definition
class ScatterElementsOp(ShapedOp):
    """`data` with `updates` written along `axis` (as ONNX ScatterElements): update u lands at u's
    position with its `axis` coordinate replaced by `indices[u]` (negative counts from the end),
    replacing the element there (`reduction "none"`; of duplicates, the last in row-major order
    wins) or combined with it by "add", "mul", "max" or "min". An index out of range fails the run.

        %y = ge.scatter_elements %x, %i, %u axis 1 reduction "add" : (!ge.tensor<[3, 5], f32>, !ge.tensor<[3, 2], i64>, !ge.tensor<[3, 2], f32>) -> !ge.tensor<[3, 5], f32>
    """

    name = "ge.scatter_elements"

    data = operand_def(GeTensorType)
    indices = operand_def(GeTensorType)
    updates = operand_def(GeTensorType)
    axis = prop_def(IntegerAttr[I64])
    reduction = prop_def(StringAttr)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$data `,` $indices `,` $updates `axis` $axis `reduction` $reduction attr-dict `:` "
                       "functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        data, indices, updates = operand_types
        require_index(cls.name, indices, "indices")
        require_same_element_types(cls.name, (data, updates), "data and updates")
        reduction = properties["reduction"].data
        if reduction not in SCATTER_REDUCTIONS:
            raise VerifyException(f"{cls.name}: reduction must be one of {', '.join(SCATTER_REDUCTIONS)}, "
                                  f"got '{reduction}'")
        if reduction != "none":
            require_number(cls.name, data, f"data combined by '{reduction}'")
        if not indices.rank == updates.rank == data.rank:
            raise VerifyException(f"{cls.name}: indices and updates must have the rank of data, got "
                                  f"{format_shape(indices)} and {format_shape(updates)} for {format_shape(data)}")
        axis = normalize_axis(cls.name, prop_int(properties, "axis"), data)
        for d, (i, u, x) in enumerate(zip(indices.dims, updates.dims, data.dims)):
            intersect_dims(cls.name, f"indices and updates differ in dimension {d}", i, u)
            if d != axis and x.hi is not None and i.lo > x.hi:
                raise VerifyException(f"{cls.name}: indices {format_shape(indices)} exceed data "
                                      f"{format_shape(data)} in dimension {d}, which is not the axis")
        return [data]


@irdl_op_definition
class SqueezeOp(ShapedOp):
    """The input without the size-1 dimensions `axes`.

        %y = ge.squeeze %x axes [1] : !ge.tensor<[-1, 1, 4], f32> -> !ge.tensor<[-1, 4], f32>
    """

    name = "ge.squeeze"

    input = operand_def(GeTensorType)
    axes = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure(), View())

    assembly_format = "$input `axes` $axes attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        axes = normalize_axes(cls.name, prop_ints(properties, "axes"), x)
        for a in axes:
            if not x.dims[a].contains(1):
                raise VerifyException(f"{cls.name}: dimension {a} of {format_shape(x)} is {x.dims[a]}, not 1")
        return [x.with_dims([d for i, d in enumerate(x.dims) if i not in axes])]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        return known_operands(operand_values, 1)


@irdl_op_definition
class UnsqueezeOp(ShapedOp):
    """The input with size-1 dimensions inserted so that they sit at `axes` of the result.

        %y = ge.unsqueeze %x axes [0, -1] : !ge.tensor<[3], f32> -> !ge.tensor<[1, 3, 1], f32>
    """

    name = "ge.unsqueeze"

    input = operand_def(GeTensorType)
    axes = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure(), View())

    assembly_format = "$input `axes` $axes attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        raw = prop_ints(properties, "axes")
        axes = set(normalize_axes(cls.name, raw, x, extra=len(raw)))
        rest = iter(x.dims)
        return [x.with_dims([DimRange.fixed(1) if i in axes else next(rest) for i in range(x.rank + len(axes))])]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        result_rank = operand_types[0].rank + len(prop_ints(properties, "axes"))
        return known_operands(operand_values, 1) if result_rank <= 1 else ()


_PAD_MODES = ("constant", "reflect", "edge")


@irdl_op_definition
class PadOp(ShapedOp):
    """The input padded by `pads` ([begin of each dimension..., end of each dimension...], as
    ONNX; negative entries crop) with `value` (mode "constant") or mirrored ("reflect") or
    repeated ("edge") elements.

        %y = ge.pad %x pads [0, 1, 0, 1] mode "constant" value 0.0 : !ge.tensor<[2, 3], f32> -> !ge.tensor<[2, 5], f32>
    """

    name = "ge.pad"

    input = operand_def(GeTensorType)
    pads = prop_def(DenseArrayBase.constr(i64))
    mode = prop_def(StringAttr)
    value = prop_def(FloatAttr[Float64Type])
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `pads` $pads `mode` $mode `value` $value attr-dict `:` type($input) `->` "
                       "type($result)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        pads = prop_ints(properties, "pads")
        mode = properties["mode"].data
        if mode not in _PAD_MODES:
            raise VerifyException(f"{cls.name}: mode must be one of {', '.join(_PAD_MODES)}, got '{mode}'")
        check_count(cls.name, "pads", pads, 2 * x.rank)
        dims = []
        for axis, d in enumerate(x.dims):
            delta = pads[axis] + pads[x.rank + axis]
            if d.hi is not None and d.hi + delta < 0:
                raise VerifyException(f"{cls.name}: pads {pads} crop {-delta} elements from dimension {axis} "
                                      f"of {format_shape(x)}, which has at most {d.hi}")
            dims.append(dim_shift(d, delta))
        return [x.with_dims(dims)]


@irdl_op_definition
class FlattenOp(ShapedOp):
    """The input as a matrix: dimensions before `axis` make the rows, the rest the columns;
    `axis` is in [-rank, rank], a negative one counting from the end (as ONNX Flatten).

        %y = ge.flatten %x axis 1 : !ge.tensor<[-1, 8, 4, 4], f32> -> !ge.tensor<[-1, 128], f32>
    """

    name = "ge.flatten"

    input = operand_def(GeTensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(GeTensorType)

    traits = traits_def(Pure(), View())

    assembly_format = "$input `axis` $axis attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        axis = prop_int(properties, "axis")
        if not -x.rank <= axis <= x.rank:
            raise VerifyException(f"{cls.name}: axis {axis} is out of range for {format_shape(x)} "
                                  f"(valid: {-x.rank}..{x.rank})")
        axis = axis + x.rank if axis < 0 else axis
        return [x.with_dims([element_range(x.dims[:axis]), element_range(x.dims[axis:])])]


@irdl_op_definition
class ShapeOp(ShapedOp):
    """The input's dimensions as a rank-1 i64 tensor. Its values are known as ranges (those of
    the input's dimensions), which lets shape arithmetic fold when the shape is fixed.

        %s = ge.shape %x : !ge.tensor<[-1, 3, 224, 224], f32> -> !ge.tensor<[4], i64>
    """

    name = "ge.shape"

    input = operand_def(GeTensorType)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        return [GeTensorType([DimRange.fixed(x.rank)], i64)]

    @classmethod
    def infer_values(cls, operand_types, properties, operand_values):
        return [tuple(operand_types[0].dims)]


@irdl_op_definition
class ExpandOp(ShapedOp):
    """The input broadcast (numpy's rules, as ONNX Expand) against the static `shape`: a 1 in
    `shape` keeps the input's dimension, and the result has the larger rank of the two.

        %y = ge.expand %x shape [2, 1, 4] : !ge.tensor<[-1, 1], f32> -> !ge.tensor<[2, -1, 4], f32>
    """

    name = "ge.expand"

    input = operand_def(GeTensorType)
    shape = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `shape` $shape attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        shape = prop_ints(properties, "shape")
        check_min(cls.name, "shape", shape, 0)
        dims = broadcast_dims(f"{cls.name}: input", x.dims, [DimRange.fixed(s) for s in shape])
        return [x.with_dims(dims)]


@irdl_op_definition
class TileOp(ShapedOp):
    """The input repeated `repeats[i]` times along each dimension i (as ONNX Tile).

        %y = ge.tile %x repeats [1, 3] : !ge.tensor<[-1, 2], f32> -> !ge.tensor<[-1, 6], f32>
    """

    name = "ge.tile"

    input = operand_def(GeTensorType)
    repeats = prop_def(DenseArrayBase.constr(i64))
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `repeats` $repeats attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        repeats = prop_ints(properties, "repeats")
        check_count(cls.name, "repeats", repeats, x.rank)
        check_min(cls.name, "repeats", repeats, 0)
        return [x.with_dims([element_range([d, DimRange.fixed(r)]) for d, r in zip(x.dims, repeats)])]


@irdl_op_definition
class TriluOp(ShapedOp):
    """The upper (`upper`) or lower triangle of the last two dimensions, the rest zeros: element
    (i, j) is kept when `j - i >= k` (upper) or `j - i <= k` (lower), as ONNX Trilu.

        %y = ge.trilu %x k 1 upper : !ge.tensor<[-1, 4, 5], f32>
    """

    name = "ge.trilu"

    T: ClassVar = VarConstraint("T", base(GeTensorType))
    input = operand_def(T)
    k = prop_def(IntegerAttr[I64])
    upper = opt_prop_def(UnitAttr)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input `k` $k (`upper` $upper^)? attr-dict `:` type($result)"

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x,) = operand_types
        if x.rank < 2:
            raise VerifyException(f"{cls.name}: input must have rank >= 2, got {format_shape(x)}")
        return [x]


OPS = (ReshapeOp, TransposeOp, ConcatOp, SplitOp, SliceOp, GatherOp, ScatterElementsOp, SqueezeOp, UnsqueezeOp, PadOp,
       FlattenOp, ShapeOp, ExpandOp, TileOp, TriluOp)
"""The family's ops, in the order they were added."""
