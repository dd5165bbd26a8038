"""`RayScheduler`: runs a plan's servers on a Ray cluster (`dfir.runtime.cluster=ray`).

Algorithm:
  1. Connect to Ray (the plan's `ray_address`, else `RAY_ADDRESS`, else a local Ray) unless this
     process is connected already.
  2. Match each server of the plan (runtime/driver/servers.py) to a live Ray node: the node offering the
     custom resource `dfir_server_N` (N the server's `node_id`), else the node whose IP is the
     server's `ipaddr`; a server with no match is a GeError naming it.
  3. Put the model's parts (plan, UDF payloads, weights, libraries, executables) into the object
     store once; each server's `ServerActor`, pinned to its node, reads them once and runs a
     `ProcessScheduler` for that server's workers only: the same worker processes as the local
     runtime (forked by the actor), the same region layout, shared-memory channels between the
     server's devices. This process's own `ProcessScheduler` runs the host's workers (device
     -1) and owns feeds, fetches, the transaction ledger and output pairing.
  4. Every channel has a copy in each place (this process, each actor) but only the consumer's
     copy is read by its consumer. A channel whose producers run in another place is relayed,
     in order, in batches of up to RELAY_BATCH messages (`cross_links`): this process pushes graph
     inputs to the servers and pulls graph outputs from them; a server pulls what its nodes
     consume from the servers that produce it. Messages cross as Ray actor calls (tensors of
     any size in the object store).
  5. One `watch` call per actor stays outstanding: a worker of a server that dies, or an actor
     or node that dies, fails the model as a dead local worker does (ProcessScheduler, 4), with
     a message naming the nodes, their devices and the server.
  6. `close()` closes this process's scheduler, then each actor's, then kills the actors.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from dfir.core.errors import GeError
from dfir.om.plan import Plan
from dfir.runtime import channels
from dfir.runtime.driver.process_scheduler import DRIVER_BELL, ProcessScheduler, Wiring, plan_wiring
from dfir.runtime.driver.servers import Server
from dfir.runtime.funcs import Source
from dfir.runtime.worker.host import ModelParts

RELAY_BATCH = 64            # messages one relay call carries at most
POLL_MS = 200               # how long a pull waits for messages before it looks at the model again
CALL_TIMEOUT_S = 120.0      # the longest any single Ray call may take (actor start included)
WATCH_S = 5.0               # how long one `watch` call waits before it returns
CLOSE_TIMEOUT_S = 5.0       # how long close() waits for the actors to close before killing them
SERVER_RESOURCE = "dfir_server_{}"

Place = int | None          # a server's index in the scheduler's servers, None: this process


@dataclass(frozen=True)
class Link:
    """Channel `channel` is produced (in part) in `source` and consumed in `target`."""

    channel: int
    source: Place
    target: Place


def cross_links(wiring: Wiring, place_of_worker: Sequence[Place]) -> list[Link]:
    """Every (channel, producing place, consuming place) with the two places apart."""
    device = wiring.device
    unit_places = [place_of_worker[w] for w in wiring.unit_workers]
    consumer = {c: None if spec.bell == DRIVER_BELL else unit_places[spec.bell - 1]
                for c, spec in enumerate(wiring.channel_specs)}
    links: dict[tuple[int, Place], Link] = {}
    for source, targets in device.routes.items():
        chosen = targets.fixed + tuple(c for _, group in targets.spread for c in group)
        for place in _producing_places(source, device, unit_places):
            for channel in chosen:
                if place != consumer[channel]:
                    links.setdefault((channel, place), Link(channel, place, consumer[channel]))
    return list(links.values())


def _producing_places(source: Source, device, unit_places: Sequence[Place]) -> set[Place]:
    if source.closure is not None:  # a flow closure's input: put by its invoking node (one instance)
        node = device.closures[source.closure].node
    elif source.node is None:       # a graph input: fed by this process
        return {None}
    else:
        node = source.node
    return {place for ref, place in zip(device.units, unit_places) if ref.node == node}


def connect(address: str) -> None:
    """Connect this process to Ray (see the module docstring, 1)."""
    if ray.is_initialized():
        return
    try:
        ray.init(address=address or os.environ.get("RAY_ADDRESS") or None, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise GeError(f"cannot connect to the Ray cluster {address or os.environ.get('RAY_ADDRESS') or '(local)'}: "
                      f"{error}", "dfir.load", {"option": "dfir.runtime.ray_address"}) from None


def ray_nodes(servers: Sequence[Server]) -> list[str]:
    """The Ray node id of each server (see the module docstring, 2)."""
    alive = [node for node in ray.nodes() if node.get("Alive")]
    chosen = []
    for server in servers:
        resource = SERVER_RESOURCE.format(server.node_id)
        match = next((n for n in alive if n["Resources"].get(resource)), None) or next(
            (n for n in alive if n["NodeManagerAddress"] == server.ipaddr), None)
        if match is None:
            raise GeError(f"{server.label}: no node of the Ray cluster offers the resource {resource} or has "
                          f"the IP {server.ipaddr}; nodes {list(server.nodes)} are placed on it", "dfir.load")
        chosen.append(match["NodeID"])
    return chosen


class RayScheduler(ProcessScheduler):
    """`ProcessScheduler` whose servers' workers run in Ray actors (see the module docstring);
    this process runs the host's workers and keeps the feed/fetch interface unchanged."""

    def __init__(self, name: str, parts: ModelParts, depth: int, servers: Sequence[Server]):
        wiring = plan_wiring(parts.plan, name, depth)
        place_of_worker: list[Place] = [None] * len(wiring.devices)
        for s, server in enumerate(servers):
            for w in server.workers:
                place_of_worker[w] = s
        self._servers = tuple(servers)
        self._actors: list[Any] = []
        self._threads: list[threading.Thread] = []
        super().__init__(name, parts.plan, parts.build, depth,
                         workers=[w for w, place in enumerate(place_of_worker) if place is None])
        try:
            self._start_servers(parts, depth, place_of_worker)
        except (RayError, GetTimeoutError) as error:
            self.close()
            raise GeError(f"starting the servers' Ray actors failed: {type(error).__name__}: {error}",
                          "dfir.load") from None
        except BaseException:
            self.close()
            raise

    def _start_servers(self, parts: ModelParts, depth: int, place_of_worker: list[Place]) -> None:
        connect(parts.plan.cluster.ray_address)
        nodes = ray_nodes(self._servers)
        model = ray.put(_as_bytes(parts))  # once: every actor reads this one object
        links = cross_links(self.wiring, place_of_worker)
        remote = ray.remote(ServerActor)
        for s, (server, node) in enumerate(zip(self._servers, nodes)):
            mine = [link for link in links if s in (link.source, link.target)]
            self._actors.append(remote.options(
                num_cpus=0, max_concurrency=len(mine) + 8, max_restarts=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
            ).remote(self.name, model, depth, s, server, node, place_of_worker))
        reports = ray.get([actor.start.remote() for actor in self._actors], timeout=CALL_TIMEOUT_S)
        failed = next((report for report in reports if report is not None), None)
        if failed is not None:
            raise GeError(*failed)
        ray.get([actor.relay.remote(self._actors) for actor in self._actors], timeout=CALL_TIMEOUT_S)
        for link in links:
            if link.source is None:
                self._spawn(push, self.region, link, self.wiring.channel_specs[link.channel].bell,
                            self._actors[link.target].put.remote, self.fail)
            elif link.target is None:
                self._spawn(pull, self.region, link, self._actors[link.source].take.remote, lambda: self.closed,
                            self.fail)
        self._spawn(self._watch_servers)

    def _spawn(self, target: Callable, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True, name=f"dfir:{self.name}:ray")
        thread.start()
        self._threads.append(thread)

    @property
    def actors(self) -> list[Any]:
        """The servers' actors, in server order."""
        return list(self._actors)

    def _watch_servers(self) -> None:
        """Fail the model when a server fails or its actor dies (see the module docstring, 5)."""
        calls = {actor.watch.remote(WATCH_S): s for s, actor in enumerate(self._actors)}
        while calls and not self.closed and self.failure is None:
            ready, _ = ray.wait(list(calls), num_returns=1, timeout=1.0)
            for ref in ready:
                s = calls.pop(ref)
                try:
                    failure = ray.get(ref)
                except RayError as error:
                    failure = self._describe_lost(s, error)
                if failure is not None and not self.closed:
                    self.fail(failure)
                    return
                calls[self._actors[s].watch.remote(WATCH_S)] = s

    def _describe_lost(self, s: int, error: Exception) -> str:
        server = self._servers[s]
        devices = ", ".join(self.devices[w] for w in server.workers)
        nodes = ", ".join(f"'{n}'" for n in server.nodes)
        cause = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return (f"nodes {nodes} on devices {devices} of {server.label}: the server's Ray actor died "
                f"({type(error).__name__}: {cause})")

    def close(self, wait: bool = True) -> None:
        """Close this process's scheduler, then the servers' (see the module docstring, 6)."""
        was_closed = self.closed
        super().close(wait)
        if was_closed or os.getpid() != self._owner_pid or not self._actors or not ray.is_initialized():
            return
        try:
            ray.get([actor.close.remote() for actor in self._actors], timeout=CLOSE_TIMEOUT_S)
        except (RayError, GetTimeoutError):
            pass  # a dead or stuck actor is killed below
        for actor in self._actors:
            ray.kill(actor, no_restart=True)
        if wait:
            for thread in self._threads:
                thread.join(CLOSE_TIMEOUT_S)


