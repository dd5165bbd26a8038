"""`Tensor`: a message's tensor as a UDF sees it (`FlowMsg.get_tensor()`), and aligned buffers.

A flow_func `Tensor` is a view: `numpy()` returns the message's own array, so writing into it
fills the message. It answers GE's getters (`get_shape`, `get_data_type` -- a numpy scalar type
such as `np.int32`, `get_data_size`, `get_element_cnt`) and `reshape`.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from dfir.core import data_type as dt
from dfir.frontend.flow_func.status import FLOW_FUNC_ERR_PARAM_INVALID, FLOW_FUNC_SUCCESS


class Tensor:
    """The tensor of a tensor message (see the module docstring)."""

    __slots__ = ("_array",)

    def __init__(self, array: np.ndarray):
        self._array = array

    def numpy(self, copy: bool = False) -> np.ndarray:
        """The message's array itself, or a copy of it with `copy=True` (GE's signature)."""
        return self._array.copy() if copy else self._array

    def get_shape(self) -> list[int]:
        return list(self._array.shape)

    def get_data_type(self) -> type:
        """The numpy scalar type of the data (`np.int32`), as GE's flow_func Tensor returns it;
        `alloc_tensor_msg` takes it back."""
        return dt.to_numpy(dt.from_numpy(self._array.dtype)).type

    def get_data_size(self) -> int:
        """Bytes of data."""
        return int(self._array.nbytes)

    def get_element_cnt(self) -> int:
        return int(self._array.size)

    def reshape(self, shape: Sequence[int]) -> int:
        """A new shape with the same element count: FLOW_FUNC_SUCCESS, else ERR_PARAM_INVALID."""
        if not all(isinstance(d, int) and d >= 0 for d in shape) or math.prod(shape) != self._array.size:
            return FLOW_FUNC_ERR_PARAM_INVALID
        self._array = self._array.reshape(shape)
        return FLOW_FUNC_SUCCESS

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)

    def __repr__(self) -> str:
        return f"flow_func.Tensor({self._array!r})"


def aligned_zeros(shape: Sequence[int], dtype: np.dtype, align: int) -> np.ndarray:
    """A zero-filled array whose data starts on an `align`-byte boundary."""
    nbytes = math.prod(shape) * dtype.itemsize
    raw = np.zeros(nbytes + align, dtype=np.uint8)
    start = -raw.ctypes.data % align
    return raw[start:start + nbytes].view(dtype).reshape(shape)
