"""Throughput and latency of a pipeline over two servers on Ray: dfir against Ray itself, in one run.

The 3-stage pipeline of runtime_throughput.py (x+1, x*2, x-3) with stages 1 and 2 on server 0
and stage 3 on server 1, on a local Ray cluster of two nodes on the loopback
(`ray.cluster_utils.Cluster`, node N offering `dfir_server_N`):
  W1  int32 [1, 2] tensors: messages/s (a feeder thread feeds, the main thread fetches), then
      p50/p99 latency of one message at a time.
  W2  float32 tensors of 64 MiB: payload GB/s (at most 4 messages in flight).
  T64 one float32 tensor of 64 MiB at a time through the pipeline (each fetched before the next
      is fed): p50/p99 milliseconds and MB/s of the p50. Each message crosses between the
      servers twice (stage 2 -> stage 3, stage 3 -> the driver).
Variants: Ray actors (one per stage, pinned to the same nodes, chained by object refs), a Ray
Compiled Graph of those actors (W1 and W2), and dfir (`dfir.runtime.cluster=ray`: each server's
stages in that server's actor, shared memory inside a server, a TCP stream per relayed channel
between servers, tensor bodies read straight into the receiving server's arena).
Compiled Graphs busy-wait on their channels; on a 2-core machine the sizes below keep every
baseline within its get timeout (RAY_CGRAPH_get_timeout); a baseline that still fails is
reported as such and its ratios are skipped.

Run: python benchmarks/cluster_throughput.py [--smoke] [--rounds N] [--w2-rounds N]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every Ray process on the loopback
os.environ.setdefault("RAY_CGRAPH_get_timeout", "10" if "--smoke" in sys.argv else "60")  # read as Ray loads
os.environ["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parent), os.environ.get("PYTHONPATH", "")])

import numpy as np  # noqa: E402
import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

import dfir  # noqa: E402
import dfir.dataflow as df  # noqa: E402
from dfir.frontend.dataflow import names  # noqa: E402
import runtime_throughput  # noqa: E402
from runtime_throughput import STAGES, Sizes, report  # noqa: E402

FULL = Sizes(2_000, 300, 3, {64 << 20: 8}, 3)
SMOKE = Sizes(100, 20, 1, {64 << 20: 2}, 1)
T64_BYTES = 64 << 20
T64_MESSAGES = {False: 4, True: 1}  # per round, by --smoke
SERVER_OF_STAGE = (0, 0, 1)
OBJECT_STORE_BYTES = 1 << 30
TARGETS = [  # (workload, variant, baseline variant, at least)
    ("W1 int32[1,2]", "dfir on ray", "ray compiled graph", 5.0),
    ("W2 f32 64 MiB", "dfir on ray", "ray compiled graph", 1.0),
    ("W2 f32 64 MiB", "dfir on ray", "ray actors", 1.0),
]


class PinnedActors(runtime_throughput.RayActors):
    """One actor per stage on the stage's server; each message is a chain of three actor calls."""

    def _make_actors(self, stage) -> list:
        return [stage.options(num_cpus=0, resources={f"dfir_server_{s}": 0.01}).remote(fn)
                for fn, s in zip(STAGES, SERVER_OF_STAGE)]


class PinnedCompiledGraph(PinnedActors, runtime_throughput.RayCompiledGraph):
    """The same actors as one Compiled Graph (shared-memory channels, compiled once)."""


class DfirOnRay:
    """The pipeline as a FlowGraph placed on the two servers, run with dfir.runtime.cluster=ray."""

    name = "dfir on ray"
    concurrent = True

    def __init__(self, workdir: Path):
        names.reset()
        out = df.FlowData(name="x")
        for fn in STAGES:
            out = df.pyflow(fn).fnode()(out)
        self._model = dfir.load(dfir.compile(df.FlowGraph([out]), _placement(workdir)).om)

    def put(self, x):
        self._model.feed_data([x])

    def get(self):
        tensors, _, ret = self._model.fetch_data(timeout=60000)
        assert ret == 0, ret.message
        return tensors[0].numpy()

    def close(self):
        self._model.close()


