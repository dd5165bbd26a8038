"""Tracing a loaded model (option `dfir.runtime.trace`, environment variable DFIR_TRACE;
docs/tracing.md).

Algorithm:
  1. Before the workers fork, the driver makes the model's trace log (`_native.TraceLog`), a ring
     in shared memory that every process of the model appends its slices to: a worker's set loop
     one per input set a node fires on (one per function of a lean chain), its aligned and stream
     loops one per call; the driver port one per feed it puts and fetch it takes (Python's own
     feeds through `driver_slice`). A slice is (node, instance, transaction, begin, end, bytes
     in, bytes out): times on the log's clock (`log.now()`, CLOCK_MONOTONIC's ns read from the
     time-stamp counter: runtime/native/tick_clock.h), and the body bytes of the messages the
     call took and put, counted by a `ByteMeter` (runtime/native/channel_io.h). Under a
     sampling rate below 1, only the transactions the log samples (the same ones in every
     process) leave slices.
  2. A native thread of the driver drains the log every DRAIN_MS, keeping the records packed as
     they come: no Python object per slice, and no GIL taken, so the threads that feed and fetch
     never wait for it. A Python thread samples the depth of every node input channel and the
     arena's bytes in use every COUNTER_SECONDS as counters (a value is kept when it changed).
  3. Under Ray, each server's workers append to their actor's own log (`ServerLog`), which the
     driver drains through the actor every REMOTE_DRAIN_SECONDS (`add_source`), its times moved
     onto this machine's clock when the actor runs on another one.
  4. `collect()` drains at once and names every slice by its unit (a `ModelTrace`,
     runtime/driver/trace_model.py); closing the model drains what is left. Every
     traced model of the process stays in `traces()`, closed ones as they ended, for `dfir trace`
     to write at exit (runtime/driver/trace_file.py writes the file).
"""
from __future__ import annotations

import os
import threading
from dataclasses import replace
from typing import Any, Callable

import numpy as np

from dfir.core.errors import GeError
from dfir.om.plan import Plan, trace_rate
from dfir.runtime import _native
from dfir.runtime.driver.trace_model import DEPTH_COUNTER, DRIVER, ModelTrace, TraceCounter, TraceSlice, UnitTrack

TRACE_ENV = "DFIR_TRACE"
TRACE_RECORD = np.dtype([("node", "<i4"), ("instance", "<i4"), ("transaction", "<u8"), ("begin_ns", "<i8"),
                         ("end_ns", "<i8"), ("bytes_in", "<u8"), ("bytes_out", "<u8")])
"""A slice as `TraceLog.drain` packs it; node -1 is a feed of the driver, -2 a fetch."""
DRIVER_SLICES = {-1: "feed", -2: "fetch"}
_DRIVER_NODES = {name: node for node, name in DRIVER_SLICES.items()}
LOG_RECORDS = 1 << 22   # slices the log holds: 64 lanes of 65,536 (256 MiB of shared memory, touched as used)
DRAIN_MS = 20
COUNTER_SECONDS = 0.1
REMOTE_DRAIN_SECONDS = 0.5

_tracers: list[ModelTracer] = []
_tracers_lock = threading.Lock()


def effective_rate(plan: Plan) -> float:
    """The share of transactions a model of `plan` traces: DFIR_TRACE when set, else the plan's."""
    value = os.environ.get(TRACE_ENV)
    if value is None:
        return plan.trace
    rate = trace_rate(value)
    if rate is None:
        raise GeError(f"environment variable {TRACE_ENV} is {value!r}: expected off, on or a sampling rate in (0, 1]",
                      "dfir.load")
    return rate


def traces() -> list[ModelTrace]:
    """The trace of every model this process loaded while tracing was on, in load order: a live
    model's as of now, a closed one's as it ended."""
    with _tracers_lock:
        tracers = list(_tracers)
    return [tracer.collect() for tracer in tracers]


