"""What tracing costs (option `dfir.runtime.trace`, DFIR_TRACE): one pipeline traced off, on and
at a sampling rate, side by side in one run.

Pipelines, each a FlowGraph built once per setting (the option in its options) and run as the
seeds run one (`graph.feed_data({x: array})`, `graph.fetch_data()`):
  W1  runtime_throughput's 3-stage pipeline (x+1, x*2, x-3), each stage on its own device,
      int32 [1, 2] messages: messages/s, a feeder thread keeping at most WINDOW in flight.
  GE  an ONNX MLP 256-512-10 (`GraphProcessPoint`, reference backend) between two `@pyflow`
      stages on two devices, float32 [1, 256] messages: messages/s likewise.
The settings run in rounds (each round starts one setting later), every result is checked, and
a figure is the median of its rounds with their min-max; the cost is 1 - (msg/s traced) /
(msg/s off), round by round. Tracing off costs nothing against a build without tracing beyond
a few untaken branches per batch; the runs print the traced runs' slice counts too.

Run: python benchmarks/trace_overhead.py [--rounds 7] [--messages 20000] [--smoke]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import dfir.dataflow as df  # noqa: E402
from dfir.frontend.dataflow import names  # noqa: E402
from dfir.frontend.options import TRACE_OPTION  # noqa: E402
from runtime_throughput import STAGES, DfirFlowGraph  # noqa: E402

SETTINGS = ("off", "on", "0.1")
WINDOW = 64


class W1(DfirFlowGraph):
    """runtime_throughput's FlowGraph path, one device per stage, traced as `setting` says."""

    def __init__(self, workdir: Path, setting: str):
        super().__init__(True, workdir, {TRACE_OPTION: setting})
        self.name = f"W1, trace {setting}"


@df.pyflow
def scale(x):
    return x * 0.5


@df.pyflow
def top(y):
    return np.argmax(y, axis=-1).astype(np.int32)


class GePipeline(DfirFlowGraph):
    """scale (0:0:0) -> an ONNX MLP 256-512-10 (0:0:0, reference backend) -> top (0:0:1), the
    FlowGraph path, traced as `setting` says."""

    def __init__(self, workdir: Path, setting: str):
        # DfirFlowGraph's own __init__ builds the 3-stage graph; this keeps its feed and fetch
        self.name = f"GE, trace {setting}"
        names.reset()
        self._input = df.FlowData(name="x")
        mlp = df.GraphProcessPoint(df.Framework.ONNX, str(mlp_onnx(workdir / "mlp.onnx"))).fnode(1, 1, name="mlp")
        deploy = {"deploy_info": [{"flow_node_name": "scale_fnode", "logic_device_id": "0:0:0"},
                                  {"flow_node_name": "mlp", "logic_device_id": "0:0:0"},
                                  {"flow_node_name": "top_fnode", "logic_device_id": "0:0:1"}]}
        options = {**_placement(workdir, deploy, ["0:0:0", "0:0:1"]), "dfir.ge.backend": "reference",
                   TRACE_OPTION: setting}
        self._graph = df.FlowGraph([top.fnode()(mlp(scale.fnode()(self._input)))], options)
        self.put(np.zeros([1, 256], np.float32))  # the first feed compiles and loads the graph
        self.get()


def slices(pipeline: DfirFlowGraph) -> int:
    """The slices the pipeline's model recorded so far (0: not traced)."""
    tracer = pipeline._graph._model._scheduler.tracer
    return 0 if tracer is None else len(tracer.collect().slices)


def mlp_onnx(path: Path) -> Path:
    """A 256-512-10 MLP with random weights, written to `path`."""
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal(shape, np.float32) * 0.05, name)
               for name, shape in (("w1", (256, 512)), ("w2", (512, 10)))]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"]), helper.make_node("Relu", ["h0"], ["h1"]),
             helper.make_node("MatMul", ["h1", "w2"], ["y"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _placement(workdir: Path, deploy: dict, devices: list[str]) -> dict[str, str]:
    resource = {"cluster": [{"cluster_nodes": [{"node_id": 0, "node_type": "x86", "ipaddr": "127.0.0.1",
                                                "item_list": [{"item_id": int(d.split(":")[2])} for d in devices]}]}]}
    (workdir / "deploy.json").write_text(json.dumps(deploy))
    (workdir / "resource.json").write_text(json.dumps(resource))
    return {"ge.experiment.data_flow_deploy_info_path": str(workdir / "deploy.json"),
            "ge.resourceConfigPath": str(workdir / "resource.json")}


def throughput(pipeline: DfirFlowGraph, x: np.ndarray, expected: np.ndarray, count: int) -> float:
    """Messages per second: a feeder thread puts `count` copies of `x`, at most WINDOW in flight,
    this thread gets them; every result must be `expected` (checked after the clock stops)."""
    credits = threading.Semaphore(WINDOW)

    def feed():
        for _ in range(count):
            credits.acquire()
            pipeline.put(x)
    feeder = threading.Thread(target=feed, daemon=True)
    results = []
    start = time.perf_counter()
    feeder.start()
    for _ in range(count):
        results.append(pipeline.get())
        credits.release()
    elapsed = time.perf_counter() - start
    feeder.join()
    wrong = next((r for r in results if not np.array_equal(r, expected)), None)
    if wrong is not None:
        sys.exit(f"{pipeline.name}: a result is {wrong!r}, expected {expected!r}")
    return count / elapsed


def measure(pipelines: list[DfirFlowGraph], x: np.ndarray, messages: int, rounds: int) -> dict[str, list[float]]:
    """Msg/s of each pipeline (one per setting, in SETTINGS order) per round; closes them."""
    rates: dict[str, list[float]] = {setting: [] for setting in SETTINGS}
    try:
        pipelines[0].put(x)
        expected = pipelines[0].get()  # what every setting must give
        for pipeline in pipelines:
            throughput(pipeline, x, expected, min(messages, 500))  # warm up
        for r in range(rounds):
            for k in range(len(SETTINGS)):
                setting = SETTINGS[(r + k) % len(SETTINGS)]
                rates[setting].append(throughput(pipelines[SETTINGS.index(setting)], x, expected, messages))
        print(f"{pipelines[0].name.split(',')[0]}: slices recorded (off, on, 0.1): "
              f"{', '.join(str(slices(p)) for p in pipelines)}")
    finally:
        pipelines[0].close()  # df.finalize: every graph's model
    return rates


def report(workload: str, rates: dict[str, list[float]]) -> None:
    off = rates["off"]
    print(f"{workload}, msg/s, median [min-max] of {len(off)} rounds:")
    for setting in SETTINGS:
        values = rates[setting]
        line = f"  trace {setting:<4} {statistics.median(values):>10,.0f} [{min(values):,.0f}-{max(values):,.0f}]"
        if setting != "off":
            costs = [1 - v / o for v, o in zip(values, off)]
            line += f"   cost {statistics.median(costs):+.1%} [{min(costs):+.1%} to {max(costs):+.1%}]"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that it runs, times nothing")
    args = parser.parse_args()
    rounds, messages = (1, 200) if args.smoke else (args.rounds, args.messages)
    print(f"{len(STAGES)}-stage W1 and a GE pipeline, {messages} messages per round, {WINDOW} in flight; "
          f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        w1 = measure([W1(workdir, setting) for setting in SETTINGS], np.ones([1, 2], np.int32), messages, rounds)
        ge = measure([GePipeline(workdir, setting) for setting in SETTINGS], np.ones([1, 256], np.float32),
                     messages, rounds)
    report("W1", w1)
    report("GE", ge)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
