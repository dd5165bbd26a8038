"""Per-message cost of a UDF, by kind, against a bare Python call of the same function.

The function is `out = a + b + 1` on two small int32 tensors, written four ways: a bare Python
function (the baseline), a `@df.pyflow` decorator UDF, a `dfir.flow_func` Python project and a
C++ project (both made by `dfir udf new`, offset 1). Each UDF runs in a one-node graph, through
the runtime: a feeder thread feeds N transactions while the main thread fetches them, so the
figure is wall time per message with the pipeline full; on the model's path
(`dfir.load(dfir.compile(graph).om)`, fed lists) and on the FlowGraph's own
(`graph.feed_data({a: x, b: y})`, `graph.fetch_data()`, as the seeds' users write it). A second
table times the UDF call layer alone (the project's `FuncSpec.run`, no scheduler), which is where
the kinds differ.

This machine's speed drifts by up to 2x between seconds, so every round of a UDF is paired with
a round of the bare call just before it: the figures are the medians over ROUNDS rounds of the
time per message and of its ratio to the bare call of its round.

Run: python benchmarks/udf_overhead.py [--messages N] [--size ELEMENTS] [--smoke]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np

import dfir
import dfir.dataflow as df
from dfir.frontend.dataflow import names
from dfir.frontend.udf.scaffold import new_project


TARGETS = [  # (UDF kind, "call layer" or "runtime", at most, unit)
    ("decorator UDF", "runtime", 5, "x bare"),
    ("flow_func Python UDF", "runtime", 10, "x bare"),
    ("C++ UDF", "call layer", 2, "us"),
    ("C++ UDF", "runtime", 5, "us"),
]


def bare_add(a, b):
    return a + b + 1


@df.pyflow
def pyflow_add(a, b):
    return a + b + 1


# A one-node graph and its two inputs (the FlowData its feeds are keyed by).
Graph = tuple[df.FlowGraph, tuple[df.FlowData, df.FlowData]]


def project_graph(config: Path) -> Graph:
    a, b = df.FlowData(name="a"), df.FlowData(name="b")
    pp = df.FuncProcessPoint(compile_config_path=str(config))
    pp.set_init_param("offset", 1)
    node = df.FlowNode(input_num=2, output_num=1, name="add")
    node.add_process_point(pp)
    return df.FlowGraph([node(a, b)]), (a, b)


def graphs(folder: Path) -> dict[str, Graph]:
    """The one-node graph of each UDF kind (projects generated under `folder`)."""
    new_project("py_add", "python", folder)
    new_project("cpp_add", "cpp", folder)
    a, b = df.FlowData(name="a"), df.FlowData(name="b")
    return {"decorator UDF": (df.FlowGraph([pyflow_add.fnode()(a, b)]), (a, b)),
            "flow_func Python UDF": project_graph(folder / "py_add" / "py_add.json"),
            "C++ UDF": project_graph(folder / "cpp_add" / "cpp_add.json")}


ROUNDS = 7


def seconds_per_call(fn: Callable[[], object], count: int) -> float:
    """Seconds per call of `fn` over `count` calls."""
    start = time.perf_counter()
    for _ in range(count):
        fn()
    return (time.perf_counter() - start) / count


class Paired:
    """Rounds of a measurement, each with a round of the bare call just before it."""

    def __init__(self, a: np.ndarray, b: np.ndarray, count: int):
        self._bare = lambda: bare_add(a, b)
        self._count = count
        self.seconds: list[float] = []
        self.ratios: list[float] = []

    def round(self, measure: Callable[[], float]) -> None:
        """Time a round of the bare call, then `measure()` (seconds per message)."""
        bare = seconds_per_call(self._bare, self._count)
        seconds = measure()
        self.seconds.append(seconds)
        self.ratios.append(seconds / bare)

    def median(self) -> tuple[float, float]:
        """(median seconds per message, median ratio to the bare call)."""
        return statistics.median(self.seconds), statistics.median(self.ratios)


def through_runtime(feed: Callable[[], object], fetch: Callable[[], tuple], a: np.ndarray, b: np.ndarray,
                    count: int) -> tuple[float, float]:
    """(seconds per message through a loaded model, ratio to a bare call): medians of ROUNDS rounds
    of `count` messages fed by `feed()` and fetched by `fetch()`, each result checked."""
    expected = (a + b + 1).tobytes()  # checked in the loop: holding every result would time the GC
    paired = Paired(a, b, count * 5)

    def one_round() -> float:
        feeder = threading.Thread(target=lambda: [feed() for _ in range(count)])
        start = time.perf_counter()
        feeder.start()
        for _ in range(count):
            outputs, _, ret = fetch()
            if ret != 0 or outputs[0].numpy().tobytes() != expected:
                sys.exit(f"wrong result: ret={int(ret)} {getattr(ret, 'message', '')}")
        seconds = (time.perf_counter() - start) / count
        feeder.join()
        return seconds

    one_round()  # warm up: the worker's first calls, the driver's port
    for _ in range(ROUNDS):
        paired.round(one_round)
    return paired.median()


def model_path(graph: Graph, a: np.ndarray, b: np.ndarray, count: int) -> tuple[float, float]:
    """`through_runtime` on the model's path: the graph compiled and loaded, fed lists."""
    with dfir.load(dfir.compile(graph[0]).om) as model:
        return through_runtime(lambda: model.feed_data([a, b]), lambda: model.fetch_data(timeout=60000),
                               a, b, count)


