"""A device worker: the process that runs one logical device's nodes (see docs/runtime.md).

The driver (`dfir.runtime.process_scheduler`) forks one worker per device of the plan once the
model's region exists; the child inherits the loaded `.om` (plan, UDF payloads, weights, all
mapped, not copied) and the region, and calls `run_worker`, which never returns:

  1. It ties its life to the driver's (a native watch thread ends it when the driver exits),
     ignores Ctrl-C (the driver handles it and closes the model) and unmaps the regions of
     models it does not serve.
  2. It builds its device's nodes (`build(indexes)`, i.e. `host.build_nodes`) and reports to
     the driver through `ready_fd`: ready, or the GeError that makes the load fail.
  3. `DeviceExecutor` runs each func of each node on its own thread. A plain func fires when each
     of its inputs holds a message and takes everything that waits (up to MAX_BATCH sets) in one
     call; a stream-input func reads its inputs as queues. Outputs go to local channels (nodes of
     this device) or shared ones (other devices, the driver); an output whose one consumer is a
     plain single-input func of this device is handed to it by a direct call instead, on the
     producer's thread (in chains of at most MAX_CALL_DEPTH nodes), which saves a channel and a
     thread switch per message. Numpy arrays of at least ARENA_THRESHOLD bytes that the funcs
     allocate live in the region's arena, so a result crosses to another process without a copy.
  4. When the region closes, every wait returns CLOSED, the threads end, and the process exits
     with EXIT_OK once they have (or after THREAD_GRACE_SECONDS, ending threads still busy in
     user code). A MemoryError, or a failure of the executor itself, ends the process with
     EXIT_FATAL after writing why into its worker slot, which the driver reads.
"""
from __future__ import annotations

import math
import os
import pickle
import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, Collection, Iterable, Sequence

from dfir.flow_func.status import FLOW_FUNC_FAILED
from dfir.ge.error import GeError
from dfir.runtime import channels
from dfir.runtime.messages import Message, TransactionMeta
from dfir.runtime.scheduler import Cancelled, FuncSpec, NodeSpec, OutputSet, Source, check_funcs

MAX_BATCH = 64                 # input sets a plain func takes per wake-up
MAX_CALL_DEPTH = 16            # nodes one chain of direct calls may span (bounds the recursion)
ARENA_THRESHOLD = 64 * 1024    # numpy arrays this large or larger are allocated in the arena
THREAD_GRACE_SECONDS = 0.2     # how long a closing worker waits for its threads
EXIT_OK = 0
EXIT_BUILD_FAILED = 3          # the device's nodes could not be built (reported to the driver)
EXIT_DRIVER_GONE = 4           # the driver process exited
EXIT_FATAL = 70                # MemoryError or an executor failure (see the worker slot)

NodeBuilder = Callable[[Collection[int]], Sequence[NodeSpec]]  # node indexes -> their NodeSpecs


@dataclass(frozen=True)
class DeviceWiring:
    """What a worker needs to know of the model's topology (built by the driver).

    `node_inputs[n][j]` is the channel of input j of node n; `routes[source]` the channels a graph
    input or node output feeds; `node_bells[n]` the doorbell node n's funcs sleep on;
    `worker_bells[w]` the doorbell of worker w's main thread; `shared[c]` whether channel c is
    shared; `order` the nodes with producers before consumers.
    """

    name: str
    node_names: tuple[str, ...]
    order: tuple[int, ...]
    shared: tuple[bool, ...]
    node_inputs: tuple[tuple[int, ...], ...]
    routes: dict[Source, tuple[int, ...]]
    node_bells: tuple[int, ...]
    worker_bells: tuple[int, ...]


