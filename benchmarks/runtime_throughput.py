"""Runtime throughput and latency: dfir against the usual ways to run a pipeline, in one run.

Workloads (the same 3-stage pipeline x+1, x*2, x-3 everywhere):
  W1  int32 [1, 2] tensors: messages/s over N messages (a feeder thread feeds, at most
      W1_WINDOW in flight, the main thread fetches), then p50/p99 latency of one message at a time.
  W2  float32 tensors of 4 MiB and 64 MiB: payload GB/s (at most WINDOW messages in flight).
Variants: the plain function-call loop (the floor), threads with queue.Queue, one process per
stage with a multiprocessing.Queue per edge, Ray actors and Ray Compiled Graphs (when `ray` is
installed), and dfir with all stages on one device and with each stage on its own device (deploy
info + resource config), on both of its paths: the FlowGraph's own (`graph.feed_data({x: a})`,
`graph.fetch_data()`, as the seeds' users write it) and the model's (`dfir.load(dfir.compile(graph)
.om)`, fed a list). Every result of every variant is checked, after its clock stops.
Ratios against the issue's targets close the report; they hold within one run on a noisy machine.

Run: python benchmarks/runtime_throughput.py [--smoke]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import queue
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np

import dfir
import dfir.dataflow as df
from dfir.frontend.dataflow import names


def add_one(x):
    return x + 1


def times_two(x):
    return x * 2


def minus_three(x):
    return x - 3


STAGES = (add_one, times_two, minus_three)
QUEUE_DEPTH = 128  # every queue-based variant, dfir's channels included
W1_WINDOW = 64     # W1: messages in flight at most
WINDOW = 4         # W2: messages in flight at most (bounds memory: 4 x 64 MiB per hop)


@dataclass
class Sizes:
    w1_messages: int
    w1_latency: int
    w2_messages: dict[int, int]  # tensor bytes -> messages


FULL = Sizes(20_000, 2_000, {4 << 20: 200, 64 << 20: 24})
SMOKE = Sizes(500, 100, {4 << 20: 8, 64 << 20: 3})


# -- pipelines: put(x) / get() / close() ---------------------------------------------------------

class PlainLoop:
    """No pipeline at all: the three calls in a row (`get` returns what `put` computed)."""

    name = "plain loop"
    concurrent = False

    def __init__(self):
        self._results: list = []

    def put(self, x):
        self._results.append(minus_three(times_two(add_one(x))))

    def get(self):
        return self._results.pop(0)

    def close(self):
        pass


class _QueuePipeline:
    """One queue per edge and one worker (thread or process) per stage, each running `_stage_loop`."""

    name = ""
    concurrent = True

    def __init__(self, make_queue, make_worker):
        self._queues = [make_queue(QUEUE_DEPTH) for _ in range(len(STAGES) + 1)]
        self._workers = [make_worker(target=_stage_loop, args=(fn, self._queues[i], self._queues[i + 1]),
                                     daemon=True) for i, fn in enumerate(STAGES)]
        for worker in self._workers:
            worker.start()

    def put(self, x):
        self._queues[0].put(x)

    def get(self):
        return self._queues[-1].get()

    def close(self):
        self._queues[0].put(None)
        self._drain_sentinel()
        for worker in self._workers:
            worker.join()

    def _drain_sentinel(self):
        pass


class ThreadsQueue(_QueuePipeline):
    name = "threads + queue.Queue"

    def __init__(self):
        super().__init__(queue.Queue, threading.Thread)


class ProcessesMpQueue(_QueuePipeline):
    name = "processes + multiprocessing.Queue"

    def __init__(self):
        context = multiprocessing.get_context("fork")
        super().__init__(context.Queue, context.Process)

    def _drain_sentinel(self):
        self._queues[-1].get()  # a process cannot exit while its queue still holds unread data


def _stage_loop(fn, source, sink):
    while (value := source.get()) is not None:
        sink.put(fn(value))
    sink.put(None)


def _pipeline_graph(per_stage: bool, workdir: Path) -> tuple[df.FlowData, df.FlowGraph]:
    """The 3-stage pipeline as a FlowGraph (its input and the graph); `per_stage` puts each
    stage on its own device (deploy info + resource config in the graph's options)."""
    names.reset()
    data = out = df.FlowData(name="x")
    for fn in STAGES:
        out = df.pyflow(fn).fnode()(out)
    return data, df.FlowGraph([out], _placement_files(workdir) if per_stage else {})


def _placement(per_stage: bool) -> str:
    return "one device per stage" if per_stage else "one device"


class DfirModel:
    """The model path: the FlowGraph compiled with dfir.compile, loaded with dfir.load, fed a
    list (`model.feed_data([x])`)."""

    concurrent = True

    def __init__(self, per_stage: bool, workdir: Path):
        self.name = f"dfir model, {_placement(per_stage)}"
        _, graph = _pipeline_graph(per_stage, workdir)
        self._model = dfir.load(dfir.compile(graph).om)

    def put(self, x):
        self._model.feed_data([x])

    def get(self):
        tensors, _, ret = self._model.fetch_data()
        assert ret == 0, ret.message
        return tensors[0].numpy()

    def close(self):
        self._model.close()


class DfirFlowGraph:
    """The seeds' path: `graph.feed_data({x: array})` (the first feed compiles and loads the
    graph, done here) and `graph.fetch_data()`."""

    concurrent = True

    def __init__(self, per_stage: bool, workdir: Path):
        self.name = f"dfir FlowGraph, {_placement(per_stage)}"
        self._input, self._graph = _pipeline_graph(per_stage, workdir)
        self.put(np.zeros([1, 2], np.int32))
        np.testing.assert_array_equal(self.get(), minus_three(times_two(add_one(np.zeros([1, 2], np.int32)))))

    def put(self, x):
        self._graph.feed_data({self._input: x})

    def get(self):
        tensors, _, ret = self._graph.fetch_data()
        assert ret == 0, ret.message
        return tensors[0].numpy()

    def close(self):
        df.finalize()  # closes the model the graph loaded


def _placement_files(workdir: Path) -> dict[str, str]:
    devices = [f"0:0:{d}" for d in range(len(STAGES))]
    deploy = {"deploy_info": [{"flow_node_name": f"{fn.__name__}_fnode", "logic_device_id": device}
                              for fn, device in zip(STAGES, devices)]}
    resources = {"cluster": [{"cluster_nodes": [{"node_id": 0, "node_type": "host", "ipaddr": "127.0.0.1",
                                                 "item_list": [{"item_id": d} for d in range(len(STAGES))]}]}]}
    (workdir / "deploy.json").write_text(json.dumps(deploy))
    (workdir / "resources.json").write_text(json.dumps(resources))
    return {"ge.experiment.data_flow_deploy_info_path": str(workdir / "deploy.json"),
            "ge.resourceConfigPath": str(workdir / "resources.json")}


def ray_variants() -> list[Callable[[], object]]:
    try:
        import ray  # noqa: F401 - an optional baseline
    except ImportError:
        return []
    return [RayActors, RayCompiledGraph]


class Stage:
    """A Ray actor running one stage."""

    def __init__(self, fn):
        self.fn = fn

    def run(self, x):
        return self.fn(x)


class RayActors:
    name = "ray actors"
    concurrent = True

    def __init__(self):
        import ray
        ray.init(ignore_reinit_error=True, num_cpus=2, include_dashboard=False)

        self._ray = ray
        self._actors = self._make_actors(ray.remote(Stage))
        self._pending: queue.Queue = queue.Queue()
        # At most QUEUE_DEPTH messages in flight, as for every other variant (a compiled graph
        # refuses executions beyond its limit instead of waiting).
        self._slots = threading.Semaphore(QUEUE_DEPTH)

    def _make_actors(self, stage) -> list:
        """One actor per stage (`stage` is `Stage` as a Ray actor class)."""
        return [stage.remote(fn) for fn in STAGES]

    def put(self, x):
        self._slots.acquire()
        self._pending.put(self._submit(x))

    def get(self):
        result = self._result(self._pending.get())
        self._slots.release()
        return result

    def _submit(self, x):
        ref = x
        for actor in self._actors:
            ref = actor.run.remote(ref)
        return ref

    def _result(self, ref):
        return self._ray.get(ref)

    def close(self):
        for actor in self._actors:
            self._ray.kill(actor)


class RayCompiledGraph(RayActors):
    name = "ray compiled graph"

    def __init__(self):
        super().__init__()
        from ray.dag import InputNode
        with InputNode() as inp:
            node = inp
            for actor in self._actors:
                node = actor.run.bind(node)
        self._dag = node.experimental_compile(_max_inflight_executions=QUEUE_DEPTH)

    def _submit(self, x):
        return self._dag.execute(x)

    def _result(self, ref):
        return ref.get()

    def close(self):
        self._dag.teardown(kill_actors=True)
        super().close()


# -- measuring -------------------------------------------------------------------------------

@dataclass
class Row:
    workload: str
    variant: str
    msgs_per_s: float
    p50_us: float | None = None
    p99_us: float | None = None
    gb_per_s: float | None = None
    extra: dict = field(default_factory=dict)


def throughput(pipeline, x: np.ndarray, count: int, window: int) -> float:
    """Messages per second: a feeder thread puts `count` copies of `x`, at most `window` in
    flight, this thread gets them. Every result is checked, after the clock stops."""
    results = []
    if not pipeline.concurrent:
        start = time.perf_counter()
        for _ in range(count):
            pipeline.put(x)
            results.append(pipeline.get())
        elapsed = time.perf_counter() - start
    else:
        credits = threading.Semaphore(window)

        def feed():
            for _ in range(count):
                credits.acquire()
                pipeline.put(x)
        feeder = threading.Thread(target=feed, daemon=True)
        start = time.perf_counter()
        feeder.start()
        for _ in range(count):
            results.append(pipeline.get())
            credits.release()
        elapsed = time.perf_counter() - start
        feeder.join()
    check_results(pipeline.name, x, results, count)
    return count / elapsed


def check_results(variant: str, x: np.ndarray, results: list, count: int) -> None:
    """Every result is the pipeline's value of `x`; exits naming the variant and the message."""
    expected = minus_three(times_two(add_one(x)))
    if len(results) != count:
        sys.exit(f"{variant}: {len(results)} results for {count} messages")
    for i, result in enumerate(results):
        if not np.array_equal(result, expected) or result.dtype != expected.dtype:
            sys.exit(f"{variant}: result {i} of x {x.dtype}{list(x.shape)} is wrong: {result!r}")


def latency_us(pipeline, x: np.ndarray, count: int) -> tuple[float, float]:
    samples, results = [], []
    for _ in range(count):
        start = time.perf_counter()
        pipeline.put(x)
        results.append(pipeline.get())
        samples.append((time.perf_counter() - start) * 1e6)
    check_results(pipeline.name, x, results, count)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def run_variant(factory, sizes: Sizes, workdir: Path) -> list[Row]:
    pipeline = factory()
    rows = []
    try:
        small = np.array([[1, 2]], dtype=np.int32)
        rate = throughput(pipeline, small, sizes.w1_messages, W1_WINDOW)
        p50, p99 = latency_us(pipeline, small, sizes.w1_latency)
        rows.append(Row("W1 int32[1,2]", pipeline.name, rate, p50, p99))
        for nbytes, count in sizes.w2_messages.items():
            big = np.ones(nbytes // 4, dtype=np.float32)
            rate = throughput(pipeline, big, count, WINDOW)
            rows.append(Row(f"W2 f32 {nbytes >> 20} MiB", pipeline.name, rate, gb_per_s=rate * nbytes / 1e9))
    finally:
        pipeline.close()
    return rows


TARGETS = [  # (workload, variant, baseline variant, at least), for both paths
    *((w, f"dfir {path}, {v}", b, t) for path in ("FlowGraph", "model") for w, v, b, t in (
        ("W1 int32[1,2]", "one device", "threads + queue.Queue", 2.0),
        ("W1 int32[1,2]", "one device per stage", "processes + multiprocessing.Queue", 5.0),
        ("W1 int32[1,2]", "one device", "plain loop", 0.5),  # stretch
        ("W1 int32[1,2]", "one device per stage", "ray compiled graph", 20.0),
        ("W2 f32 64 MiB", "one device per stage", "plain loop", 0.8),
        ("W2 f32 64 MiB", "one device per stage", "processes + multiprocessing.Queue", 10.0))),
    ("W1 int32[1,2]", "dfir FlowGraph, one device", "dfir model, one device", 0.9),
    ("W1 int32[1,2]", "dfir FlowGraph, one device per stage", "dfir model, one device per stage", 0.9),
]


def report(rows: list[Row], targets: list[tuple[str, str, str, float]] = TARGETS) -> None:
    """The rows as a table, then each target's ratio of msg/s (at one tensor size, of GB/s too)."""
    print(f"{'workload':<16}{'variant':<36}{'msg/s':>12}{'p50 us':>10}{'p99 us':>10}{'GB/s':>8}")
    for row in rows:
        cells = [f"{row.msgs_per_s:12.0f}",
                 f"{row.p50_us:10.0f}" if row.p50_us is not None else f"{'':>10}",
                 f"{row.p99_us:10.0f}" if row.p99_us is not None else f"{'':>10}",
                 f"{row.gb_per_s:8.2f}" if row.gb_per_s is not None else f"{'':>8}"]
        print(f"{row.workload:<16}{row.variant:<36}" + "".join(cells))
    print("\nratios (this run) against the targets:")
    rate = {(row.workload, row.variant): row.msgs_per_s for row in rows}
    for workload, variant, baseline, target in targets:
        if (workload, baseline) not in rate or (workload, variant) not in rate:
            print(f"  {workload}: {variant} / {baseline}: skipped (one of them did not run)")
            continue
        ratio = rate[(workload, variant)] / rate[(workload, baseline)]
        verdict = "met" if ratio >= target else "MISSED"
        print(f"  {workload}: {variant} / {baseline} = {ratio:.2f}x (target >= {target}x: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="a few messages per measurement, to check it runs")
    args = parser.parse_args()
    sizes = SMOKE if args.smoke else FULL
    extra = ray_variants()
    if not extra:
        print("ray is not installed: skipping the Ray actor and Ray Compiled Graph baselines "
              "(pip install ray to add them)\n")
    with tempfile.TemporaryDirectory() as workdir:
        factories = [PlainLoop, ThreadsQueue, ProcessesMpQueue, *extra,
                     *(partial(kind, per_stage, Path(workdir)) for kind in (DfirModel, DfirFlowGraph)
                       for per_stage in (False, True))]
        rows = []
        for factory in factories:
            try:
                rows += run_variant(factory, sizes, Path(workdir))
            except Exception as exc:  # noqa: BLE001 - an optional baseline may fail on a small machine
                if factory not in extra:
                    raise
                print(f"{factory.name} failed ({type(exc).__name__}: {str(exc).splitlines()[0]}); "
                      f"its ratios are skipped\n")
    report(rows)


if __name__ == "__main__":
    main()
