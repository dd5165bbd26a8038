"""The time a trace spent in each node, for `dfir view --trace` and `dfir inspect --stats`.

Reads one trace file (Chrome's Trace Event Format, as `dfir trace` and `model.trace` write it:
docs/tracing.md) and sums its node slices (`"ph": "X"`, `"cat": "node"`, named `node '<name>'
instance <k>`) per node and per instance: calls, total time, nearest-rank p50 / p99 and the
longest call, the bytes taken and put (the slices' `bytes_in` / `bytes_out` args), and each
node's share of all node time in the model's trace.

A file may hold several models' traces: a slice's process id says whose (model i's processes are
numbered 1 + i * 1024 + (worker + 1)), `otherData.models` lists their names in that order.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dfir.core.errors import GeError
from dfir.runtime.driver.trace_stats import nearest_rank

NODE_SLICE = re.compile(r"node '(?P<node>.*)' instance (?P<instance>\d+)", re.DOTALL)
PIDS_PER_MODEL = 1024


@dataclass(frozen=True)
class Durations:
    """How long a set of calls took, in milliseconds, and the body bytes they took and put."""

    calls: int
    total_ms: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    bytes_in: int = 0
    bytes_out: int = 0

    @classmethod
    def of(cls, calls: Sequence[Call]) -> Durations:
        """The statistics of one or more slices."""
        ordered = sorted(call.dur_us for call in calls)
        return cls(len(ordered), sum(ordered) / 1000, nearest_rank(ordered, 50) / 1000,
                   nearest_rank(ordered, 99) / 1000, ordered[-1] / 1000,
                   sum(call.bytes_in for call in calls), sum(call.bytes_out for call in calls))


@dataclass(frozen=True)
class Call:
    """One node slice of the file: its duration (µs) and bytes."""

    dur_us: float
    bytes_in: int
    bytes_out: int


@dataclass(frozen=True)
class NodeTimes:
    """One node's calls, summed over its instances, and each instance's own."""

    node: str
    share: float                       # of all node time in the model's trace, 0 to 1
    times: Durations
    instances: dict[int, Durations]


@dataclass(frozen=True)
class TraceTimes:
    """The per-node times of one model's trace."""

    path: str
    model: str | None                  # None: a trace that names no models
    slices: int
    total_ms: float
    nodes: dict[str, NodeTimes]        # by node name, the most time first

    @property
    def top_share(self) -> float:
        """The largest node's share: the top of the colour scale."""
        return max(node.share for node in self.nodes.values())


def read_trace_times(path: str, model: str | None = None) -> TraceTimes:
    """The per-node times of the trace at `path`, of `model` (needed when the file holds several
    models' traces); a GeError if the file is not a trace, or holds no node slice of the model."""
    trace = _read_trace(path)
    names = _model_names(trace, path)
    index = _model_index(names, model, path)
    durations = _node_calls(trace["traceEvents"], index, path)
    name = None if index is None else names[index]
    if not durations:
        raise GeError(f"trace {path!r} has no node slices" + ("" if name is None else f" of model {name!r}"))
    return _times(path, name, durations)


def _read_trace(path: str) -> dict[str, Any]:
    if not os.path.isfile(path):
        raise GeError(f"trace {path!r} does not exist")
    with open(path, "rb") as file:
        data = file.read()
    try:
        trace = json.loads(data)
    except json.JSONDecodeError as error:
        raise GeError(f"{path!r} is not a trace: it is not JSON ({error.msg} at line {error.lineno} "
                      f"column {error.colno})") from None
    except UnicodeDecodeError:
        raise GeError(f"{path!r} is not a trace: it is not JSON (not UTF-8 text)") from None
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        raise GeError(f"{path!r} is not a trace: it has no traceEvents list")
    return trace


def _model_names(trace: dict[str, Any], path: str) -> list[str]:
    """The names of the models the file holds traces of, by model index ([]: none named)."""
    other = trace.get("otherData")
    names = other.get("models", []) if isinstance(other, dict) else []
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise GeError(f"{path!r}: otherData.models must be a list of model names, got {names!r}")
    return names


def _model_index(names: list[str], model: str | None, path: str) -> int | None:
    """The index of the model whose slices count (None: every slice, the file names no models)."""
    if model is not None:
        if model not in names:
            held = ", ".join(map(repr, names)) if names else "no named models"
            raise GeError(f"trace {path!r} holds no model {model!r}; it holds {held}")
        return names.index(model)
    if len(names) > 1:
        raise GeError(f"trace {path!r} holds {len(names)} models ({', '.join(map(repr, names))}); "
                      f"choose one with --trace-model NAME")
    return 0 if names else None