class ServerActor:
    """One server of a model: a `ProcessScheduler` for its workers, in the actor's process on the
    server's Ray node, and the relays of what its nodes consume from other servers."""

    def __init__(self, name: str, model: tuple, depth: int, index: int, server: Server, node: str,
                 place_of_worker: Sequence[Place]):
        self._index = index
        self._where = f"{server.label}, Ray node {node}"
        self._place_of_worker = place_of_worker
        self._parts = _from_bytes(model)
        self._name = name
        self._depth = depth
        self._workers = [w for w, place in enumerate(place_of_worker) if place == index]
        self._scheduler: ProcessScheduler | None = None

    def start(self) -> tuple | None:
        """Fork the workers; the arguments of the GeError that fails the load, or None."""
        try:
            self._scheduler = ProcessScheduler(self._name, self._parts.plan, self._parts.build, self._depth,
                                               workers=self._workers)
        except GeError as error:
            return f"{error.error_message} ({self._where})", error.api_name or "dfir.load", error.context
        return None

    def relay(self, actors: Sequence[Any]) -> None:
        """Start pulling what this server's nodes consume from the other servers (`actors`, every
        server's, in order, each started)."""
        scheduler = self._scheduler
        for link in cross_links(scheduler.wiring, self._place_of_worker):
            if link.target == self._index and link.source is not None:
                threading.Thread(target=pull, args=(scheduler.region, link, actors[link.source].take.remote,
                                                    lambda: scheduler.closed, self._fail),
                                 daemon=True, name=f"dfir:{self._name}:pull").start()

    def _fail(self, failure: str) -> None:
        self._scheduler.fail(failure)

    def put(self, channel: int, messages: list) -> bool:
        """Put `messages` on this server's copy of `channel`, in order; False once closed."""
        return put_all(self._scheduler.region, channel, messages)

    def take(self, channel: int, max_messages: int, timeout_ms: int) -> list | None:
        """Up to `max_messages` messages of this server's copy of `channel` ([] when none came
        within `timeout_ms`); None once closed or failed."""
        scheduler = self._scheduler
        bell = scheduler.wiring.channel_specs[channel].bell
        sets = scheduler.region.take([channel], bell, max_messages, timeout_ms)
        return None if sets is None else [s[0] for s in sets]

    def watch(self, timeout_s: float) -> str | None:
        """Why this server failed, once it has (within `timeout_s`); None otherwise."""
        deadline = time.monotonic() + timeout_s
        scheduler = self._scheduler
        while scheduler.failure is None and not scheduler.closed and time.monotonic() < deadline:
            time.sleep(0.05)
        return None if scheduler.failure is None else f"{scheduler.failure} ({self._where})"

    def worker_pids(self) -> list[int]:
        return self._scheduler.worker_pids

    def close(self) -> None:
        if self._scheduler is not None:
            self._scheduler.close()


