"""What the `ge` ops' shape functions share: checks of operand types and properties that raise a
VerifyException naming the op and the shapes, and the shape arithmetic of `dfir.core.shape_arith`
over `DimRange`s (broadcasting, sliding windows, slices, known values).

Every check takes the op's name first, which opens its message:

    require_rank("ge.conv2d", x, 4)  # VerifyException: ge.conv2d: input must have rank 4, got [2, 3]
"""
from __future__ import annotations

from collections import Counter
from functools import reduce
from typing import Mapping, Sequence

from xdsl.dialects.builtin import AnyFloat, IntegerType, i1, i32, i64
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

from dfir.core.shape_arith import Window, product_range, shift_range, slice_length_range, sum_range
from dfir.dialects.ge_types import DimRange, GeTensorType, format_dims

__all__ = ["MAX_KNOWN_ELEMENTS", "ValueRanges", "broadcast_dims", "check_count", "check_min",
           "check_window_properties", "dim_shift", "dim_sum", "element_range", "format_shape", "intersect_dims",
           "is_compatible", "known_operands", "normalize_axes", "normalize_axis", "prop_flag", "prop_int",
           "prop_ints", "require_float", "require_image_format", "require_index", "require_rank",
           "require_same_element_type", "require_same_element_types", "slice_dim", "slice_params", "spatial_rank",
           "value_binary", "window_dim", "windows_of", "require_bool", "require_integer", "require_number"]


def format_shape(t: GeTensorType) -> str:
    return format_dims(t.dims)


# Types and properties ---------------------------------------------------------------------------

def is_compatible(declared: Attribute, inferred: GeTensorType) -> bool:
    """Whether a declared result type can hold what the shape function inferred.

    As MLIR's compatible shapes: same element type, format and rank, and every pair of dimension
    ranges shares a size. A declared type may be narrower than the inferred one (the shape
    function's ranges are sound but not always tight, e.g. after a reshape with -1).
    """
    return (isinstance(declared, GeTensorType) and declared.element_type == inferred.element_type
            and declared.format == inferred.format and declared.rank == inferred.rank
            and all(d.intersect(i) is not None for d, i in zip(declared.dims, inferred.dims)))


def prop_ints(properties: Mapping[str, Attribute], key: str) -> list[int]:
    return list(properties[key].get_values())


def prop_int(properties: Mapping[str, Attribute], key: str) -> int:
    return properties[key].value.data


def prop_flag(properties: Mapping[str, Attribute], key: str) -> bool:
    return key in properties


def require_same_element_type(op_name: str, lhs: GeTensorType, rhs: GeTensorType) -> None:
    if lhs.element_type != rhs.element_type:
        raise VerifyException(f"{op_name}: element types differ: lhs {lhs.element_type}, "
                              f"rhs {rhs.element_type}")


def require_same_element_types(op_name: str, types: Sequence[GeTensorType], what: str = "operands") -> None:
    kinds = {t.element_type for t in types}
    if len(kinds) > 1:
        raise VerifyException(f"{op_name}: {what} must share one element type, got "
                              f"{', '.join(str(t.element_type) for t in types)}")


def require_float(op_name: str, t: GeTensorType, what: str = "operand") -> None:
    if not isinstance(t.element_type, AnyFloat):
        raise VerifyException(f"{op_name}: {what} must have a floating-point element type, got "
                              f"{t.element_type}")


def require_bool(op_name: str, t: GeTensorType, what: str = "operand") -> None:
    if t.element_type != i1:
        raise VerifyException(f"{op_name}: {what} must have element type i1, got {t.element_type}")


def require_integer(op_name: str, t: GeTensorType, what: str = "operand") -> None:
    if not isinstance(t.element_type, IntegerType) or t.element_type == i1:
        raise VerifyException(f"{op_name}: {what} must have an integer element type, got {t.element_type}")


def require_number(op_name: str, t: GeTensorType, what: str = "operand") -> None:
    """A float or integer element type (not i1)."""
    if t.element_type == i1:
        raise VerifyException(f"{op_name}: {what} must have a numeric element type, got i1")


def require_index(op_name: str, t: GeTensorType, what: str) -> None:
    if t.element_type not in (i32, i64):
        raise VerifyException(f"{op_name}: {what} must have element type i32 or i64, got {t.element_type}")


