"""A device worker: the process that runs one logical device's nodes (see docs/runtime.md).

The driver (`dfir.runtime.driver.process_scheduler`) forks one worker per device of the plan once the
model's region exists; the child inherits the loaded `.om` (plan, UDF payloads, weights, all
mapped, not copied) and the region, and calls `run_worker`, which never returns:

  1. It ties its life to the driver's (a native watch thread ends it when the driver exits),
     ignores Ctrl-C (the driver handles it and closes the model) and unmaps the regions of
     models it does not serve.
  2. It builds its device's node instances (`build(instance refs, flow closure ports)`, i.e.
     `host.build_nodes`)
     and reports to the driver through `ready_fd`: ready, or the GeError that makes the load fail.
  3. `DeviceExecutor` runs each func of each node instance ("unit") on a thread of its own, in
     one of three loops:
     - the set loop of a plain func, which fires when each of its inputs holds a message and
       takes everything that waits (up to MAX_BATCH sets) per batch. It is native
       (`_native.SetStep.run`, runtime/bindings/set_steps.h); its step (`_step`), chosen once per
       func, is one of: a chain of plain single-output Python funcs joined by direct calls
       (`LeanChain`, each but the first single-input; `LeanStep`: array results never become
       Messages); a plain C++ UDF func (`UdfStep`: records in, records out, no Python object per
       message; its outputs always go on shared channels); any other func whose outputs go to
       fixed channels (flow_func projects, GE graphs, batching nodes, multi-output `@pyflow`
       funcs), its output sets put natively around its one Python call (`OutputsStep`); else the
       general step (`MessageStep`: each set as Messages to `_fire`).
     - the aligned loop, for a func whose node pairs its inputs by (transaction id, data label)
       (native `Aligner`): it fires each complete group and expires groups at their deadline.
     - the stream loop, for a stream-input func, which reads its inputs as queues.
     A device with more than POOL_ABOVE lean chains fires them all from one thread
     (`FiringPool`), with the same steps. Outputs go to local channels (nodes of this device) or
     shared ones (other devices, the driver); a replicated consumer input gets each message on
     one of its instances' channels, picked by the consumer's dispatch rule (`Targets`). An
     output whose one consumer is a plain single-input func of a single-instance node of this
     device, produced by a single-instance node, is handed to it by a direct call instead, on
     the producer's thread (in chains of at most MAX_CALL_DEPTH nodes), which saves a channel
     and a thread switch per message. An output message without a data label takes its input's
     (plain funcs).
     Numpy arrays of at least ARENA_THRESHOLD bytes that the funcs allocate live in the region's
     arena, so a result crosses to another process without a copy.
  4. When the region closes, every wait returns CLOSED, the threads end, and the process exits
     with EXIT_OK once they have (or after THREAD_GRACE_SECONDS, ending threads still busy in
     user code). A MemoryError, or a failure of the executor itself, ends the process with
     EXIT_FATAL after writing why into its worker slot, which the driver reads.
"""
from __future__ import annotations

import contextlib
import functools
import math
import os
import pickle
import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Collection, Iterable, Sequence

from dfir.core.errors import GeError
from dfir.core.messages import Message, TransactionMeta
from dfir.frontend.flow_func.status import FLOW_FUNC_FAILED
from dfir.om.plan import Align
from dfir.runtime import _native, channels
from dfir.runtime.alignment import ChannelAligner, Unaligned
from dfir.runtime.funcs import Cancelled, FuncSpec, NodeSpec, OutputSet, Source, check_funcs
from dfir.runtime.worker.flow_closures import ClosureWiring, FlowClosurePorts
from dfir.runtime.worker.host import InstanceRef, UdfCall

