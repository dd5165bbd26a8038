"""`ProcessScheduler`: runs an execution plan as one worker process per logical device.

Frontends call it as they call `dfir.runtime.funcs.Scheduler`: `submit` (one transaction's
graph inputs), `fetch` (one message from each selected graph output), `close` and `closed`;
node-to-node delivery happens inside the workers (`runtime/worker/executor.py`, `DeviceExecutor.deliver`).

Algorithm:
  1. `plan_wiring` runs the plan's `units` as they are (one per node instance the compiler made,
     with its device) and reads each node's `dispatch` and `align`; it gives each distinct device
     of the units a worker, in unit order, and each input of each unit and each graph output a
     channel: local when every unit of the producer runs in the consumer's worker and the
     producer is not a C++ UDF, shared otherwise (the driver, i.e. this process, feeds every
     graph input and fetches every graph output through shared channels). A message for a replicated consumer goes to one of its
     instances' channels, picked by the consumer's dispatch rule (`worker.Targets`).
  2. One region (`dfir.runtime.channels`) holds the channels; a worker is forked per device,
     builds that device's nodes and reports ready; a worker that cannot build them fails the
     load with its GeError, after the others are stopped.
  3. `submit` puts one transaction's messages on their channels (one instance per replicated
     consumer, by its dispatch rule), all or nothing, and records
     the transaction in the ledger (native); `fetch` takes one message from each chosen output
     channel, all or nothing, and settles its transaction.
  4. A monitor thread watches the workers through pidfds. A worker that exits while the model
     runs is restarted when the plan's `recover` is "restart" (the default) and this process
     runs every worker of the plan, or is a cluster's scheduler that recovers (`_recover`;
     runtime/driver/ray_cluster.py: the ledger part, `_fail_in_flight`, runs in the driver):
     - every transaction in flight fails. Those the ledger holds open are replaced in it (no
       settle can come in between), but for those whose results wait complete on every graph
       output and, unless every worker restarts, those whose messages all still wait where the
       driver put them. A failure message of each (ret WORKER_FAILED; ret UDF_TIMEOUT for the
       transaction of a call that ran past its node's udf_timeout_ms) goes onto every graph
       output, on a thread of its own (it waits for room as the fetches make it). Results of a
       replaced transaction that show up later are dropped at the outputs (`drop_stale`, the
       driver port and `OutputPairing` alike), so each transaction comes back once: its result
       or its failure;
     - the worker's slot and its local channels are cleared and a new worker is forked for its
       device, which builds its nodes anew (UDF instances, `Init`) and takes over its shared
       channels; the other workers keep running throughout;
     - a plan that pairs messages by their order (`_pairs_in_order`) restarts every worker
       instead, its node channels emptied, the failures put before any worker starts again;
     - restarts are bounded: a worker that dies for the MAX_QUICK_DEATHS-th time in a row within
       QUICK_DEATH_SECONDS of being forked, without having taken any input, fails the model with
       the history of those deaths; a worker that cannot build its nodes again fails it too.
     Otherwise (`recover` "off", or a cluster's scheduler that does not recover), the exit fails the model:
     the region closes (the other workers wind down), `submit` raises SchedulerFailed, and
     `fetch` returns what the outputs still hold, then one failure per transaction the ledger
     still holds (ret WORKER_FAILED, naming the node and device), then a failure with no
     transaction at once, never waiting.
  5. `close()` closes the region and gives the workers CLOSE_GRACE_SECONDS to exit before it
     kills them; every worker is reaped. Interpreter exit closes every open scheduler.
"""
from __future__ import annotations

import atexit
import gc
import logging
import os
import pickle
import select
import signal
import sys
import threading
import time
import traceback
import weakref
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Collection, NamedTuple, Sequence

from dfir.core import collector
from dfir.core.errors import GeError
from dfir.om.flow_attrs import queue_attrs
from dfir.core.flow_info import FlowFlag
from dfir.frontend.flow_func.status import FLOW_FUNC_ERR_TIME_OUT_ERROR
from dfir.core.messages import Kind, Message, TransactionMeta
from dfir.om.plan import DEFAULT_CHANNEL_DEPTH, CppProject, Plan
from dfir.runtime import _native, channels
from dfir.runtime.alignment import active
from dfir.runtime.driver.output_pairing import OutputPairing
from dfir.runtime.driver.stall import ChannelState, StallSnapshot
from dfir.runtime.driver.tracing import ModelTracer, effective_rate
from dfir.runtime.funcs import NodeSpec, SchedulerClosed, Source
from dfir.runtime.worker import host
from dfir.runtime.worker.executor import (EXIT_FATAL, EXIT_TIMEOUT, DeviceWiring, NodeBuilder, Targets, device_label,
                                          run_worker)
from dfir.runtime.worker.flow_closures import ClosureWiring

