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
     copy is read by its consumer. A channel whose producers run in another place is relayed
     (`cross_links`) over one TCP stream per (channel, producing place), in order, in frames of
     up to RELAY_BATCH messages, a large tensor alone (runtime/driver/relay_streams.py): each
     actor listens on its node's IP; this process connects to the servers it feeds or fetches
     from, and a server to the servers whose messages its nodes consume. Streams carry the model's token, which this
     process makes and only the actors get. A tensor body crosses raw: written to the socket from
     the producer's arena block, read from it straight into an arena block of the consumer's
     region, which its channel carries without copying (two copies in all, both the kernel's).
  5. One `watch` call per actor stays outstanding. A worker of a server that dies is restarted
     by the server's scheduler as a local one is (ProcessScheduler, 4): it repairs the server's
     channels and forks the worker again, and `watch` reports the death (and the transaction of
     a call past its udf_timeout_ms) to this process, which replaces the transactions in flight
     in its ledger and posts their failures on the graph outputs (`_fail_in_flight`). The
     host's own workers restart as local ones. A server whose actor dies (its `watch` raises a
     RayError: the actor's process or its node is gone) is started again (`_restart_server`):
     - every stream with the server stops, in this process and in the other actors (`drop_peer`),
       and no send loop takes a message any more; what was taken or half relayed is lost;
     - then every transaction in flight fails as for a dead worker, with a message naming the
       server's nodes, their devices and the server ("... the server's Ray actor died (...)");
       what the lost messages carried, and what the server's nodes still emit of them, is stale
       and dropped at the outputs;
     - a new actor is started on a node offering the server's resource (or its IP) and forks the
       server's workers; it dials the servers whose messages it consumes, the servers consuming
       its messages dial it again (`redial`), this process dials it for the links it feeds or
       fetches, and a new `watch` call goes out. Messages that waited for the server in other
       places' channels flow to it then;
     - restarts are bounded: a server whose actor dies for the MAX_QUICK_DEATHS-th time in a row
       within QUICK_DEATH_SECONDS of starting fails the model with the history of those deaths,
       and so does a restart that cannot be done (no live node matches, the actor does not
       start, a stream cannot be opened).
     A death fails the model instead, as a dead local worker does under `recover` "off", when
     the plan's `recover` is "off" and when the plan pairs messages by their order (restarting
     every worker would span the servers); a dead actor's message names the nodes, their
     devices and the server.
  6. `close()` closes this process's scheduler and streams, then each actor's, then kills the actors.
  7. A traced model (runtime/driver/tracing.py): each actor's workers append to the actor's own
     trace log, which this process drains through `drain_trace` twice a second and before close;
     an actor on another machine has its slices moved onto this machine's clock.
