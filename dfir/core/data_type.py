"""GE data types (`DT_*`) and their numpy equivalents, both ways."""
from __future__ import annotations

import numpy as np

from dfir.core.errors import GeError

__all__ = [
    "DType", "DT_FLOAT", "DT_FLOAT16", "DT_BF16", "DT_INT8", "DT_INT16", "DT_UINT16", "DT_UINT8",
    "DT_INT32", "DT_INT64", "DT_UINT32", "DT_UINT64", "DT_BOOL", "DT_DOUBLE", "DT_STRING",
    "from_numpy", "to_numpy", "from_name",
]


class DType:
    """A GE data type: `dtype` is GE's enum value, `name` its `DT_*` spelling."""

    __slots__ = ("dtype", "name")

    def __init__(self, dtype: int, name: str):
        self.dtype = dtype
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DType) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__

    def __reduce__(self):
        return (from_name, (self.name,))


# Enum values follow GE's DataType so that serialized descriptions mean the same thing.
DT_FLOAT = DType(0, "DT_FLOAT")
DT_FLOAT16 = DType(1, "DT_FLOAT16")
DT_INT8 = DType(2, "DT_INT8")
DT_INT32 = DType(3, "DT_INT32")
DT_UINT8 = DType(4, "DT_UINT8")
DT_INT16 = DType(6, "DT_INT16")
DT_UINT16 = DType(7, "DT_UINT16")
DT_UINT32 = DType(8, "DT_UINT32")
DT_INT64 = DType(9, "DT_INT64")
DT_UINT64 = DType(10, "DT_UINT64")
DT_DOUBLE = DType(11, "DT_DOUBLE")
DT_BOOL = DType(12, "DT_BOOL")
DT_STRING = DType(13, "DT_STRING")
DT_BF16 = DType(27, "DT_BF16")

_BY_NAME = {t.name: t for t in (DT_FLOAT, DT_FLOAT16, DT_INT8, DT_INT32, DT_UINT8, DT_INT16,
                                DT_UINT16, DT_UINT32, DT_INT64, DT_UINT64, DT_DOUBLE, DT_BOOL,
                                DT_STRING, DT_BF16)}

_TO_NUMPY = {
    DT_FLOAT: np.dtype(np.float32), DT_FLOAT16: np.dtype(np.float16), DT_INT8: np.dtype(np.int8),
    DT_INT16: np.dtype(np.int16), DT_UINT16: np.dtype(np.uint16), DT_UINT8: np.dtype(np.uint8),
    DT_INT32: np.dtype(np.int32), DT_INT64: np.dtype(np.int64), DT_UINT32: np.dtype(np.uint32),
    DT_UINT64: np.dtype(np.uint64), DT_BOOL: np.dtype(np.bool_), DT_DOUBLE: np.dtype(np.float64),
    DT_STRING: np.dtype(np.bytes_),
}
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items() if k is not DT_STRING}


def from_name(name: str) -> DType:
    """`"DT_FLOAT"` -> `DT_FLOAT`; a GeError for an unknown name."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise GeError(f"unknown data type '{name}', expected one of {sorted(_BY_NAME)}") from None


def to_numpy(dtype: DType) -> np.dtype:
    """The numpy dtype of a GE data type."""
    try:
        return _TO_NUMPY[dtype]
    except KeyError:
        raise GeError(f"data type {dtype} has no numpy equivalent") from None


def from_numpy(dtype) -> DType:
    """The GE data type of a numpy dtype (strings and bytes map to DT_STRING)."""
    if isinstance(dtype, np.dtype):  # an array's dtype, the common case: one lookup
        found = _FROM_NUMPY.get(dtype)
        if found is not None:
            return found
    npd = np.dtype(dtype)
    if npd.kind in "SU":
        return DT_STRING
    try:
        return _FROM_NUMPY[npd]
    except KeyError:
        raise GeError(f"numpy dtype {npd} has no GE data type; supported: "
                      f"{sorted(str(d) for d in _FROM_NUMPY)}") from None
