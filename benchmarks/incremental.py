"""Incremental recompilation through the compile cache, on a 200-node graph of UDFs and GE graphs.

Scenarios, each a full `dfir.compile` of freshly built frontend objects (building them is not
timed) with the process's memo of IREE executables emptied first, as in a new process, median of
--repeat runs:
  cold        an empty cache directory: everything compiled, then stored
  warm        nothing changed: the frontend key finds the cached model, nothing is imported
  udf         one of the UDFs captures another constant: that UDF compiled again, the rest reused
  ge          one GE graph has other weights: that graph compiled again, the rest reused
and, as the baseline, the same compile with the cache off: what a user pays without the cache.
Ratios are baseline / scenario and cold / scenario, in wall-clock time and in the process's CPU
time (steadier on a shared machine). Targets, judged against the baseline: warm >= 20x, one
change >= 10x. Each scenario's last run is broken down by step (`CompiledModel.timings`),
and the frontend key and the fingerprint pass are timed against importing and printing.
Run: python benchmarks/incremental.py [--nodes 200] [--repeat 3] [--smoke]
"""
from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.driver.job import make_context, print_module
from dfir.frontend.cache_keys import frontend_keys
from dfir.frontend.dataflow import names
from dfir.frontend.importer import import_flow_graph
from dfir.ge.graph import Graph
from dfir.lowering.iree_executable import forget_compiled
from dfir.passes.fingerprint_subgraphs import FingerprintSubgraphs

UDF_KINDS = 10
GE_EVERY = 4   # every 4th node runs a GE graph: 50 GE graphs among 200 nodes
WIDTH = 32
TARGETS = {"warm": 20.0, "one UDF changed": 10.0, "one GE graph changed": 10.0}


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


@dataclass
class Scenario:
    """The runs of one scenario: wall and CPU seconds, and the last run's report and timings."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    reuse: str = "cache off"
    timings: dict[str, float] = field(default_factory=dict)

    def run(self, graph: df.FlowGraph, directory: str) -> None:
        options = {"ge.graph_compiler_cache_dir": directory, "ge.graph_key": "bench"} if directory else {}
        gc.collect()  # start each scenario without garbage left by the ones before
        forget_compiled()  # as a new process would: no IREE executable memoized by an earlier scenario
        wall, cpu = time.perf_counter(), time.process_time()
        compiled = dfir.compile(graph, options)
        self.wall.append(time.perf_counter() - wall)
        self.cpu.append(time.process_time() - cpu)
        lines = [line for line in compiled.report if line.startswith("cache: graph key")]
        self.reuse = lines[0].split("; ")[-1] if lines else "cache off"
        self.timings = compiled.timings


def measure(nodes: int, repeat: int) -> dict[str, Scenario]:
    constants = list(range(1, UDF_KINDS + 1))
    changed_udf = constants[:3] + [1000] + constants[4:]
    changed_ge = {GE_EVERY * (nodes // GE_EVERY // 2): 10_000}  # a GE graph mid-chain
    scenarios = {name: Scenario() for name in ("cold", "no cache", "warm", "one UDF changed", "one GE graph changed")}
    for _ in range(repeat):
        root = tempfile.mkdtemp(prefix="dfir-incremental-")
        try:
            cold_dir = f"{root}/cold"
            os.mkdir(cold_dir)
            scenarios["cold"].run(build(nodes, constants, {}), cold_dir)
            scenarios["no cache"].run(build(nodes, constants, {}), "")
            scenarios["warm"].run(build(nodes, constants, {}), cold_dir)
            for name, udfs, seeds in (("one UDF changed", changed_udf, {}), ("one GE graph changed", constants, changed_ge)):
                directory = f"{root}/{name.replace(' ', '_')}"
                shutil.copytree(cold_dir, directory)
                scenarios[name].run(build(nodes, udfs, seeds), directory)
        finally:
            shutil.rmtree(root)
    return scenarios


def key_costs(nodes: int) -> dict[str, float]:
    """Seconds to compute the frontend key, to import, to fingerprint and to print the module."""
    graph = build(nodes, list(range(1, UDF_KINDS + 1)), {})
    start = time.perf_counter()
    frontend_keys(graph, "")
    costs = {"frontend key": time.perf_counter() - start}
    start = time.perf_counter()
    module = import_flow_graph(graph)
    costs["import"] = time.perf_counter() - start
    start = time.perf_counter()
    FingerprintSubgraphs().apply(make_context(), module)
    costs["fingerprint pass"] = time.perf_counter() - start
    start = time.perf_counter()
    print_module(module)
    costs["printing the module"] = time.perf_counter() - start
    return costs


def report(nodes: int, repeat: int, scenarios: dict[str, Scenario]) -> None:
    wall = {name: statistics.median(scenario.wall) for name, scenario in scenarios.items()}
    cpu = {name: statistics.median(scenario.cpu) for name, scenario in scenarios.items()}
    off = "no cache"
    print(f"{nodes} nodes ({nodes // GE_EVERY + (nodes % GE_EVERY > 0)} GE graphs), median of {repeat}; "
          f"targets judged against the compile with the cache off")
    print(f"{'scenario':22} {'wall s':>7} {'off/this':>9} {'cold/this':>9} {'cpu s':>7} {'off/this':>9} "
          f"{'cold/this':>9}  {'target':>13}  reuse")
    for name, scenario in scenarios.items():
        target = TARGETS.get(name)
        verdict = "" if target is None else f">={target:.0f}x " + ("met" if wall[off] / wall[name] >= target else "missed")
        print(f"{name:22} {wall[name]:7.3f} {wall[off] / wall[name]:8.1f}x {wall['cold'] / wall[name]:8.1f}x "
              f"{cpu[name]:7.3f} {cpu[off] / cpu[name]:8.1f}x {cpu['cold'] / cpu[name]:8.1f}x  {verdict:>13}  "
              f"{scenario.reuse}")
    print("where the last run of each scenario spent its time (ms):")
    for name, scenario in scenarios.items():
        steps = ", ".join(f"{step} {seconds * 1000:.1f}" for step, seconds in scenario.timings.items())
        print(f"  {name:20} {steps}")
    costs = key_costs(nodes)
    print("on the same graph, ms: " + ", ".join(f"{what} {seconds * 1000:.1f}" for what, seconds in costs.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="20 nodes, one run, for CI")
    args = parser.parse_args()
    nodes, repeat = (20, 1) if args.smoke else (args.nodes, args.repeat)
    report(nodes, repeat, measure(nodes, repeat))


if __name__ == "__main__":
    main()