"""
from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import ray
from ray.exceptions import GetTimeoutError, RayError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from dfir.core.errors import GeError
from dfir.om.plan import Plan
from dfir.runtime.driver import relay_streams, tracing
from dfir.runtime.driver.process_scheduler import (DRIVER_BELL, MAX_QUICK_DEATHS, QUICK_DEATH_SECONDS,
                                                   VOID_TRANSACTION, ProcessScheduler, Wiring, _pairs_in_order,
                                                   plan_wiring)
from dfir.runtime.driver.relay_streams import Listener, Sockets, StreamStats, dial, receive_loop, send_loop
from dfir.runtime.driver.servers import Server
from dfir.runtime.driver.tracing import ServerLog
from dfir.runtime.funcs import Source
from dfir.runtime.worker.host import ModelParts

RELAY_BATCH = relay_streams.RELAY_BATCH  # messages one frame carries at most
CALL_TIMEOUT_S = 120.0      # the longest any single Ray call may take (actor start included)
CONNECT_TIMEOUT_S = 30.0    # how long opening a stream to another place may take
WATCH_S = 5.0               # how long one `watch` call waits before it returns
CLOSE_TIMEOUT_S = 5.0       # how long close() waits for the actors to close before killing them
STOP_TIMEOUT_S = 5.0        # how long stopping a send stream may take (it looks every STOP_POLL_MS)
SERVER_RESOURCE = "dfir_server_{}"
FAILED, RESTARTED = "failed", "restarted"  # what a server's `watch` reports
_log = logging.getLogger("dfir.runtime")

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


@dataclass
class _ServerLife:
    """What became of one server's Ray actors: when the current one started serving, how many
    were started again, why the last ones died (oldest first) and how many of those in a row died
    within QUICK_DEATH_SECONDS of starting."""

    started: float
    restarts: int = 0
    deaths: tuple[str, ...] = ()
    quick_deaths: int = 0


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
        self._host_workers = [w for w, place in enumerate(place_of_worker) if place is None]
        self._place_of_worker = place_of_worker
        self._links = cross_links(wiring, place_of_worker)
        self._depth = depth
        self._actors: list[Any] = []
        self._actors_lock = threading.Lock()  # close() kills the actors a restart may be adding to
        self._actors_closed = False
        self._addresses: list[tuple[str, int]] = []  # where each server's actor listens
        self._lives: list[_ServerLife] = []
        self._model: Any = None      # the model's parts in Ray's object store
        self._token = b""
        self._threads: list[threading.Thread] = []
        self._sockets = Sockets()
        self._relays = _Relays(None, self._sockets, name)
        self._stream_stats = StreamStats()
        super().__init__(name, parts.plan, parts.build, depth, workers=self._host_workers,
                         recovers=not _pairs_in_order(parts.plan))
        self._ledger.replace(VOID_TRANSACTION, 0)  # what a server's repair puts may reach the outputs first
        try:
            self._start_servers(parts)
        except (RayError, GetTimeoutError) as error:
            self.close()
            raise GeError(f"starting the servers' Ray actors failed: {type(error).__name__}: {error}",
                          "dfir.load") from None
        except BaseException:
            self.close()
            raise
        if self.tracer is not None:
            self.tracer.add_source(self._server_slices)

    def _start_servers(self, parts: ModelParts) -> None:
        connect(parts.plan.cluster.ray_address)
        nodes = ray_nodes(self._servers)
        self._model = ray.put(_as_bytes(parts))  # once: every actor reads this one object
        self._token = secrets.token_bytes(relay_streams.TOKEN_BYTES)
        for s, node in enumerate(nodes):
            self._new_actor(s, node)
        self._addresses = self._start_actors(self._actors)
        reports = ray.get([actor.relay.remote(self._addresses) for actor in self._actors], timeout=CALL_TIMEOUT_S)
        failed = next((report for report in reports if report is not None), None)
        if failed is not None:
            raise GeError(failed, "dfir.load")
        for s in range(len(self._servers)):
            self._open_streams(s)
        self._lives = [_ServerLife(time.monotonic()) for _ in self._servers]
        self._spawn(self._watch_servers)

    def _new_actor(self, s: int, node: str) -> Any:
        """A new actor for server `s`, pinned to Ray node `node`, in the servers' actors (where
        close() finds it); GeError once the model closed."""
        with self._actors_lock:
            if self._actors_closed:
                raise GeError(f"model '{self.name}' is closed", "dfir.load")
            actor = ray.remote(ServerActor).options(
                num_cpus=0, max_concurrency=8, max_restarts=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
            ).remote(self.name, self._model, self._depth, s, self._servers[s], node, self._place_of_worker,
                     self._token, 0.0 if self.tracer is None else self.tracer.rate)
            if s < len(self._actors):
                self._actors[s] = actor
            else:
                self._actors.append(actor)
        return actor

    @staticmethod
    def _start_actors(actors: Sequence[Any]) -> list[tuple[str, int]]:
        """Start `actors` (fork their workers, listen for streams): where each listens; the first
        one's GeError that fails to start."""
        reports = ray.get([actor.start.remote() for actor in actors], timeout=CALL_TIMEOUT_S)
        failed = next((report for report in reports if report is not None), None)
        if failed is not None:
            raise GeError(*failed)
        return ray.get([actor.stream_address.remote() for actor in actors], timeout=CALL_TIMEOUT_S)

    def _open_streams(self, s: int) -> None:
        """Open this process's streams with server `s` (those of the links it feeds or fetches)."""
        for link in self._links:
            if None in (link.source, link.target) and s in (link.source, link.target):
                self._open_stream(link, self._addresses[s])

    def _open_stream(self, link: Link, address: tuple[str, int]) -> None:
        """Feed `link` (this process -> a server) or fetch it (a server -> this process) over a
        stream to the server's actor listening at `address`."""
        try:
            sock = dial(address, self._token, link.channel, link.source, CONNECT_TIMEOUT_S)
        except OSError as error:
            raise GeError(_unreachable(link, address, error), "dfir.load") from None
        if not self._sockets.add(sock):
            return
        fail = _relay_fail(link, self.fail)
        if link.source is None:
            self._relays.start(link, sock, send_loop, self.region, link.channel,
                               self.wiring.channel_specs[link.channel].bell, sock, fail)
        else:
            self._relays.start(link, sock, receive_loop, self.region, link.channel, sock, self._stream_stats, fail)

    def _spawn(self, target: Callable, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True, name=f"dfir:{self.name}:ray")
        thread.start()
        self._threads.append(thread)

    @property
    def actors(self) -> list[Any]:
        """The servers' actors, in server order."""
        return list(self._actors)

    def actor_of(self, node_id: int) -> Any:
        """The actor of the server whose `node_id` is `node_id`."""
        return self._actors[next(s for s, server in enumerate(self._servers) if server.node_id == node_id)]

    def stream_stats(self) -> dict[str, int]:
        """What this process's streams received (relay_streams.StreamStats)."""
        return self._stream_stats.as_dict()

    def worker_stats(self) -> list[dict[str, Any]]:
        """Per worker, in device order, this process's and each live server's (see
        ProcessScheduler.worker_stats); a server whose actor is gone is left out. A server's
        worker counts the restarts of the server's actor too, and lists their deaths before its own."""
        stats = dict(zip(self._host_workers, super().worker_stats()))
        for server, actor, life in zip(self._servers, self.actors, self._lives):
            try:
                served = ray.get(actor.worker_stats.remote(), timeout=CALL_TIMEOUT_S)
            except (RayError, GetTimeoutError):
                continue
            for worker in served:
                worker["restarts"] += life.restarts
                worker["deaths"] = (list(life.deaths) + worker["deaths"])[-MAX_QUICK_DEATHS:]
            stats.update(zip(server.workers, served))
        return [stats[w] for w in sorted(stats)]

    def _watch_servers(self) -> None:
        """Fail the transactions in flight of a server's restarted worker; restart a server whose
        actor died, or fail the model; fail it when a server fails (see the module docstring, 5)."""
        calls = {actor.watch.remote(WATCH_S): s for s, actor in enumerate(self._actors)}
        while calls and not self.closed and self.failure is None:
            ready, _ = ray.wait(list(calls), num_returns=1, timeout=1.0)
            for ref in ready:
                s = calls.pop(ref)
                try:
                    report = ray.get(ref)
                except RayError as error:
                    if not self._restart_server(s, error):
                        return
                    report = None
                if report is not None and report[0] == FAILED:
                    if not self.closed:
                        self.fail(report[1])
                    return
                for death, timed_out in report[1] if report is not None else ():
                    self._server_worker_restarted(death, timed_out)
                calls[self._actors[s].watch.remote(WATCH_S)] = s

    def _server_worker_restarted(self, death: str, timed_out: int | None) -> None:
        """A server restarted a worker that died of `death`: replace the transactions in flight
        here, where the ledger is, as for a worker of this process."""
        if self.closed or self.failure is not None:
            return
        _log.warning("model '%s': %s; it was restarted", self.name, death)
        self._ledger.replace(VOID_TRANSACTION, 0)
        self._fail_in_flight(death, timed_out)

    def _restart_server(self, s: int, error: Exception) -> bool:
        """Server `s`'s actor died of `error`: fail the transactions in flight and start the
        server again, or fail the model (see the module docstring, 5); whether it serves again."""
        death = self._describe_lost(s, error)
        if self.closed or self.failure is not None:
            return False
        if not self._recovers:
            self.fail(death)
            return False
        life = self._lives[s]
        quick = time.monotonic() - life.started < QUICK_DEATH_SECONDS
        quick_deaths = life.quick_deaths + 1 if quick else 0
        deaths = (life.deaths + (death,))[-MAX_QUICK_DEATHS:]
        if quick_deaths >= MAX_QUICK_DEATHS:
            self.fail(f"{death}; it died {quick_deaths} times in a row within {QUICK_DEATH_SECONDS:g} s of "
                      f"starting: " + "; ".join(deaths))
            return False
        self._stop_streams_with(s)  # before the ledger: no stream takes a message of the server's after it
        self._ledger.replace(VOID_TRANSACTION, 0)
        self._fail_in_flight(death, None)
        try:
            node = self._reopen(s)
        except (GeError, RayError, GetTimeoutError) as why:
            self.fail(f"{death}; starting the server's Ray actor again failed: {_reason(why)}")
            return False
        self._lives[s] = _ServerLife(time.monotonic(), life.restarts + 1, deaths, quick_deaths)
        _log.warning("model '%s': %s; it was restarted on Ray node %s", self.name, death, node)
        return not self.closed and self.failure is None

    def _stop_streams_with(self, s: int) -> None:
        """Stop every stream with server `s`, in this process and in the other servers' actors:
        once this returns, none of them takes a message any more."""
        self._relays.stop(s)
        peers = {link.source if link.target == s else link.target for link in self._links
                 if s in (link.source, link.target)} - {None, s}
        for t in sorted(peers):
            try:
                ray.get(self._actors[t].drop_peer.remote(s), timeout=CALL_TIMEOUT_S)
            except (RayError, GetTimeoutError):
                continue  # that actor is gone too: its own watch reports it

    def _reopen(self, s: int) -> str:
        """Start a new actor for server `s` on a node offering its resource and re-open the
        streams of its links: it dials the servers it consumes from, the servers consuming from it
        dial it, this process dials it. The node."""
        self._kill(self._actors[s])
        (node,) = ray_nodes([self._servers[s]])
        actor = self._new_actor(s, node)
        (self._addresses[s],) = self._start_actors([actor])
        failed = ray.get(actor.relay.remote(self._addresses), timeout=CALL_TIMEOUT_S)
        if failed is not None:
            raise GeError(failed)
        for t in sorted({link.target for link in self._links if link.source == s} - {None}):
            try:
                failed = ray.get(self._actors[t].redial.remote(s, self._addresses[s]), timeout=CALL_TIMEOUT_S)
            except (RayError, GetTimeoutError):
                continue  # that actor is gone too: its own restart dials the new one
            if failed is not None:
                raise GeError(failed)
        self._open_streams(s)
        return node

    def _describe_lost(self, s: int, error: Exception) -> str:
        server = self._servers[s]
        devices = ", ".join(self.devices[w] for w in server.workers)
        nodes = ", ".join(f"'{n}'" for n in server.nodes)
        cause = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return (f"nodes {nodes} on devices {devices} of {server.label}: the server's Ray actor died "
                f"({type(error).__name__}: {cause})")

    def _server_slices(self) -> list[bytes]:
        """What each live server's trace log holds (tracing.py, 3), on this machine's clock: a
        server on another machine is moved by the midpoint of the call that drained it."""
        with self._actors_lock:
            actors = list(self._actors)
        here, drained = tracing.boot_id(), []
        for actor in actors:
            asked = time.monotonic_ns()
            try:
                packed, there_ns, boot = ray.get(actor.drain_trace.remote(), timeout=CALL_TIMEOUT_S)
            except (RayError, GetTimeoutError):
                continue  # a dead actor's slices went with it
            offset = 0 if boot == here else there_ns - (asked + time.monotonic_ns()) // 2
            drained.append(tracing.shifted(packed, offset))
        return drained

    def close(self, wait: bool = True) -> None:
        """Close this process's scheduler, then the servers' (see the module docstring, 6)."""
        was_closed = self.closed
        if not was_closed and self.tracer is not None and os.getpid() == self._owner_pid:
            self.tracer.drain_sources()  # the servers' slices, before their actors go
        super().close(wait)
        if was_closed or os.getpid() != self._owner_pid:
            return
        self._sockets.shutdown()
        with self._actors_lock:
            self._actors_closed = True
            actors = list(self._actors)
        if not actors or not ray.is_initialized():
            return
        try:
            ray.get([actor.close.remote() for actor in actors], timeout=CLOSE_TIMEOUT_S)
        except (RayError, GetTimeoutError):
            pass  # a dead or stuck actor is killed below
        for actor in actors:
            self._kill(actor)
        self._model = None  # the model's parts leave the object store
        if wait:
            for thread in self._threads:
                thread.join(CLOSE_TIMEOUT_S)
            self._relays.join(CLOSE_TIMEOUT_S)

    @staticmethod
    def _kill(actor: Any) -> None:
        try:
            ray.kill(actor, no_restart=True)
        except (RayError, ValueError):
            pass  # gone already


