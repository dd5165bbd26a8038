"""How compile and load grow with a GE graph's weights: one `Graph.const` of 64 MiB, 256 MiB, 1 GiB.

Each case builds `y = x + W` with W a float32 constant of the size (a weight blob,
docs/om-format.md "Weights"), compiles it with `dfir.compile`, writes the `.om`, loads it with
`dfir.load` (the native reader checks every checksum) and runs it once. Two baselines run in the
same process: the graph's own cost, the same graph compiled with 1 MiB of weights, and reading the same file and hashing it with Python's hashlib (SHA-256 through OpenSSL). Prints
seconds, the compile's seconds per GiB of weights beyond the graph's own cost, the load's GB/s
and its ratio to the read-and-hash baseline, the IR text's size and the resident memory the
load added against the weights' size (the proportional set size of this process and the model's
workers).

The graph runs on the reference kernels by default (`--backend` chooses another): an IREE
executable embeds its constants (docs/om-format.md, "Weights"), so its compile is IREE's own.

Run: python benchmarks/weights.py [--sizes 64,256] [--gib] [--backend reference] [--smoke]
     (--gib adds the 1024 MiB case)
"""
from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
import time

import numpy as np

import dfir
from dfir.core import data_type as dt
from dfir.ge.graph import Graph
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om

MIB = 1 << 20


def weight_graph(mib: int) -> tuple[Graph, np.ndarray]:
    """`x + W` with W `mib` MiB of random float32."""
    side = int((mib * MIB // 4) ** 0.5)
    weights = np.random.default_rng(0).standard_normal((side, side), dtype=np.float32)
    graph = Graph(f"weights_{mib}m")
    x = graph.data(0, [side, side], dt.DT_FLOAT)
    graph.set_outputs([graph.add(x, graph.const(weights))])
    return graph, weights


def read_and_hash(path: str) -> float:
    start = time.perf_counter()
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(16 * MIB):
            digest.update(chunk)
    return time.perf_counter() - start


def resident_bytes() -> int:
    """The proportional set size (shared pages split among their users) of this process and its
    children (the model's workers), from /proc."""
    pids = [str(os.getpid())]
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as f:
            pids += f.read().split()
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                total += next(int(line.split()[1]) * 1024 for line in f if line.startswith("Pss:"))
        except FileNotFoundError:  # a worker that ended meanwhile
            pass
    return total


def compile_seconds(graph: Graph, backend: str) -> float:
    start = time.perf_counter()
    dfir.compile(graph, {"dfir.ge.backend": backend})
    return time.perf_counter() - start


def measure(mib: int, folder: str, backend: str) -> dict[str, float]:
    graph_cost = compile_seconds(weight_graph(1)[0], backend)
    graph, weights = weight_graph(mib)
    start = time.perf_counter()
    compiled = dfir.compile(graph, {"dfir.ge.backend": backend})
    compile_s = time.perf_counter() - start
    path = os.path.join(folder, f"w{mib}.om")
    with open(path, "wb") as f:
        f.write(compiled.om)
    ir_bytes = len(read_om(path).models[0].partition(PartitionType.IR_TEXT).data)
    del compiled
    baseline = read_and_hash(path)
    before = resident_bytes()
    start = time.perf_counter()
    model = dfir.load(path)
    load_s = time.perf_counter() - start
    added = resident_bytes() - before
    x = np.ones_like(weights)
    model.feed_data([x])
    outputs, _, _ = model.fetch_data()
    assert np.array_equal(outputs[0].numpy(), x + weights)
    model.close()
    size = os.path.getsize(path)
    return {"mib": mib, "graph": graph_cost, "compile": compile_s, "load": load_s, "baseline": baseline, "file": size,
            "ir": ir_bytes, "rss": added / weights.nbytes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="64,256")
    parser.add_argument("--gib", action="store_true", help="add the 1 GiB case (needs ~5 GiB of memory)")
    parser.add_argument("--backend", default="reference", help="the GE backend (dfir.ge.backend)")
    parser.add_argument("--smoke", action="store_true", help="one tiny case, for CI")
    args = parser.parse_args()
    sizes = [1] if args.smoke else [int(s) for s in args.sizes.split(",")] + ([1024] if args.gib else [])
    print(f"{'MiB':>5} {'graph s':>7} {'compile s':>9} {'s/GiB':>6} {'load s':>7} {'load GB/s':>9} "
          f"{'read+sha s':>10} {'load/base':>9} {'IR KiB':>7} {'RSS/weights':>11}")
    with tempfile.TemporaryDirectory() as folder:
        for mib in sizes:
            r = measure(mib, folder, args.backend)
            print(f"{mib:5d} {r['graph']:7.2f} {r['compile']:9.2f} {(r['compile'] - r['graph']) * 1024 / mib:6.2f} "
                  f"{r['load']:7.2f} "
                  f"{r['file'] / r['load'] / 1e9:9.2f} {r['baseline']:10.2f} {r['load'] / r['baseline']:9.2f} "
                  f"{r['ir'] / 1024:7.1f} {r['rss']:11.2f}")


if __name__ == "__main__":
    main()
