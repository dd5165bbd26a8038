"""Flow closures at run time: a UDF's `run_flow_model(key, ...)` on a sub-FlowGraph.

The compiler flattened the sub-FlowGraph into plan nodes (docs/execution-plan.md, `closures`):
they run in their devices' workers with the same channels as every node, and no runtime is
nested per call. `FlowClosureRunner.run`, on the calling UDF's thread:

1. puts one tensor message per closure input, of the calling transaction, on the channels of
   the consumers of that input (one instance of a replicated consumer, by its dispatch rule);
2. takes one message from each closure output's channel (a shared channel that rings the
   calling unit's doorbell), dropping messages of other transactions (what an earlier call
   that timed out left), until the timeout;
3. returns the outputs' tensors, or the first failed output's return code and error text.

Calls on one closure are serialized: its output channels are its own.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from dfir.core.messages import Message, TransactionMeta
from dfir.frontend.flow_func.status import (FLOW_FUNC_ERR_PARAM_INVALID, FLOW_FUNC_ERR_TIME_OUT_ERROR,
                                            FLOW_FUNC_SUCCESS)
from dfir.runtime import channels


@dataclass(frozen=True)
class ClosureWiring:
    """The channels of flow closure `key` of plan node `node`: where each input goes (objects
    with `route(transaction_id)`, `worker.Targets`), each output's channel, and the doorbell
    those ring."""

    node: int
    key: str
    entries: tuple[Any, ...]
    exits: tuple[int, ...]
    bell: int


class FlowClosureRunner:
    """Runs one flow closure through the region's channels (see the module docstring)."""

    def __init__(self, region, wiring: ClosureWiring):
        self._region = region
        self._wiring = wiring
        self._lock = threading.Lock()

    def run(self, meta: TransactionMeta, arrays: Sequence[np.ndarray], timeout_ms: int) -> tuple[int, list, str]:
        """`(ret, output arrays, why it failed)` of one call (steps 1 to 3)."""
        key = self._wiring.key
        if len(arrays) != len(self._wiring.entries):
            return FLOW_FUNC_ERR_PARAM_INVALID, [], (f"sub-FlowGraph '{key}' takes {len(self._wiring.entries)} inputs, "
                                          f"got {len(arrays)}")
        deadline = None if timeout_ms < 0 else time.monotonic() + timeout_ms / 1000
        with self._lock:
            targets = [(channel, Message.tensor(meta, np.asarray(array)))
                       for targets, array in zip(self._wiring.entries, arrays)
                       for channel in targets.route(meta.transaction_id)]
            if targets and self._region.put(targets, channels.remaining_ms(deadline)) != channels.READY:
                return self._timed_out(timeout_ms)
            outputs = []
            for channel in self._wiring.exits:
                message = self._take(channel, meta.transaction_id, deadline)
                if message is None:
                    return self._timed_out(timeout_ms)
                outputs.append(message)
        failed = next((m for m in outputs if m.ret_code), None)
        if failed is not None:
            return failed.ret_code, [], f"sub-FlowGraph '{key}' failed: {failed.error}"
        return FLOW_FUNC_SUCCESS, [np.asarray(m.value()) for m in outputs], ""

    def _take(self, channel: int, transaction_id: int, deadline: float | None) -> Message | None:
        """The next message of `transaction_id` on `channel`; None once the deadline passed."""
        while True:
            sets = self._region.take([channel], self._wiring.bell, 1, channels.remaining_ms(deadline))
            if not sets:
                return None
            message = sets[0][0]
            if message.meta.transaction_id == transaction_id:
                return message

    def _timed_out(self, timeout_ms: int) -> tuple[int, list, str]:
        return FLOW_FUNC_ERR_TIME_OUT_ERROR, [], (f"sub-FlowGraph '{self._wiring.key}' gave no result "
                                                  f"within the timeout of {timeout_ms} ms")


class FlowClosurePorts:
    """What a worker gives the UDFs it builds: the runner of each flow closure, by node."""

    def __init__(self, region, closures: Sequence[ClosureWiring]):
        self._region = region
        self._closures = closures

    def runners(self, node: int) -> dict[str, FlowClosureRunner]:
        return {c.key: FlowClosureRunner(self._region, c) for c in self._closures if c.node == node}