def run_worker(region, wiring: DeviceWiring, worker: int, nodes: Sequence[int], build: NodeBuilder,
               ready_fd: int, driver_pid: int) -> None:
    """The body of a forked worker process; exits the process, never returns."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from dfir.runtime import _native
    _native.exit_when_process_ends(driver_pid, EXIT_DRIVER_GONE)
    channels.detach_other_regions(region)
    region.set_pid(worker, os.getpid())
    try:
        built = list(build(nodes))
        for spec in built:
            check_funcs(spec)
    except GeError as error:
        _report(ready_fd, ("error", error.error_message, error.api_name, error.context))
        _exit(EXIT_BUILD_FAILED)
    except BaseException as error:  # noqa: BLE001 - user constructors run here and can raise anything
        _report(ready_fd, ("error", f"building the nodes of worker {worker} raised "
                                    f"{type(error).__name__}: {error}", "", {}))
        _exit(EXIT_BUILD_FAILED)
    executor = DeviceExecutor(region, wiring, worker, dict(zip(nodes, built)))
    executor.start()
    _report(ready_fd, ("ready",))
    executor.wait_until_closed()
    _exit(EXIT_OK)


def _report(fd: int, report: tuple) -> None:
    os.write(fd, pickle.dumps(report))
    os.close(fd)


def _exit(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream must not keep the process alive
            pass
    os._exit(code)


class DeviceExecutor:
    """Runs the funcs of one device's nodes on threads of this process (see the module docstring)."""

    def __init__(self, region, wiring: DeviceWiring, worker: int, nodes: dict[int, NodeSpec]):
        self._region = region
        self._wiring = wiring
        self._worker = worker
        self._nodes = nodes
        self._threads: list[threading.Thread] = []
        self._targets = {(source.node, source.index): channels_ for source, channels_ in wiring.routes.items()
                         if source.node in nodes}
        self._direct = self._direct_calls()
        self._running = region.running_node(worker)  # a one-int view: where a crash happened

    def _direct_calls(self) -> dict[tuple[int, int], tuple[int, FuncSpec]]:
        """(node, port) -> the (node, func) its messages are handed to by a direct call: the one
        consumer, a plain single-input func of this device, at most MAX_CALL_DEPTH calls deep."""
        consumer_of = {channel: (n, j) for n in self._nodes
                       for j, channel in enumerate(self._wiring.node_inputs[n])}
        depth: dict[tuple[int, str], int] = {}  # a func's position in its chain of direct calls
        direct = {}
        for node in (n for n in self._wiring.order if n in self._nodes):
            for func in self._nodes[node].funcs:
                for port in func.outputs:
                    targets = self._targets.get((node, port), ())
                    if len(targets) != 1 or self._wiring.shared[targets[0]]:
                        continue
                    consumer, j = consumer_of[targets[0]]
                    taker = next(f for f in self._nodes[consumer].funcs if j in f.inputs)
                    calls = depth.get((node, func.name), 0) + 1
                    if taker.stream_input or len(taker.inputs) != 1 or calls > MAX_CALL_DEPTH:
                        continue
                    direct[(node, port)] = (consumer, taker)
                    depth[(consumer, taker.name)] = calls
        return direct

    def start(self) -> None:
        called = {(node, func.name) for node, func in self._direct.values()}
        for node, spec in self._nodes.items():
            for func in spec.funcs:
                if (node, func.name) in called:
                    continue  # its input never holds a message: its producer calls it
                thread = threading.Thread(target=self._run_func, args=(node, func), daemon=True,
                                          name=f"dfir:{self._wiring.name}:{spec.name}.{func.name}")
                thread.start()
                self._threads.append(thread)

    def wait_until_closed(self) -> None:
        """Sleep until the region closes, then give the func threads a moment to end."""
        while self._region.wait_for_close(self._wiring.worker_bells[self._worker], -1) != channels.CLOSED:
            pass
        deadline = time.monotonic() + THREAD_GRACE_SECONDS
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def deliver(self, node: int, port: int, message: Message) -> None:
        """Hand `message` from output `port` of `node` to its consumers: by a direct call, or on
        their channels (waiting for room)."""
        direct = self._direct.get((node, port))
        if direct is not None:
            consumer, func = direct
            self._running[0] = consumer
            self._fire(consumer, func, (message,))
            self._running[0] = node
            return
        targets = self._targets.get((node, port))
        if targets and self._region.put([(channel, message) for channel in targets], -1) == channels.CLOSED:
            raise Cancelled

    # -- func threads -----------------------------------------------------------------------

    def _run_func(self, node: int, func: FuncSpec) -> None:
        self._region.use_arena_allocator(ARENA_THRESHOLD)
        inputs = [self._wiring.node_inputs[node][j] for j in func.inputs]
        loop = self._stream_loop if func.stream_input else self._firing_loop
        try:
            loop(node, func, inputs)
        except Cancelled:
            pass
        except MemoryError as error:
            self._die(f"MemoryError in node '{self._wiring.node_names[node]}': {error}")
        except BaseException as error:  # noqa: BLE001 - the driver must learn why this worker stops
            self._die(f"func {func.name} of node '{self._wiring.node_names[node]}' failed: "
                      f"{type(error).__name__}: {error}")

    def _die(self, last_words: str) -> None:
        self._region.set_last_words(self._worker, last_words)
        _exit(EXIT_FATAL)

    def _firing_loop(self, node: int, func: FuncSpec, inputs: list[int]) -> None:
        bell = self._wiring.node_bells[node]
        while True:
            sets = self._region.take(inputs, bell, MAX_BATCH, -1)
            if sets is None:
                raise Cancelled
            self._running[0] = node
            for messages in sets:
                self._fire(node, func, messages)
            self._running[0] = -1

    def _fire(self, node: int, func: FuncSpec, messages: Sequence[Message]) -> None:
        """Run a plain func on one message per input; an error message is forwarded, not run."""
        for message in messages:
            if message.ret_code != 0:
                self._emit(node, func, [[(port, message) for port in func.outputs]], message)
                return
        self._emit(node, func, func.run(list(messages)), messages[0])

    def _stream_loop(self, node: int, func: FuncSpec, inputs: list[int]) -> None:
        bell = self._wiring.node_bells[node]
        streams = [ChannelStream(self._region, channel, bell) for channel in inputs]
        stalled_on = -1  # the waiting count after a call that read nothing: wait for a change
        while True:
            if self._region.wait_for_change(inputs, bell, stalled_on, -1) == channels.CLOSED:
                raise Cancelled
            taken_before = sum(self._region.pops(channel) for channel in inputs)
            self._running[0] = node
            self._emit(node, func, func.run(streams), None)
            self._running[0] = -1
            if sum(self._region.pops(channel) for channel in inputs) == taken_before:
                stalled_on = sum(self._region.size(channel) for channel in inputs)
            else:
                stalled_on = -1

    def _emit(self, node: int, func: FuncSpec, output_sets: Iterable[OutputSet],
              cause: Message | None) -> None:
        """Deliver each output set; a func whose `run` breaks fails its outputs instead of its thread."""
        try:
            for output_set in output_sets:
                for port, message in output_set:
                    self.deliver(node, port, message)
        except (Cancelled, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - the worker must outlive a broken executor
            meta = cause.meta if cause is not None else TransactionMeta()
            failure = Message.failure(meta, FLOW_FUNC_FAILED, f"node '{self._wiring.node_names[node]}' "
                                      f"func '{func.name}' failed: {type(exc).__name__}: {exc}")
            for port in func.outputs:
                self.deliver(node, port, failure)


class ChannelStream:
    """One input channel as a stream-input func reads it (see `dfir.flow_func.FlowMsgQueue`)."""

    def __init__(self, region, channel: int, bell: int):
        self._region = region
        self._channel = channel
        self._bell = bell

    def take(self, block: bool = True, timeout: float | None = None) -> Message:
        """The next message; `queue.Empty` when none comes in time; `Cancelled` once closed."""
        timeout_ms = 0 if not block else -1 if timeout is None else max(0, math.ceil(timeout * 1000))
        sets = self._region.take([self._channel], self._bell, 1, timeout_ms)
        if sets is None:
            raise Cancelled
        if not sets:
            raise queue.Empty
        return sets[0][0]

    def pending(self) -> int:
        return self._region.size(self._channel)