def require_rank(op_name: str, t: GeTensorType, rank: int, what: str = "input") -> None:
    if t.rank != rank:
        raise VerifyException(f"{op_name}: {what} must have rank {rank}, got {format_shape(t)}")


def require_image_format(op_name: str, t: GeTensorType) -> None:
    """Image ops read dimension 1 as channels and 2, 3 as height and width (NCHW or ND)."""
    if t.tensor_format == "NHWC":
        raise VerifyException(f"{op_name}: input format NHWC is not supported, expected NCHW or ND")


def normalize_axis(op_name: str, axis: int, t: GeTensorType, what: str = "axis", extra: int = 0) -> int:
    """`axis` in [0, rank + extra): negative axes count from the end."""
    rank = t.rank + extra
    if not -rank <= axis < rank:
        raise VerifyException(f"{op_name}: {what} {axis} is out of range for {format_shape(t)} "
                              f"(valid: {-rank}..{rank - 1})")
    return axis % rank


def normalize_axes(op_name: str, axes: Sequence[int], t: GeTensorType, extra: int = 0) -> list[int]:
    """Normalized, distinct axes (see `normalize_axis`)."""
    normalized = [normalize_axis(op_name, a, t, "axis", extra) for a in axes]
    repeated = [a for a, n in Counter(normalized).items() if n > 1]
    if repeated:
        raise VerifyException(f"{op_name}: axes {list(axes)} name axis {repeated[0]} more than once")
    return normalized


def check_count(op_name: str, what: str, values: Sequence[int], count: int) -> None:
    if len(values) != count:
        raise VerifyException(f"{op_name}: {what} must have {count} entries, got {list(values)}")


def check_min(op_name: str, what: str, values: Sequence[int], least: int) -> None:
    if any(v < least for v in values):
        raise VerifyException(f"{op_name}: {what} must be >= {least}, got {list(values)}")


# Dimension ranges -------------------------------------------------------------------------------

def element_range(dims: Sequence[DimRange]) -> DimRange:
    """How many elements a tensor with these dimensions may hold."""
    return DimRange(*product_range(dims))


def dim_sum(dims: Sequence[DimRange]) -> DimRange:
    return DimRange(*sum_range(dims))


def dim_shift(d: DimRange, delta: int) -> DimRange:
    """The range of `size + delta`, clipped at 0."""
    return DimRange(*shift_range(d, delta))


def intersect_dims(op_name: str, what: str, a: DimRange, b: DimRange) -> DimRange:
    both = a.intersect(b)
    if both is None:
        raise VerifyException(f"{op_name}: {what}: {a} vs {b}")
    return both


def _broadcast_dim(a: DimRange, b: DimRange) -> DimRange | None:
    """The sizes a broadcast result dimension may take, or None when `a` and `b` never match.

    At run time the result is `b` when `a` is 1, `a` when `b` is 1, and otherwise both must be
    equal; the result range is the hull of the cases the ranges allow.
    """
    cases = [r for r in (b if a.contains(1) else None, a if b.contains(1) else None, a.intersect(b))
             if r is not None]
    return reduce(DimRange.hull, cases) if cases else None


def broadcast_dims(what: str, lhs: Sequence[DimRange], rhs: Sequence[DimRange]) -> list[DimRange]:
    """numpy broadcasting over ranges; `what` opens the error message."""
    rank = max(len(lhs), len(rhs))
    one = DimRange.fixed(1)
    lhs_padded = [one] * (rank - len(lhs)) + list(lhs)
    rhs_padded = [one] * (rank - len(rhs)) + list(rhs)
    dims = []
    for i, (a, b) in enumerate(zip(lhs_padded, rhs_padded)):
        dim = _broadcast_dim(a, b)
        if dim is None:
            raise VerifyException(f"{what} {format_dims(lhs)} and {format_dims(rhs)} do not broadcast: "
                                  f"dimension {i} is {a} vs {b}")
        dims.append(dim)
    return dims


# Sliding windows (convolution and pooling) ------------------------------------------------------