def _placement(workdir: Path) -> dict[str, str]:
    deploy = {"batch_deploy_info": [{"flow_node_list": [f"{fn.__name__}_fnode"], "logic_device_list": f"0:{s}:{k}"}
                                    for k, (fn, s) in enumerate(zip(STAGES, SERVER_OF_STAGE))]}
    servers = [{"node_id": s, "node_type": "host", "ipaddr": f"10.99.0.{s + 1}",
                "item_list": [{"item_id": d} for d in range(len(STAGES))]} for s in (0, 1)]
    (workdir / "deploy.json").write_text(json.dumps(deploy))
    (workdir / "resources.json").write_text(json.dumps({"cluster": [{"cluster_nodes": servers}]}))
    return {"ge.experiment.data_flow_deploy_info_path": str(workdir / "deploy.json"),
            "ge.resourceConfigPath": str(workdir / "resources.json"), "dfir.runtime.cluster": "ray"}


def start_cluster() -> Cluster:
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "resources": {"dfir_server_0": 1}, "node_ip_address": "127.0.0.1",
        "include_dashboard": False, "object_store_memory": OBJECT_STORE_BYTES})
    cluster.add_node(num_cpus=1, resources={"dfir_server_1": 1}, node_ip_address="127.0.0.1",
                     object_store_memory=OBJECT_STORE_BYTES)
    cluster.wait_for_nodes(timeout=120)
    ray.init(address=cluster.address, log_to_driver=False)
    return cluster


def transfer_rounds(factories: list, optional: list, rounds: int, count: int) -> list[tuple[str, list[float]]]:
    """T64: each variant's milliseconds per 64 MiB message, sent one at a time, `count` per round,
    in rounds as runtime_throughput.measure runs them (`optional`: as there), after a message
    that does not count (the first touches every page its buffers get)."""
    variants = [measured for factory in factories
                if (measured := runtime_throughput.set_up(factory, factory in optional))]
    x = np.ones(T64_BYTES // 4, dtype=np.float32)
    try:
        runtime_throughput.run_rounds(variants, lambda m: runtime_throughput.latency_samples(m.pipeline, x, 1), 1)
        runtime_throughput.run_rounds(variants, lambda m: m.latencies.extend(
            runtime_throughput.latency_samples(m.pipeline, x, count)), rounds)
    finally:
        for measured in variants:
            if not measured.failed:
                measured.pipeline.close()
    return [(m.name, [us / 1000 for us in m.latencies]) for m in variants if not m.failed]


def report_transfers(found: list[tuple[str, list[float]]]) -> None:
    """T64's p50/p99 per variant, and each one's p50 against Ray actors'."""
    print("\nT64 one f32 64 MiB tensor at a time (two crossings between the servers each):")
    p50s = {}
    for name, samples in found:
        p50, p99 = runtime_throughput.percentiles(samples)
        p50s[name] = p50
        print(f"  {name:<28}p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  ({len(samples)} messages, "
              f"min-max {min(samples):.1f}-{max(samples):.1f} ms)  {T64_BYTES / p50 / 1e3:7.0f} MB/s of the p50")
    if "dfir on ray" in p50s and "ray actors" in p50s:
        print(f"  dfir on ray / ray actors, by p50 time: {p50s['ray actors'] / p50s['dfir on ray']:.2f}x as fast")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="a few messages per measurement, to check it runs")
    parser.add_argument("--rounds", type=int, help=f"W1 rounds per variant (default {FULL.rounds})")
    parser.add_argument("--w2-rounds", type=int, help=f"W2 and T64 rounds per variant (default {FULL.w2_rounds})")
    args = parser.parse_args()
    sizes = SMOKE if args.smoke else FULL
    rounds, w2_rounds = args.rounds or sizes.rounds, args.w2_rounds or sizes.w2_rounds
    cluster = start_cluster()
    try:
        with tempfile.TemporaryDirectory() as workdir:
            dfir_on_ray = lambda: DfirOnRay(Path(workdir))  # noqa: E731
            rows = runtime_throughput.measure([dfir_on_ray, PinnedActors], [PinnedActors], sizes, rounds, w2_rounds)
            transfers = transfer_rounds([dfir_on_ray, PinnedActors], [PinnedActors], w2_rounds,
                                        T64_MESSAGES[args.smoke])
            # The Compiled Graph runs alone, last: when it hangs, its teardown has crashed a raylet here
            # (which ends every other variant's driver).
            rows += runtime_throughput.measure([PinnedCompiledGraph], [PinnedCompiledGraph], sizes, rounds, w2_rounds)
    finally:
        ray.shutdown()
        cluster.shutdown()
    report(rows, rounds, w2_rounds, TARGETS)
    report_transfers(transfers)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
