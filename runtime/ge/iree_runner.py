"""`IreeGraphRunner`: runs one `ge_graphs` plan entry (docs/execution-plan.md) with its IREE
executable, the drop-in for `GeGraphRunner` when the entry's `backend` is `iree-cpu` or
`iree-cuda`.

`run` checks the inputs as the reference runner does (count, dtype, dimension ranges: the same
messages), hands them to the executable's `main` as numpy arrays (copied only when not
C-contiguous; booleans and every other dtype pass as they are), and returns its results as numpy
arrays of the graph's `output_dtypes` (compiled code computes unsigned integers as signless
ones: their bits are viewed, not converted), each checked against its `output_max_bytes` with
the reference runner's message.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.om.plan import GeGraph
from dfir.runtime.ge.graph_runner import checked_inputs, checked_output_size, weight_view
from dfir.runtime.ge.iree_device import loaded_module

__all__ = ["IreeGraphRunner"]


class IreeGraphRunner:
    """Runs a GE graph plan entry compiled by IREE.

    `vmfb` is the entry's executable (its GE_EXECUTABLE partition, a memoryview into the
    `.om`, or bytes) and `sha256` its digest, which keys the module loaded once per process and
    device; `device` is the logical device the node instance runs on (`cluster:server:device`,
    "-1" the host), which picks the GPU of `iree-cuda`. The executable reads each blob const
    (`attrs.blob`) as the named parameter of that key, a view of its weight in `weights` (the
    model's WEIGHTS_DATA). `threads` is how many CPU threads a call of an `iree-cpu` executable
uses (None: the cores this process may run on; 1: IREE's `local-sync` driver in the calling
thread; more: `local-task` with that many workers, see runtime.iree_device). Loading fails with a GeError naming the graph (no CUDA device, an
    executable IREE refuses, a parameter it reads that the entry does not give).
    """

    def __init__(self, entry: GeGraph | dict, vmfb: bytes | memoryview, sha256: str, device: str = "-1",
                 weights: memoryview | bytes | None = None, threads: int | None = None):
        entry = entry if isinstance(entry, GeGraph) else GeGraph.from_json(entry)
        self._name = entry.name
        self._inputs = entry.inputs
        self._max_bytes = entry.output_max_bytes or (-1,) * len(entry.outputs)
        names = entry.output_dtypes or (None,) * len(entry.outputs)
        self._dtypes = [None if name is None else dt.to_numpy(dt.from_name(name)) for name in names]
        parameters = {op.attrs["blob"]: weight_view(entry.name, op.weight, entry.weights[op.weight], weights)
                      for op in entry.ops if op.op == "const" and "blob" in op.attrs}
        self._module = loaded_module(vmfb, sha256, entry.backend, device, entry.name, parameters, threads)

    @property
    def name(self) -> str:
        return self._name

    def run(self, inputs: Sequence[Any]) -> list[np.ndarray]:
        """The graph's outputs for `inputs` (arrays in input-index order)."""
        # np.asarray keeps a scalar 0-d (np.ascontiguousarray would make it a vector of one)
        arrays = [np.asarray(a, order="C") for a in checked_inputs(self._name, self._inputs, inputs)]
        outputs = self._module.call(arrays)
        if len(outputs) != len(self._max_bytes):
            raise GeError(f"the executable returned {len(outputs)} tensors, the graph has "
                          f"{len(self._max_bytes)} outputs", context={"graph": self._name})
        outputs = [_as_dtype(array, dtype) for array, dtype in zip(outputs, self._dtypes)]
        for index, array in enumerate(outputs):
            checked_output_size(self._name, index, array, self._max_bytes[index])
        return outputs


def _as_dtype(array: np.ndarray, dtype: np.dtype | None) -> np.ndarray:
    """`array` as `dtype` when it holds the same bits under another sign (int8 for uint8)."""
    if dtype is None or array.dtype == dtype or array.dtype.itemsize != dtype.itemsize or array.dtype.kind not in "iu":
        return array
    return array.view(dtype)