# ACL_ERROR_GE_INTERNAL_ERROR: a transaction lost because the worker running it died.
WORKER_FAILED = 545000
UDF_TIMEOUT = FLOW_FUNC_ERR_TIME_OUT_ERROR  # a transaction whose call ran past its udf_timeout_ms
RESTART = "restart"                 # the plan's `recover` that restarts dead workers
QUICK_DEATH_SECONDS = 1.0           # a death this soon after a start, with no input taken, is quick
MAX_QUICK_DEATHS = 3                # quick deaths in a row that fail the model
REPAIR_GRACE_SECONDS = 0.02         # how long a live producer may take to finish a push it claimed
VOID_TRANSACTION = (1 << 64) - 1    # what a message put in place of a dead producer's half push carries
DEFAULT_ARENA_BYTES = 4 << 30   # address space for tensors in flight; pages cost memory when used
CLOSE_GRACE_SECONDS = 1.0       # how long close() lets workers end before it kills them
LEDGER_CAPACITY = 1 << 16       # transactions remembered for failing them when a worker dies
DRIVER_BELL = 0
MAX_CACHED_FETCHES = 64         # output index tuples whose channels a scheduler remembers

_EMPTY_KIND = list(Kind).index(Kind.EMPTY)  # a MessageRecord's kind of an empty message
_open_schedulers: weakref.WeakSet = weakref.WeakSet()
_log = logging.getLogger("dfir.runtime")


class SchedulerFailed(GeError):
    """A feed into a model whose worker died; the message says which node and device."""


@dataclass(frozen=True)
class Wiring:
    """The processes and channels of a plan (see `plan_wiring`)."""

    devices: tuple[str, ...]               # the device each worker serves
    unit_workers: tuple[int, ...]          # the worker of each unit (node instance, see DeviceWiring)
    input_routes: tuple[Targets, ...]      # where each graph input goes
    output_channels: tuple[int, ...]       # the channel of each graph output
    channel_specs: tuple[channels.ChannelSpec, ...]
    bells: int
    device: DeviceWiring                   # what the workers need
    # the OVERWRITE channels (`_flow_attr_enqueue_policy`), each with what it feeds:
    # "node 'n' input j" (", instance i" for a replicated node)
    overwrite_channels: tuple[tuple[int, str], ...] = ()

    def units_of(self, worker: int) -> list[int]:
        return [u for u, w in enumerate(self.unit_workers) if w == worker]

    def nodes_of(self, worker: int) -> list[int]:
        """The plan nodes with an instance on `worker`."""
        return list(dict.fromkeys(self.device.units[u].node for u in self.units_of(worker)))


def plan_wiring(plan: Plan | dict, name: str, depth: int) -> Wiring:
    """The workers, channels and doorbells of `plan` (a `Plan`, or its JSON, validated).

    The plan's units (the node instances as the compiler made them, and the batch nodes the
    loader adds: `batching.with_batch_nodes`) get a worker per distinct device, in unit order.
    Each unit input gets its own channel, local only
    when every unit of its producer runs in the unit's worker and the producer is not a C++ UDF
    (whose outputs a worker puts as records, its `UdfStep`); graph outputs get shared
    channels (the driver fetches them). A source feeding a node of several units spreads its
    messages over their channels by the node's `dispatch`. A unit input channel holds `depth`
    messages, or the node's `_flow_attr_depth`, and is OVERWRITE when the node's
    `_flow_attr_enqueue_policy` says so (`dfir.om.flow_attrs`).
    """
    plan = Plan.of(plan)
    nodes = plan.nodes
    stubs = [NodeSpec(node.name, host.plan_sources(node.inputs), node.output_num, ()) for node in nodes]
    outputs = host.plan_sources(plan.outputs)
    units = plan.units
    devices = tuple(dict.fromkeys(unit.device for unit in units))
    worker_of = {device: w for w, device in enumerate(devices)}
    unit_workers = tuple(worker_of[unit.device] for unit in units)
    node_units: list[list[int]] = [[] for _ in nodes]
    for u, unit in enumerate(units):
        node_units[unit.node].append(u)
    node_workers = [{unit_workers[u] for u in us} for us in node_units]
    unit_bells = tuple(1 + u for u in range(len(units)))
    worker_bells = tuple(1 + len(units) + w for w in range(len(devices)))
    specs: list[channels.ChannelSpec] = []
    unit_inputs: list[tuple[int, ...]] = []
    groups: dict[Source, list[tuple[str, list[int]]]] = {}  # source -> (dispatch, channels) per consumer input
    overwrite_channels: list[tuple[int, str]] = []
    for n, stub in enumerate(stubs):
        per_input: list[list[int]] = [[] for _ in stub.sources]
        queueing = queue_attrs(nodes[n].attrs, f"node '{stub.name}'")
        for u in node_units[n]:
            for j, source in enumerate(stub.sources):
                local = source.node is not None and node_workers[source.node] == {unit_workers[u]} \
                    and not isinstance(nodes[source.node].pp, CppProject)
                per_input[j].append(len(specs))
                if queueing.overwrite:
                    instance = f", instance {units[u].instance}" if len(node_units[n]) > 1 else ""
                    overwrite_channels.append((len(specs), f"node '{stub.name}' input {j}{instance}"))
                specs.append(channels.ChannelSpec(not local, queueing.depth or depth, unit_bells[u],
                                                  queueing.overwrite))
            unit_inputs.append(tuple(per_input[j][-1] for j in range(len(stub.sources))))
        for source, chs in zip(stub.sources, per_input):
            groups.setdefault(source, []).append((nodes[n].dispatch, chs))
    output_channels = []
    for source in outputs:
        output_channels.append(len(specs))
        groups.setdefault(source, []).append(("round_robin", [len(specs)]))
        specs.append(channels.ChannelSpec(True, depth, DRIVER_BELL))
    closure_exits = []
    for closure in plan.closures:  # its outputs ring the invoking unit (a single-instance node)
        bell = unit_bells[node_units[closure.node][0]]
        closure_exits.append((bell, tuple(range(len(specs), len(specs) + len(closure.outputs)))))
        for source in host.plan_sources(closure.outputs):
            groups.setdefault(source, []).append(("round_robin", [len(specs)]))
            specs.append(channels.ChannelSpec(True, depth, bell))
    routes = {source: _targets(source_groups) for source, source_groups in groups.items()}
    closures = tuple(ClosureWiring(c.node, c.key, tuple(routes.get(Source(None, i, k), Targets(()))
                                                        for i in range(c.inputs)), exits, bell)
                     for k, (c, (bell, exits)) in enumerate(zip(plan.closures, closure_exits)))
    order = plan.order
    device = DeviceWiring(name, tuple(stub.name for stub in stubs), order, tuple(spec.shared for spec in specs),
                          units, tuple(unit_inputs), routes, unit_bells, worker_bells,
                          tuple(len(us) for us in node_units), tuple(active(node.align) for node in nodes),
                          closures, tuple(plan.udf_timeout_ms(n) for n in range(len(nodes))))
    input_routes = tuple(routes.get(Source(None, k), Targets(())) for k in range(len(plan.inputs)))
    return Wiring(devices, unit_workers, input_routes, tuple(output_channels), tuple(specs),
                  1 + len(units) + len(devices), device, tuple(overwrite_channels))


