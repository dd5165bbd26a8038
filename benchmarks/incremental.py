"""Incremental recompilation through the compile cache, on a 200-node graph of UDFs and GE graphs.

Scenarios, each a full `dfir.compile` of freshly built frontend objects (building them is not
timed), median of --repeat runs:
  cold        an empty cache directory: everything compiled, then stored
  warm        nothing changed: import + fingerprint + load of the cached model
  udf         one of the UDFs captures another constant: that UDF recompiled, the rest reused
  ge          one GE graph has other weights: that graph recompiled, the rest reused
and, as a baseline beside them, the same compile with the cache off. Ratios are cold / scenario.
Targets: warm >= 20x, one change >= 10x. It also times the fingerprint pass against printing
the module. Run: python benchmarks/incremental.py [--nodes 200] [--repeat 3] [--smoke]
"""
from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import tempfile
import time

import numpy as np

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.compiler import make_context, print_module
from dfir.dataflow import names
from dfir.ge.graph import Graph
from dfir.importer import import_flow_graph
from dfir.passes.fingerprint_subgraphs import FingerprintSubgraphs

UDF_KINDS = 10
GE_EVERY = 4   # every 4th node runs a GE graph: 50 GE graphs among 200 nodes
WIDTH = 32


def make_udf(constant: int):
    def step(x):
        return x + constant
    return df.pyflow(step)


def mlp(index: int, seed: int) -> Graph:
    """Three dense layers of WIDTH, weights drawn from `seed`."""
    rng = np.random.default_rng(seed)
    graph = Graph(f"mlp{index}")
    h = graph.data(0, shape=[-1, WIDTH], dtype=dt.DT_FLOAT, name="x")
    for _ in range(3):
        weight = graph.const(rng.standard_normal((WIDTH, WIDTH)).astype(np.float32))
        bias = graph.const(rng.standard_normal(WIDTH).astype(np.float32))
        h = graph.relu(graph.add(graph.matmul(h, weight), bias))
    graph.set_outputs([h])
    return graph


def build(nodes: int, udf_constants: list[int], ge_seeds: dict[int, int]) -> df.FlowGraph:
    """A chain of `nodes` nodes: GE graph `i` at every GE_EVERY-th node, UDFs between."""
    names.reset()
    udfs = [make_udf(c) for c in udf_constants]
    out = df.FlowData(name="x")
    for i in range(nodes):
        if i % GE_EVERY == 0:
            pp = df.GraphProcessPoint(df.Framework.ONNX, mlp(i, ge_seeds.get(i, i)), name=f"mlp{i}")
            out = pp.fnode(1, 1, name=f"ge{i}")(out)
        else:
            out = udfs[i % UDF_KINDS].fnode()(out)
    return df.FlowGraph([out], name="bench")


def timed_compile(graph: df.FlowGraph, directory: str) -> tuple[float, dfir.CompiledModel]:
    options = {"ge.graph_compiler_cache_dir": directory, "ge.graph_key": "bench"} if directory else {}
    gc.collect()  # start each scenario without garbage left by the ones before
    start = time.perf_counter()
    compiled = dfir.compile(graph, options)
    return time.perf_counter() - start, compiled


def reused(compiled) -> str:
    lines = [line for line in compiled.report if line.startswith("cache: graph key")]
    return lines[0].split("; ")[-1] if lines else "-"


def measure(nodes: int, repeat: int) -> list[tuple[str, float, str]]:
    constants = list(range(1, UDF_KINDS + 1))
    changed_udf = constants[:3] + [1000] + constants[4:]
    changed_ge = {GE_EVERY * (nodes // GE_EVERY // 2): 10_000}  # a GE graph mid-chain
    scenarios = {"cold": [], "no cache": [], "warm": [], "one UDF changed": [], "one GE graph changed": []}
    notes = {}
    for _ in range(repeat):
        root = tempfile.mkdtemp(prefix="dfir-incremental-")
        try:
            cold_dir = f"{root}/cold"
            os.mkdir(cold_dir)
            seconds, compiled = timed_compile(build(nodes, constants, {}), cold_dir)
            scenarios["cold"].append(seconds)
            notes["cold"] = reused(compiled)
            scenarios["no cache"].append(timed_compile(build(nodes, constants, {}), "")[0])
            seconds, compiled = timed_compile(build(nodes, constants, {}), cold_dir)
            scenarios["warm"].append(seconds)
            notes["warm"] = reused(compiled)
            for name, udfs, seeds in (("one UDF changed", changed_udf, {}), ("one GE graph changed", constants, changed_ge)):
                directory = f"{root}/{name.replace(' ', '_')}"
                shutil.copytree(cold_dir, directory)
                seconds, compiled = timed_compile(build(nodes, udfs, seeds), directory)
                scenarios[name].append(seconds)
                notes[name] = reused(compiled)
        finally:
            shutil.rmtree(root)
    return [(name, statistics.median(times), notes.get(name, "cache off")) for name, times in scenarios.items()]


def fingerprint_cost(nodes: int) -> tuple[float, float, int]:
    """Seconds to fingerprint the imported module, to print it, and its op count."""
    module = import_flow_graph(build(nodes, list(range(1, UDF_KINDS + 1)), {}))
    ops = sum(1 for _ in module.walk())
    start = time.perf_counter()
    FingerprintSubgraphs().apply(make_context(), module)
    fingerprint = time.perf_counter() - start
    start = time.perf_counter()
    print_module(module)
    return fingerprint, time.perf_counter() - start, ops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="20 nodes, one run, for CI")
    args = parser.parse_args()
    nodes, repeat = (20, 1) if args.smoke else (args.nodes, args.repeat)
    rows = measure(nodes, repeat)
    cold = rows[0][1]
    targets = {"warm": 20.0, "one UDF changed": 10.0, "one GE graph changed": 10.0}
    print(f"{nodes} nodes ({nodes // GE_EVERY + (nodes % GE_EVERY > 0)} GE graphs), median of {repeat}")
    print(f"{'scenario':22} {'seconds':>8} {'cold/this':>10}  {'target':>7}  reuse")
    for name, seconds, note in rows:
        target = targets.get(name)
        verdict = "" if target is None else f">={target:.0f}x " + ("met" if cold / seconds >= target else "missed")
        print(f"{name:22} {seconds:8.3f} {cold / seconds:9.1f}x  {verdict:>12}  {note}")
    fingerprint, printing, ops = fingerprint_cost(nodes)
    print(f"fingerprint pass: {fingerprint * 1000:.1f} ms for {ops} ops "
          f"({ops / fingerprint:,.0f} ops/s); printing the module: {printing * 1000:.1f} ms "
          f"({printing / fingerprint:.1f}x the fingerprint)")


if __name__ == "__main__":
    main()
