"""Models' traces as one Chrome Trace Event Format file, which Perfetto and chrome://tracing open
(docs/tracing.md says what each track, slice and arrow is).

    trace = ModelTrace("m", devices=("host",), units=(UnitTrack("a", 0, 0),),
                       slices=[TraceSlice(0, 0, "node 'a' instance 0", 7, 2_000, 5_500)])
    write_trace("run.json", [trace])
    # {"traceEvents": [...metadata..., {"ph": "X", "cat": "node", "name": "node 'a' instance 0",
    #   "pid": 2, "tid": 1, "ts": 0.0, "dur": 3.5, "args": {"transaction_id": 7}}],
    #  "displayTimeUnit": "ms", "otherData": {"dfir_trace": 1, "models": ["m"], "clock_origin_ns": 2000}}

Layout: one process per model and worker (pid `1 + model_index * 1024 + worker + 1`, the driver's
being worker -1), a thread per node instance (tid = unit + 1; the driver's feeds and fetches on tid
0), an "X" slice per firing, a chain of flow events ("s", "t"..., "f") per transaction through its
slices in the order they began, and a "C" counter event per sample on the model's driver process.
Times are microseconds (3 decimals) after the earliest moment the file records, whose
CLOCK_MONOTONIC nanoseconds are `otherData.clock_origin_ns`. The same traces give the same file.
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from typing import Any, Sequence

from dfir.core.atomic_file import write_atomic
from dfir.runtime.driver.trace_model import DRIVER, ModelTrace, TraceSlice

__all__ = ["FORMAT_VERSION", "chrome_trace", "clock_origin_ns", "driver_pid", "flow_id", "pid_of", "write_trace"]

FORMAT_VERSION = 1  # otherData.dfir_trace
PIDS_PER_MODEL = 1024
FLOW_IDS_PER_MODEL = 2 ** 40
DRIVER_THREAD = "feed/fetch"

Event = dict[str, Any]


def write_trace(path: str | os.PathLike, traces: Sequence[ModelTrace]) -> None:
    """Write `traces` to `path` as one trace file (`chrome_trace`), atomically: a reader of the
    path sees the old file or the whole new one."""
    text = json.dumps(chrome_trace(traces), separators=(",", ":"), ensure_ascii=False)
    write_atomic(path, text.encode("utf-8"))


def chrome_trace(traces: Sequence[ModelTrace]) -> dict[str, Any]:
    """The trace file's JSON object for `traces`, model index = position in `traces`.
    Events in order: metadata, slices by (ts, pid, tid), flows, counters by ts."""
    origin = clock_origin_ns(traces)
    metadata: list[Event] = []
    slices: list[Event] = []
    flows: list[Event] = []
    counters: list[Event] = []
    for index, trace in enumerate(traces):
        metadata += _metadata_events(index, trace)
        model_slices = [_slice_event(index, s, origin) for s in trace.slices]
        slices += model_slices
        flows += _flow_events(index, trace.slices, model_slices)
        counters += _counter_events(index, trace, origin)
    slices.sort(key=lambda e: (e["ts"], e["pid"], e["tid"]))
    counters.sort(key=lambda e: (e["ts"], e["pid"], e["name"]))
    return {"traceEvents": metadata + slices + flows + counters, "displayTimeUnit": "ms",
            "otherData": {"dfir_trace": FORMAT_VERSION, "models": [t.model for t in traces],
                          "clock_origin_ns": origin}}


def clock_origin_ns(traces: Sequence[ModelTrace]) -> int:
    """The earliest moment the traces record (a slice's begin or a counter's sample), 0 if none:
    every ts is after it, as Perfetto drops events with negative times."""
    moments = [s.begin_ns for t in traces for s in t.slices] + [c.ts_ns for t in traces for c in t.counters]
    return min(moments, default=0)


def pid_of(model_index: int, worker: int) -> int:
    """The process of a model's worker (DRIVER: its driver) in the file."""
    return 1 + model_index * PIDS_PER_MODEL + (worker + 1)


def driver_pid(model_index: int) -> int:
    """The process of a model's driver: its feeds and fetches and its counters."""
    return pid_of(model_index, DRIVER)


