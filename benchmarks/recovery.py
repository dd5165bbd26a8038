"""What a worker's death and a hung UDF cost a running pipeline (`dfir.runtime.recover` restart).

A FlowGraph of three `@pyflow` stages (relay on device 0:0:0, double on 0:0:1, relay on the host)
is compiled through the public API with a deploy file, loaded, and fed N transactions per round
from a thread while the main thread fetches them. In each round the worker of device 0:0:1 is
killed (SIGKILL) once half of the results are back. Per round it reports: how many transactions
failed (every one in flight at the kill: the runtime does not track which worker holds which),
the time from the kill to the first failure fetched ("surfaced"), and to the first result of a
transaction fed after it ("serves again"; nan when the feeder had fed everything by then); every result is checked (right value, or the worker
failure code; each transaction once). A second graph has `dfir.runtime.udf_timeout_ms` set on a
stage whose call hangs on one input: the time from feeding it to its timeout failure.

Run: python benchmarks/recovery.py [--messages N] [--rounds R] [--timeout-ms T] [--smoke]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import dfir
import dfir.dataflow as df

WAIT_MS = 30_000
WORKER_FAILED = 545000
TIMED_OUT = 564001
RESOURCES = {"cluster": [{"cluster_nodes": [{"node_id": 0, "node_type": "x86", "ipaddr": "127.0.0.1",
                                              "item_list": [{"item_id": 0}, {"item_id": 1}]}]}]}


@df.pyflow
def first_stage(x):
    return x


@df.pyflow
def middle_stage(x):
    return x * 2


@df.pyflow
def last_stage(x):
    return x


@df.pyflow
def hangs_on_minus_one(x):
    if int(x[0]) == -1:
        time.sleep(3600)
    return x


def options(folder: Path, placements: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    deploy, resources = folder / "deploy.json", folder / "resources.json"
    deploy.write_text(json.dumps({"batch_deploy_info": [{"flow_node_list": [name], "logic_device_list": devices}
                                                        for name, devices in placements.items()]}))
    resources.write_text(json.dumps(RESOURCES))
    return {"ge.experiment.data_flow_deploy_info_path": str(deploy), "ge.resourceConfigPath": str(resources),
            **extra}


def pid_of(model, device: str) -> int:
    return next(w["pid"] for w in model.stats()["workers"] if w["device"] == device)


def kill_round(model, messages: int, first_id: int) -> dict[str, float]:
    """One round: feed, kill 0:0:1 half way, fetch and check everything."""
    fed = [0]

    def feed():
        for i in range(messages):
            model.feed_data([np.array([i], np.int64)])
            fed[0] += 1
    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    seen: dict[int, int] = {}
    killed = surfaced = served = None
    fed_after = first_id + messages  # the first transaction fed after the kill
    for count in range(messages):
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        now = time.monotonic()
        tid = info.transaction_id
        assert tid not in seen, f"transaction {tid} came back twice"
        seen[tid] = int(ret)
        if ret == 0:
            assert tensors[0].numpy().tolist() == [2 * (tid - first_id)], tid
            if killed is not None and served is None and tid >= fed_after:
                served = now
        else:
            assert int(ret) == WORKER_FAILED, int(ret)
            if killed is not None and surfaced is None:
                surfaced = now
        if count + 1 == messages // 2:
            os.kill(pid_of(model, "0:0:1"), signal.SIGKILL)
            killed = time.monotonic()
            fed_after = first_id + fed[0] + 1
    feeder.join()
    assert sorted(seen) == list(range(first_id, first_id + messages)), "a transaction was lost"
    failed = sum(1 for r in seen.values() if r)
    return {"failed": failed,
            "surfaced_ms": 1000 * (surfaced - killed) if surfaced else float("nan"),
            "serves_again_ms": 1000 * (served - killed) if served else float("nan")}


def await_restarts(model, count: int) -> None:
    deadline = time.monotonic() + WAIT_MS / 1000
    while restarts_of(model) < count:
        assert time.monotonic() < deadline, "the worker was not restarted"
        time.sleep(0.001)


def restarts_of(model) -> int:
    return next(w["restarts"] for w in model.stats()["workers"] if w["device"] == "0:0:1")


def timeout_round(model, timeout_ms: int) -> float:
    started = time.monotonic()
    model.feed_data([np.array([-1], np.int64)])
    _, _, ret = model.fetch_data(timeout=WAIT_MS)
    assert int(ret) == TIMED_OUT, repr(ret)
    elapsed = 1000 * (time.monotonic() - started)
    model.feed_data([np.array([5], np.int64)])
    tensors, _, ret = model.fetch_data(timeout=WAIT_MS)
    assert ret == 0 and tensors[0].numpy().tolist() == [5]
    return elapsed


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.1f} (min {min(values):.1f}, max {max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--timeout-ms", type=int, default=200)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, for CI")
    args = parser.parse_args()
    if args.smoke:
        args.messages, args.rounds = 100, 2
    with tempfile.TemporaryDirectory() as folder:
        x = df.FlowData(name="x")
        graph = df.FlowGraph([last_stage.fnode()(middle_stage.fnode()(first_stage.fnode()(x)))], name="chain")
        chain = options(Path(folder), {"first_stage_fnode": "0:0:0", "middle_stage_fnode": "0:0:1",
                                       "last_stage_fnode": "-1"}, {})
        rounds = []
        with dfir.load(dfir.compile(graph, chain).om) as model:
            for r in range(args.rounds):
                rounds.append(kill_round(model, args.messages, 1 + r * args.messages))
                await_restarts(model, r + 1)  # a round can end before the monitor saw its kill
            restarts = restarts_of(model)
        print(f"kill the middle worker once per {args.messages} transactions, {args.rounds} rounds "
              f"(restarts counted: {restarts}); every transaction came back once, right or failed")
        for key in ("failed", "surfaced_ms", "serves_again_ms"):
            print(f"  {key:16s} {spread([r[key] for r in rounds])}")
        y = df.FlowData(name="y")
        hung = df.FlowGraph([hangs_on_minus_one.fnode()(y)], name="hung")
        limited = options(Path(folder), {"hangs_on_minus_one_fnode": "0:0:0"},
                          {"dfir.runtime.udf_timeout_ms": str(args.timeout_ms)})
        with dfir.load(dfir.compile(hung, limited).om) as model:
            times = [timeout_round(model, args.timeout_ms) for _ in range(max(2, args.rounds // 4))]
        print(f"a call hung with udf_timeout_ms={args.timeout_ms}: its timeout failure fetched after, ms: "
              f"{spread(times)}; the next transaction succeeded each time")


if __name__ == "__main__":
    main()
