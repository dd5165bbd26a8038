"""Per node instance and per channel statistics of a traced model (`model.stats()`), from its
trace (runtime/driver/trace_model.py).

A node instance's calls are its slices: how many, the nearest-rank p50 and p99 and the longest,
and a histogram of their durations in power-of-two microsecond buckets, which two traces of one
model (two servers) merge by adding counts. A channel's peak depth is the deepest the driver's
samples saw it (every COUNTER_SECONDS, runtime/driver/tracing.py): a lower bound of the true peak.

    >>> node_stats(trace)[0]
    {"node": "b", "instance": 0, "device": "0:0:1", "calls": 3, "p50_us": 12.0, "p99_us": 40.5,
     "max_us": 40.5, "histogram_us": {"16": 2, "64": 1}}
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from dfir.runtime.driver.trace_model import DEPTH_COUNTER, DRIVER, ModelTrace


def node_stats(trace: ModelTrace) -> list[dict[str, Any]]:
    """Per unit of the trace (in unit order), its calls and their durations."""
    durations: list[list[float]] = [[] for _ in trace.units]
    for s in trace.slices:
        if s.unit != DRIVER:
            durations[s.unit].append((s.end_ns - s.begin_ns) / 1000)
    return [{"node": unit.node, "instance": unit.instance, "device": trace.devices[unit.worker],
             **call_stats(times)} for unit, times in zip(trace.units, durations)]


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