def flow_id(model_index: int, transaction: int) -> int:
    """The id of a transaction's flow events: distinct across the models of one file."""
    return model_index * FLOW_IDS_PER_MODEL + transaction


def _micros(ns: int) -> float:
    return round(ns / 1000, 3)


def _metadata_events(index: int, trace: ModelTrace) -> list[Event]:
    """Names and order of the model's processes (driver, then a worker per device) and threads."""
    processes = [(DRIVER, f"{trace.model} driver")]
    processes += [(worker, f"{trace.model} {device}") for worker, device in enumerate(trace.devices)]
    events: list[Event] = []
    for worker, name in processes:
        pid = pid_of(index, worker)
        events.append(_metadata("process_name", pid, 0, {"name": name}))
        events.append(_metadata("process_sort_index", pid, 0, {"sort_index": pid}))
    events.append(_metadata("thread_name", driver_pid(index), 0, {"name": DRIVER_THREAD}))
    for unit, track in enumerate(trace.units):
        events.append(_metadata("thread_name", pid_of(index, track.worker), unit + 1, {"name": track.label}))
    return events


def _metadata(name: str, pid: int, tid: int, args: dict[str, Any]) -> Event:
    return {"ph": "M", "name": name, "pid": pid, "tid": tid, "args": args}


def _slice_event(index: int, piece: TraceSlice, origin: int) -> Event:
    """An "X" event; its end is rounded as its begin, so slices that touch do not overlap."""
    ts = _micros(piece.begin_ns - origin)
    event: Event = {"ph": "X", "cat": "driver" if piece.worker == DRIVER else "node", "name": piece.name,
                    "pid": pid_of(index, piece.worker), "tid": piece.unit + 1, "ts": ts,
                    "dur": round(_micros(piece.end_ns - origin) - ts, 3)}
    args = {"transaction_id": piece.transaction} if piece.transaction else {}
    if piece.bytes_in or piece.bytes_out:
        args |= {"bytes_in": piece.bytes_in, "bytes_out": piece.bytes_out}
    if args:
        event["args"] = args
    return event


def _flow_events(index: int, pieces: Sequence[TraceSlice], events: Sequence[Event]) -> list[Event]:
    """A chain "s", "t"..., "f" per transaction with two slices or more: from its feed, through its
    node slices in the order they began, to its fetch; chains by transaction id."""
    by_transaction: dict[int, list[tuple[tuple, Event]]] = defaultdict(list)
    for piece, event in zip(pieces, events):
        if piece.transaction:
            rank = _HOP_RANK.get(piece.name, 1) if piece.worker == DRIVER else 1
            by_transaction[piece.transaction].append(((rank, piece.begin_ns, event["pid"], event["tid"]), event))
    flows: list[Event] = []
    for transaction in sorted(by_transaction):
        chain = [event for _, event in sorted(by_transaction[transaction], key=lambda hop: hop[0])]
        if len(chain) >= 2:
            phases = ["s"] + ["t"] * (len(chain) - 2) + ["f"]
            flows += [_flow(phase, index, transaction, event) for phase, event in zip(phases, chain)]
    return flows


# A transaction's hops: its feed first and its fetch last, whenever the calls began (a fetch
# may wait before the transaction's nodes run).
_HOP_RANK = {"feed": 0, "fetch": 2}


def _flow(phase: str, index: int, transaction: int, at: Event) -> Event:
    """A flow event bound to the slice `at`: at its begin, but an arrow's end ("f") at its end, so
    that it points to where the slice took the transaction (a fetch's result)."""
    ts = at["ts"] if phase != "f" else round(at["ts"] + at["dur"], 3)
    return {"ph": phase, "cat": "transaction", "name": f"transaction {transaction}",
            "id": flow_id(index, transaction), "pid": at["pid"], "tid": at["tid"], "ts": ts, "bp": "e"}


def _counter_events(index: int, trace: ModelTrace, origin: int) -> list[Event]:
    return [{"ph": "C", "name": c.name, "pid": driver_pid(index), "ts": _micros(c.ts_ns - origin),
             "args": {"value": c.value}} for c in trace.counters]
