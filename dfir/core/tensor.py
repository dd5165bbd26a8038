"""Tensors as users feed and fetch them: a numpy array plus its GE description."""
from __future__ import annotations

import operator
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


class Tensor(np.lib.mixins.NDArrayOperatorsMixin):
    """A tensor fed into or fetched from a graph; `numpy()` returns its data without copying.

    In UDF code it works as its array does: numpy's operators and ufuncs (`a + b`, `np.exp(a)`)
    give plain numpy arrays, and indexing, `len`, iteration, `shape`, `dtype`, `ndim`, `size` and
    the array's other public attributes read the array.
    """

    __slots__ = ("_array", "_desc")  # UDF inputs wrap their arrays: creating one must be cheap

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

    def reshape(self, shape: Sequence[int]) -> int:
        """Give the tensor a new shape of the same element count, in place, as GE's UDF tensors
        do: 0 (FLOW_FUNC_SUCCESS), or 164000 (FLOW_FUNC_ERR_PARAM_INVALID) and no change when the
        count differs or a dimension is negative."""
        dims = [int(d) for d in shape]
        if any(d < 0 for d in dims) or int(np.prod(dims, dtype=np.int64)) != self._array.size:
            return _PARAM_INVALID
        self._array = self._array.reshape(dims)
        self._desc = TensorDesc(self._desc.dtype, dims)
        return 0

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy's ufuncs (and so the operators) on the arrays of the Tensors among the operands."""
        inputs = tuple(x._array if isinstance(x, Tensor) else x for x in inputs)
        out = kwargs.get("out")
        if not out:
            return getattr(ufunc, method)(*inputs, **kwargs)
        kwargs["out"] = tuple(x._array if isinstance(x, Tensor) else x for x in out)
        getattr(ufunc, method)(*inputs, **kwargs)
        return out[0] if len(out) == 1 else out  # `a += b` keeps `a` a Tensor

    @property
    def shape(self) -> tuple[int, ...]:
        return self._array.shape

    @property
    def dtype(self) -> np.dtype:
        return self._array.dtype

    @property
    def ndim(self) -> int:
        return self._array.ndim

    @property
    def size(self) -> int:
        return self._array.size

    def __getattr__(self, name: str):
        """Any other public attribute of a numpy array (`sum`, `astype`, `tolist`, `T`, ...) is
        its array's, so UDF code written for arrays keeps working; GE's methods (`reshape` among
        them) come first."""
        if name.startswith("_"):
            raise AttributeError(f"'Tensor' object has no attribute {name!r}")
        try:
            return getattr(object.__getattribute__(self, "_array"), name)
        except AttributeError:
            raise AttributeError(f"'Tensor' object has no attribute {name!r}") from None

    def __getitem__(self, index):
        return self._array[index]

    def __len__(self) -> int:
        return len(self._array)

    def __iter__(self):
        return iter(self._array)

    def __repr__(self) -> str:
        return f"Tensor({self._array!r}, tensor_desc={self._desc})"


def _array_of(value: Any) -> Any:
    return value._array if type(value) is Tensor else value


def _binary_operators(name: str, op) -> None:
    """Tensor's `__name__` and `__rname__`: `op` on the arrays directly. The mixin's versions
    go through numpy's ufunc dispatch and `__array_ufunc__` (about 1 us more per operation)."""
    def forward(self: Tensor, other: Any) -> Any:
        return op(self._array, other._array if type(other) is Tensor else other)  # inline: the hot path

    def reflected(self: Tensor, other: Any) -> Any:
        return op(other._array if type(other) is Tensor else other, self._array)
    forward.__name__, reflected.__name__ = f"__{name}__", f"__r{name}__"
    setattr(Tensor, forward.__name__, forward)
    setattr(Tensor, reflected.__name__, reflected)


def _comparison(name: str, op) -> None:
    def compare(self: Tensor, other: Any) -> Any:
        return op(self._array, _array_of(other))
    compare.__name__ = f"__{name}__"
    setattr(Tensor, compare.__name__, compare)


def _unary_operator(name: str, op) -> None:
    def unary(self: Tensor) -> Any:
        return op(self._array)
    unary.__name__ = f"__{name}__"
    setattr(Tensor, unary.__name__, unary)


def _install_operators() -> None:
    """Tensor's arithmetic, bitwise, comparison and unary operators (the in-place ones stay the
    mixin's: they write into the tensor's array)."""
    for name in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and",
                 "xor", "or"):
        _binary_operators(name, getattr(operator, f"{name}_" if name in ("and", "or") else name))
    for name in ("lt", "le", "eq", "ne", "gt", "ge"):
        _comparison(name, getattr(operator, name))
    for name in ("neg", "pos", "abs", "invert"):
        _unary_operator(name, getattr(operator, name))
    Tensor.__divmod__ = lambda self, other: divmod(self._array, _array_of(other))
    Tensor.__rdivmod__ = lambda self, other: divmod(_array_of(other), self._array)
    Tensor.__hash__ = object.__hash__  # hashable by identity, as before; the mixin's __eq__ unsets it


_install_operators()


_PARAM_INVALID = 164000  # GE's FLOW_FUNC_ERR_PARAM_INVALID
_new_object = object.__new__
_described: dict[tuple[np.dtype, tuple[int, ...]], TensorDesc] = {}  # Tensor.of_array's descriptions
_MAX_DESCRIBED = 256


def udf_tensor(array: np.ndarray) -> Tensor | np.ndarray:
    """What a `@pyflow` UDF receives for a tensor message's array: `Tensor.of_array(array)`, or
    the array itself when its dtype has no GE data type. Every UDF input of a tensor message
    passes here, so the common case (a described dtype and shape) is one dict lookup."""
    desc = _described.get((array.dtype, array.shape))
    if desc is None:
        try:
            return Tensor.of_array(array)
        except GeError:
            return array
    tensor = _new_object(Tensor)
    tensor._array = array
    tensor._desc = desc
    return tensor


def alloc_tensor(shape: Sequence[int], dtype, align: int = 64) -> Tensor:
    """A zero-filled tensor whose buffer starts on an `align`-byte boundary."""
    npd = dt.to_numpy(dtype) if isinstance(dtype, dt.DType) else np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * npd.itemsize
    raw = np.zeros(nbytes + align, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    return Tensor(raw[start:start + nbytes].view(npd).reshape(shape))
