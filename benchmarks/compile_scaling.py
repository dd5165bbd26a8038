"""How compile and load cost grows with graph size: chains and wide DAGs of 1,000 to 10,000 nodes.

Each case, as a user runs it: build the `df.FlowGraph` of `@pyflow` nodes, `dfir.compile` it,
`dfir.load` the `.om`, run it once (feed one input, fetch the result, check it) and close it.
Prints the seconds of each step (frontend objects, import to IR, passes, lowering to .om, load,
the one run), the end-to-end wall time, nodes/s, the share of load in the total, and per shape
the ratio of each size's time to the smallest size's against the ratio of their node counts
(linear cost: the two are equal).

Run: python benchmarks/compile_scaling.py [--sizes 1000,5000,10000] [--smoke]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import dfir
import dfir.dataflow as df
from dfir.frontend.dataflow import names


@df.pyflow
def inc(x):
    return x + 1


@df.pyflow
def add(a, b):
    return a + b


def chain(size: int) -> tuple[df.FlowGraph, int]:
    """`size` nodes in a row; the result adds `size` to the input."""
    out = df.FlowData()
    for _ in range(size):
        out = inc.fnode()(out)
    return df.FlowGraph([out]), size


def wide(size: int) -> tuple[df.FlowGraph, int]:
    """`size // 2` parallel nodes on one input, then a pairwise reduction tree: the result is
    the sum of the `size // 2` incremented inputs."""
    x = df.FlowData()
    width = max(1, size // 2)
    layer = [inc.fnode()(x) for _ in range(width)]
    while len(layer) > 1:
        pairs = [add.fnode()(layer[i], layer[i + 1]) for i in range(0, len(layer) - 1, 2)]
        layer = pairs + ([layer[-1]] if len(layer) % 2 else [])
    return df.FlowGraph([layer[0]]), width


SHAPES = {"chain": (chain, lambda x, k: x + k), "wide": (wide, lambda x, k: (x + 1) * k)}


def measure(shape: str, size: int) -> dict[str, float]:
    build, expected = SHAPES[shape]
    names.reset()
    wall = time.perf_counter()
    graph, k = build(size)
    frontend = time.perf_counter() - wall
    compiled = dfir.compile(graph)
    start = time.perf_counter()
    model = dfir.load(compiled.om)
    load = time.perf_counter() - start
    start = time.perf_counter()
    x = np.arange(4, dtype=np.int64)
    model.feed_data([x])
    outputs, _, _ = model.fetch_data()
    assert np.array_equal(outputs[0].numpy(), expected(x, k)), "the compiled model computed a wrong result"
    model.close()
    run = time.perf_counter() - start
    nodes = len(compiled.module.ops.last.body.block.ops) - 2  # data + output
    return {"nodes": nodes, "frontend": frontend, **compiled.timings, "load": load, "run": run,
            "wall": time.perf_counter() - wall, "om_bytes": len(compiled.om)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,5000,10000")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, for CI")
    args = parser.parse_args()
    sizes = [10, 20] if args.smoke else [int(s) for s in args.sizes.split(",")]
    print(f"{'shape':6} {'nodes':>6} {'frontend':>9} {'import':>7} {'passes':>7} {'lower':>7} {'load':>7} "
          f"{'run':>6} {'wall':>7} {'nodes/s':>8} {'load %':>7} {'x time':>7} {'x nodes':>8} {'om KiB':>7}")
    for shape in SHAPES:
        first = None
        for size in sizes:
            r = measure(shape, size)
            first = first or r
            print(f"{shape:6} {r['nodes']:6d} {r['frontend']:9.3f} {r['import']:7.3f} {r['passes']:7.3f} "
                  f"{r['lower']:7.3f} {r['load']:7.3f} {r['run']:6.3f} {r['wall']:7.3f} "
                  f"{r['nodes'] / r['wall']:8.0f} {100 * r['load'] / r['wall']:6.1f}% "
                  f"{r['wall'] / first['wall']:7.2f} {r['nodes'] / first['nodes']:8.2f} {r['om_bytes'] / 1024:7.0f}")


if __name__ == "__main__":
    main()