def flow_graph_path(graph: Graph, a: np.ndarray, b: np.ndarray, count: int) -> tuple[float, float]:
    """`through_runtime` on the FlowGraph's own path: fed dicts keyed by its FlowData."""
    flow_graph, (input_a, input_b) = graph

    def feed():
        return flow_graph.feed_data({input_a: a, input_b: b})
    try:
        feed()  # the first feed compiles and loads the graph
        flow_graph.fetch_data(timeout=60000)
        return through_runtime(feed, lambda: flow_graph.fetch_data(timeout=60000), a, b, count)
    finally:
        df.finalize()  # closes the model the graph loaded at its first feed


def call_layer(graph: Graph, a: np.ndarray, b: np.ndarray, count: int) -> tuple[float, float]:
    """(seconds per call of the node's func as the scheduler would call it (no channels), ratio to
    a bare call): medians of ROUNDS rounds of `count` calls, each output checked."""
    from dfir.om.schema import PartitionType
    from dfir.runtime.worker import host
    from dfir.core.messages import Message, TransactionMeta
    from dfir.runtime.om import read_om
    import json
    model = read_om(dfir.compile(graph[0]).om).models[0]
    plan = json.loads(bytes(model.partition(PartitionType.FLOW_MODEL).data))
    nodes = host.build_nodes(plan, [p.data for p in model.partitions_of(PartitionType.UDF_PAYLOAD)], None,
                             so_bins=[p.data for p in model.partitions_of(PartitionType.SO_BINS)])
    run = nodes[0].funcs[0].run
    inputs = [Message.tensor(TransactionMeta(1), a), Message.tensor(TransactionMeta(1), b)]
    paired = Paired(a, b, count)
    for _ in range(ROUNDS):
        results = []
        paired.round(lambda: seconds_per_call(lambda: results.append(list(run(inputs))), count))
        for output_sets in results:
            check_output(output_sets, a, b)
    return paired.median()


def check_output(output_sets: list, a: np.ndarray, b: np.ndarray) -> None:
    """One output set holding `a + b + 1` on output 0, of transaction 1; exits if not."""
    expected = (a + b + 1).tolist()
    if len(output_sets) != 1 or len(output_sets[0]) != 1:
        sys.exit(f"the call layer emitted {output_sets!r}, expected one message")
    port, message = output_sets[0][0]
    if (port, message.ret_code, message.meta.transaction_id, message.payload.tolist()) != (0, 0, 1, expected):
        sys.exit(f"the call layer emitted {message!r} on output {port}, expected {expected}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=2000, help="messages per round")
    parser.add_argument("--size", type=int, default=16, help="int32 elements per input tensor")
    parser.add_argument("--smoke", action="store_true", help="a few messages, for CI")
    args = parser.parse_args()
    count = 50 if args.smoke else args.messages
    a = np.arange(args.size, dtype=np.int32)
    b = np.ones(args.size, dtype=np.int32)
    bare = min(seconds_per_call(lambda: bare_add(a, b), count * 20) for _ in range(3))
    with tempfile.TemporaryDirectory() as folder:
        names.reset()
        kinds = graphs(Path(folder))
        rows = [(kind, call_layer(graph, a, b, count * 4), model_path(graph, a, b, count),
                 flow_graph_path(graph, a, b, count)) for kind, graph in kinds.items()]
    print(f"{count} messages of 2 x int32[{args.size}] a round, {ROUNDS} rounds, {os.cpu_count()} CPUs; "
          f"bare Python call of the same function: {bare * 1e6:.2f} us (best of 3 at the start)")
    print(f"{'UDF kind':22} {'call layer us':>14} {'x bare':>8} {'model us/msg':>13} {'x bare':>8}"
          f" {'FlowGraph us/msg':>17} {'x bare':>8}")
    for kind, (layer, layer_ratio), (runtime, runtime_ratio), (graph, graph_ratio) in rows:
        print(f"{kind:22} {layer * 1e6:14.2f} {layer_ratio:8.1f} {runtime * 1e6:13.1f} {runtime_ratio:8.1f}"
              f" {graph * 1e6:17.1f} {graph_ratio:8.1f}")
    print("targets (this run; runtime: the model's path and the FlowGraph's):")
    measured = {(kind, what): figures for kind, layer, runtime, graph in rows
                for what, figures in (("call layer", layer), ("runtime", runtime), ("FlowGraph", graph))}
    for kind, what, limit, unit in TARGETS:
        for path in (what, "FlowGraph") if what == "runtime" else (what,):
            seconds, ratio = measured[(kind, path)]
            value = ratio if unit == "x bare" else seconds * 1e6
            verdict = "met" if value <= limit else "MISSED"
            print(f"  {kind}, {path}: {value:.1f} {unit} (target <= {limit} {unit}: {verdict})")


if __name__ == "__main__":
    main()