class ServerActor:
    """One server of a model: a `ProcessScheduler` for its workers, in the actor's process on the
    server's Ray node, and the streams of the channels it relays to or from other places."""

    def __init__(self, name: str, model: tuple, depth: int, index: int, server: Server, node: str,
                 place_of_worker: Sequence[Place], token: bytes, trace_rate: float = 0.0):
        """`trace_rate`: the share of transactions the driver traces (0: none; tracing.py, 3)."""
        self._trace_rate = trace_rate
        self._index = index
        self._where = f"{server.label}, Ray node {node}"
        self._place_of_worker = place_of_worker
        self._parts = _from_bytes(model)
        self._name = name
        self._depth = depth
        self._token = token
        self._workers = [w for w, place in enumerate(place_of_worker) if place == index]
        self._scheduler: _ServerScheduler | None = None
        self._links: dict[tuple[int, Place], Link] = {}
        self._sockets = Sockets()
        self._relays = _Relays(index, self._sockets, name)
        self._stats = StreamStats()
        self._listener: Listener | None = None

    def start(self) -> tuple | None:
        """Fork the workers, then listen for streams; the arguments of the GeError that fails the
        load, or None."""
        try:
            self._scheduler = _ServerScheduler(self._name, self._parts.plan, self._parts.build, self._depth,
                                               workers=self._workers, recovers=not _pairs_in_order(self._parts.plan),
                                               trace_rate=self._trace_rate)
        except GeError as error:
            return f"{error.error_message} ({self._where})", error.api_name or "dfir.load", error.context
        self._links = {(link.channel, link.source): link
                       for link in cross_links(self._scheduler.wiring, self._place_of_worker)
                       if self._index in (link.source, link.target)}
        # After the fork: the workers must not hold the listening socket.
        self._listener = Listener(ray.util.get_node_ip_address(), self._token, self._sockets, self._serve)
        return None

    def drain_trace(self) -> tuple[bytes, int, str]:
        """The slices this server's workers appended since the last call (packed TRACE_RECORDs),
        this process's CLOCK_MONOTONIC now, and its machine's boot id."""
        tracer = self._scheduler.tracer if self._scheduler is not None else None
        return (b"" if tracer is None else tracer.drain_packed()), time.monotonic_ns(), tracing.boot_id()

    def stream_address(self) -> tuple[str, int]:
        """Where this server listens for streams."""
        return self._listener.address

    def pid(self) -> int:
        """The actor's process."""
        return os.getpid()

    def relay(self, addresses: Sequence[tuple[str, int]]) -> str | None:
        """Open a stream from each server whose messages this server's nodes consume (`addresses`:
        every server's, in order, each listening); why one cannot be opened, or None."""
        for source in sorted({link.source for link in self._links.values()
                              if link.target == self._index and link.source is not None}):
            failed = self.redial(source, addresses[source])
            if failed is not None:
                return failed
        return None

    def redial(self, source: int, address: tuple[str, int]) -> str | None:
        """Open a stream for each link from server index `source` to this server, to `source`'s
        actor listening at `address` (at the start, and for a new actor of that server once the
        old one's streams were dropped: `drop_peer`); why one cannot be opened, or None."""
        for link in self._links.values():
            if link.target == self._index and link.source == source:
                try:
                    sock = dial(address, self._token, link.channel, link.source, CONNECT_TIMEOUT_S)
                except OSError as error:
                    return f"{_unreachable(link, address, error)} ({self._where})"
                self._serve(sock, link.channel, link.source, dialed=True)
        return None

    def drop_peer(self, peer: int) -> None:
        """Stop the streams with server index `peer`, whose actor died: once this returns, none of
        them takes a message any more."""
        self._relays.stop(peer)

    def _serve(self, sock: socket.socket, channel: int, source: Place, dialed: bool = False) -> None:
        """Relay the link (`channel`, `source`) over `sock`: write it when this server produces it,
        else read it; a stream for no link of this server is closed."""
        link = self._links.get((channel, source))
        if link is None or (dialed and not self._sockets.add(sock)):
            self._sockets.discard(sock)
            return
        scheduler = self._scheduler
        fail = _relay_fail(link, scheduler.fail)
        if link.source == self._index:
            self._relays.start(link, sock, send_loop, scheduler.region, channel,
                               scheduler.wiring.channel_specs[channel].bell, sock, fail)
        else:
            self._relays.start(link, sock, receive_loop, scheduler.region, channel, sock, self._stats, fail)

    def stream_stats(self) -> dict[str, int]:
        """What this server's streams received (relay_streams.StreamStats)."""
        return self._stats.as_dict()

    def watch(self, timeout_s: float) -> tuple | None:
        """What happened to this server within `timeout_s`: (FAILED, why) once it failed, else
        (RESTARTED, [(the death, the timed-out transaction or None)]) once it restarted workers
        whose transactions in flight the driver has yet to fail; None otherwise."""
        deadline = time.monotonic() + timeout_s
        scheduler = self._scheduler
        while scheduler.failure is None and not scheduler.closed and time.monotonic() < deadline \
                and not scheduler.has_restarts():
            time.sleep(0.05)
        if scheduler.failure is not None:
            return FAILED, f"{scheduler.failure} ({self._where})"
        restarts = scheduler.take_restarts()
        return (RESTARTED, [(f"{death} ({self._where})", timed_out) for death, timed_out in restarts]) \
            if restarts else None

    def worker_pids(self) -> list[int]:
        return self._scheduler.worker_pids

    def worker_stats(self) -> list[dict[str, Any]]:
        return self._scheduler.worker_stats()

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
        if self._scheduler is not None:
            self._scheduler.close()
        self._sockets.shutdown()