def _node_calls(events: list[Any], model_index: int | None, path: str) -> dict[str, dict[int, list[Call]]]:
    """The model's node slices (every model's when `model_index` is None), by node and instance."""
    durations: dict[str, dict[int, list[Call]]] = {}
    for position, event in enumerate(events):
        if not isinstance(event, dict) or event.get("ph") != "X" or event.get("cat") != "node":
            continue
        match = NODE_SLICE.fullmatch(str(event.get("name")))
        pid, dur = event.get("pid"), event.get("dur")
        if match is None or not isinstance(pid, int) or not isinstance(dur, int | float) or dur < 0:
            raise GeError(f"trace {path!r}: traceEvents[{position}] is not a node slice: it needs a name "
                          f"\"node '<name>' instance <k>\", an integer pid and a dur >= 0, got {event!r}")
        if model_index is None or (pid - 1) // PIDS_PER_MODEL == model_index:
            instances = durations.setdefault(match["node"], {})
            call = Call(float(dur), _byte_count(event, "bytes_in", position, path),
                        _byte_count(event, "bytes_out", position, path))
            instances.setdefault(int(match["instance"]), []).append(call)
    return durations


def _byte_count(event: dict[str, Any], name: str, position: int, path: str) -> int:
    """A slice's `args[name]`, 0 when it has none."""
    args = event.get("args")
    count = args.get(name, 0) if isinstance(args, dict) else 0
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise GeError(f"trace {path!r}: traceEvents[{position}].args.{name} must be a byte count (an integer "
                      f">= 0), got {count!r}")
    return count


def _times(path: str, model: str | None, durations: dict[str, dict[int, list[Call]]]) -> TraceTimes:
    totals = {node: sum(call.dur_us for calls in instances.values() for call in calls)
              for node, instances in durations.items()}
    total_us = sum(totals.values())
    nodes = {}
    for node in sorted(durations, key=lambda name: (-totals[name], name)):
        instances = durations[node]
        every = [dur for instance in instances.values() for dur in instance]
        nodes[node] = NodeTimes(node, totals[node] / total_us if total_us else 0.0, Durations.of(every),
                                {k: Durations.of(instances[k]) for k in sorted(instances)})
    slices = sum(len(instance) for instances in durations.values() for instance in instances.values())
    return TraceTimes(path, model, slices, total_us / 1000, nodes)


def require_shared_nodes(times: TraceTimes, graph_nodes: Sequence[str]) -> None:
    """A GeError naming a few nodes of each side unless the trace times a node of the graph."""
    if not set(times.nodes) & set(graph_nodes):
        raise GeError(f"none of the nodes in trace {times.path!r} is in the graph: the trace has "
                      f"{a_few(list(times.nodes))}; the graph has {a_few(list(dict.fromkeys(graph_nodes)))}")


def a_few(names: list[str], shown: int = 4) -> str:
    """`'a', 'b', 'c', 'd' and 3 more`, or `no nodes`."""
    if not names:
        return "no nodes"
    text = ", ".join(map(repr, names[:shown]))
    return text + (f" and {len(names) - shown} more" if len(names) > shown else "")


def stats_table(times: TraceTimes) -> str:
    """The per-node times as `dfir inspect --stats` prints them: a line per node (its instances
    summed), then one per instance of a replicated node, the most time first."""
    model = "" if times.model is None else f", model {times.model!r}"
    lines = [f"trace {times.path}{model}: {times.slices} node slices, {times.total_ms:.3f} ms in nodes",
             f"{'node':<24} {'instance':>8} {'calls':>7} {'total ms':>10} {'p50 ms':>9} {'p99 ms':>9} "
             f"{'max ms':>9} {'share':>6} {'bytes in':>10} {'bytes out':>10}"]
    for node in times.nodes.values():
        lines.append(_stats_line(node.node, "all", node.times, f"{node.share:.1%}"))
        if len(node.instances) > 1:
            lines += [_stats_line("", str(k), durations, "") for k, durations in node.instances.items()]
    return "\n".join(lines) + "\n"


def _stats_line(node: str, instance: str, d: Durations, share: str) -> str:
    return (f"{node:<24} {instance:>8} {d.calls:>7} {d.total_ms:>10.3f} {d.p50_ms:>9.3f} {d.p99_ms:>9.3f} "
            f"{d.max_ms:>9.3f} {share:>6} {byte_size(d.bytes_in):>10} {byte_size(d.bytes_out):>10}")


def byte_size(count: int) -> str:
    """`512 B`, `3.9 KiB`, `1.5 MiB`, `2.0 GiB`: a byte count for a table."""
    if count < 1024:
        return f"{count} B"
    exponent = min((count.bit_length() - 1) // 10, 4)
    return f"{count / 1024 ** exponent:.1f} {'KMGT'[exponent - 1]}iB"
