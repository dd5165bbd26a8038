"""`GeGraphRunner`: runs one `ge_graphs` plan entry (docs/execution-plan.md) with the numpy kernels."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from dfir import data_type as dt
from dfir.ge.error import GeError
from dfir.runtime.kernels import KERNELS

__all__ = ["GeGraphRunner"]


class GeGraphRunner:
    """Runs a GE graph plan entry with the reference kernels.

    `weights` is the model's WEIGHTS_DATA partition; each `const` op's array is a read-only view
    into it (no copy), located by the entry's `weights[attrs.weight]` (`offset`, `size`, `dtype`,
    `shape`). Building the runner checks that every op has a kernel and every weight lies inside
    the buffer; `run` checks the inputs against their declared dtype and dimension ranges.
    """

    def __init__(self, entry: dict, weights: memoryview | bytes | None):
        self._name = entry["name"]
        self._inputs = entry["inputs"]
        self._outputs = entry["outputs"]
        self._ops = entry["ops"]
        for op in self._ops:
            if op["op"] != "const" and op["op"] not in KERNELS:
                raise self._error(f"op '{op['name']}' is a '{op['op']}', which has no kernel")
        self._bound = self._bind_weights(entry.get("weights", []), weights)
        self._num_values = 1 + max([*self._outputs, *(i["value"] for i in self._inputs),
                                    *(v for op in self._ops for v in op["outputs"])])

    @property
    def name(self) -> str:
        return self._name

    def run(self, inputs: Sequence[Any]) -> list[np.ndarray]:
        """The graph's outputs for `inputs` (arrays in input-index order)."""
        if len(inputs) != len(self._inputs):
            raise self._error(f"expected {len(self._inputs)} inputs, got {len(inputs)}")
        values: list[np.ndarray | None] = [None] * self._num_values
        for desc, given in zip(self._inputs, inputs):
            values[desc["value"]] = self._checked_input(desc, np.asarray(given))
        for value_id, array in self._bound.items():
            values[value_id] = array
        for op in self._ops:
            if op["op"] == "const":
                continue
            results = KERNELS[op["op"]]([values[i] for i in op["inputs"]], op["attrs"])
            for value_id, array in zip(op["outputs"], results, strict=True):
                values[value_id] = array
        return [values[i] for i in self._outputs]

    def _bind_weights(self, descs: list[dict], buffer: memoryview | bytes | None) -> dict[int, np.ndarray]:
        """Value id -> read-only view of its weight, for every const op."""
        bound = {}
        for op in self._ops:
            if op["op"] != "const":
                continue
            index = op["attrs"]["weight"]
            if not 0 <= index < len(descs):
                raise self._error(f"const '{op['name']}' refers to weight {index}, but the entry "
                                  f"lists {len(descs)} weights")
            bound[op["outputs"][0]] = self._weight_view(index, descs[index], buffer)
        return bound

    def _weight_view(self, index: int, desc: dict, buffer: memoryview | bytes | None) -> np.ndarray:
        dtype = dt.to_numpy(dt.from_name(desc["dtype"])).newbyteorder("<")
        count = int(np.prod(desc["shape"], dtype=np.int64))
        available = 0 if buffer is None else len(memoryview(buffer).cast("B"))
        if desc["size"] != count * dtype.itemsize or desc["offset"] + desc["size"] > available:
            raise self._error(f"weight {index} ({desc['dtype']} {desc['shape']}, {desc['size']} bytes "
                              f"at offset {desc['offset']}) does not fit a weights buffer of "
                              f"{available} bytes")
        view = np.frombuffer(buffer, dtype=dtype, count=count, offset=desc["offset"]).reshape(desc["shape"])
        view.flags.writeable = False
        return view

    def _checked_input(self, desc: dict, array: np.ndarray) -> np.ndarray:
        expected_dtype = dt.to_numpy(dt.from_name(desc["dtype"]))
        shape = list(array.shape)
        what = f"input '{desc['name']}' (index {desc['index']})"
        if array.dtype != expected_dtype:
            raise self._error(f"{what}: expected dtype {desc['dtype']} ({expected_dtype}), got {array.dtype}")
        in_range = len(shape) == len(desc["ranges"]) and all(
            lo <= size and (hi == -1 or size <= hi) for size, (lo, hi) in zip(shape, desc["ranges"]))
        if not in_range:
            raise self._error(f"{what}: expected shape {_spell_ranges(desc['ranges'])}, got {shape}")
        return array

    def _error(self, message: str) -> GeError:
        return GeError(message, context={"graph": self._name})


def _spell_ranges(ranges: list[list[int]]) -> str:
    """`[[2, 2], [0, -1], [1, 8]]` -> `[2, -1, 1:8]`, the IR's spelling.

    (The runtime does not import xDSL, hence not `ge_types.DimRange`.)
    """
    def one(lo: int, hi: int) -> str:
        if lo == hi:
            return str(lo)
        return "-1" if (lo, hi) == (0, -1) else f"{lo}:{hi}"
    return "[" + ", ".join(one(lo, hi) for lo, hi in ranges) + "]"
