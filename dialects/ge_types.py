"""The tensor type of the `ge` dialect: per-dimension shape ranges, an element type, a format.

    !ge.tensor<[1, -1, 1:1728], f32>            format ND (the default) is not printed
    !ge.tensor<[1, 3, 224, 224], f32, NCHW>
    !ge.tensor<[], i64>                         a scalar

Each dimension is one of

    N        fixed size N (N >= 0)
    lo:hi    any size from lo to hi (0 <= lo <= hi)
    lo:-1    at least lo, no upper bound
    -1       unknown: any size (the same as 0:-1, and printed as -1)

GE writes a range as `lo~hi`; xDSL's lexer has no `~` token, so the IR spells it `lo:hi`, which
lexes as integer, colon, integer and prints back identically. An invalid type (negative size,
lower bound above upper bound, unsupported element type or format) is a parse error located at
the offending text.

Element types are builtin types, one per GE data type: f16, bf16, f32, f64, i1 (DT_BOOL), i8,
i16, i32, i64, ui8, ui16, ui32, ui64. Shape functions of the ge ops compute with `DimRange`s.
"""
from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np
from xdsl.dialects.builtin import (ArrayAttr, IntAttr, IntegerType, Signedness, StringAttr, bf16,
                                   f16, f32, f64, i1, i8, i16, i32, i64)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from dfir.core import data_type as dt

__all__ = ["DimRange", "FORMATS", "GeTensorType", "element_type_of", "dtype_of", "format_dims"]

FORMATS = ("ND", "NCHW", "NHWC")
"""Tensor formats the dialect knows; ND (no layout meaning) is the default."""

_UNBOUNDED = -1
"""How an absent upper bound is stored in the IR (and written in the text)."""

_ELEMENT_TYPES: dict[dt.DType, Attribute] = {
    dt.DT_FLOAT: f32, dt.DT_FLOAT16: f16, dt.DT_BF16: bf16, dt.DT_DOUBLE: f64, dt.DT_BOOL: i1,
    dt.DT_INT8: i8, dt.DT_INT16: i16, dt.DT_INT32: i32, dt.DT_INT64: i64,
    dt.DT_UINT8: IntegerType(8, Signedness.UNSIGNED), dt.DT_UINT16: IntegerType(16, Signedness.UNSIGNED),
    dt.DT_UINT32: IntegerType(32, Signedness.UNSIGNED), dt.DT_UINT64: IntegerType(64, Signedness.UNSIGNED),
}
_DTYPES: dict[Attribute, dt.DType] = {v: k for k, v in _ELEMENT_TYPES.items()}


def element_type_of(dtype: dt.DType) -> Attribute:
    """The builtin element type of a GE data type; ValueError for one tensors cannot hold."""
    try:
        return _ELEMENT_TYPES[dtype]
    except KeyError:
        raise ValueError(f"data type {dtype} cannot be a ge tensor element type, expected one of "
                         f"{', '.join(d.name for d in _ELEMENT_TYPES)}") from None


def dtype_of(element_type: Attribute) -> dt.DType:
    """The GE data type of a builtin element type (one `element_type_of` returns)."""
    return _DTYPES[element_type]


class DimRange(NamedTuple):
    """The sizes one dimension may take: `lo` to `hi` inclusive; `hi` None means no upper bound."""

    lo: int
    hi: int | None

    @staticmethod
    def fixed(size: int) -> DimRange:
        return DimRange(size, size)

    @staticmethod
    def unknown() -> DimRange:
        return DimRange(0, None)

    @staticmethod
    def from_size(size: int) -> DimRange:
        """A shape-list entry as a range: -1 is unknown, N >= 0 is fixed."""
        return DimRange.unknown() if size == -1 else DimRange.fixed(size)

    @property
    def is_fixed(self) -> bool:
        return self.lo == self.hi

    def contains(self, size: int) -> bool:
        """Whether a dimension of this many elements is allowed."""
        return self.lo <= size and (self.hi is None or size <= self.hi)

    def intersect(self, other: DimRange) -> DimRange | None:
        """The sizes both allow, or None when they share none."""
        lo = max(self.lo, other.lo)
        his = [h for h in (self.hi, other.hi) if h is not None]
        hi = min(his) if his else None
        return None if hi is not None and hi < lo else DimRange(lo, hi)

    def hull(self, other: DimRange) -> DimRange:
        """The smallest range allowing every size either allows."""
        hi = None if self.hi is None or other.hi is None else max(self.hi, other.hi)
        return DimRange(min(self.lo, other.lo), hi)

    def __str__(self) -> str:
        if self.is_fixed:
            return str(self.lo)
        if self.lo == 0 and self.hi is None:
            return str(_UNBOUNDED)
        return f"{self.lo}:{_UNBOUNDED if self.hi is None else self.hi}"


def format_dims(dims: Sequence[DimRange]) -> str:
    """Dimensions as the type spells them: `[2, -1, 1:8]`."""
    return "[" + ", ".join(str(d) for d in dims) + "]"