def _targets(groups: list[tuple[str, list[int]]]) -> Targets:
    """One source's `Targets`: single-channel groups fixed, the others spread by a dispatcher."""
    fixed = tuple(chs[0] for _, chs in groups if len(chs) == 1)
    spread = tuple((channels.InstanceDispatcher(len(chs), rule), tuple(chs)) for rule, chs in groups if len(chs) > 1)
    return Targets(fixed, spread)


class PortResults(NamedTuple):
    """What a driver port builds a fetch's result of plain tensors with (`driver_port`)."""

    tensor: Callable[[Any], Any]       # an array's Tensor (Tensor.of_array)
    flow_info_type: type               # FlowInfo: what a feed's flow_info must be; a fetch makes one
    plain_result: Callable[..., Any]   # (fields, arrays) -> the result, when a Tensor cannot be made
    succeeded: Any                     # the RetCode of a successful fetch


@dataclass
class _Worker:
    index: int
    device: str
    pid: int
    pidfd: int
    status: int | None = None  # the waitpid status once reaped
    started: float = 0.0       # when it was forked (monotonic seconds)
    taken: int = 0             # what its shared input channels had given then
    restarts: int = 0          # how many workers of its device ran before it
    deaths: tuple[str, ...] = ()  # why they ended, oldest first
    quick_deaths: int = 0      # of those, the quick ones in a row (see QUICK_DEATH_SECONDS)


