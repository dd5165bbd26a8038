"""Input batching at run time: the batched inputs of a plan's nodes (`Node.batch`: `TimeBatch` /
`CountBatch`, semantics in dfir.core.batching) become built-in batch nodes, as GE inserts
`_BuiltIn_TimeBatch` / `_BuiltIn_CountBatch` flow funcs.

1. `with_batch_nodes(plan)` gives each batched input of a node its own node, named
   `<node>__BuiltIn_CountBatch_<input>` (or `TimeBatch`): one input (what fed the node's input),
   one output (now feeding it), run by a `BatchPoint`, and one unit, on the node's first device.
   The node keeps its index; the batch nodes follow the plan's nodes (their units the plan's
   units) and precede it in `order`.
2. `batch_funcs` builds a batch node's one func: a stream-input func that reads its input as it
   arrives, waking at a CountBatch's timeout, and emits each batch when it is complete.

A batch is one message of the transaction of its newest input (GE: the output takes the header of
the input last read), its data label included; a TimeBatch's carries the first input's
`start_time` and the last one's `end_time`. An error message passes through at once, as does an
EOS marker that ends no TimeBatch; a message that cannot join the batch (not a tensor, another
shape or dtype, a TimeBatch time out of order) fails its own transaction. Unlike GE, neither
clears the batch being built: its inputs are still batched.
"""
from __future__ import annotations

import queue
import time
from dataclasses import dataclass, replace
from typing import ClassVar, Iterator

import numpy as np

from dfir.core.batching import NEW_DIM, BatchSpec, CountBatchSpec, TimeBatchSpec
from dfir.core.flow_info import FlowFlag
from dfir.core.messages import Kind, Message
from dfir.frontend.flow_func.status import FLOW_FUNC_ERR_PARAM_INVALID
from dfir.om.plan import Node, NodeRef, Plan, Unit
from dfir.runtime.funcs import FuncSpec, OutputSet

FUNC_NAME = "batch"
ENDS_BATCH = FlowFlag.DATA_FLOW_FLAG_EOS | FlowFlag.DATA_FLOW_FLAG_SEG


@dataclass(frozen=True)
class BatchPoint:
    """The process point of a built-in batch node: batch its one input by `spec`."""

    kind: ClassVar[str] = "batch"
    spec: BatchSpec


def batch_node_name(node: str, spec: BatchSpec, index: int) -> str:
    kind = "CountBatch" if isinstance(spec, CountBatchSpec) else "TimeBatch"
    return f"{node}__BuiltIn_{kind}_{index}"


def with_batch_nodes(plan: Plan) -> Plan:
    """`plan` with a batch node in front of each batched node input (step 1 of the docstring)."""
    if not any(node.batch for node in plan.nodes):
        return plan
    nodes, units = list(plan.nodes), list(plan.units)
    before: dict[int, list[int]] = {}
    for n, node in enumerate(plan.nodes):
        inputs = list(node.inputs)
        for batch in node.batch:
            before.setdefault(n, []).append(len(nodes))
            units.append(Unit(len(nodes), 0, plan.units_of(n)[0].device))
            nodes.append(Node(batch_node_name(node.name, batch.spec, batch.input), None, node.loc, 1, 1,
                              (inputs[batch.input],), "round_robin", None, None, {}, {}, BatchPoint(batch.spec)))
            inputs[batch.input] = NodeRef(len(nodes) - 1, 0)
        if node.batch:
            nodes[n] = replace(node, inputs=tuple(inputs), batch=())
    order = tuple(i for n in plan.order for i in (*before.get(n, ()), n))
    return replace(plan, nodes=tuple(nodes), order=order, units=tuple(units))


def batch_funcs(node: Node, pp: BatchPoint) -> tuple[FuncSpec, ...]:
    """The one func of a batch node (step 2 of the docstring)."""
    batcher = (CountBatcher if isinstance(pp.spec, CountBatchSpec) else TimeBatcher)(node.name, pp.spec)

    def run(streams: list) -> Iterator[OutputSet]:
        stream = streams[0]
        while True:
            try:
                message = stream.take(True, batcher.wait_seconds(time.monotonic()))
            except queue.Empty:
                outputs = batcher.expire(time.monotonic())
            else:
                outputs = batcher.push(message, time.monotonic())
            for output in outputs:
                yield [(0, output)]

    return (FuncSpec(FUNC_NAME, (0,), (0,), True, run),)


class _Batcher:
    """What both kinds share: the batch being built and the failures of messages refused."""

    def __init__(self, node_name: str):
        self._node_name = node_name
        self._batch: list[Message] = []

    def wait_seconds(self, now: float) -> float | None:
        """How long the next read may wait (None: until a message comes)."""
        return None

    def expire(self, now: float) -> list[Message]:
        return []

    def _refused(self, message: Message, why: str) -> Message:
        failure = Message.failure(message.meta, FLOW_FUNC_ERR_PARAM_INVALID,
                                  f"node '{self._node_name}': {why}")
        return replace(failure, data_label=message.data_label)

    def _mismatch(self, message: Message) -> str | None:
        """Why a tensor message cannot join the batch, or None."""
        if message.kind is not Kind.TENSOR:
            return f"a {message.kind.value} message cannot be batched, only tensors"
        if self._batch and message.payload.dtype != self._batch[0].payload.dtype:
            return (f"a tensor of dtype {message.payload.dtype} cannot join a batch of "
                    f"{self._batch[0].payload.dtype}")
        return None

    def _output(self, array: np.ndarray, newest: Message, **times: int) -> Message:
        meta = replace(newest.meta, **times) if times else newest.meta
        return replace(Message.tensor(meta, array), data_label=newest.data_label)


