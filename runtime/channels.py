"""Channels between the threads and processes of a running model (a facade over `_native`).

A `Region` is one shared mapping per loaded model (runtime/native/region.h) holding:

- doorbells: one per consumer (the driver, each node, each worker's main thread); a consumer
  sleeps on its doorbell and producers ring it, with a system call only while it sleeps;
- channels: bounded FIFOs, each with one consuming node (or the driver). A *shared* channel
  carries fixed-size records between processes; a *local* one carries Message objects between
  threads of one worker. A full channel blocks its producer (backpressure), unless it is
  OVERWRITE (GE's `_flow_attr_enqueue_policy`): then the push drops the channel's oldest message,
  counted by `Region.dropped(channel)`. A consumer takes
  everything that waits in one call (`take`), so a busy pipeline runs without wake-ups;
- one status slot per worker process (its pid, the node it runs, its last words);
- the tensor arena: reference-counted blocks. A tensor sent through a shared channel is written
  into a block once (or is already in one: see `Region.use_arena_allocator`) and every reader's
  numpy array views that block; the block is freed when the last array viewing it goes away.

Workers are forked after the region is created and share its mapping; the memory is anonymous
(memfd), so nothing is left under /dev/shm and it is freed with the last process that maps it.

Calls return a wait status: READY, TIMEOUT, or CLOSED once `Region.close()` ran (in any process).
"""
from __future__ import annotations

import dataclasses
import math
import time
import weakref
from dataclasses import dataclass
from typing import Sequence

import cloudpickle

from dfir.core.messages import Kind, Message, TransactionMeta
from dfir.core.tensor import Tensor, udf_tensor
from dfir.runtime import _native

READY, TIMEOUT, CLOSED = 0, 1, 2

# Messages whose body is at most this many bytes travel inside the channel record (copied);
# larger tensors travel as arena blocks (not copied).
INLINE_BYTES: int = _native.INLINE_BYTES

InstanceDispatcher = _native.InstanceDispatcher  # picks a replicated consumer's instance per message
Aligner = _native.Aligner                        # pairs a multi-input func's messages by transaction
TransactionLedger = _native.TransactionLedger


def _dumps(value: object) -> bytes:
    return cloudpickle.dumps(value, protocol=5)


def _configure_codec() -> None:
    carried = {"meta", "kind", "payload", "ret_code", "error", "route_label", "data_label", "as_array"}
    others = {f.name: f.default if f.default is not dataclasses.MISSING else f.default_factory()
              for f in dataclasses.fields(Message) if f.name not in carried}
    _native.configure_codec(Message, TransactionMeta, tuple(Kind), Kind.OBJECT, others, _dumps,
                            cloudpickle.loads)
    _native.set_udf_tensor(udf_tensor, Tensor)


_configure_codec()


@dataclass(frozen=True)
class ChannelSpec:
    """One channel of a region: `shared` (between processes) or local, its capacity in messages,
    the doorbell its consumer sleeps on and its enqueue policy: FIFO (a full channel blocks its
    producer) or, with `overwrite`, OVERWRITE (a push to a full channel drops its oldest message,
    counted by `Region.dropped(channel)`)."""

    shared: bool
    capacity: int
    bell: int
    overwrite: bool = False


_regions: weakref.WeakSet = weakref.WeakSet()


def open_region(bells: int, channels: Sequence[ChannelSpec], workers: int, arena_bytes: int,
                name: str) -> _native.Region:
    """A new region; see the module docstring. `name` labels the mapping (/proc/<pid>/maps)."""
    region = _native.Region(bells, [("shared" if c.shared else "local", c.capacity, c.bell) for c in channels],
                            workers, arena_bytes, f"dfir:{name}")
    for index, spec in enumerate(channels):
        if spec.overwrite:
            region.set_overwrite(index)
    _regions.add(region)
    return region


def remaining_ms(deadline: float | None) -> int:
    """Milliseconds to `deadline` (a `time.monotonic()` value), rounded up so that a wait never
    ends before it (-1: no deadline)."""
    return -1 if deadline is None else max(0, math.ceil((deadline - time.monotonic()) * 1000))


def detach_other_regions(keep: _native.Region) -> None:
    """In a freshly forked worker: unmap every region but `keep`, so that the memory of models the
    worker does not serve goes back to the system when their drivers close them."""
    for region in list(_regions):
        if region is not keep:
            region.detach()
