"""Throughput of a CPU-bound Python UDF on 1 device against 2 devices (2 instances).

The UDF does a few milliseconds of pure-Python work per message (`burn`), so one worker process
is bound by its core and the GIL: only instances in separate processes can go faster. The graph
is compiled twice through the public API, with a deploy file and a resource config (two
devices): once with the node on `0:0:0`, once on `0:0:0~1` (replicate-instances makes two
instances, round-robin by transaction id). Each run feeds N messages from a thread while the
main thread fetches them all (every value is checked after the clock stops); both layouts run
alternately, the best of the rounds counts, and the ratio is printed against the target (>= 1.6x
on a 2-core machine).

Run: python benchmarks/replication.py [--messages N] [--rounds R] [--smoke]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import dfir
import dfir.dataflow as df
from dfir.frontend.dataflow import names

TARGET_RATIO = 1.6
BURN_STEPS = 40_000  # about 2-5 ms of pure-Python work per message on this machine
WAIT_MS = 60_000
RESOURCES = {"cluster": [{"cluster_nodes": [{"node_id": 0, "node_type": "x86", "ipaddr": "127.0.0.1",
                                              "item_list": [{"item_id": 0}, {"item_id": 1}]}]}]}
LAYOUTS = {"1 device": "0:0:0", "2 devices (2 instances)": "0:0:0~1"}


def burn_steps(x, steps: int):
    """Pure-Python work that holds the GIL throughout; returns x plus a checksum bit."""
    total = 0
    for i in range(steps):
        total = (total + i * i) % 1_000_003
    return x + (total & 1)


@df.pyflow
def burn(x):
    return burn_steps(x, BURN_STEPS)


def compile_layout(folder: Path, devices: str):
    """The one-node graph compiled with `burn_fnode` deployed on `devices`."""
    names.reset()
    deploy = folder / f"deploy_{devices.replace(':', '_').replace('~', '-')}.json"
    deploy.write_text(json.dumps({"batch_deploy_info": [{"flow_node_list": ["burn_fnode"],
                                                         "logic_device_list": devices}]}))
    resources = folder / "resources.json"
    resources.write_text(json.dumps(RESOURCES))
    graph = df.FlowGraph([burn.fnode()(df.FlowData(name="x"))])
    return dfir.compile(graph, {"ge.experiment.data_flow_deploy_info_path": str(deploy),
                                "ge.resourceConfigPath": str(resources)})


def run_once(model, messages: int) -> float:
    """msg/s of feeding `messages` transactions (a feeder thread) and fetching them all; every
    value is checked once the clock stops (replicas finish out of order: they are compared as
    a set, each value appearing once)."""
    def feed() -> None:
        for t in range(messages):
            assert model.feed_data({"x": np.array([t], dtype=np.int64)}) == 0

    values = []
    start = time.perf_counter()
    feeder = threading.Thread(target=feed)
    feeder.start()
    for _ in range(messages):
        outputs, _, ret = model.fetch_data(timeout=WAIT_MS)
        if ret != 0:
            raise RuntimeError(f"fetch_data failed: {ret!r}")
        values.append(outputs[0].numpy())
    feeder.join()
    elapsed = time.perf_counter() - start
    check_values(values, messages)
    return messages / elapsed


def check_values(values: list[np.ndarray], messages: int) -> None:
    """`values` are burn's results of 0 .. messages-1, in any order; exits naming what is wrong."""
    bit = burn_steps(0, BURN_STEPS)
    wrong = [v for v in values if v.dtype != np.int64 or v.shape != (1,)]
    got = sorted(int(v[0]) for v in values)
    if wrong or got != [t + bit for t in range(messages)]:
        sys.exit(f"wrong results: {wrong[:3] or got[:10]} (expected {messages} values x + {bit})")


def per_message_ms() -> float:
    """The UDF's work per message, measured here (a plain call)."""
    start = time.perf_counter()
    for _ in range(5):
        burn_steps(0, BURN_STEPS)
    return (time.perf_counter() - start) / 5 * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, no target check")
    args = parser.parse_args()
    messages, rounds = (8, 1) if args.smoke else (args.messages, args.rounds)
    print(f"CPU-bound UDF: {per_message_ms():.2f} ms per message (plain call); {messages} messages, "
          f"best of {rounds} round(s); {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        compiled = {label: compile_layout(Path(tmp), devices) for label, devices in LAYOUTS.items()}
        models = {label: dfir.load(c.om) for label, c in compiled.items()}
        try:
            for model in models.values():
                run_once(model, 2)  # warm up: workers started, UDF unpickled
            best = {label: 0.0 for label in models}
            for _ in range(rounds):
                for label, model in models.items():
                    best[label] = max(best[label], run_once(model, messages))
        finally:
            for model in models.values():
                model.close()
    baseline, replicated = best.values()
    ratio = replicated / baseline
    print(f"{'layout':<26}{'msg/s':>10}{'ratio':>8}")
    for label, rate in best.items():
        print(f"{label:<26}{rate:>10.1f}{rate / baseline:>7.2f}x")
    verdict = "smoke run, not checked" if args.smoke else ("met" if ratio >= TARGET_RATIO else "NOT met")
    print(f"target: 2 instances >= {TARGET_RATIO}x 1 instance: {ratio:.2f}x ({verdict})")


if __name__ == "__main__":
    main()