class ProcessScheduler:
    """Runs `plan` in worker processes (see the module docstring); `build(indexes)` builds nodes."""

    def __init__(self, name: str, plan: Plan, build: NodeBuilder, depth: int = DEFAULT_CHANNEL_DEPTH,
                 arena_bytes: int | None = None, workers: Collection[int] | None = None,
                 wiring: Wiring | None = None, recovers: bool | None = None):
        """`workers`: the indexes (into `devices`) of the workers this process forks (default:
        all); the others run elsewhere (runtime/driver/ray_cluster.py relays their channels).
        `wiring`: `plan_wiring(plan, name, depth)` when the caller has it already. `arena_bytes`
        (default: the plan's `shared_arena_bytes`, else DEFAULT_ARENA_BYTES): the tensor arena.
        `recovers`: whether a dead worker may be restarted when the plan's `recover` says so
        (default: when this process runs every worker); a cluster's partial scheduler that says
        True fails its transactions in flight where the ledger lives (`_fail_in_flight`)."""
        self.name = name
        self._wiring = wiring or plan_wiring(plan, name, depth)
        self._build = build
        self._recovers = (workers is None if recovers is None else recovers) and plan.recover == RESTART
        self._restarts_all = _pairs_in_order(plan)
        self._node_outputs = [node.output_num for node in plan.nodes]
        self._poller: select.poll | None = None  # the monitor's: every running worker's pidfd
        self._by_fd: dict[int, _Worker] = {}
        self._owner_pid = os.getpid()
        self._closed = False
        self._failure: str | None = None
        self._submit_lock = _native.PortLock()  # its DriverPort takes these natively
        self._fetch_lock = _native.PortLock()
        self._state_lock = threading.Lock()
        self._ledger = channels.TransactionLedger(LEDGER_CAPACITY)
        self._output_align = active(plan.align)  # pairs fetched outputs when set
        self._pairings: dict[tuple[int, ...], OutputPairing] = {}
        self._channels_of: dict[tuple[int, ...], list[int]] = {}  # see _output_channels
        self._region = channels.open_region(self._wiring.bells, self._wiring.channel_specs,
                                            len(self._wiring.devices),
                                            arena_bytes or plan.shared_arena_bytes or DEFAULT_ARENA_BYTES, name)
        self._workers: list[_Worker] = []
        self._tracer = self._new_tracer(plan)
        self._wake_read, self._wake_write = os.pipe()
        try:
            ready_fds = []
            for index in range(len(self._wiring.devices)) if workers is None else workers:
                worker, ready_fd = self._fork(index)
                self._workers.append(worker)
                ready_fds.append(ready_fd)
            self._await_ready(ready_fds)
        except BaseException:
            self._region.close()
            if self._tracer is not None:
                self._tracer.discard()
            self._stop_workers(time.monotonic() + CLOSE_GRACE_SECONDS)
            os.close(self._wake_read)
            os.close(self._wake_write)
            raise
        self._monitor = threading.Thread(target=self._watch, daemon=True, name=f"dfir:{name}:monitor")
        self._monitor.start()
        if self._tracer is not None:
            self._tracer.start()
        _open_schedulers.add(self)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def worker_pids(self) -> list[int]:
        """The worker processes, one per device in plan order (reaped ones included)."""
        return [worker.pid for worker in self._workers]

    @property
    def devices(self) -> tuple[str, ...]:
        return self._wiring.devices

    @property
    def wiring(self) -> Wiring:
        return self._wiring

    @property
    def region(self):
        """The model's channels as this process maps them (`channels.open_region`)."""
        return self._region

    @property
    def tracer(self) -> ModelTracer | None:
        """The model's trace (runtime/driver/tracing.py), None when it is not traced."""
        return self._tracer

    def _new_tracer(self, plan: Plan) -> ModelTracer | None:
        """The model's tracer when its plan or DFIR_TRACE asks for a trace, made before the
        workers fork (they inherit its log); None otherwise."""
        rate = effective_rate(plan)
        if not rate:
            return None
        return ModelTracer(self.name, rate, self._wiring, self._region,
                           tuple(device_label(device) for device in self._wiring.devices))

    @property
    def failure(self) -> str | None:
        """Why the model failed (None while it has not)."""
        return self._failure

    def worker_stats(self) -> list[dict[str, Any]]:
        """Per worker of this process, in device order: its device, its process, how many times it
        was restarted and why the last few before it ended (`deaths`, oldest first)."""
        return [{"device": worker.device, "pid": worker.pid, "restarts": worker.restarts,
                 "deaths": list(worker.deaths)} for worker in self._workers]

    def dropped_messages(self) -> dict[str, int]:
        """How many messages each OVERWRITE channel (`_flow_attr_enqueue_policy`) dropped so
        far, by what it feeds ("node 'n' input j"); channels whose producers run in another
        process of a cluster count in that process."""
        return {label: self._region.dropped(channel) for channel, label in self._wiring.overwrite_channels}

    def stall_snapshot(self, outputs: Sequence[int] = ()) -> StallSnapshot:
        """What this process sees of the model now (runtime/driver/stall.py): the transactions in
        flight, the input channels of the units its workers run and the graph outputs (`outputs`:
        the ones a timed-out fetch waited on), and the nodes at work."""
        device, here = self._wiring.device, {worker.index for worker in self._workers}
        labelled = [(channel, _input_label(device, u, j, device_label(self.devices[w])))
                    for u, w in enumerate(self._wiring.unit_workers) if w in here
                    for j, channel in enumerate(device.unit_inputs[u])]
        labelled += [(channel, f"output {k}") for k, channel in enumerate(self._wiring.output_channels)]
        states = tuple(ChannelState(label, self._region.size(channel), self._region.capacity(channel),
                                    tuple(self._region.waiting_transactions(channel))
                                    if device.shared[channel] else None) for channel, label in labelled)
        at_work = tuple(f"node '{device.node_names[running]}' (device {device_label(worker.device)})"
                        for worker in self._workers
                        for running in [self._region.worker_status(worker.index)[1]] if running >= 0)
        first_output = len(labelled) - len(self._wiring.output_channels)
        return StallSnapshot(tuple(meta.transaction_id for meta in self._ledger.open_transactions()), states,
                             at_work, tuple(first_output + k for k in outputs), len(here) < len(self.devices))

    def _log_dropped(self) -> None:
        for label, dropped in self.dropped_messages().items():
            if dropped:
                _log.warning("model '%s': %s (OVERWRITE) dropped its %d oldest message%s when full",
                             self.name, label, dropped, "" if dropped == 1 else "s")

    # -- the frontend's calls -----------------------------------------------------------------

    def driver_port(self, rules: Sequence[tuple], positions: dict[str, int],
                    results: PortResults) -> _native.DriverPort:
        """The model's feed and fetch (`_native.DriverPort`), which judge every feed and fetch, put
        feeds and take results natively, through the locks and the ledger of `submit` and `fetch`.
        `rules`: per graph input, the dtype (None: any but object), the shape (None: any; -1 any
        size) and the rules of the GE graphs it feeds, [(dtype, [(lo, hi)])]; `positions`: input
        name -> position."""
        inputs = [(list(route.fixed), [(dispatcher, list(group)) for dispatcher, group in route.spread], *rule)
                  for route, rule in zip(self._wiring.input_routes, rules)]
        return _native.DriverPort(self._region, self._ledger, inputs, positions, FlowFlag.DATA_FLOW_FLAG_EOS,
                                  list(self._wiring.output_channels), self._output_align is not None, DRIVER_BELL,
                                  self._submit_lock, self._fetch_lock, *results)

    def submit(self, inputs: Sequence[Message | None], timeout_ms: int = -1) -> bool:
        """Put graph input k's message `inputs[k]` (None: not fed) on its consumers' channels.

        All or nothing: waits until every target channel has room. False when `timeout_ms`
        (-1: forever) passes first; SchedulerClosed once closed, SchedulerFailed once failed.
        """
        routes = self._wiring.input_routes
        targets = [(channel, message) for k, message in enumerate(inputs) if message is not None
                   for channel in routes[k].channels_for(message)]
        deadline = None if timeout_ms < 0 else time.monotonic() + timeout_ms / 1000
        if not self._submit_lock.acquire(timeout=-1 if deadline is None else timeout_ms / 1000):
            return False
        try:
            self._check_usable()
            if not targets:
                return True
            meta = targets[0][1].meta
            self._ledger.open(meta)
            status = self._region.put(targets, channels.remaining_ms(deadline))
        finally:
            self._submit_lock.release()
        return self._submitted(status, meta.transaction_id)

    def _submitted(self, status: int, transaction_id: int) -> bool:
        """What a put of a transaction's inputs returned, as `submit` returns it."""
        if status != channels.READY:
            self._ledger.settle(transaction_id)
        if status == channels.CLOSED:
            self._check_usable()
            raise SchedulerClosed(f"model '{self.name}' is closed")
        return status == channels.READY

    def fetch(self, indexes: Sequence[int], timeout_ms: int = -1) -> list[Message]:
        """One message from each graph output in `indexes` (distinct, non-empty), taken together.

        Returns [] when `timeout_ms` (-1: forever) passes before all of them have one; nothing is
        taken then. SchedulerClosed once closed. Once failed: see the module docstring.
        """
        chosen = self._output_channels(indexes)
        deadline = None if timeout_ms < 0 else time.monotonic() + timeout_ms / 1000
        if not self._fetch_lock.acquire(timeout=-1 if deadline is None else timeout_ms / 1000):
            return []
        try:
            if self._closed:
                raise SchedulerClosed(f"model '{self.name}' is closed")
            if self._paired(chosen):
                return self._fetch_paired(indexes, chosen, deadline)
            while True:
                self._region.drop_stale(chosen, self._ledger)
                sets = self._region.take(chosen, DRIVER_BELL, 1, channels.remaining_ms(deadline))
                if sets is None:
                    return self._fetch_failed(len(chosen))
                if not sets:
                    return []
                if self._stands(sets[0]):
                    return list(sets[0])
        finally:
            self._fetch_lock.release()

    def _output_channels(self, indexes: Sequence[int]) -> list[int]:
        """The channels of graph outputs `indexes` (distinct, non-empty), found once per index
        tuple: a fetch loop asks for the same outputs on every call."""
        key = tuple(indexes)
        chosen = self._channels_of.get(key)
        if chosen is None:
            assert key and len(set(key)) == len(key), "fetch needs distinct output indexes"
            if len(self._channels_of) >= MAX_CACHED_FETCHES:
                self._channels_of.clear()
            chosen = self._channels_of[key] = [self._wiring.output_channels[i] for i in key]
        return chosen

    def _paired(self, chosen: Sequence[int]) -> bool:
        """Whether a fetch of the output channels `chosen` pairs them by transaction
        (runtime/driver/output_pairing.py): the graph aligns its inputs and several outputs are fetched."""
        return self._output_align is not None and len(chosen) > 1

    def _fetch_paired(self, indexes: Sequence[int], chosen: list[int], deadline: float | None) -> list[Message]:
        key = tuple(chosen)
        pairing = self._pairings.get(key)
        if pairing is None:
            pairing = self._pairings[key] = OutputPairing(self._region, DRIVER_BELL, chosen, indexes,
                                                          self._output_align, self._ledger.is_stale)
        while True:
            messages = pairing.fetch(deadline)
            if messages is None:
                return self._fetch_failed(len(chosen))
            if not messages or self._stands(messages):
                return messages

    def _stands(self, messages: Sequence[Message]) -> bool:
        """Whether a fetched set is returned: it settles its transaction, unless recovery
        replaced the transaction since the set was taken (a failure stands in for it)."""
        first = messages[0]
        return self._ledger.settle_result(first.meta.transaction_id, first.ret_code)

    def close(self, wait: bool = True) -> None:
        """Stop the workers: at once, then within CLOSE_GRACE_SECONDS or killed. Idempotent.

        With `wait`, return once every worker is reaped. A no-op in a forked child process.
        """
        if os.getpid() != self._owner_pid:
            return
        with self._state_lock:
            if self._closed:
                return
            self._closed = True
            self._log_dropped()
            self._region.close()
            if self._wake_write >= 0:
                os.write(self._wake_write, b"x")
        _open_schedulers.discard(self)
        if wait and self._monitor is not threading.current_thread():
            self._monitor.join()
        if self._tracer is not None:
            self._tracer.close()

    # -- workers --------------------------------------------------------------------------------

    def _fork(self, index: int) -> tuple[_Worker, int]:
        """Fork worker `index`: it, and the read end of its readiness pipe."""
        ready_read, ready_write = os.pipe()
        units = self._wiring.units_of(index)
        started, taken = time.monotonic(), self._taken(index)  # before it can take anything
        for stream in (sys.stdout, sys.stderr):  # what is buffered now would print twice
            stream.flush()
        pid = os.fork()
        if pid == 0:  # the worker: run_worker ends the process
            # The driver's objects (the compiled module, the plan) are the child's garbage
            # collector's to walk on every full collection, for nothing: they live as long as it.
            collector.reset_after_fork()
            gc.freeze()
            try:
                os.close(ready_read)
                run_worker(self._region, self._wiring.device, index, units, self._build, ready_write,
                           self._owner_pid, None if self._tracer is None else self._tracer.log)
            except BaseException:  # noqa: BLE001 - say why on stderr, never return into the driver's code
                traceback.print_exc()
            finally:
                os._exit(EXIT_FATAL)
        os.close(ready_write)
        return _Worker(index, self._wiring.devices[index], pid, os.pidfd_open(pid), started=started,
                       taken=taken), ready_read

    def _await_ready(self, ready_fds: list[int]) -> None:
        """Wait for every worker's report; the first failure (in device order) raises."""
        errors: list[GeError] = []
        for worker, fd in zip(self._workers, ready_fds):
            report = _read_all(fd)
            os.close(fd)
            if not report:
                self._reap(worker)
                errors.append(GeError(self._describe_death(worker)))
            elif report[0] == "error":
                _, message, api_name, context = report
                errors.append(GeError(message, api_name, context))
        if errors:
            raise errors[0]

    def _taken(self, index: int) -> int:
        """How many messages the shared input channels of worker `index` have given so far."""
        device = self._wiring.device
        return sum(self._region.taken(channel) for unit in self._wiring.units_of(index)
                   for channel in device.unit_inputs[unit] if device.shared[channel])

    def _watch(self) -> None:
        """Monitor thread: reap workers as they exit; recover from an unexpected exit, or fail the
        model (see the module docstring, 4)."""
        self._poller = select.poll()
        self._by_fd = {}
        for worker in self._workers:
            self._watch_worker(worker)
        self._poller.register(self._wake_read, select.POLLIN)
        stop_by = None  # once closing or failed: when the remaining workers are killed
        while self._by_fd:
            wait_ms = None if stop_by is None else max(0, int((stop_by - time.monotonic()) * 1000))
            for fd, _ in self._poller.poll(wait_ms):
                if fd == self._wake_read:
                    self._poller.unregister(fd)
                elif (worker := self._exited_worker(fd)) is not None \
                        and not self._closed and self._failure is None:
                    self._recover(worker)
                if stop_by is None and (self._closed or self._failure is not None):
                    stop_by = time.monotonic() + CLOSE_GRACE_SECONDS
            if stop_by is not None and time.monotonic() >= stop_by:
                break
        self._stop_workers(time.monotonic())
        with self._state_lock:
            os.close(self._wake_read)
            os.close(self._wake_write)
            self._wake_write = -1

    def _watch_worker(self, worker: _Worker) -> None:
        self._by_fd[worker.pidfd] = worker
        self._poller.register(worker.pidfd, select.POLLIN)

    def _exited_worker(self, fd: int) -> _Worker | None:
        """The worker whose pidfd `fd` became readable, reaped and no longer watched, once it has
        exited; None for an event that is stale (a replaced worker's descriptor number)."""
        worker = self._by_fd.get(fd)
        if worker is None:
            return None
        self._poller.unregister(fd)
        if not _exited(worker):
            self._poller.register(fd, select.POLLIN)
            return None
        del self._by_fd[fd]
        return worker

    def _stop_workers(self, kill_at: float) -> None:
        """Reap every worker, killing those still running at `kill_at`."""
        for worker in self._workers:
            if worker.status is not None:
                continue
            remaining = kill_at - time.monotonic()
            if remaining > 0:
                select.select([worker.pidfd], [], [], remaining)
            if worker.status is None and not _exited(worker):
                signal.pidfd_send_signal(worker.pidfd, signal.SIGKILL)
            self._reap(worker)

    def _reap(self, worker: _Worker) -> None:
        if worker.status is None:
            _, worker.status = os.waitpid(worker.pid, 0)
            os.close(worker.pidfd)

    # -- recovery -------------------------------------------------------------------------------

    def _recover(self, dead: _Worker) -> None:
        """After `dead` exited on its own: restart it, or every worker (see the module docstring,
        4), or fail the model."""
        death = self._describe_death(dead)
        if not self._recovers:
            self.fail(death)
            return
        quick = time.monotonic() - dead.started < QUICK_DEATH_SECONDS and self._taken(dead.index) == dead.taken
        quick_deaths = dead.quick_deaths + 1 if quick else 0
        deaths = (dead.deaths + (death,))[-MAX_QUICK_DEATHS:]
        if quick_deaths >= MAX_QUICK_DEATHS:
            self.fail(f"{death}; it died {quick_deaths} times in a row within {QUICK_DEATH_SECONDS:g} s of "
                      f"starting, before taking any input: " + "; ".join(deaths))
            return
        _log.warning("model '%s': %s; restarting %s", self.name, death,
                     "every worker" if self._restarts_all else "it")
        timed_out = self._region.timed_out_transaction(dead.index)
        self._repair_channels(dead)
        if self._restarts_all:
            self._stop_live_workers()
            self._drain_node_channels()
        self._fail_in_flight(death, timed_out)
        history = {dead.index: (deaths, quick_deaths)}
        for worker in [w for w in self._workers if w is dead or self._restarts_all]:
            if self._failure is not None or self._closed:
                return
            self._restart(worker, *history.get(worker.index, (worker.deaths, 0)))

    def _fail_in_flight(self, death: str, timed_out: int | None) -> None:
        """Replace the transactions in flight in the ledger and post their failures on the graph
        outputs, after a worker died of `death` (`timed_out`: the transaction of its call that
        ran past its node's udf_timeout_ms, or None). A server's scheduler on a cluster, which
        holds no ledger, tells the driver instead (runtime/driver/ray_cluster.py)."""
        failures = self._replace_in_flight(death, timed_out)
        if self._restarts_all:
            self._post_failures(failures)  # before any new result, so each output holds them in one order
        elif failures:
            threading.Thread(target=self._post_failures, args=(failures,), daemon=True,
                             name=f"dfir:{self.name}:failures").start()

    def _repair_channels(self, dead: _Worker) -> None:
        """Undo what `dead` left half done in shared channels, which would stop them for good: the
        slots of its input channels it took a message from but never freed, and the slots of the
        channels it produces into that it claimed but never published (each gets an error
        message of VOID_TRANSACTION, which the outputs drop as stale), those a live producer
        shares being given REPAIR_GRACE_SECONDS to be published first."""
        device = self._wiring.device
        units = self._wiring.units_of(dead.index)
        for unit in units:
            for channel in device.unit_inputs[unit]:
                if device.shared[channel]:
                    self._region.free_unreleased(channel)
        produced = {channel for unit in units for port in range(self._node_outputs[device.units[unit].node])
                    for channel in device.routes.get(Source(device.units[unit].node, port), Targets(())).all()
                    if device.shared[channel]}
        claimed = {channel: positions for channel in produced if (positions := self._region.unpublished(channel))}
        if not claimed:
            return
        time.sleep(REPAIR_GRACE_SECONDS)
        self._ledger.replace(VOID_TRANSACTION, 0)
        for channel, positions in claimed.items():
            self._region.publish_void(channel, positions, VOID_TRANSACTION, WORKER_FAILED, _EMPTY_KIND,
                                      "a message lost with the worker that was putting it")

    def _stop_live_workers(self) -> None:
        """Kill and reap every worker still running (for a restart of every worker)."""
        for worker in list(self._by_fd.values()):
            del self._by_fd[worker.pidfd]
            self._poller.unregister(worker.pidfd)
            if not _exited(worker):
                signal.pidfd_send_signal(worker.pidfd, signal.SIGKILL)
                self._reap(worker)

    def _drain_node_channels(self) -> None:
        """Empty every shared channel the workers consume (no worker runs now); the graph outputs
        keep what they hold, for the fetches to drop as stale or return."""
        outputs = set(self._wiring.output_channels)
        for channel, spec in enumerate(self._wiring.channel_specs):
            if spec.shared and channel not in outputs:
                self._region.drain(channel)

    def _replace_in_flight(self, death: str, timed_out: int | None) -> list[Message]:
        """Replace every transaction in flight but those whose results wait complete on every
        graph output and, unless every worker restarts, those no worker has taken any message of
        (see the module docstring, 4): the failures that stand in for them."""
        outputs = self._wiring.output_channels
        waiting = [set(self._region.waiting_transactions(channel)) for channel in outputs]
        keep = set.intersection(*waiting) if waiting else set()
        if not self._restarts_all:
            keep |= self._unstarted()
        codes = {} if timed_out is None else {timed_out: UDF_TIMEOUT}
        replaced = self._ledger.replace_open(keep, codes, WORKER_FAILED)
        lost = f"{death}; the worker was restarted and this transaction, in flight, failed"
        return [Message.failure(meta, code, death if code == UDF_TIMEOUT else lost) for meta, code in replaced]

    def _unstarted(self) -> set[int]:
        """The transactions each of whose messages still waits where a feed of every graph input
        put it: no worker has taken any of them, so none was lost."""
        routes = self._wiring.input_routes
        per_feed = sum(len(route.fixed) + len(route.spread) for route in routes)
        fed = {channel for route in routes for channel in route.fixed}
        fed.update(channel for route in routes for _, group in route.spread for channel in group)
        counts = Counter(t for channel in fed for t in self._region.waiting_transactions(channel))
        return {transaction_id for transaction_id, count in counts.items() if count == per_feed}

    def _post_failures(self, failures: list[Message]) -> None:
        """Put each failure on every graph output, waiting for room as the fetches make it."""
        outputs = self._wiring.output_channels
        for failure in failures if outputs else ():
            if self._region.put([(channel, failure) for channel in outputs], -1) != channels.READY:
                return  # closed

    def _restart(self, dead: _Worker, deaths: tuple[str, ...], quick_deaths: int) -> None:
        """Fork the replacement of `dead`, watch it and wait until it is ready; a replacement that
        cannot start or build its nodes fails the model."""
        self._region.reset_worker(dead.index)
        device = self._wiring.device
        for unit in self._wiring.units_of(dead.index):
            for channel in device.unit_inputs[unit]:
                if not device.shared[channel]:
                    self._region.clear_local(channel)  # it held pointers into the dead process
        try:
            worker, ready_fd = self._fork(dead.index)
        except OSError as error:
            self.fail(f"{deaths[-1] if deaths else dead.device}; starting its worker again failed: {error}")
            return
        worker.restarts, worker.deaths, worker.quick_deaths = dead.restarts + 1, deaths, quick_deaths
        self._workers[self._workers.index(dead)] = worker
        self._watch_worker(worker)
        report = self._await_restart(ready_fd)
        if report and report[0] != "ready":
            self.fail(f"{deaths[-1] if deaths else dead.device}; building its nodes again failed: {report[1]}")

    def _await_restart(self, ready_fd: int) -> tuple:
        """A restarted worker's report; () when it exits first or the model closes first."""
        try:
            while not select.select([ready_fd, self._wake_read], [], [])[0].count(ready_fd):
                if self._closed or self._failure is not None:
                    return ()
            return _read_all(ready_fd)
        finally:
            os.close(ready_fd)

    def fail(self, failure: str) -> None:
        """Fail the model (see the module docstring, 4) for the reason `failure`; the first reason
        stays. A no-op once closed."""
        with self._state_lock:
            if self._closed or self._failure is not None:
                return
            self._fail_now(failure)
            if self._wake_write >= 0:
                os.write(self._wake_write, b"x")

    def _fail_now(self, failure: str) -> None:
        for channel in self._wiring.output_channels:
            for transaction_id in dict.fromkeys(self._region.waiting_transactions(channel)):
                self._ledger.settle(transaction_id)
        self._failure = failure
        self._region.close()

    def _describe_death(self, worker: _Worker) -> str:
        _, running, last_words = self._region.worker_status(worker.index)
        names = self._wiring.device.node_names
        nodes = [running] if running >= 0 else self._wiring.nodes_of(worker.index)
        where = ("node " if len(nodes) == 1 else "nodes ") + ", ".join(f"'{names[n]}'" for n in nodes)
        device = device_label(worker.device)
        status = worker.status
        if status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == EXIT_TIMEOUT and last_words:
            return f"{last_words}; worker process {worker.pid} was stopped"
        if status is None:
            how = "stopped"
        elif os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            how = f"was killed by signal {number} ({signal.Signals(number).name})"
        else:
            how = f"exited with code {os.WEXITSTATUS(status)}"
        return f"{where} on device {device}: worker process {worker.pid} {how}" + (
            f": {last_words}" if last_words else "")

    # -- failure --------------------------------------------------------------------------------

    def _check_usable(self) -> None:
        if self._failure is not None:
            raise SchedulerFailed(self._failure)
        if self._closed:
            raise SchedulerClosed(f"model '{self.name}' is closed")

    def _fetch_failed(self, count: int) -> list[Message]:
        if self._failure is None:
            raise SchedulerClosed(f"model '{self.name}' is closed")
        meta = self._ledger.take_oldest() or TransactionMeta()
        return [Message.failure(meta, WORKER_FAILED, self._failure)] * count