class _ServerScheduler(ProcessScheduler):
    """A server's `ProcessScheduler`: it restarts its dead workers, but the transactions they held
    are the driver's to fail (its ledger), which `watch` tells through `take_restarts`."""

    def __init__(self, *args: Any, trace_rate: float = 0.0, **kwargs: Any):
        self._restarts: list[tuple[str, int | None]] = []
        self._restarts_lock = threading.Lock()
        self._trace_rate = trace_rate
        super().__init__(*args, **kwargs)

    def _new_tracer(self, plan: Plan) -> ServerLog | None:
        """The log the driver drains through the actor, when the driver traces (not this plan's
        own setting, nor DFIR_TRACE here: the driver decides)."""
        return ServerLog(self.name, self._trace_rate) if self._trace_rate else None

    def _fail_in_flight(self, death: str, timed_out: int | None) -> None:
        with self._restarts_lock:
            self._restarts.append((death, timed_out))

    def has_restarts(self) -> bool:
        return bool(self._restarts)

    def take_restarts(self) -> list[tuple[str, int | None]]:
        """The deaths (and timed-out transactions) of the workers restarted since the last call."""
        with self._restarts_lock:
            restarts, self._restarts = self._restarts, []
        return restarts


@dataclass
class _Relay:
    """One stream of a place: its peer, its socket, what stops it, its thread, whether it sends."""

    peer: Place
    sock: socket.socket
    stop: threading.Event
    thread: threading.Thread
    sends: bool