class CountBatcher(_Batcher):
    """A CountBatch: `batch_size` tensors stacked along a new leading dimension, sliding by the
    stride; with a timeout, a batch that long in the making goes out as it is (zero-padded to
    `batch_size` with `padding`); the timer starts at the first input after a batch went out."""

    def __init__(self, node_name: str, spec: CountBatchSpec):
        super().__init__(node_name)
        self._spec = spec
        self._started: float | None = None

    def wait_seconds(self, now: float) -> float | None:
        if not self._spec.timeout or self._started is None:
            return None
        return max(0.0, self._started + self._spec.timeout / 1000 - now)

    def push(self, message: Message, now: float) -> list[Message]:
        if message.ret_code != 0 or message.kind is Kind.EMPTY:
            return [message]
        why = self._mismatch(message)
        if why is None and self._batch and message.payload.shape != self._batch[0].payload.shape:
            why = (f"a tensor of shape {message.payload.shape} cannot join a batch of "
                   f"{self._batch[0].payload.shape}")
        if why is not None:
            return [self._refused(message, f"CountBatch: {why}")]
        if self._started is None:
            self._started = now
        self._batch.append(message)
        if len(self._batch) < self._spec.batch_size:
            return []
        self._started = None
        return [self._emit([m.payload for m in self._batch])]

    def expire(self, now: float) -> list[Message]:
        wait = self.wait_seconds(now)
        if wait is None or wait > 0:
            return []
        if not self._batch:
            self._started = None
            return []
        arrays = [m.payload for m in self._batch]
        if self._spec.padding:
            arrays += [np.zeros_like(arrays[0])] * (self._spec.batch_size - len(arrays))
        output = self._emit(arrays)
        self._started = now if self._batch else None
        return [output]

    def _emit(self, arrays: list[np.ndarray]) -> Message:
        """The batch of `arrays`; the window slides by the stride (padding never stays in it)."""
        output = self._output(np.stack(arrays), self._batch[-1])
        del self._batch[:self._spec.stride]
        return output


class TimeBatcher(_Batcher):
    """A TimeBatch: tensors joined along `batch_dim` (a new leading one for -1) from the first
    one's `start_time` until `end_time - start_time` reaches the window, or an EOS or SEG flag
    ends the batch (the only end of a window of -1)."""

    def __init__(self, node_name: str, spec: TimeBatchSpec):
        super().__init__(node_name)
        self._spec = spec

    def push(self, message: Message, now: float) -> list[Message]:
        if message.ret_code != 0:
            return [message]
        if message.kind is Kind.EMPTY:
            if not message.meta.flow_flags & FlowFlag.DATA_FLOW_FLAG_EOS:
                return [self._refused(message, "TimeBatch: an empty message without the EOS flag")]
            return self._end(message) if self._batch else [message]
        why = self._mismatch(message) or self._out_of_order(message)
        if why is not None:
            return [self._refused(message, f"TimeBatch: {why}")]
        self._batch.append(message)
        if _span(self._batch) == self._spec.time_window or message.meta.flow_flags & ENDS_BATCH:
            return self._end(message)
        return []

    def _out_of_order(self, message: Message) -> str | None:
        meta, window, shape = message.meta, self._spec.time_window, message.payload.shape
        if meta.start_time > meta.end_time:
            return f"start_time {meta.start_time} is after end_time {meta.end_time}"
        if self._spec.batch_dim != NEW_DIM and self._spec.batch_dim >= len(shape):
            return f"batch_dim {self._spec.batch_dim} is not a dimension of a tensor of shape {shape}"
        if not self._batch:
            return None
        last = self._batch[-1].meta
        if meta.start_time < last.end_time:
            return f"start_time {meta.start_time} is before the last input's end_time {last.end_time}"
        if window > 0 and meta.end_time - self._batch[0].meta.start_time > window:
            return (f"end_time {meta.end_time} is past the window of {window} ms that started at "
                    f"{self._batch[0].meta.start_time}")
        first = self._batch[0].payload.shape
        keep = [d for d in range(len(first)) if d != self._spec.batch_dim]
        if len(shape) != len(first) or any(shape[d] != first[d] for d in keep):
            return f"a tensor of shape {shape} cannot join a batch of {first} along dim {self._spec.batch_dim}"
        return None

    def _end(self, newest: Message) -> list[Message]:
        """The batch as it stands, ended by `newest` (or dropped with `drop_remainder` when its
        window is not full; an EOS marker then goes on alone)."""
        batch, self._batch = self._batch, []
        window = self._spec.time_window
        if window > 0 and self._spec.drop_remainder and _span(batch) < window:
            eos = newest.meta.flow_flags & FlowFlag.DATA_FLOW_FLAG_EOS
            return [replace(Message.empty(replace(newest.meta, flow_flags=FlowFlag.DATA_FLOW_FLAG_EOS)),
                            data_label=newest.data_label)] if eos else []
        arrays = [m.payload for m in batch]
        joined = np.stack(arrays) if self._spec.batch_dim == NEW_DIM else np.concatenate(arrays, self._spec.batch_dim)
        return [self._output(joined, newest, start_time=batch[0].meta.start_time, end_time=batch[-1].meta.end_time)]


def _span(batch: list[Message]) -> int:
    return batch[-1].meta.end_time - batch[0].meta.start_time