class ModelTracer:
    """The trace of one loaded model (see the module docstring)."""

    def __init__(self, name: str, rate: float, wiring: Any, region: Any, devices: tuple[str, ...]):
        """`wiring`: the model's `Wiring` (process_scheduler.py); `devices`: each worker's device
        as messages name it."""
        device = wiring.device
        self.log = _native.TraceLog(LOG_RECORDS, rate, f"dfir-trace:{name}")
        self.rate = rate
        self._sources: list[Callable[[], list[bytes]]] = []
        self._region = region
        self._unit_of = {(ref.node, ref.instance): u for u, ref in enumerate(device.units)}
        self._workers = wiring.unit_workers
        units = tuple(UnitTrack(device.node_names[ref.node], ref.instance, wiring.unit_workers[u])
                      for u, ref in enumerate(device.units))
        self._labels = [unit.label for unit in units]
        self._trace = ModelTrace(name, devices, units)
        self._depths = [(DEPTH_COUNTER + _input_label(units[u], j, devices), channel)
                        for u, inputs in enumerate(device.unit_inputs) for j, channel in enumerate(inputs)]
        self._last: dict[str, int] = {}
        self._packed: list[bytes] = []  # the drained records, as TRACE_RECORDs
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drain_until_closed, daemon=True, name=f"dfir:{name}:trace")
        with _tracers_lock:
            _tracers.append(self)

    def start(self) -> None:
        """Drain and sample in the background (after the workers forked: they must not inherit
        the threads)."""
        self.log.start_draining(DRAIN_MS)
        self._thread.start()

    def driver_slice(self, name: str, transaction: int, begin_ns: int, bytes_in: int = 0, bytes_out: int = 0) -> None:
        """A feed ("feed") or fetch ("fetch") Python served that began at `begin_ns` and ends now,
        which took `bytes_in` and put `bytes_out` bytes of message bodies."""
        self.log.append(_DRIVER_NODES[name], 0, transaction, begin_ns, self.log.now(), bytes_in, bytes_out)

    def add_source(self, source: Callable[[], list[bytes]]) -> None:
        """Drain `source` too: it gives records packed as TRACE_RECORDs, on this machine's clock
        (another process's log: a server's, under Ray)."""
        self._sources.append(source)

    def drain_sources(self) -> None:
        """Take what the sources hold now."""
        packed = [records for source in self._sources for records in source()]
        with self._lock:
            self._packed += packed

    def collect(self) -> ModelTrace:
        """What the model recorded so far (a copy)."""
        self.drain_sources()
        self._drain()
        with self._lock:
            packed = b"".join(self._packed)
            self._packed = [packed]
            counters = list(self._trace.counters)
        return replace(self._trace, slices=self._slices(np.frombuffer(packed, TRACE_RECORD)), counters=counters)

    def close(self) -> None:
        """Drain what is left: the workers have ended, so no slice is still being written. The
        sources are gone with the model (its owner drained them before)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self._sources = []
        self.log.stop_draining(True)
        self._drain()

    def discard(self) -> None:
        """Forget this trace: the model failed to load."""
        with _tracers_lock:
            if self in _tracers:
                _tracers.remove(self)

    def _drain_until_closed(self) -> None:
        rounds_per_remote = max(1, round(REMOTE_DRAIN_SECONDS / COUNTER_SECONDS))
        rounds = 0
        while not self._stop.wait(COUNTER_SECONDS):
            self._sample_counters()
            rounds += 1
            if self._sources and rounds % rounds_per_remote == 0:
                self.drain_sources()

    def _drain(self) -> None:
        """Take what the native thread drained (or, before it started, drain now)."""
        with self._lock:
            self._packed.append(self.log.take_drained())

    def _slices(self, records: np.ndarray) -> list[TraceSlice]:
        slices = []
        for node, instance, transaction, begin_ns, end_ns, bytes_in, bytes_out in records.tolist():
            if node in DRIVER_SLICES:
                slices.append(TraceSlice(DRIVER, DRIVER, DRIVER_SLICES[node], transaction, begin_ns, end_ns,
                                         bytes_in, bytes_out))
            elif (unit := self._unit_of.get((node, instance))) is not None:
                slices.append(TraceSlice(self._workers[unit], unit, self._labels[unit], transaction, begin_ns, end_ns,
                                         bytes_in, bytes_out))
        return slices

    def _sample_counters(self) -> None:
        now = self.log.now()
        values = [(name, self._region.size(channel)) for name, channel in self._depths]
        values.append(("arena bytes in use", self._region.arena_stats()["live_bytes"]))
        with self._lock:
            for name, value in values:
                if self._last.get(name) != value:
                    self._last[name] = value
                    self._trace.counters.append(TraceCounter(name, now, value))


class ServerLog:
    """The trace log of a server's workers under Ray: they append to it, and the driver drains it
    through the server's actor (`drain_packed`); nothing in the server drains it. It stands in for
    a `ModelTracer` in the server's scheduler."""

    def __init__(self, name: str, rate: float):
        self.log = _native.TraceLog(LOG_RECORDS, rate, f"dfir-trace:{name}")

    def drain_packed(self) -> bytes:
        return self.log.drain()

    def start(self) -> None:
        pass

    def close(self) -> None:
        pass

    def discard(self) -> None:
        pass


def boot_id() -> str:
    """This machine's boot id: two processes that read the same one share CLOCK_MONOTONIC."""
    with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as file:
        return file.read().strip()


def shifted(packed: bytes, offset_ns: int) -> bytes:
    """Records packed as TRACE_RECORDs, their times less `offset_ns`."""
    if not offset_ns or not packed:
        return packed
    records = np.frombuffer(packed, TRACE_RECORD).copy()
    records["begin_ns"] -= offset_ns
    records["end_ns"] -= offset_ns
    return records.tobytes()


def _input_label(unit: UnitTrack, j: int, devices: tuple[str, ...]) -> str:
    return f"input {j} of {unit.label} (device {devices[unit.worker]})"
