"""`OrtGraphRunner`: runs one `ge_graphs` plan entry whose `backend` is `onnxruntime`, the drop-in
for `GeGraphRunner` and `IreeGraphRunner`.

The entry's executable is the graph as an ONNX model (`dfir.lowering.onnx_export`) whose weights
are external initializers named `weight_<k>` (the entry's `external_weights` lists them): the
runner hands onnxruntime an `OrtValue` over each weight's view of `WEIGHTS_DATA`
(`SessionOptions.add_external_initializers`), so the model bytes hold no weights and the `.om`
holds them once; once the session is built, the process gives back its pages of the `.om`. The session runs with the entry's `threads`
intra-op threads (None: the cores this process may use), one inter-op thread and a pool that spins
within a run but not between runs, with all of onnxruntime's graph optimizations. `run` checks the inputs as the reference runner does (count,
dtype, dimension ranges: the same messages) and every output against its `output_max_bytes`.

`onnxruntime` is imported on first use (`# lazy:` below): only models with onnxruntime graphs
need it.
"""
from __future__ import annotations

import mmap
from typing import Any, Sequence

import numpy as np

from dfir.core.errors import GeError
from dfir.om.plan import GeGraph, external_weight_name
from dfir.runtime.ge.graph_runner import available_cores, checked_inputs, checked_output_size, weight_view

__all__ = ["OrtGraphRunner"]


class OrtGraphRunner:
    """Runs a GE graph plan entry exported to ONNX, on an onnxruntime CPU session.

    `model` is the entry's executable (its GE_EXECUTABLE partition: a memoryview into the `.om`,
    or bytes), `weights` the model's WEIGHTS_DATA. Building the runner builds the session: a
    GeError naming the graph if onnxruntime refuses the model or a weight does not fit.
    """

    def __init__(self, entry: GeGraph | dict, model: bytes | memoryview, weights: memoryview | bytes | None = None):
        entry = entry if isinstance(entry, GeGraph) else GeGraph.from_json(entry)
        self._name = entry.name
        self._inputs = entry.inputs
        self._max_bytes = entry.output_max_bytes or (-1,) * len(entry.outputs)
        self.threads = entry.threads or available_cores()
        self._session = self._session_of(entry, bytes(model), weights)
        _release_pages(weights)
        self._input_names = [i.name for i in self._session.get_inputs()]

    @property
    def name(self) -> str:
        return self._name

    def run(self, inputs: Sequence[Any]) -> list[np.ndarray]:
        """The graph's outputs for `inputs` (arrays in input-index order)."""
        arrays = checked_inputs(self._name, self._inputs, inputs)
        try:
            outputs = self._session.run(None, dict(zip(self._input_names, arrays)))
        except Exception as error:  # onnxruntime raises its own exception types, all worded
            raise GeError(f"onnxruntime could not run the graph: {error}", context={"graph": self._name}) from None
        for index, array in enumerate(outputs):
            checked_output_size(self._name, index, array, self._max_bytes[index])
        return outputs

    def _session_of(self, entry: GeGraph, model: bytes, weights: memoryview | bytes | None) -> Any:
        import onnxruntime  # lazy: a third of a second to import, and only onnxruntime graphs need it

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        # the pool spins within a run (its parallel sections hand over fast) but stops when the run
        # ends: an idle pool that spins holds a core the worker's other threads and the driver need
        options.add_session_config_entry("session.force_spinning_stop", "1")
        options.log_severity_level = 3  # errors only: its warnings about unused initializers are noise here
        try:
            names, values = self._initializers(entry, weights, onnxruntime.OrtValue)
            if names:
                options.add_external_initializers(names, values)
            self._weights = values  # onnxruntime may read them for as long as the session lives
            return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        except GeError:
            raise
        except Exception as error:  # onnxruntime raises its own exception types, all worded
            raise GeError(f"onnxruntime cannot load the graph's ONNX model: {error}",
                          context={"graph": self._name}) from None

    @staticmethod
    def _initializers(entry: GeGraph, weights: memoryview | bytes | None, ort_value: Any):
        """The names and OrtValues of the model's external initializers (`weight_<k>` for each k of
        the entry's `external_weights`: a view of weight k)."""
        names, values = [], []
        for index in entry.external_weights or ():
            view = weight_view(entry.name, index, entry.weights[index], weights)
            names.append(external_weight_name(index))
            values.append(ort_value.ortvalue_from_numpy(np.require(view, requirements="C")))  # keeps 0-d
        return names, values


def _release_pages(weights: memoryview | bytes | None) -> None:
    """Drop this process's pages of the mapped `.om` once a session is built: onnxruntime holds
    its own (prepacked, reordered) copies of the weights, so the pages it read would stay resident
    for nothing (MobileNetV2 13 MiB, ResNet-50 97 MiB). The mapping is a read-only mapping of the
    model's sealed memfd (`dfir.runtime.om`), shared with the driver and the other workers: this
    drops only this process's page table entries, the memfd keeps the pages, and a page read
    again comes back from it."""
    if isinstance(getattr(weights, "obj", None), mmap.mmap):
        weights.obj.madvise(mmap.MADV_DONTNEED)