class _Relays:
    """The streams of one place (`here`), each relaying one link on a thread of its own; those
    with one peer stop together when that peer's actor died (`stop`)."""

    def __init__(self, here: Place, sockets: Sockets, name: str):
        self._here = here
        self._sockets = sockets
        self._name = name
        self._relays: list[_Relay] = []
        self._lock = threading.Lock()

    def start(self, link: Link, sock: socket.socket, loop: Callable, *args: Any) -> None:
        """Run `loop(*args)` (relay_streams.send_loop or receive_loop) for `link` over `sock`,
        then close `sock`."""
        stop = threading.Event()
        thread = threading.Thread(target=self._run, args=(sock, loop, args, stop), daemon=True,
                                  name=f"dfir:{self._name}:relay")
        peer = link.target if link.source == self._here else link.source
        with self._lock:
            self._relays = [relay for relay in self._relays if relay.thread.is_alive()]
            self._relays.append(_Relay(peer, sock, stop, thread, loop is send_loop))
            thread.start()

    def _run(self, sock: socket.socket, loop: Callable, args: tuple, stop: threading.Event) -> None:
        try:
            loop(*args, stop=stop)
        finally:
            self._sockets.discard(sock)

    def stop(self, peer: Place) -> None:
        """Stop the streams with `peer`: once this returns, none of them takes a message any more
        (each send loop is waited for; a receive loop ends as its socket is shut down, once it
        put what it holds)."""
        with self._lock:
            stopping = [relay for relay in self._relays if relay.peer == peer]
            self._relays = [relay for relay in self._relays if relay.peer != peer]
        for relay in stopping:
            relay.stop.set()
            self._sockets.interrupt(relay.sock)
        for relay in stopping:
            if relay.sends:
                relay.thread.join(STOP_TIMEOUT_S)

    def join(self, timeout_s: float) -> None:
        with self._lock:
            relays = list(self._relays)
        for relay in relays:
            relay.thread.join(timeout_s)


