"""A reference executor of a wired graph: node funcs on worker threads joined by bounded FIFO channels.

Frontends talk to it through four calls that a native core can provide instead:
`submit` (one transaction's graph inputs), `deliver` (a func's output, node to node), `fetch`
(one message from each selected graph output) and `close`.

Algorithm:
  1. Every node input and every graph output gets a channel: a FIFO holding at most `depth`
     messages. A graph input or a node output port feeds every channel wired to it (`Source`).
  2. Each func of each node runs on its own daemon thread. A plain func fires when each of its
     inputs has a message: it takes one from each and hands them to `FuncSpec.run`, which
     yields output sets; every message of a set is delivered to the node's consumers.
     An error message among the inputs is not run: it is forwarded to each of the func's outputs.
  3. A stream-input func is called whenever one of its inputs has a message, with one
     `InputStream` per input that it reads as it likes; a call that reads nothing waits for a
     new arrival before the next call, so such a func cannot spin.
  4. A full channel blocks its producer (backpressure); a put into several channels waits until
     all have room and then fills them together, so a transaction is never half submitted.
  5. `close()` wakes every waiter: workers and UDFs blocked in a channel read raise `Cancelled`
     and end; threads busy in user code are daemons and cannot keep the interpreter alive.

One lock guards all channels: this is the reference executor, simple before fast.
"""
from __future__ import annotations

import queue
import threading
import time
from collections import defaultdict, deque
from typing import Sequence

from dfir.runtime.funcs import (
    Cancelled,
    FuncSpec,
    NodeSpec,
    SchedulerClosed,
    Source,
    check_funcs,
    check_outputs,
    check_sources,
)

from dfir.core.messages import Message, TransactionMeta
from dfir.frontend.flow_func.status import FLOW_FUNC_FAILED
from dfir.om.plan import DEFAULT_CHANNEL_DEPTH

CLOSE_JOIN_SECONDS = 1.0  # how long close() waits for workers that are busy in user code


class _Channel:
    __slots__ = ("items", "depth", "departures")

    def __init__(self, depth: int):
        self.items: deque[Message] = deque()
        self.depth = depth
        self.departures = 0  # messages taken so far

    def has_room(self) -> bool:
        return len(self.items) < self.depth

    def push(self, message: Message) -> None:
        self.items.append(message)

    def pop(self) -> Message:
        self.departures += 1
        return self.items.popleft()


class ThreadInputStream:
    """One input channel as a stream-input func reads it (see `dfir.frontend.flow_func.FlowMsgQueue`)."""

    def __init__(self, scheduler: Scheduler, channel: _Channel):
        self._scheduler = scheduler
        self._channel = channel

    def take(self, block: bool = True, timeout: float | None = None) -> Message:
        """The next message; `queue.Empty` when none comes in time; `Cancelled` once closed."""
        return self._scheduler._take_one(self._channel, timeout if block else 0.0)

    def pending(self) -> int:
        return len(self._channel.items)