MAX_BATCH = 64                 # input sets a plain func takes per wake-up
POOL_ABOVE = 64                # lean chains a device runs on a thread each; more share a FiringPool
ROOM_POLL_MS = 1               # how often a FiringPool looks for room in a full output
MAX_CALL_DEPTH = 16            # nodes one chain of direct calls may span (bounds the recursion)
ARENA_THRESHOLD = 64 * 1024    # numpy arrays this large or larger are allocated in the arena
THREAD_GRACE_SECONDS = 0.2     # how long a closing worker waits for its threads
EXIT_OK = 0
EXIT_BUILD_FAILED = 3          # the device's nodes could not be built (reported to the driver)
EXIT_DRIVER_GONE = 4           # the driver process exited
EXIT_FATAL = 70                # MemoryError or an executor failure (see the worker slot)
EXIT_TIMEOUT = 71              # a call ran past its node's udf_timeout_ms (see the worker slot)
_NO_TRANSACTION = (1 << 64) - 1  # what a timed call that reads its inputs itself (stream input) runs for

# (instances, the flow closures' runners) -> the instances' NodeSpecs
NodeBuilder = Callable[[Collection[InstanceRef], FlowClosurePorts], Sequence[NodeSpec]]


@dataclass(frozen=True)
class Targets:
    """Where the messages of one graph input or node output go: every message to each channel
    of `fixed` (single-instance consumers, graph outputs) and to one channel of each `spread`
    group (a replicated consumer input: one channel per instance), picked by the group's
    `_native.InstanceDispatcher`."""

    fixed: tuple[int, ...]
    spread: tuple[tuple[Any, tuple[int, ...]], ...] = ()

    def channels_for(self, message: Message) -> tuple[int, ...]:
        return self.route(message.meta.transaction_id, message.route_label)

    def all(self) -> tuple[int, ...]:
        """Every channel a message may go to."""
        return self.fixed + tuple(channel for _, group in self.spread for channel in group)

    def route(self, transaction_id: int, route_label: int = 0) -> tuple[int, ...]:
        """The channels a message of `transaction_id` with `route_label` goes to."""
        if not self.spread:
            return self.fixed
        return self.fixed + tuple(group[dispatcher.route(transaction_id, route_label)]
                                  for dispatcher, group in self.spread)


@dataclass(frozen=True)
class LeanChain:
    """The common case of a plain func, run without output sets: every input set passes through
    `steps`, the (node, UdfCall) of the func and of the funcs it hands its output to by direct
    calls, each a plain single-output Python func (`UdfCall.plain_single`; all but the first
    single-input); the last one's output goes to every channel of `channels` (one group of fixed
    targets, maybe none). (`last_unit`, `last_func`, `last_port`): the last step's output."""

    steps: tuple[tuple[int, UdfCall], ...]
    channels: tuple[int, ...]
    last_unit: int
    last_func: FuncSpec
    last_port: int


def device_label(device: str) -> str:
    """A device as messages name it: "host" for the host, else its "server:chip:core" id."""
    return "host" if device in ("-1", "host") else device


@dataclass(frozen=True)
class DeviceWiring:
    """What a worker needs to know of the model's topology (built by the driver).

    A *unit* is one instance of one node: `units[u]` is its `InstanceRef`. `unit_inputs[u][j]`
    is the channel of input j of unit u; `unit_bells[u]` the doorbell its funcs sleep on;
    `routes[source]` where a graph input or node output goes; `instance_nums[n]` and
    `aligns[n]` node n's instance count and alignment; `worker_bells[w]` the doorbell of worker
    w's main thread; `shared[c]` whether channel c is shared; `order` the nodes with producers
    before consumers.
    """

    name: str
    node_names: tuple[str, ...]
    order: tuple[int, ...]
    shared: tuple[bool, ...]
    units: tuple[InstanceRef, ...]
    unit_inputs: tuple[tuple[int, ...], ...]
    routes: dict[Source, Targets]
    unit_bells: tuple[int, ...]
    worker_bells: tuple[int, ...]
    instance_nums: tuple[int, ...]
    aligns: tuple[Align | None, ...]
    closures: tuple[ClosureWiring, ...] = ()  # the plan's flow closures (runtime/worker/flow_closures.py)
    udf_timeouts: tuple[int | None, ...] = ()  # per node: its udf_timeout_ms, None: no limit