def windows_of(properties: Mapping[str, Attribute], kernel: Sequence[int]) -> list[Window]:
    """The spatial windows of a conv or pool op, one per kernel entry (`pads` is [begin, end] per
    spatial axis: [top, bottom, left, right] in 2-D)."""
    strides, pads = prop_ints(properties, "strides"), prop_ints(properties, "pads")
    dilations = prop_ints(properties, "dilations")
    return [Window(k, strides[i], dilations[i], pads[2 * i], pads[2 * i + 1]) for i, k in enumerate(kernel)]


def spatial_rank(op_name: str, x: GeTensorType) -> int:
    """How many spatial dimensions an N, C, spatial... input has (at least one)."""
    if x.rank < 3:
        raise VerifyException(f"{op_name}: input must have rank >= 3 (N, C and spatial dimensions), "
                              f"got {format_shape(x)}")
    require_image_format(op_name, x)
    return x.rank - 2


def check_window_properties(op_name: str, properties: Mapping[str, Attribute], spatial: int) -> None:
    """`strides` and `dilations` (at least 1) per spatial axis, `pads` (at least 0) two per axis."""
    for what, count, least in (("strides", spatial, 1), ("pads", 2 * spatial, 0), ("dilations", spatial, 1)):
        check_count(op_name, what, prop_ints(properties, what), count)
        check_min(op_name, what, prop_ints(properties, what), least)


def window_dim(op_name: str, x: GeTensorType, axis: int, window: Window, ceil_mode: bool) -> DimRange:
    """The output range of spatial `axis` (`Window.count_range`).

    Sizes too small for one window are invalid at run time; they only raise here when the whole
    range is too small.
    """
    d = x.dims[axis]
    counts = window.count_range(d, ceil_mode)
    if counts is None:
        raise VerifyException(f"{op_name}: input {format_shape(x)} is too small: dimension {axis} with "
                              f"padding is at most {window.padded(d.hi)}, but the window spans "
                              f"{window.extent}")
    return DimRange(*counts)


# Slices -----------------------------------------------------------------------------------------

def slice_dim(d: DimRange, start: int, end: int, step: int) -> DimRange:
    """The range of the length ONNX Slice keeps over sizes in `d` (`slice_length_range`)."""
    return DimRange(*slice_length_range(d, start, end, step))


def slice_params(op_name: str, x: GeTensorType, properties: Mapping[str, Attribute]) -> list[tuple[int, int, int, int]]:
    """(axis, start, end, step) per sliced axis, checked."""
    starts, ends = prop_ints(properties, "starts"), prop_ints(properties, "ends")
    axes, steps = prop_ints(properties, "axes"), prop_ints(properties, "steps")
    for what, values in (("ends", ends), ("axes", axes), ("steps", steps)):
        if len(values) != len(starts):
            raise VerifyException(f"{op_name}: starts {starts} and {what} {values} differ in length")
    if 0 in steps:
        raise VerifyException(f"{op_name}: steps must not be 0, got {steps}")
    return list(zip(normalize_axes(op_name, axes, x), starts, ends, steps))


# Known values -----------------------------------------------------------------------------------

ValueRanges = tuple[DimRange, ...]
"""What is known of the elements of a small integer tensor (rank 0 or 1, e.g. a shape computed
with `ge.shape`): one range per element, in order. Ranges of values may have a negative `lo`."""

MAX_KNOWN_ELEMENTS = 64
"""Integer constants up to this many elements have known `ValueRanges` (shape arithmetic operands)."""


def value_binary(lhs: ValueRanges, rhs: ValueRanges, combine) -> ValueRanges | None:
    """Element-wise `combine` (a `dfir.core.shape_arith` range rule: bounds in, bounds or None
    out) of two known value lists, broadcasting a single element."""
    if len(lhs) != len(rhs) and 1 not in (len(lhs), len(rhs)):
        return None
    count = max(len(lhs), len(rhs))
    pairs = zip(lhs * count if len(lhs) == 1 else lhs, rhs * count if len(rhs) == 1 else rhs)
    results = [combine(a, b) for a, b in pairs]
    return None if None in results else tuple(DimRange(*r) for r in results)


def known_operands(operand_values: Sequence[ValueRanges | None] | None, count: int) -> list[ValueRanges | None]:
    values = list(operand_values or [])
    return values + [None] * (count - len(values))