class Scheduler:
    """Runs `nodes` (see the module docstring); `outputs` lists the graph outputs in fetch order."""

    def __init__(self, name: str, nodes: Sequence[NodeSpec], num_inputs: int,
                 outputs: Sequence[Source], depth: int = DEFAULT_CHANNEL_DEPTH):
        _check_wiring(nodes, num_inputs, outputs)
        self.name = name
        self._cond = threading.Condition()
        self._closed = False
        self._node_inputs = [[_Channel(depth) for _ in node.sources] for node in nodes]
        self._outputs = [_Channel(depth) for _ in outputs]
        self._routes: dict[Source, list[_Channel]] = defaultdict(list)
        for n, node in enumerate(nodes):
            for j, source in enumerate(node.sources):
                self._routes[source].append(self._node_inputs[n][j])
        for i, source in enumerate(outputs):
            self._routes[source].append(self._outputs[i])
        self._nodes = list(nodes)
        self._threads = [self._start_worker(n, func) for n, node in enumerate(nodes)
                         for func in node.funcs]

    @property
    def closed(self) -> bool:
        return self._closed

    def submit(self, inputs: Sequence[Message | None], timeout_ms: int = -1) -> bool:
        """Put graph input k's message `inputs[k]` (None: not fed) on its consumers' channels.

        All or nothing: waits until every target channel has room. False when `timeout_ms`
        (-1: forever) passes first; a GeError once the scheduler is closed.
        """
        targets = [(channel, message) for k, message in enumerate(inputs) if message is not None
                   for channel in self._routes.get(Source(None, k), ())]
        with self._cond:
            if not self._wait_for_caller(lambda: all(ch.has_room() for ch, _ in targets), timeout_ms):
                return False
            for channel, message in targets:
                channel.push(message)
            self._cond.notify_all()
        return True

    def deliver(self, node: int, port: int, message: Message) -> None:
        """Put `message` from output `port` of `node` on its consumers' channels.

        Blocks while one of them is full; `Cancelled` once the scheduler closes.
        """
        targets = self._routes.get(Source(node, port), ())
        with self._cond:
            self._wait_for(lambda: all(channel.has_room() for channel in targets))
            for channel in targets:
                channel.push(message)
            self._cond.notify_all()

    def fetch(self, indexes: Sequence[int], timeout_ms: int = -1) -> list[Message]:
        """One message from each graph output in `indexes` (distinct, non-empty), taken together.

        Returns [] when `timeout_ms` (-1: forever) passes before all of them have one; nothing is
        taken then. A GeError once the scheduler is closed.
        """
        assert indexes and len(set(indexes)) == len(indexes), "fetch needs distinct output indexes"
        channels = [self._outputs[i] for i in indexes]
        with self._cond:
            if not self._wait_for_caller(lambda: all(ch.items for ch in channels), timeout_ms):
                return []
            messages = [channel.pop() for channel in channels]
            self._cond.notify_all()
        return messages

    def close(self, wait: bool = True) -> None:
        """Stop every worker; with `wait`, give them up to CLOSE_JOIN_SECONDS to end. Idempotent."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.notify_all()
        if not wait:
            return
        deadline = time.monotonic() + CLOSE_JOIN_SECONDS
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))

    # -- waiting (all with self._cond held) ---------------------------------------------------

    def _wait_for(self, ready: Callable[[], bool], timeout_s: float | None = None) -> bool:
        """Wait until `ready()` (True) or `timeout_s` passes (False); `Cancelled` once closed."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            if self._closed:
                raise Cancelled
            if ready():
                return True
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            self._cond.wait(remaining)

    def _wait_for_caller(self, ready: Callable[[], bool], timeout_ms: int) -> bool:
        """`_wait_for` for frontend calls: milliseconds (-1: forever) and a GeError once closed."""
        try:
            return self._wait_for(ready, None if timeout_ms < 0 else timeout_ms / 1000)
        except Cancelled:
            raise SchedulerClosed(f"model '{self.name}' is closed") from None

    def _take_one(self, channel: _Channel, timeout_s: float | None) -> Message:
        with self._cond:
            if not self._wait_for(lambda: bool(channel.items), timeout_s):
                raise queue.Empty
            message = channel.pop()
            self._cond.notify_all()
        return message

    # -- workers ------------------------------------------------------------------------------

    def _start_worker(self, node: int, func: FuncSpec) -> threading.Thread:
        thread = threading.Thread(target=self._work, args=(node, func), daemon=True,
                                  name=f"dfir:{self.name}:{self._nodes[node].name}.{func.name}")
        thread.start()
        return thread

    def _work(self, node: int, func: FuncSpec) -> None:
        channels = [self._node_inputs[node][j] for j in func.inputs]
        loop = self._stream_loop if func.stream_input else self._firing_loop
        try:
            loop(node, func, channels)
        except Cancelled:
            pass

    def _firing_loop(self, node: int, func: FuncSpec, channels: list[_Channel]) -> None:
        while True:
            with self._cond:
                self._wait_for(lambda: all(channel.items for channel in channels))
                messages = [channel.pop() for channel in channels]
                self._cond.notify_all()
            failed = next((m for m in messages if m.is_error), None)
            if failed is not None:
                self._emit(node, func, [[(port, failed) for port in func.outputs]], failed)
            else:
                self._emit(node, func, func.run(messages), messages[0])

    def _stream_loop(self, node: int, func: FuncSpec, channels: list[_Channel]) -> None:
        streams = [ThreadInputStream(self, channel) for channel in channels]
        stalled_on = None  # the waiting count after a call that read nothing: wait for a change
        while True:
            with self._cond:
                self._wait_for(lambda: _waiting(channels) not in (0, stalled_on))
                taken_before = _taken(channels)
            self._emit(node, func, func.run(streams), None)
            with self._cond:
                stalled_on = _waiting(channels) if _taken(channels) == taken_before else None

    def _emit(self, node: int, func: FuncSpec, output_sets: Iterable[OutputSet],
              cause: Message | None) -> None:
        """Deliver each output set; a func whose `run` breaks fails its outputs instead of its thread."""
        try:
            for output_set in output_sets:
                for port, message in output_set:
                    self.deliver(node, port, message)
        except Exception as exc:  # noqa: BLE001 - the worker must outlive a broken executor
            meta = cause.meta if cause is not None else TransactionMeta()
            failure = Message.failure(meta, FLOW_FUNC_FAILED, f"node '{self._nodes[node].name}' "
                                      f"func '{func.name}' failed: {type(exc).__name__}: {exc}")
            for port in func.outputs:
                self.deliver(node, port, failure)


def _taken(channels: list[_Channel]) -> int:
    return sum(channel.departures for channel in channels)


def _waiting(channels: list[_Channel]) -> int:
    return sum(len(channel.items) for channel in channels)


def _check_wiring(nodes: Sequence[NodeSpec], num_inputs: int, outputs: Sequence[Source]) -> None:
    """GeError unless every source exists and every node input is consumed by exactly one func."""
    for node in nodes:
        check_sources(nodes, num_inputs, node)
        check_funcs(node)
    check_outputs(nodes, num_inputs, outputs)
