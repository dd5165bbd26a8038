"""Runtime throughput and latency: dfir against the usual ways to run a pipeline, in one run.

Workloads (the same 3-stage pipeline x+1, x*2, x-3 everywhere):
  W1  int32 [1, 2] tensors: messages/s over N messages (a feeder thread feeds, at most
      W1_WINDOW in flight, the main thread fetches), then p50/p99 latency of one message at a time.
  W2  float32 tensors of 4 MiB and 64 MiB: payload GB/s (at most WINDOW messages in flight).
Variants: the plain function-call loop (the floor), the harness floor (W1's feeder thread and
window around a pipeline that computes the stages in `put` and hands the result over in `get`:
the most a concurrent variant reaches in this harness, unless its stages compute in another
process, which takes at most their compute off this one), threads with queue.Queue, one process
per stage with a multiprocessing.Queue per edge, Ray actors and Ray Compiled Graphs (when `ray` is
installed), and dfir with all stages on one device and with each stage on its own device (deploy
info + resource config), on both of its paths: the FlowGraph's own (`graph.feed_data({x: a})`,
`graph.fetch_data()`, as the seeds' users write it) and the model's (`dfir.load(dfir.compile(graph)
.om)`, fed a list). Every result of every variant is checked, after its clock stops.

This machine is noisy, so both workloads run in rounds: every variant is set up once and warmed
up, then W1's round 1 measures each variant in turn, then round 2, ... (each round starting one
variant later, so that no variant always follows the same one), then W2's rounds likewise. A
figure is the median of a variant's rounds, shown with their min-max; a variant too slow for N
W1 messages in MAX_ROUND_S seconds gets fewer per round. Latency samples are pooled over the
rounds. Ratios against the issue's targets close the report: ratios of medians, with the min-max
of the same ratio taken round by round (both variants of a round were measured seconds apart).

Run: python benchmarks/runtime_throughput.py [--smoke] [--rounds N] [--w2-rounds N] [--json PATH]
     python benchmarks/runtime_throughput.py --compare OLD.json NEW.json  (two builds side by side)
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import json
import multiprocessing
import queue
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

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
MAX_ROUND_S = 3.0  # W1: a slower variant gets fewer messages per round


@dataclass
class Sizes:
    w1_messages: int             # per round
    w1_latency: int              # over all rounds
    rounds: int                  # of W1, unless --rounds says otherwise
    w2_messages: dict[int, int]  # tensor bytes -> messages per round
    w2_rounds: int               # unless --w2-rounds says otherwise


FULL = Sizes(20_000, 2_000, 5, {4 << 20: 100, 64 << 20: 12}, 3)
SMOKE = Sizes(500, 100, 2, {4 << 20: 8, 64 << 20: 3}, 1)


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


class HarnessFloor:
    """W1's harness with nothing to carry: `put` (on the feeder thread) computes the three stages
    inline and `get` takes the result off a deque. What remains is the feeder thread, the window's
    semaphore and the two threads taking turns on the GIL: the ceiling of a concurrent variant
    whose stages compute in this process."""

    name = "harness floor"
    concurrent = True
    w2 = False  # a reference for W1 only: with large tensors it is the plain loop

    def __init__(self):
        self._results: collections.deque = collections.deque()

    def put(self, x):
        self._results.append(minus_three(times_two(add_one(x))))

    def get(self):
        while True:
            try:
                return self._results.popleft()
            except IndexError:
                time.sleep(0)  # hands the GIL to the feeder thread

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


def _pipeline_graph(per_stage: bool, workdir: Path, options: dict[str, str] | None = None
                    ) -> tuple[df.FlowData, df.FlowGraph]:
    """The 3-stage pipeline as a FlowGraph (its input and the graph); `per_stage` puts each
    stage on its own device (deploy info + resource config in the graph's options), `options`
    go to the graph too."""
    names.reset()
    data = out = df.FlowData(name="x")
    for fn in STAGES:
        out = df.pyflow(fn).fnode()(out)
    return data, df.FlowGraph([out], {**(_placement_files(workdir) if per_stage else {}), **(options or {})})


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

    def __init__(self, per_stage: bool, workdir: Path, options: dict[str, str] | None = None):
        self.name = f"dfir FlowGraph, {_placement(per_stage)}"
        self._input, self._graph = _pipeline_graph(per_stage, workdir, options)
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
        # a Ray instance of its own: another process's cluster on this machine would be joined otherwise
        ray.init(address="local", ignore_reinit_error=True, num_cpus=2, include_dashboard=False)

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

W1 = "W1 int32[1,2]"
SMALL = np.array([[1, 2]], dtype=np.int32)  # W1's tensor
W1_WARM_UP = 1_000  # W1: messages of the warm-up round (fewer in --smoke), which does not count


@dataclass
class Row:
    workload: str
    variant: str
    msgs_per_s: float                                   # the median of the rounds
    rounds: list[float] = field(default_factory=list)   # msg/s of each round, in order
    messages: int | None = None                         # per round
    p50_us: float | None = None
    p99_us: float | None = None
    gb_per_s: float | None = None                       # of the median


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


def latency_samples(pipeline, x: np.ndarray, count: int) -> list[float]:
    """Microseconds per message of `count` messages sent one at a time (each fetched before the next)."""
    samples, results = [], []
    for _ in range(count):
        start = time.perf_counter()
        pipeline.put(x)
        results.append(pipeline.get())
        samples.append((time.perf_counter() - start) * 1e6)
    check_results(pipeline.name, x, results, count)
    return samples


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 of `samples`."""
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


@dataclass
class Measured:
    """A variant's pipeline, set up once, and what its rounds measured."""
    pipeline: object
    optional: bool       # a baseline that may fail on a small machine (Ray): reported, then left out
    messages: int = 0    # W1 messages per round, set by the warm-up
    rates: dict[str, list[float]] = field(default_factory=dict)  # workload -> msg/s of each round
    latencies: list[float] = field(default_factory=list)         # W1, microseconds, every round's
    failed: bool = False

    @property
    def name(self) -> str:
        return self.pipeline.name


def set_up(factory, optional: bool) -> Measured | None:
    """The variant's pipeline; None (said why) when an optional one cannot be set up."""
    try:
        return Measured(factory(), optional)
    except Exception as exc:  # an optional baseline may fail on a small machine
        if not optional:
            raise
        _say_failed(getattr(factory, "name", factory), exc)
        return None


def attempt(measured: Measured, step: Callable[[Measured], None]) -> None:
    """Runs one step of a variant; an optional variant that fails is closed and left out from then on."""
    try:
        step(measured)
    except Exception as exc:  # an optional baseline may fail on a small machine
        if not measured.optional:
            raise
        measured.failed = True
        _say_failed(measured.name, exc)
        with contextlib.suppress(Exception):  # it failed already: its ratios are skipped either way
            measured.pipeline.close()


def _say_failed(name: str, exc: Exception) -> None:
    print(f"{name} failed ({type(exc).__name__}: {str(exc).splitlines()[0]}); its ratios are skipped\n")


def warm_up(measured: Measured, sizes: Sizes) -> None:
    """A round that does not count; its rate cuts the messages per round of a variant slower than
    `sizes.w1_messages` in MAX_ROUND_S (at least 4 windows' worth)."""
    rate = throughput(measured.pipeline, SMALL, min(sizes.w1_messages, W1_WARM_UP), W1_WINDOW)
    measured.messages = max(min(sizes.w1_messages, int(rate * MAX_ROUND_S)), 4 * W1_WINDOW)


def w1_round(measured: Measured, latency_count: int) -> None:
    measured.rates.setdefault(W1, []).append(throughput(measured.pipeline, SMALL, measured.messages, W1_WINDOW))
    measured.latencies += latency_samples(measured.pipeline, SMALL, latency_count)


def w2_round(measured: Measured, sizes: Sizes) -> None:
    for nbytes, count in sizes.w2_messages.items():
        rate = throughput(measured.pipeline, np.ones(nbytes // 4, dtype=np.float32), count, WINDOW)
        measured.rates.setdefault(w2_workload(nbytes), []).append(rate)


def w2_workload(nbytes: int) -> str:
    return f"W2 f32 {nbytes >> 20} MiB"


def run_rounds(variants: list[Measured], step: Callable[[Measured], None], rounds: int) -> None:
    """`step` round by round: each round runs it once for every variant still in, starting one
    variant later than the round before."""
    for number in range(rounds):
        shift = number % len(variants)
        for measured in variants[shift:] + variants[:shift]:
            if not measured.failed:
                attempt(measured, step)


def rows_of(measured: Measured, sizes: Sizes) -> list[Row]:
    """The variant's W1 row (with its latency) and W2 rows."""
    p50, p99 = percentiles(measured.latencies)
    rows = [Row(W1, measured.name, statistics.median(measured.rates[W1]), measured.rates[W1], measured.messages,
                p50, p99)]
    for nbytes, count in sizes.w2_messages.items():
        if rates := measured.rates.get(w2_workload(nbytes)):
            median = statistics.median(rates)
            rows.append(Row(w2_workload(nbytes), measured.name, median, rates, count, gb_per_s=median * nbytes / 1e9))
    return rows


def measure(factories: list, optional: list, sizes: Sizes, rounds: int, w2_rounds: int) -> list[Row]:
    """Every variant set up once and warmed up, then W1 in rounds, then W2 in rounds; the W1 rows
    first, in the order of `factories`, then the W2 rows."""
    variants = [measured for factory in factories if (measured := set_up(factory, factory in optional))]
    try:
        run_rounds(variants, partial(warm_up, sizes=sizes), 1)
        run_rounds(variants, partial(w1_round, latency_count=max(1, sizes.w1_latency // rounds)), rounds)
        run_rounds([m for m in variants if getattr(m.pipeline, "w2", True)], partial(w2_round, sizes=sizes),
                   w2_rounds)
    finally:
        for measured in variants:
            if not measured.failed:
                measured.pipeline.close()
    rows = [row for measured in variants if not measured.failed for row in rows_of(measured, sizes)]
    return sorted(rows, key=lambda row: row.workload != W1)  # stable: each workload in setup order


# -- reporting -------------------------------------------------------------------------------

TARGETS = [  # (workload, variant, baseline variant, at least), for both paths
    *((w, f"dfir {path}, {v}", b, t) for path in ("FlowGraph", "model") for w, v, b, t in (
        (W1, "one device", "threads + queue.Queue", 2.5),
        (W1, "one device", "plain loop", 0.5),
        (W1, "one device per stage", "processes + multiprocessing.Queue", 6.0),
        (W1, "one device per stage", "ray compiled graph", 20.0),
        ("W2 f32 64 MiB", "one device per stage", "plain loop", 0.8),
        ("W2 f32 64 MiB", "one device per stage", "processes + multiprocessing.Queue", 10.0))),
    (W1, "dfir FlowGraph, one device", "dfir model, one device", 0.9),
    (W1, "dfir FlowGraph, one device per stage", "dfir model, one device per stage", 0.9),
]

# (workload, variant, baseline): how close each concurrent variant comes to what the harness allows
HARNESS_SHARES = [(W1, v, "harness floor") for v in (
    "threads + queue.Queue", *(f"dfir {path}, {p}" for path in ("FlowGraph", "model")
                               for p in ("one device", "one device per stage")))]


def ratio(rows: list[Row], workload: str, variant: str, baseline: str) -> tuple[float, list[float]] | None:
    """The ratio of the two medians and the same ratio round by round; None if one did not run."""
    found = {(row.workload, row.variant): row for row in rows}
    if (workload, variant) not in found or (workload, baseline) not in found:
        return None
    mine, theirs = found[(workload, variant)], found[(workload, baseline)]
    return mine.msgs_per_s / theirs.msgs_per_s, [a / b for a, b in zip(mine.rounds, theirs.rounds)]


def format_ratio(found: tuple[float, list[float]] | None, missing: str = "skipped (one of them did not run)") -> str:
    if found is None:
        return missing
    median, by_round = found
    return f"{median:.2f}x" + (f" [{min(by_round):.2f}-{max(by_round):.2f}]" if by_round else "")


def rate(msgs_per_s: float) -> str:
    """msg/s to 3 significant digits at least (W2 moves a few large messages a second)."""
    return f"{msgs_per_s:.0f}" if msgs_per_s >= 100 else f"{msgs_per_s:.3g}"


def spread(row: Row) -> str:
    return f"{rate(min(row.rounds))}-{rate(max(row.rounds))}" if row.rounds else ""


def report(rows: list[Row], rounds: int, w2_rounds: int, targets: list[tuple[str, str, str, float]] = TARGETS) -> None:
    """The rows as a table, then each target's ratio of msg/s (at one tensor size, of GB/s too)."""
    print(f"each figure is the median of a variant's rounds (W1: {rounds}, W2: {w2_rounds}), beside their min-max\n")
    print(f"{'workload':<16}{'variant':<36}{'msg/s':>10}{'min-max':>18}{'msgs':>7}"
          f"{'p50 us':>8}{'p99 us':>8}{'GB/s':>7}")
    for row in rows:
        cells = [f"{rate(row.msgs_per_s):>10}", f"{spread(row):>18}", f"{row.messages or '':>7}",
                 f"{row.p50_us:8.0f}" if row.p50_us is not None else f"{'':>8}",
                 f"{row.p99_us:8.0f}" if row.p99_us is not None else f"{'':>8}",
                 f"{row.gb_per_s:7.2f}" if row.gb_per_s is not None else f"{'':>7}"]
        print(f"{row.workload:<16}{row.variant:<36}" + "".join(cells))
    print("\nratios of the medians against the targets [min-max of the same ratio round by round]:")
    for workload, variant, baseline, target in targets:
        found = ratio(rows, workload, variant, baseline)
        verdict = "" if found is None else f" (target >= {target}x: {'met' if found[0] >= target else 'MISSED'})"
        print(f"  {workload}: {variant} / {baseline} = {format_ratio(found)}{verdict}")
    if not any(row.variant == "harness floor" for row in rows):
        return
    print("\nshare of the harness floor (no target: the same harness with no transport, the stages computed inline):")
    for workload, variant, baseline in HARNESS_SHARES:
        print(f"  {workload}: {variant} / {baseline} = {format_ratio(ratio(rows, workload, variant, baseline))}")


def write_json(path: Path, rows: list[Row], rounds: int, w2_rounds: int, smoke: bool) -> None:
    """The rows and where they come from, for `--compare`."""
    path.write_text(json.dumps({
        "dfir": str(Path(dfir.__file__).parent), "python": sys.executable, "rounds": rounds,
        "w2_rounds": w2_rounds, "smoke": smoke,
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "rows": [asdict(row) for row in rows]}, indent=1) + "\n")


def compare(old_path: Path, new_path: Path) -> None:
    """Two runs' `--json` files side by side: medians, their min-max and new/old per variant, then
    each target's ratio in both."""
    old, new = (json.loads(Path(path).read_text()) for path in (old_path, new_path))
    for label, run in (("old", old), ("new", new)):
        print(f"{label}: {run['dfir']} ({run['python']}), W1 {run['rounds']} rounds, W2 {run['w2_rounds']}, "
              f"{run['measured_at']}")
    old_rows, new_rows = ([Row(**row) for row in run["rows"]] for run in (old, new))
    old_by_key = {(row.workload, row.variant): row for row in old_rows}
    print(f"\n{'workload':<16}{'variant':<36}{'old msg/s':>10}{'min-max':>18}{'new msg/s':>10}{'min-max':>18}"
          f"{'new/old':>8}")
    for row in new_rows:
        before = old_by_key.get((row.workload, row.variant))
        cells = [f"{rate(before.msgs_per_s):>10}", f"{spread(before):>18}"] if before else [f"{'-':>10}", f"{'':>18}"]
        cells += [f"{rate(row.msgs_per_s):>10}", f"{spread(row):>18}",
                  f"{row.msgs_per_s / before.msgs_per_s:7.2f}x" if before else f"{'':>8}"]
        print(f"{row.workload:<16}{row.variant:<36}" + "".join(cells))
    print("\nratios of the medians against the targets, old -> new [min-max round by round]:")
    for workload, variant, baseline, target in TARGETS:
        print(f"  {workload}: {variant} / {baseline}: {_old_to_new(old_rows, new_rows, workload, variant, baseline)}"
              f" (target >= {target}x)")
    print("\nshare of the harness floor, old -> new:")
    for workload, variant, baseline in HARNESS_SHARES:
        print(f"  {workload}: {variant} / {baseline}: {_old_to_new(old_rows, new_rows, workload, variant, baseline)}")


def _old_to_new(old_rows: list[Row], new_rows: list[Row], workload: str, variant: str, baseline: str) -> str:
    return " -> ".join(format_ratio(ratio(rows, workload, variant, baseline), "skipped")
                       for rows in (old_rows, new_rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="a few messages per measurement, to check it runs")
    parser.add_argument("--rounds", type=int, help=f"W1 rounds per variant (default {FULL.rounds}, "
                                                   f"{SMOKE.rounds} with --smoke)")
    parser.add_argument("--w2-rounds", type=int, help=f"W2 rounds per variant (default {FULL.w2_rounds}, "
                                                      f"{SMOKE.w2_rounds} with --smoke)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the rows to PATH")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("OLD", "NEW"),
                        help="print two runs' --json files side by side, measuring nothing")
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    sizes = SMOKE if args.smoke else FULL
    rounds, w2_rounds = args.rounds or sizes.rounds, args.w2_rounds or sizes.w2_rounds
    extra = ray_variants()
    if not extra:
        print("ray is not installed: skipping the Ray actor and Ray Compiled Graph baselines "
              "(pip install ray to add them)\n")
    with tempfile.TemporaryDirectory() as workdir:
        factories = [PlainLoop, HarnessFloor, ThreadsQueue, ProcessesMpQueue, *extra,
                     *(partial(kind, per_stage, Path(workdir)) for kind in (DfirModel, DfirFlowGraph)
                       for per_stage in (False, True))]
        rows = measure(factories, extra, sizes, rounds, w2_rounds)
    report(rows, rounds, w2_rounds)
    if args.json:
        write_json(args.json, rows, rounds, w2_rounds, args.smoke)


if __name__ == "__main__":
    main()