@irdl_attr_definition
class GeTensorType(ParametrizedAttribute, TypeAttribute):
    """A tensor whose dimensions are `DimRange`s; see the module docstring for the spelling."""

    name = "ge.tensor"

    lower: ArrayAttr[IntAttr]
    upper: ArrayAttr[IntAttr]
    element_type: Attribute
    format: StringAttr

    def __init__(self, dims: Sequence[DimRange], element_type: Attribute, format: str = "ND"):
        super().__init__(
            ArrayAttr(tuple(IntAttr(d.lo) for d in dims)),
            ArrayAttr(tuple(IntAttr(_UNBOUNDED if d.hi is None else d.hi) for d in dims)),
            element_type, StringAttr(format))

    @staticmethod
    def from_shape(shape: Sequence[int], dtype: dt.DType, format: str = "ND") -> GeTensorType:
        """A type from a shape list (-1 marks an unknown dimension) and a GE data type."""
        return GeTensorType([DimRange.from_size(s) for s in shape], element_type_of(dtype), format)

    @property
    def dims(self) -> tuple[DimRange, ...]:
        return tuple(DimRange(lo.data, None if hi.data == _UNBOUNDED else hi.data)
                     for lo, hi in zip(self.lower.data, self.upper.data, strict=True))

    @property
    def shape(self) -> list[int]:
        """Fixed dimensions as their size, every other dimension as -1."""
        return [d.lo if d.is_fixed else -1 for d in self.dims]

    @property
    def rank(self) -> int:
        return len(self.lower.data)

    @property
    def dtype(self) -> dt.DType:
        return dtype_of(self.element_type)

    @property
    def numpy_dtype(self) -> np.dtype:
        """The element type as numpy's; a GeError for bf16, which numpy lacks."""
        return dt.to_numpy(self.dtype)

    @property
    def tensor_format(self) -> str:
        return self.format.data

    def is_static(self) -> bool:
        """Whether every dimension is fixed."""
        return all(d.is_fixed for d in self.dims)

    def max_element_count(self) -> int | None:
        """The most elements a tensor of this type can hold; None when some dimension is unbounded."""
        his = [d.hi for d in self.dims]
        return None if None in his else math.prod(his)

    def with_dims(self, dims: Sequence[DimRange]) -> GeTensorType:
        """This type with other dimensions (same element type and format)."""
        return GeTensorType(dims, self.element_type, self.tensor_format)

    def verify(self) -> None:
        if len(self.lower.data) != len(self.upper.data):
            raise VerifyException(f"ge.tensor: {len(self.lower.data)} lower bounds but "
                                  f"{len(self.upper.data)} upper bounds")
        for lo, hi in zip(self.lower.data, self.upper.data):
            problem = _dim_problem(lo.data, hi.data)
            if problem:
                raise VerifyException(f"ge.tensor: {problem}")
        if self.element_type not in _DTYPES:
            raise VerifyException(f"ge.tensor: {_element_type_problem(self.element_type)}")
        if self.format.data not in FORMATS:
            raise VerifyException(f"ge.tensor: {_format_problem(self.format.data)}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            dims = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: _parse_dim(parser))
            parser.parse_punctuation(",")
            start = parser.pos
            element_type = parser.parse_type()
            if element_type not in _DTYPES:
                parser.raise_error(_element_type_problem(element_type), start, parser.pos)
            format = "ND"
            if parser.parse_optional_punctuation(","):
                start = parser.pos
                format = parser.parse_identifier()
                if format not in FORMATS:
                    parser.raise_error(_format_problem(format), start, parser.pos)
        return list(GeTensorType(dims, element_type, format).parameters)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{format_dims(self.dims)}, ")
        printer.print_attribute(self.element_type)
        if self.format.data != "ND":
            printer.print_string(f", {self.format.data}")
        printer.print_string(">")


def _parse_dim(parser: AttrParser) -> DimRange:
    start = parser.pos
    lo = parser.parse_integer(allow_boolean=False, allow_negative=True)
    if parser.parse_optional_punctuation(":") is None:
        if lo == _UNBOUNDED:
            return DimRange.unknown()
        if lo < 0:
            parser.raise_error(f"dimension size must be >= 0 or -1 (unknown), got {lo}", start, parser.pos)
        return DimRange.fixed(lo)
    hi = parser.parse_integer(allow_boolean=False, allow_negative=True)
    problem = _dim_problem(lo, hi)
    if problem:
        parser.raise_error(problem, start, parser.pos)
    return DimRange(lo, None if hi == _UNBOUNDED else hi)


def _dim_problem(lo: int, hi: int) -> str | None:
    """What is wrong with a stored (lo, hi) pair, or None."""
    if lo < 0:
        return f"dimension lower bound must be >= 0, got {lo}"
    if hi != _UNBOUNDED and hi < lo:
        return f"dimension range {lo}:{hi} has its lower bound above its upper bound"
    return None


def _element_type_problem(element_type: Attribute) -> str:
    return (f"element type {element_type} is not a GE data type, expected one of "
            f"{', '.join(str(t) for t in _DTYPES)}")


def _format_problem(format: str) -> str:
    return f"unknown tensor format '{format}', expected one of {', '.join(FORMATS)}"