def _input_label(device: DeviceWiring, unit: int, j: int, where: str) -> str:
    """"input j of node 'n' (device d)", with " instance k" after the name for a replicated node."""
    ref = device.units[unit]
    instance = f" instance {ref.instance}" if device.instance_nums[ref.node] > 1 else ""
    return f"input {j} of node '{device.node_names[ref.node]}'{instance} (device {where})"


def _acquire(lock: threading.Lock, timeout_ms: int) -> tuple[bool, float | None]:
    """Take `lock` within `timeout_ms` (-1: forever): whether it was taken, and the call's
    deadline (None: none)."""
    if timeout_ms < 0:
        lock.acquire()
        return True, None
    deadline = time.monotonic() + timeout_ms / 1000
    return lock.acquire(timeout=timeout_ms / 1000), deadline


def _pairs_in_order(plan: Plan) -> bool:
    """Whether something pairs messages of several channels by their order rather than by their
    transaction: a node that takes sets from several inputs without aligning them, or a fetch of
    several graph outputs without output alignment. A lost message shifts such pairs for good,
    so a worker's death restarts every worker of such a plan, with its channels emptied."""
    if len(plan.outputs) > 1 and active(plan.align) is None:
        return True
    return any(node.input_num > 1 and active(node.align) is None for node in plan.nodes)


def _read_all(fd: int) -> tuple:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return pickle.loads(b"".join(chunks)) if chunks else ()


def _exited(worker: _Worker) -> bool:
    """True (and the worker reaped) when it has exited."""
    pid, status = os.waitpid(worker.pid, os.WNOHANG)
    if pid == 0:
        return False
    worker.status = status
    os.close(worker.pidfd)
    return True


@atexit.register
def _close_all() -> None:
    for scheduler in list(_open_schedulers):
        scheduler.close()
