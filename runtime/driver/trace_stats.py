"""Per node instance and per channel statistics of a traced model (`model.stats()`), from its
trace (runtime/driver/trace_model.py).

A node instance's calls are its slices: how many, the nearest-rank p50 and p99 and the longest,
and a histogram of their durations in power-of-two microsecond buckets, which two traces of one
model (two servers) merge by adding counts; and the body bytes its calls took and put (sums,
which merge by adding too). Its waits are, per call, the time from the end of
its transaction's previous slice (the feed, or the node whose output it took) to the call: the
time the transaction spent in its input channels and waiting for its other inputs. A channel's
peak depth is the deepest the driver's samples saw it (every COUNTER_SECONDS,
runtime/driver/tracing.py): a lower bound of the true peak.

    >>> node_stats(trace)[0]
    {"node": "b", "instance": 0, "device": "0:0:1", "calls": 3, "p50_us": 12.0, "p99_us": 40.5,
     "max_us": 40.5, "histogram_us": {"16": 2, "64": 1}, "bytes_in": 12288, "bytes_out": 6144,
     "waits": {"calls": 3, "p50_us": 3.0, "p99_us": 9.5, "max_us": 9.5, "histogram_us": {"4": 2, "16": 1}}}
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from dfir.runtime.driver.trace_model import DEPTH_COUNTER, DRIVER, ModelTrace


def node_stats(trace: ModelTrace) -> list[dict[str, Any]]:
    """Per unit of the trace (in unit order), its calls, their durations, the bytes they took and
    put, and their waits."""
    durations: list[list[float]] = [[] for _ in trace.units]
    bytes_in = [0] * len(trace.units)
    bytes_out = [0] * len(trace.units)
    for s in trace.slices:
        if s.unit != DRIVER:
            durations[s.unit].append((s.end_ns - s.begin_ns) / 1000)
            bytes_in[s.unit] += s.bytes_in
            bytes_out[s.unit] += s.bytes_out
    waits = input_waits(trace)
    return [{"node": unit.node, "instance": unit.instance, "device": trace.devices[unit.worker],
             **call_stats(times), "bytes_in": taken, "bytes_out": put, "waits": call_stats(waited)}
            for unit, times, taken, put, waited in zip(trace.units, durations, bytes_in, bytes_out, waits)]


def input_waits(trace: ModelTrace) -> list[list[float]]:
    """Per unit, the µs each of its calls waited: from the latest end among the slices of its
    transaction that began before it (0 when it began before they ended: an output is put inside
    its producer's slice) to its begin. A call with no such slice (its feed was not sampled, or
    the transaction is 0) has no wait."""
    by_transaction: dict[int, list] = {}
    for s in trace.slices:
        if s.transaction and s.name != "fetch":
            by_transaction.setdefault(s.transaction, []).append(s)
    waits: list[list[float]] = [[] for _ in trace.units]
    for slices in by_transaction.values():
        slices.sort(key=lambda s: s.begin_ns)
        latest_end = None
        for s in slices:
            if s.unit != DRIVER and latest_end is not None:
                waits[s.unit].append(max(0, s.begin_ns - latest_end) / 1000)
            latest_end = s.end_ns if latest_end is None else max(latest_end, s.end_ns)
    return waits


def call_stats(durations_us: Sequence[float]) -> dict[str, Any]:
    """`calls`, `p50_us`, `p99_us`, `max_us` and `histogram_us` of some call durations (µs)."""
    ordered = sorted(durations_us)
    if not ordered:
        return {"calls": 0, "p50_us": None, "p99_us": None, "max_us": None, "histogram_us": {}}
    return {"calls": len(ordered), "p50_us": round(nearest_rank(ordered, 50), 3),
            "p99_us": round(nearest_rank(ordered, 99), 3), "max_us": round(ordered[-1], 3),
            "histogram_us": histogram(ordered)}


def nearest_rank(ordered: Sequence[float], percent: int) -> float:
    """The `percent`-th percentile of the ascending, non-empty `ordered` by the nearest-rank
    method: the smallest value that at least `percent`% of the values are less than or equal to."""
    rank = max(1, -(-percent * len(ordered) // 100))  # ceil(percent / 100 * n), exactly
    return ordered[rank - 1]


def histogram(durations_us: Sequence[float]) -> dict[str, int]:
    """Counts by bucket, a bucket named by its upper bound in µs: 1, 2, 4, ... (a duration d falls
    in the first bucket with d <= bound)."""
    counts: dict[int, int] = {}
    for d in durations_us:
        bound = 1 if d <= 1 else 1 << math.ceil(math.log2(d))
        counts[bound] = counts.get(bound, 0) + 1
    return {str(bound): counts[bound] for bound in sorted(counts)}


def channel_stats(trace: ModelTrace) -> dict[str, int]:
    """The deepest each node input channel was seen, by label ("input 0 of node 'b' instance 0
    (device 0:0:1)")."""
    peaks: dict[str, int] = {}
    for counter in trace.counters:
        if counter.name.startswith(DEPTH_COUNTER):
            label = counter.name[len(DEPTH_COUNTER):]
            peaks[label] = max(peaks.get(label, 0), counter.value)
    return peaks