def _relay_fail(link: Link, fail: Callable[[str], None]) -> Callable[[Exception], None]:
    """What a stream of `link` calls on an error that is not its peer going away: fails the model
    (`fail`) naming the link."""
    return lambda error: fail(_relay_failure(link, error))


def _relay_failure(link: Link, error: Exception) -> str:
    text = str(error).strip().splitlines()
    return (f"relaying channel {link.channel} from {_place_name(link.source)} to {_place_name(link.target)} "
            f"failed: {type(error).__name__}" + (f": {text[-1]}" if text else ""))


def _reason(error: Exception) -> str:
    """Why a restart failed, in one line."""
    if isinstance(error, GeError):
        return error.error_message
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def _unreachable(link: Link, address: tuple[str, int], error: OSError) -> str:
    return (f"relaying channel {link.channel} from {_place_name(link.source)} to {_place_name(link.target)}: "
            f"cannot connect to {address[0]}:{address[1]} ({type(error).__name__}: {error})")


def _place_name(place: Place) -> str:
    return "the driver" if place is None else f"server index {place}"


def _as_bytes(parts: ModelParts) -> tuple:
    return (parts.plan.to_bytes(), [bytes(p) for p in parts.udf_payloads],
            None if parts.weights is None else bytes(parts.weights), [bytes(b) for b in parts.so_bins],
            [bytes(e) for e in parts.executables])


def _from_bytes(model: tuple) -> ModelParts:
    plan, payloads, weights, so_bins, executables = model
    return ModelParts(Plan.from_json(plan), payloads, None if weights is None else memoryview(weights),
                      so_bins, executables)
