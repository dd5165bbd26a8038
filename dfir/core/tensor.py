"""Tensors as users feed and fetch them: a numpy array plus its GE description."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from dfir.core import data_type as dt
from dfir.core.errors import GeError


class TensorDesc:
    """`TensorDesc(dtype, shape)`: a GE data type and a shape (-1 marks a dynamic dimension)."""

    def __init__(self, dtype: dt.DType, shape: Sequence[int]):
        if not isinstance(dtype, dt.DType):
            raise GeError(f"TensorDesc dtype must be a DType such as DT_FLOAT, got {dtype!r}")
        if not isinstance(shape, (list, tuple)) or not all(isinstance(d, int) for d in shape):
            raise GeError(f"TensorDesc shape must be a list or tuple of ints, got {shape!r}")
        self._dtype = dtype
        self._shape = list(shape)

    @property
    def dtype(self) -> dt.DType:
        return self._dtype

    @property
    def shape(self) -> list[int]:
        return list(self._shape)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorDesc) and (self._dtype, self._shape) == (other._dtype, other._shape)

    def __hash__(self) -> int:
        return hash((self._dtype, tuple(self._shape)))

    def __repr__(self) -> str:
        return f"TensorDesc(dtype={self._dtype}, shape={self._shape})"


class Tensor:
    """A tensor fed into or fetched from a graph; `numpy()` returns its data without copying."""

    def __init__(self, data: Any, *, tensor_desc: TensorDesc | None = None):
        array = data.numpy() if isinstance(data, Tensor) else np.asarray(data)
        if tensor_desc is not None:
            if tensor_desc.shape != list(array.shape):
                raise GeError(f"Tensor data has shape {list(array.shape)} but tensor_desc says "
                              f"{tensor_desc.shape}")
            array = np.asarray(array, dtype=dt.to_numpy(tensor_desc.dtype))
        self._array = array
        self._desc = tensor_desc or TensorDesc(dt.from_numpy(array.dtype), list(array.shape))

    @classmethod
    def of_array(cls, array: np.ndarray) -> Tensor:
        """`Tensor(array)` for a numpy array whose dtype has a GE data type (GeError otherwise),
        without re-validating its description: descriptions are shared per (dtype, shape)."""
        key = (array.dtype, array.shape)
        desc = _described.get(key)
        if desc is None:
            desc = TensorDesc(dt.from_numpy(array.dtype), list(array.shape))
            if len(_described) >= _MAX_DESCRIBED:
                _described.clear()
            _described[key] = desc
        tensor = _new_object(cls)
        tensor._array = array
        tensor._desc = desc
        return tensor

    @property
    def tensor_desc(self) -> TensorDesc:
        return self._desc

    def numpy(self, copy: bool = False) -> np.ndarray:
        return self._array.copy() if copy else self._array

    def get_shape(self) -> list[int]:
        return list(self._array.shape)

    def get_data_type(self) -> dt.DType:
        return self._desc.dtype

    def get_data_size(self) -> int:
        return int(self._array.nbytes)

    def get_element_cnt(self) -> int:
        return int(self._array.size)

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)

    def __repr__(self) -> str:
        return f"Tensor({self._array!r}, tensor_desc={self._desc})"


_new_object = object.__new__
_described: dict[tuple[np.dtype, tuple[int, ...]], TensorDesc] = {}  # Tensor.of_array's descriptions
_MAX_DESCRIBED = 256


def alloc_tensor(shape: Sequence[int], dtype, align: int = 64) -> Tensor:
    """A zero-filled tensor whose buffer starts on an `align`-byte boundary."""
    npd = dt.to_numpy(dtype) if isinstance(dtype, dt.DType) else np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * npd.itemsize
    raw = np.zeros(nbytes + align, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    return Tensor(raw[start:start + nbytes].view(npd).reshape(shape))
