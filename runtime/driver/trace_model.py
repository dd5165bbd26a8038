"""A model's trace as the driver collects it (option `dfir.runtime.trace`, docs/tracing.md): a
slice per node firing and per feed and fetch of the driver, and counters sampled over time.

Times are CLOCK_MONOTONIC nanoseconds: one clock for every process of a machine, so the slices
of the driver and of each worker line up as they happened.

    ModelTrace("m", devices=("host", "0:0:1"), units=(UnitTrack("a", 0, 0), UnitTrack("b", 0, 1)),
               slices=[TraceSlice(1, 1, "node 'b' instance 0", 7, 1_000_500, 1_020_000)], counters=[])
"""
from __future__ import annotations

from dataclasses import dataclass, field

DRIVER = -1  # the worker and unit of the driver's own slices (feed, fetch)
DEPTH_COUNTER = "depth: "  # the prefix of a channel depth counter's name; the channel's label follows


@dataclass(frozen=True)
class UnitTrack:
    """One node instance (a unit of the plan) and the worker that runs it."""

    node: str
    instance: int
    worker: int

    @property
    def label(self) -> str:
        return f"node '{self.node}' instance {self.instance}"


@dataclass(frozen=True)
class TraceSlice:
    """One span of work: a node firing on one input set, or a feed or fetch of the driver."""

    worker: int        # an index into ModelTrace.devices, or DRIVER
    unit: int          # an index into ModelTrace.units, or DRIVER
    name: str          # the unit's label ("node 'b' instance 0"), "feed" or "fetch"
    transaction: int   # the transaction it worked on; 0: none
    begin_ns: int
    end_ns: int
    bytes_in: int = 0   # body bytes of the messages it took (a fetch: the results)
    bytes_out: int = 0  # body bytes of the messages it put, once per channel (a feed: the inputs)


@dataclass(frozen=True)
class TraceCounter:
    """A value sampled at one moment: a channel's depth, the arena's bytes in use."""

    name: str          # "depth: input 0 of node 'b' (device 0:0:1)", "arena bytes in use"
    ts_ns: int
    value: int


@dataclass
class ModelTrace:
    """What one loaded model recorded while it was traced."""

    model: str
    devices: tuple[str, ...]        # per worker, its device as messages name it ("host", "0:0:1")
    units: tuple[UnitTrack, ...]
    slices: list[TraceSlice] = field(default_factory=list)
    counters: list[TraceCounter] = field(default_factory=list)