def run_worker(region, wiring: DeviceWiring, worker: int, units: Sequence[int], build: NodeBuilder,
               ready_fd: int, driver_pid: int, trace_log: Any = None) -> None:
    """The body of a forked worker process; exits the process, never returns. `trace_log`: the
    model's `_native.TraceLog` when it is traced (runtime/driver/tracing.py), else None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _native.exit_when_process_ends(driver_pid, EXIT_DRIVER_GONE)
    channels.detach_other_regions(region)
    region.set_pid(worker, os.getpid())
    try:
        built = list(build([wiring.units[u] for u in units], FlowClosurePorts(region, wiring.closures)))
        for spec in built:
            check_funcs(spec)
    except GeError as error:
        _report(ready_fd, ("error", error.error_message, error.api_name, error.context))
        _exit(EXIT_BUILD_FAILED)
    except BaseException as error:  # noqa: BLE001 - user constructors run here and can raise anything
        _report(ready_fd, ("error", f"building the nodes of worker {worker} raised "
                                    f"{type(error).__name__}: {error}", "", {}))
        _exit(EXIT_BUILD_FAILED)
    executor = DeviceExecutor(region, wiring, worker, dict(zip(units, built)), trace_log)
    executor.start()
    _report(ready_fd, ("ready",))
    executor.wait_until_closed()
    _exit(EXIT_OK)


def _report(fd: int, report: tuple) -> None:
    try:
        os.write(fd, pickle.dumps(report))
    except BrokenPipeError:  # the driver stopped waiting: the model closed while this worker started
        _exit(EXIT_DRIVER_GONE)
    os.close(fd)


def _exit(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream must not keep the process alive
            pass
    os._exit(code)


class DeviceExecutor:
    """Runs the funcs of one device's node instances on threads of this process (see the module
    docstring). `units` maps each unit index of this device to its built NodeSpec; `trace_log`
    receives a slice of every firing when the model is traced."""

    def __init__(self, region, wiring: DeviceWiring, worker: int, units: dict[int, NodeSpec], trace_log: Any = None):
        self._region = region
        self._trace_log = trace_log
        self._wiring = wiring
        self._worker = worker
        self._units = units
        self._threads: list[threading.Thread] = []
        self._targets = {(unit, port): wiring.routes[Source(self._node(unit), port)]
                         for unit, spec in units.items() for port in range(spec.num_outputs)
                         if Source(self._node(unit), port) in wiring.routes}
        self._direct = self._direct_calls()
        self._running = region.running_node(worker)  # a one-int view: where a crash happened
        self._watch = _native.CallWatch(region, worker, EXIT_TIMEOUT)
        self._timers = {(unit, func.name): self._watch.add(self._call_name(unit), limit)
                        for unit, spec in units.items() if (limit := self._timeout(unit)) is not None
                        for func in spec.funcs}

    def _timeout(self, unit: int) -> int | None:
        """The udf_timeout_ms of `unit`'s node, None when its calls have no limit."""
        timeouts = self._wiring.udf_timeouts
        node = self._node(unit)
        return timeouts[node] if node < len(timeouts) else None

    def _call_name(self, unit: int) -> str:
        instance = self._wiring.units[unit].instance
        return f"node '{self._name(unit)}' instance {instance} on device {device_label(self._wiring.units[unit].device)}"

    def _node(self, unit: int) -> int:
        return self._wiring.units[unit].node

    def _direct_calls(self) -> dict[tuple[int, int], tuple[int, FuncSpec, int, int]]:
        """(unit, port) -> (consumer unit, its func, consumer node, producer node) for an output
        handed over by a direct call: the one
        consumer, a plain single-input func of a single-instance node of this device, fed by a
        single-instance producer through a FIFO channel, at most MAX_CALL_DEPTH calls deep."""
        wiring = self._wiring
        consumer_of = {channel: (u, j) for u in self._units for j, channel in enumerate(wiring.unit_inputs[u])}
        depth: dict[tuple[int, str], int] = {}  # a func's position in its chain of direct calls
        direct = {}
        by_node = {self._node(u): u for u in self._units if wiring.instance_nums[self._node(u)] == 1}
        for node in (n for n in wiring.order if n in by_node):
            unit = by_node[node]
            for func in self._units[unit].funcs:
                for port in func.outputs:
                    targets = wiring.routes.get(Source(node, port))
                    if targets is None or targets.spread or len(targets.fixed) != 1 \
                            or wiring.shared[targets.fixed[0]] or self._region.overwrites(targets.fixed[0]):
                        continue  # an OVERWRITE channel must hold and drop: no direct call past it
                    consumer, j = consumer_of[targets.fixed[0]]
                    taker = next(f for f in self._units[consumer].funcs if j in f.inputs)
                    calls = depth.get((unit, func.name), 0) + 1
                    if taker.stream_input or len(taker.inputs) != 1 or calls > MAX_CALL_DEPTH:
                        continue
                    if self._timeout(unit) is not None or self._timeout(consumer) is not None:
                        continue  # a timed call runs on a thread of its own, under its own timer
                    direct[(unit, port)] = (consumer, taker, self._node(consumer), node)
                    depth[(consumer, taker.name)] = calls
        return direct

    def _lean_chain(self, unit: int, func: FuncSpec) -> LeanChain | None:
        """The `LeanChain` starting at `func` of `unit`, or None when some func of the chain is not
        a plain single-output Python func or the last output goes to a replicated consumer (the
        general path handles those). Funcs called directly have one input (`_direct_calls`)."""
        steps = []
        while True:
            call = func.run
            if func.stream_input or not isinstance(call, UdfCall) or not call.plain_single:
                return None
            steps.append((self._node(unit), call))
            port = func.outputs[0]
            direct = self._direct.get((unit, port))
            if direct is None:
                break
            unit, func = direct[0], direct[1]
        targets = self._targets.get((unit, port))
        if targets is not None and targets.spread:
            return None
        return LeanChain(tuple(steps), targets.fixed if targets is not None else (), unit, func, port)

    def start(self) -> None:
        """Start a thread per func, or, when this device has more than POOL_ABOVE lean chains,
        one `FiringPool` thread for all of those and a thread for each other func; and the watch
        over the calls of nodes with a udf_timeout_ms."""
        self._watch.start()
        called = {(unit, func.name) for unit, func, _, _ in self._direct.values()}
        runs = [(unit, func) for unit, spec in self._units.items() for func in spec.funcs
                if (unit, func.name) not in called]  # a called func's producer calls it
        lean = {(unit, func.name): chain for unit, func in runs
                if self._loop_kind(unit, func) == "lean" and (chain := self._lean_chain(unit, func))}
        pooled = len(lean) > POOL_ABOVE
        if pooled:
            members = [(unit, func, chain) for unit, func in runs
                       if (chain := lean.get((unit, func.name))) is not None]
            pool = FiringPool(self, members)
            self._start_thread(pool.run, f"dfir:{self._wiring.name}:firing pool of {len(members)}")
        for unit, func in runs:
            if pooled and (unit, func.name) in lean:
                continue
            spec = self._units[unit]
            self._start_thread(functools.partial(self._run_func, unit, func),
                               f"dfir:{self._wiring.name}:{spec.name}#{self._wiring.units[unit].instance}"
                               f".{func.name}")

    def _start_thread(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, daemon=True, name=name)
        thread.start()
        self._threads.append(thread)

    def _loop_kind(self, unit: int, func: FuncSpec) -> str:
        """How a thread runs `func`: "stream" (`_stream_loop`), "aligned" (`_aligned_loop`), or the
        step of its set loop (`_step`): "lean" (maybe: when `_lean_chain` finds a chain); for a
        func whose outputs go to fixed channels, "native" (a plain C++ UDF func) or "sets"; else
        "firing"."""
        if func.stream_input:
            return "stream"
        if self._wiring.aligns[self._node(unit)] is not None and len(func.inputs) >= 2:
            return "aligned"
        if isinstance(func.run, UdfCall) and func.run.plain_single:
            return "lean"
        if self._fixed_outputs(unit, func) is None:
            return "firing"
        return "native" if isinstance(func.run, _native.UdfCaller) else "sets"

    def _fixed_outputs(self, unit: int, func: FuncSpec) -> list[list[int]] | None:
        """The channels of each output of `func`, or None when one goes to a replicated consumer
        (its instance is picked per message) or by a direct call."""
        outputs = []
        for port in func.outputs:
            targets = self._targets.get((unit, port), Targets(()))
            if targets.spread or (unit, port) in self._direct:
                return None
            outputs.append(list(targets.fixed))
        return outputs

    def wait_until_closed(self) -> None:
        """Sleep until the region closes, then give the func threads a moment to end."""
        while self._region.wait_for_close(self._wiring.worker_bells[self._worker], -1) != channels.CLOSED:
            pass
        deadline = time.monotonic() + THREAD_GRACE_SECONDS
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def deliver(self, unit: int, port: int, message: Message) -> None:
        """Hand `message` from output `port` of `unit` to its consumers: by a direct call, or on
        their channels (one per replicated consumer input, by its dispatch rule; waiting for room)."""
        direct = self._direct.get((unit, port))
        if direct is not None:
            consumer, func, consumer_node, node = direct
            self._running[0] = consumer_node
            self._fire(consumer, func, (message,))
            self._running[0] = node
            return
        targets = self._targets.get((unit, port))
        if targets is None:
            return
        chosen = targets.channels_for(message) if targets.spread else targets.fixed
        if chosen and self._region.put([(channel, message) for channel in chosen], -1) == channels.CLOSED:
            raise Cancelled

    # -- func threads -----------------------------------------------------------------------

    def _run_func(self, unit: int, func: FuncSpec) -> None:
        self._region.use_arena_allocator(ARENA_THRESHOLD)
        inputs = [self._wiring.unit_inputs[unit][j] for j in func.inputs]
        kind = self._loop_kind(unit, func)
        with self._dying_on_failure(lambda: (unit, func)):
            if kind == "stream":
                self._stream_loop(unit, func, inputs)
            elif kind == "aligned":
                self._aligned_loop(unit, func, inputs)
            else:
                self._step(unit, func, kind, inputs, self._wiring.unit_bells[unit]).run(MAX_BATCH)
                raise Cancelled  # the region closed

    @contextlib.contextmanager
    def _dying_on_failure(self, running: Callable[[], tuple[int, FuncSpec]]):
        """End the thread quietly once the region closes; end the worker on any other failure,
        saying which func of which unit (`running()`, asked then) failed."""
        try:
            yield
        except Cancelled:
            pass
        except MemoryError as error:
            unit, _ = running()
            self._die(f"MemoryError in node '{self._name(unit)}': {error}")
        except BaseException as error:  # noqa: BLE001 - the driver must learn why this worker stops
            unit, func = running()
            self._die(f"func {func.name} of node '{self._name(unit)}' failed: "
                      f"{type(error).__name__}: {error}")

    def _name(self, unit: int) -> str:
        return self._wiring.node_names[self._node(unit)]

    def _die(self, last_words: str) -> None:
        self._region.set_last_words(self._worker, last_words)
        _exit(EXIT_FATAL)

    def _step(self, unit: int, func: FuncSpec, kind: str, inputs: list[int], bell: int) -> _native.SetStep:
        """The step of `func`'s set loop, by its `kind` (`_loop_kind`): a lean chain
        (`_lean_step`), a C++ UDF func fired natively (`_udf_step`), a func whose output sets are
        put natively (`_outputs_step`), or the general path (`_message_step`)."""
        if kind == "lean" and (chain := self._lean_chain(unit, func)) is not None:
            return self._lean_step(chain, inputs, bell)
        if kind == "native":
            step = self._udf_step(unit, func, inputs, bell)
        elif kind == "sets":
            step = self._outputs_step(unit, func, inputs, bell)
        else:
            step = self._message_step(unit, func, inputs, bell)
        return self._timed(step, unit, func)

    @contextlib.contextmanager
    def _timing(self, unit: int, func: FuncSpec, transaction_id: int, taken: Sequence[Message] = ()):
        """Time a call of `func` of `unit` (for `transaction_id`, on the messages `taken` before it)
        when its node has a udf_timeout_ms, and trace it when the model is traced."""
        timer = self._timers.get((unit, func.name))
        if timer is None and self._trace_log is None:
            yield
            return
        meter = _native.ByteMeter() if self._trace_log is not None else contextlib.nullcontext()
        begin_ns = self._trace_log.now() if self._trace_log is not None else 0
        if timer is not None:
            timer.start(transaction_id)
        try:
            with meter:
                yield
        finally:
            if timer is not None:
                timer.stop()
            if self._trace_log is not None:
                self._trace_log.append(self._node(unit), self._wiring.units[unit].instance,
                                       0 if transaction_id == _NO_TRANSACTION else transaction_id,
                                       begin_ns, self._trace_log.now(),
                                       meter.bytes_in + sum(map(_native.message_bytes, taken)), meter.bytes_out)

    def _timed(self, step: _native.SetStep, unit: int, func: FuncSpec) -> _native.SetStep:
        """`step`, each set's firing timed when `unit`'s node has a udf_timeout_ms, and traced
        when the model is."""
        timer = self._timers.get((unit, func.name))
        if timer is not None:
            step.watch(timer)
        if self._trace_log is not None:
            step.trace(self._trace_log, self._wiring.units[unit].instance)
        return step

    def _message_step(self, unit: int, func: FuncSpec, inputs: list[int], bell: int) -> _native.SetStep:
        """The general path: each set as Messages to `_fire`, which delivers the outputs."""
        def fire_set(messages: list[Message]) -> None:
            self._fire(unit, func, messages)
        return _native.MessageStep(self._region, inputs, bell, self._worker, self._node(unit), fire_set)

    def _outputs_step(self, unit: int, func: FuncSpec, inputs: list[int], bell: int) -> _native.SetStep:
        """For a func whose outputs go to fixed channels: its output sets put natively; error
        messages, output sets that are no list and outputs that cannot be encoded come back to
        `_fire` and `_emit`."""
        def emit(output_sets: Iterable[OutputSet], messages: list[Message]) -> None:
            self._emit(unit, func, output_sets, messages[0])

        def fire_set(messages: list[Message]) -> None:
            self._fire(unit, func, messages)

        return _native.OutputsStep(self._region, inputs, bell, self._worker, self._node(unit), func.run,
                                   list(func.outputs), self._fixed_outputs(unit, func), fire_set, emit)

    def _udf_step(self, unit: int, func: FuncSpec, inputs: list[int], bell: int) -> _native.SetStep:
        """For a plain C++ UDF func, fired natively: a set that is not plain native messages, and a
        call that does not succeed cleanly, come back to `_fire` and `_emit`."""
        def emit(output_sets: list[OutputSet], data_label: int) -> None:
            self._emit_sets(unit, func, output_sets, data_label, None)

        def fire_set(messages: tuple[Message, ...]) -> None:
            self._fire(unit, func, messages)

        return _native.UdfStep(self._region, inputs, bell, self._worker, self._node(unit), func.run,
                               self._fixed_outputs(unit, func), fire_set, emit)

    def _lean_step(self, chain: LeanChain, inputs: list[int], bell: int) -> _native.SetStep:
        """For `chain`: array results never become Messages; Python takes over a set at the step
        whose result is no array, or that raised, and runs a set holding an error message."""
        steps = list(chain.steps)

        def emit(meta: TransactionMeta, outcome: Any, raised: bool, data_label: int, step: int) -> int:
            call = steps[step][1]
            message = call.failure(meta, outcome) if raised else Message.from_result(meta, outcome)
            if data_label and not message.data_label:
                message = replace(message, data_label=data_label)
            self._put_lean(chain, *self._run_steps(steps[step + 1:], message, message))
            return channels.READY

        def fire_set(messages: tuple[Message, ...]) -> None:
            self._run_lean(chain, (messages,))

        step = _native.LeanStep(self._region, inputs, bell, self._worker, [(node, call.fn) for node, call in steps],
                                list(chain.channels), emit, fire_set)
        # A chain with a timed node is that node alone (`_direct_calls`).
        return self._timed(step, chain.last_unit, chain.last_func)

    def _run_lean(self, chain: LeanChain, sets: Sequence[Sequence[Message]]) -> None:
        """Pass each input set through `chain` and put its output (no doorbell rung: see
        `_put_lean`). Each output is put before the next input set is run, as `_fire` does: a
        worker that dies loses no finished output."""
        running = self._running
        (first_node, first), rest, targets = chain.steps[0], chain.steps[1:], chain.channels
        for given in sets:
            running[0] = first_node
            message = cause = _first_error(given)  # an error message is forwarded as it is
            if message is None:
                cause = given[0]
                message = _labelled(first.call_set(given), cause)
            message, cause = self._run_steps(rest, message, cause)
            if targets:
                self._put_lean(chain, message, cause)
        running[0] = -1

    def _run_steps(self, steps: Sequence[tuple[int, UdfCall]], message: Message,
                   cause: Message) -> tuple[Message, Message]:
        """`message` passed through the direct-call `steps` of a lean chain (an error message is
        forwarded as it is): the last output and the message that caused it."""
        running = self._running
        for node, call in steps:
            running[0] = node
            cause = message
            if message.ret_code == 0:
                message = _labelled(call.call_one(message), cause)
        return message, cause

    def _put_lean(self, chain: LeanChain, message: Message, cause: Message) -> None:
        """Put the output `message` of `chain` on its channels without ringing their doorbells:
        the set loop rings them every few sets (and a put rings them before it waits for
        room), since a consumer asleep on an output would otherwise cost a wake-up per message.
        Cancelled once the region closes."""
        try:
            status = self._region.put([(channel, message) for channel in chain.channels], -1, False)
        except Exception:  # noqa: BLE001 - e.g. an object that cannot be pickled
            # `_emit` puts it again and turns the same exception into its failure
            self._emit(chain.last_unit, chain.last_func, [[(chain.last_port, message)]], cause)
            return
        if status == channels.CLOSED:
            raise Cancelled

    def _aligned_loop(self, unit: int, func: FuncSpec, inputs: list[int]) -> None:
        """Take each input's messages as they arrive (runtime/alignment.py) and fire every group
        that is complete; wake at the oldest group's deadline to expire it. A group given up on
        becomes its transaction's failure on each output of the func (unless dropped)."""
        aligner = ChannelAligner(self._region, self._wiring.unit_bells[unit], inputs,
                                 self._wiring.aligns[self._node(unit)])
        node = self._node(unit)
        subject = f"node '{self._name(unit)}' func '{func.name}'"
        while True:
            if self._region.wait_for_change(inputs, self._wiring.unit_bells[unit], -1,
                                            aligner.wait_ms()) == channels.CLOSED:
                raise Cancelled
            self._running[0] = node
            outcomes = aligner.pull()
            if outcomes is None:
                raise Cancelled
            for outcome in outcomes:
                if isinstance(outcome, Unaligned):
                    failure = outcome.failure(subject, "input", func.inputs)
                    for port in func.outputs:
                        self.deliver(unit, port, failure)
                else:
                    with self._timing(unit, func, max(m.meta.transaction_id for m in outcome), outcome):
                        self._fire(unit, func, outcome)
            self._running[0] = -1

    def _fire(self, unit: int, func: FuncSpec, messages: Sequence[Message]) -> None:
        """Run a plain func on one message per input; an error message is forwarded, not run."""
        for message in messages:
            if message.ret_code != 0:
                self._emit(unit, func, [[(port, message) for port in func.outputs]], message)
                return
        self._emit(unit, func, func.run(list(messages)), messages[0])

    def _stream_loop(self, unit: int, func: FuncSpec, inputs: list[int]) -> None:
        bell = self._wiring.unit_bells[unit]
        node = self._node(unit)
        streams = [ChannelStream(self._region, channel, bell) for channel in inputs]
        stalled_on = -1  # the waiting count after a call that read nothing: wait for a change
        while True:
            if self._region.wait_for_change(inputs, bell, stalled_on, -1) == channels.CLOSED:
                raise Cancelled
            taken_before = sum(self._region.pops(channel) for channel in inputs)
            self._running[0] = node
            with self._timing(unit, func, _NO_TRANSACTION):
                self._emit(unit, func, func.run(streams), None)
            self._running[0] = -1
            if sum(self._region.pops(channel) for channel in inputs) == taken_before:
                stalled_on = sum(self._region.size(channel) for channel in inputs)
            else:
                stalled_on = -1

    def _emit(self, unit: int, func: FuncSpec, output_sets: Iterable[OutputSet],
              cause: Message | None) -> None:
        """Deliver each output set; a func whose `run` breaks fails its outputs instead of its thread.

        An output without a data label takes `cause`'s (the first input of a plain func)."""
        if cause is None:
            self._emit_sets(unit, func, output_sets, 0, None)
        else:
            self._emit_sets(unit, func, output_sets, cause.data_label, cause.meta)

    def _emit_sets(self, unit: int, func: FuncSpec, output_sets: Iterable[OutputSet], label: int,
                   meta: TransactionMeta | None) -> None:
        """`_emit` for a cause with data label `label` and transaction `meta` (None: no cause)."""
        try:
            for output_set in output_sets:
                for port, message in output_set:
                    if label and not message.data_label:
                        message = replace(message, data_label=label)
                    self.deliver(unit, port, message)
        except (Cancelled, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - the worker must outlive a broken executor
            failure = Message.failure(meta or TransactionMeta(), FLOW_FUNC_FAILED, f"node '{self._name(unit)}' "
                                      f"func '{func.name}' failed: {type(exc).__name__}: {exc}")
            if label:
                failure = replace(failure, data_label=label)
            for port in func.outputs:
                self.deliver(unit, port, failure)


class FiringPool:
    """The lean chains of a device with many of them (`POOL_ABOVE`), fired by one thread instead of
    a thread each: thousands of threads that wake for one message each spend their time
    switching the interpreter between them.

    The pool's thread sleeps on one doorbell, which the producers of every member's inputs ring
    (`set_consumer_bell`, before messages flow), and fires each member that `Region.ready` finds
    ready, in the device's node order. A member takes only as many input sets as each channel
    its output goes to has room for, so the one thread never waits for room: a full output (a
    graph output nobody fetches yet) stops its member, not the others. While a member waits for
    room, which no doorbell of the pool announces, the thread looks again every ROOM_POLL_MS.
    """

    def __init__(self, executor: DeviceExecutor, members: Sequence[tuple[int, FuncSpec, LeanChain]]):
        wiring = executor._wiring
        position = {node: k for k, node in enumerate(wiring.order)}
        self._executor = executor
        self._members = sorted(members, key=lambda m: position[wiring.units[m[0]].node])
        self._inputs = [[wiring.unit_inputs[unit][j] for j in func.inputs] for unit, func, _ in self._members]
        self._bell = wiring.unit_bells[self._members[0][0]]  # the pooled units' own bells go unused
        self._channels = [channel for inputs in self._inputs for channel in inputs]
        self._groups = _native.FiringGroups(self._inputs, [list(chain.channels) for _, _, chain in self._members])
        self._steps = [executor._lean_step(chain, inputs, self._bell)
                       for (_, _, chain), inputs in zip(self._members, self._inputs)]
        executor._region.set_consumer_bell(self._channels, self._bell)

    def run(self) -> None:
        executor, region = self._executor, self._executor._region
        region.use_arena_allocator(ARENA_THRESHOLD)
        member = 0  # the member firing now, which a failure names
        stalled, wait_ms = -1, -1  # after a round that fired nothing: wait for a change, or for room
        with executor._dying_on_failure(lambda: self._members[member][:2]):
            while True:
                if region.wait_for_change(self._channels, self._bell, stalled, wait_ms) == channels.CLOSED:
                    raise Cancelled
                ready, blocked = region.ready(self._groups, MAX_BATCH)
                for member, count in ready:
                    if self._steps[member].fire(count, 0) is None:
                        raise Cancelled
                wait_ms = ROOM_POLL_MS if blocked else -1
                stalled = -1 if ready else sum(region.size(channel) for channel in self._channels)


def _first_error(messages: Sequence[Message]) -> Message | None:
    """The first error message of an input set, or None."""
    for message in messages:
        if message.ret_code:
            return message
    return None


def _labelled(message: Message, cause: Message) -> Message:
    """`message`, with `cause`'s data label when it has none (as `_emit` labels outputs)."""
    if cause.data_label and not message.data_label:
        return replace(message, data_label=cause.data_label)
    return message


class ChannelStream:
    """One input channel as a stream-input func reads it (see `dfir.frontend.flow_func.FlowMsgQueue`)."""

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
