"""How compile cost grows with graph size: chains and wide DAGs of 100, 1,000 and 5,000 nodes.

Prints seconds per phase (frontend objects, import to IR, passes, lowering to .om, load) and
nodes/s end to end. Run: python benchmarks/compile_scaling.py [--sizes 100,1000,5000] [--smoke]
"""
from __future__ import annotations

import argparse
import time

import dfir
import dfir.dataflow as df
from dfir.frontend.dataflow import names


@df.pyflow
def inc(x):
    return x + 1


@df.pyflow
def add(a, b):
    return a + b


def chain(size: int) -> df.FlowGraph:
    out = df.FlowData()
    for _ in range(size):
        out = inc.fnode()(out)
    return df.FlowGraph([out])


def wide(size: int) -> df.FlowGraph:
    """`size // 2` parallel nodes on one input, then a pairwise reduction tree."""
    x = df.FlowData()
    layer = [inc.fnode()(x) for _ in range(max(1, size // 2))]
    while len(layer) > 1:
        pairs = [add.fnode()(layer[i], layer[i + 1]) for i in range(0, len(layer) - 1, 2)]
        layer = pairs + ([layer[-1]] if len(layer) % 2 else [])
    return df.FlowGraph([layer[0]])


def measure(shape: str, size: int) -> dict[str, float]:
    names.reset()
    start = time.perf_counter()
    graph = (chain if shape == "chain" else wide)(size)
    frontend = time.perf_counter() - start
    compiled = dfir.compile(graph)
    start = time.perf_counter()
    model = dfir.load(compiled.om)
    load = time.perf_counter() - start
    model.close()
    nodes = len(compiled.module.ops.last.body.block.ops) - 2  # data + output
    row = {"nodes": nodes, "frontend": frontend, **compiled.timings, "load": load,
           "om_bytes": len(compiled.om)}
    row["total"] = frontend + sum(compiled.timings.values()) + load
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, for CI")
    args = parser.parse_args()
    sizes = [10, 20] if args.smoke else [int(s) for s in args.sizes.split(",")]
    header = f"{'shape':6} {'nodes':>6} {'frontend':>9} {'import':>8} {'passes':>8} {'lower':>8} " \
             f"{'load':>8} {'total':>8} {'nodes/s':>9} {'om KiB':>8}"
    print(header)
    for shape in ("chain", "wide"):
        for size in sizes:
            r = measure(shape, size)
            print(f"{shape:6} {r['nodes']:6d} {r['frontend']:9.3f} {r['import']:8.3f} {r['passes']:8.3f} "
                  f"{r['lower']:8.3f} {r['load']:8.3f} {r['total']:8.3f} {r['nodes'] / r['total']:9.0f} "
                  f"{r['om_bytes'] / 1024:8.0f}")


if __name__ == "__main__":
    main()
