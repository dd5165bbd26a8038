"""The executor of a wired graph: node funcs on worker threads joined by bounded FIFO channels.

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
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from dfir.core.errors import GeError
from dfir.core.messages import Message, TransactionMeta
from dfir.frontend.flow_func.status import FLOW_FUNC_FAILED
from dfir.om.plan import DEFAULT_CHANNEL_DEPTH

CLOSE_JOIN_SECONDS = 1.0  # how long close() waits for workers that are busy in user code

OutputSet = list[tuple[int, Message]]  # (node output port, message) pairs emitted together


class Cancelled(BaseException):
    """Raised in workers, and in UDFs blocked on a channel read, when the scheduler closes.

    A BaseException (like `asyncio.CancelledError`) so that a UDF's `except Exception` cannot
    swallow the shutdown.
    """


class SchedulerClosed(GeError):
    """A frontend call (`submit`, `fetch`) on a closed scheduler, or one closed while it waited."""


@dataclass(frozen=True)
class Source:
    """Where a channel's messages come from: graph input `index` (`node` None), input `index` of
    flow closure `closure` (`node` None), or a node's port."""

    node: int | None
    index: int
    closure: int | None = None


@dataclass(frozen=True)
class FuncSpec:
    """One entry point of a node: the node inputs it consumes and the node outputs it produces.

    `run` receives one `Message` per input (a plain func, never an error message) or one
    `InputStream` per input (`stream_input`), and returns the output sets to emit, in order.
    """

    name: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    stream_input: bool
    run: Callable[[list], Iterable[OutputSet]]


@dataclass(frozen=True)
class NodeSpec:
    name: str
    sources: tuple[Source, ...]  # one per node input
    num_outputs: int
    funcs: tuple[FuncSpec, ...]


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


class InputStream:
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
        streams = [InputStream(self, channel) for channel in channels]
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


def check_outputs(nodes: Sequence[NodeSpec], num_inputs: int, outputs: Sequence[Source]) -> None:
    """GeError unless every graph output comes from a graph input or node output that exists."""
    for i, source in enumerate(outputs):
        _check_source(nodes, num_inputs, source, f"graph output {i}")


def check_sources(nodes: Sequence[NodeSpec], num_inputs: int, node: NodeSpec) -> None:
    """GeError unless every input of `node` comes from a graph input or node output that exists."""
    for j, source in enumerate(node.sources):
        _check_source(nodes, num_inputs, source, f"node '{node.name}' input {j}")


def check_funcs(node: NodeSpec) -> None:
    """GeError unless each func of `node` uses ports it has and each input has exactly one func."""
    for func in node.funcs:
        if not func.inputs:
            raise GeError(f"node '{node.name}' func '{func.name}' has no inputs; "
                          f"a func needs at least one")
        _check_ports(node, func, "reads inputs", func.inputs, len(node.sources))
        _check_ports(node, func, "writes outputs", func.outputs, node.num_outputs)
    for j in range(len(node.sources)):
        consumers = [func.name for func in node.funcs if j in func.inputs]
        if len(consumers) != 1:
            raise GeError(f"node '{node.name}' input {j} is consumed by funcs {consumers}; "
                          f"expected exactly one")


def _check_ports(node: NodeSpec, func: FuncSpec, verb: str, ports: tuple[int, ...], count: int) -> None:
    if any(not 0 <= port < count for port in ports):
        raise GeError(f"node '{node.name}' func '{func.name}' {verb} {list(ports)} but the node "
                      f"has {count}")


def _check_source(nodes: Sequence[NodeSpec], num_inputs: int, source: Source, where: str) -> None:
    if source.node is None:
        if not 0 <= source.index < num_inputs:
            raise GeError(f"{where} comes from graph input {source.index}, but the graph has "
                          f"{num_inputs} inputs")
    elif not 0 <= source.node < len(nodes):
        raise GeError(f"{where} comes from node {source.node}, but the graph has {len(nodes)} nodes")
    elif not 0 <= source.index < nodes[source.node].num_outputs:
        producer = nodes[source.node]
        raise GeError(f"{where} comes from output {source.index} of node '{producer.name}', "
                      f"which has {producer.num_outputs} outputs")
