"""Throughput of a GE MLP node behind `CountBatch(batch_size=32)` against the same node fed one
message at a time.

The MLP (784 -> 256 -> 10, float32, relu between) is a `dfir.ge.graph.Graph` with a dynamic batch
dimension, run by a `GraphProcessPoint` node of a one-node FlowGraph. Both graphs are fed the
users' way (`feed_data({x: array})` from a thread, `fetch_data()` in the main thread) with the
same N samples: the batched graph one sample per feed (shape [784]; the CountBatch stacks 32 of
them into [32, 784] for one graph call), the other one sample per feed as [1, 784] (one graph
call each). The first batch's worth loads and warms each model, untimed. Every result is checked
against numpy's MLP, outside the timed loop. Both run
alternately; the best of the rounds counts and the ratio is printed.

OpenBLAS runs one thread per process unless OPENBLAS_NUM_THREADS says otherwise: on a machine
whose cores other work keeps busy, its threads spin against each other and a [32, 784] matmul
took 100x as long as on one thread (57 ms against 0.6 ms, measured), which would hide what
batching saves; the figure printed names the setting.

Run: python benchmarks/input_batching.py [--messages N] [--rounds R] [--backend NAME] [--smoke]
"""
from __future__ import annotations

import argparse
import os
import threading
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS (see the docstring)
import numpy as np

import dfir.data_type as dt
import dfir.dataflow as df
from dfir.frontend.dataflow import names
from dfir.ge.graph import Graph

BATCH = 32
WAIT_MS = 60_000
rng = np.random.default_rng(0)
W1, B1 = rng.standard_normal((784, 256), np.float32) * 0.05, rng.standard_normal(256, np.float32)
W2, B2 = rng.standard_normal((256, 10), np.float32) * 0.05, rng.standard_normal(10, np.float32)


def mlp_graph() -> Graph:
    g = Graph("mlp")
    x = g.data(0, shape=[-1, 784], dtype=dt.DT_FLOAT, name="x")
    hidden = g.relu(g.add(g.matmul(x, g.const(W1)), g.const(B1)))
    g.set_outputs([g.add(g.matmul(hidden, g.const(W2)), g.const(B2))])
    return g


def expected_mlp(x: np.ndarray) -> np.ndarray:
    return np.maximum(x @ W1 + B1, 0) @ W2 + B2


def flow_graph(batched: bool, backend: str):
    """The one-node FlowGraph running the MLP, its input batched by CountBatch(32) or not."""
    names.reset()
    point = df.GraphProcessPoint(df.Framework.ONNX, mlp_graph())
    node = point.fnode(1, 1)
    data = df.FlowData(name="x")
    out = node(data)
    if batched:
        node.map_input(0, point, 0, [df.CountBatch(batch_size=BATCH)])
    return data, df.FlowGraph([out], {"dfir.ge.backend": backend})


def run(data, graph, samples: np.ndarray, batched: bool) -> tuple[float, np.ndarray]:
    """Feed every sample (one per feed) from a thread and fetch every result: the seconds the
    timed part took, and all the results. The first fetch's worth (one batch, or one sample) loads
    the model and warms it up, untimed."""
    feeds = samples if batched else samples[:, None, :]
    per_fetch = BATCH if batched else 1

    def fetch() -> np.ndarray:
        outs, _, ret = graph.fetch_data(timeout=WAIT_MS)
        assert ret == 0, ret
        return outs[0].numpy()

    for x in feeds[:per_fetch]:
        graph.feed_data({data: x})
    results = [fetch()]
    feeder = threading.Thread(target=lambda: [graph.feed_data({data: x}) for x in feeds[per_fetch:]])
    start = time.perf_counter()
    feeder.start()
    results += [fetch() for _ in range(len(samples) // per_fetch - 1)]
    seconds = time.perf_counter() - start
    feeder.join()
    return seconds, np.concatenate(results).reshape(len(samples), 10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=4096, help="samples fed to each graph")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backend", default="reference", help="dfir.ge.backend of both graphs")
    parser.add_argument("--smoke", action="store_true", help="a tiny run that checks the benchmark runs")
    args = parser.parse_args()
    count, rounds = (BATCH * 4, 1) if args.smoke else (args.messages // BATCH * BATCH, args.rounds)
    samples = np.random.default_rng(1).standard_normal((count, 784), np.float32)
    expected = expected_mlp(samples)
    kinds = {"one message at a time": False, f"CountBatch(batch_size={BATCH})": True}
    best = {kind: float("inf") for kind in kinds}
    graphs = {kind: flow_graph(batched, args.backend) for kind, batched in kinds.items()}
    for _ in range(rounds):
        for kind, batched in kinds.items():
            seconds, results = run(*graphs[kind], samples, batched)
            np.testing.assert_allclose(results, expected, rtol=1e-4, atol=1e-4)
            best[kind] = min(best[kind], seconds)
    df.finalize()
    print(f"GE MLP 784-256-10 ({args.backend}, OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}), "
          f"{count} samples, best of {rounds}; results checked")
    for kind in kinds:
        print(f"  {kind:26s} {count / best[kind]:10.0f} samples/s")
    one, batched = (best[kind] for kind in kinds)
    print(f"  ratio CountBatch / one at a time: {one / batched:.2f}x")


if __name__ == "__main__":
    main()