def push(region, link: Link, bell: int, send: Callable, fail: Callable[[str], None]) -> None:
    """Relay `link.channel` (its consumer's doorbell `bell`) from this process's copy to a
    server: `send(channel, messages)`. A failed call fails the model (`fail`), except an actor's
    death, which the watch reports."""
    while True:
        sets = region.take([link.channel], bell, RELAY_BATCH, -1)
        if sets is None:
            return
        try:
            if not ray.get(send(link.channel, [s[0] for s in sets]), timeout=CALL_TIMEOUT_S):
                return
        except RayActorError:
            return
        except (RayError, GetTimeoutError) as error:
            return fail(_relay_failure(link, error))


def pull(region, link: Link, fetch: Callable, closed: Callable[[], bool], fail: Callable[[str], None]) -> None:
    """Relay `link.channel` from another place's copy to this one: `fetch(channel, max, timeout)`;
    failures as `push`."""
    while not closed():
        try:
            messages = ray.get(fetch(link.channel, RELAY_BATCH, POLL_MS), timeout=CALL_TIMEOUT_S)
        except RayActorError:
            return
        except (RayError, GetTimeoutError) as error:
            return fail(_relay_failure(link, error))
        if messages is None or not put_all(region, link.channel, messages):
            return


def _relay_failure(link: Link, error: Exception) -> str:
    where = {None: "the driver"}
    text = str(error).strip().splitlines()
    return (f"relaying channel {link.channel} from {where.get(link.source, f'server index {link.source}')} to "
            f"{where.get(link.target, f'server index {link.target}')} failed: {type(error).__name__}"
            + (f": {text[-1]}" if text else ""))


def put_all(region, channel: int, messages: list) -> bool:
    """Put each message on `channel`, in order, waiting for room; False once the region closed."""
    return all(region.put([(channel, message)], -1) != channels.CLOSED for message in messages)


def _as_bytes(parts: ModelParts) -> tuple:
    return (parts.plan.to_bytes(), [bytes(p) for p in parts.udf_payloads],
            None if parts.weights is None else bytes(parts.weights), [bytes(b) for b in parts.so_bins],
            [bytes(e) for e in parts.executables])


def _from_bytes(model: tuple) -> ModelParts:
    plan, payloads, weights, so_bins, executables = model
    return ModelParts(Plan.from_json(plan), payloads, None if weights is None else memoryview(weights),
                      so_bins, executables)
