"""Values known at import time: arrays whose entries are numbers or symbolic dimensions (`Dim`)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Dim:
    """Dimension `axis` of tensor `tensor`, unknown until run time."""

    tensor: str
    axis: int


@dataclass(frozen=True)
class Known:
    """A tensor's value at import time. `array` has dtype object, holding ints and `Dim`s, when
    some entry is symbolic; `dtype` is then the tensor's real element type."""

    array: np.ndarray
    dtype: np.dtype

    @staticmethod
    def of(array: np.ndarray, dtype: np.dtype | None = None) -> Known:
        """`array` as known, turned numeric when no entry is symbolic."""
        dtype = np.dtype(dtype or array.dtype)
        if array.dtype == object and not any(isinstance(v, Dim) for v in array.flat):
            array = array.astype(dtype)
        return Known(array, dtype)

    @property
    def is_constant(self) -> bool:
        return self.array.dtype != object

    def ints(self) -> list[int]:
        return [int(v) for v in self.array.reshape(-1)]


def runs(entries: np.ndarray) -> list[list]:
    """Entries grouped into runs of ints and runs of consecutive dimensions of one tensor."""
    grouped: list[list] = []
    for entry in entries:
        last = grouped[-1][-1] if grouped else None
        same_kind = last is not None and isinstance(entry, Dim) == isinstance(last, Dim)
        follows = not isinstance(entry, Dim) or (
            last is not None and isinstance(last, Dim) and entry.tensor == last.tensor and entry.axis == last.axis + 1)
        if same_kind and follows:
            grouped[-1].append(entry)
        else:
            grouped.append([entry])
    return grouped


def spell(known: Known) -> str:
    """A known value for messages: symbolic entries as `dim(<tensor>, <axis>)`."""
    entries = [f"dim({v.tensor}, {v.axis})" if isinstance(v, Dim) else str(v) for v in known.array.reshape(-1)]
    return "[" + ", ".join(entries) + "]"
