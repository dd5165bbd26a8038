"""A worker's `FiringPool`: a device with more than POOL_ABOVE lean loops runs them on one
thread. It gives what a thread per loop gives (every result, in order, errors per transaction),
never waits behind a full output while other members could run, and keeps the other funcs on
their threads. (The fast-path and fault tests run with the pool too: the `lean_executor` fixture.)"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.core.udf_payload import UdfPayload
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.worker import executor as worker

WAIT_MS = 10000


@df.pyflow
def inc(x):
    return x + 1


@df.pyflow
def add(a, b):
    return a + b


@df.pyflow
def threads_here(x):
    return np.array([threading.active_count()], np.int64)


def fan_out(width: int, node) -> df.FlowGraph:
    """`width` nodes reading one input, each a graph output."""
    x = df.FlowData(name="x")
    return df.FlowGraph([node.fnode()(x) for _ in range(width)])


def wide_sum(width: int, options=None) -> df.FlowGraph:
    """`width` incremented copies of x summed by a tree of adds: (x + 1) * width."""
    x = df.FlowData(name="x")
    layer = [inc.fnode()(x) for _ in range(width)]
    while len(layer) > 1:
        layer = [add.fnode()(layer[i], layer[i + 1]) for i in range(0, len(layer) - 1, 2)] + \
                ([layer[-1]] if len(layer) % 2 else [])
    return df.FlowGraph(layer, options)


@pytest.mark.parametrize("width, pooled", [(worker.POOL_ABOVE, False), (worker.POOL_ABOVE + 1, True)])
def test_a_device_pools_its_lean_loops_above_the_threshold(width, pooled):
    with dfir.load(dfir.compile(fan_out(width, threads_here)).om) as model:
        assert model.feed_data([np.zeros(1, np.int64)]) == 0
        outputs, _, ret = model.fetch_data(timeout=WAIT_MS)
    assert ret == 0 and len(outputs) == width
    counts = {int(t.numpy()[0]) for t in outputs}
    # the main thread, the pool's or one per node, and the native watch thread at most
    assert (max(counts) <= 3) if pooled else (min(counts) > width), counts


@pytest.mark.parametrize("width", [65, 200])
def test_a_pooled_wide_graph_computes_every_result_in_order(width):
    xs = [np.array([k, -k], np.int64) for k in range(150)]
    with dfir.load(dfir.compile(wide_sum(width, {"dfir.runtime.channel_depth": "4"})).om) as model:
        feeder = threading.Thread(target=lambda: [model.feed_data([x], timeout=WAIT_MS) for x in xs])
        feeder.start()
        results = [model.fetch_data(timeout=WAIT_MS) for _ in xs]
        feeder.join()
    assert [int(ret) for _, _, ret in results] == [0] * len(xs)
    assert [outputs[0].numpy().tolist() for outputs, _, _ in results] == [((x + 1) * width).tolist() for x in xs]
    assert [info.transaction_id for _, info, _ in results] == list(range(1, len(xs) + 1))


def test_a_full_output_does_not_stop_the_members_another_output_waits_for():
    """Output 0 is one node from the input, output 1 a hundred: with channels of depth 2, output 0
    fills long before output 1 has its first result, and `fetch_data` needs both."""
    x = df.FlowData(name="x")
    short = inc.fnode()(x)
    long = x
    for _ in range(100):
        long = add.fnode()(long, x)  # two inputs: no direct call, a pool member each
    graph = df.FlowGraph([short, long], {"dfir.runtime.channel_depth": "2"})
    xs = [np.array([k], np.int64) for k in range(40)]
    with dfir.load(dfir.compile(graph).om) as model:
        feeder = threading.Thread(target=lambda: [model.feed_data([v], timeout=WAIT_MS) for v in xs])
        feeder.start()
        results = [model.fetch_data(timeout=WAIT_MS) for _ in xs]
        feeder.join()
    assert [int(ret) for _, _, ret in results] == [0] * len(xs)
    assert [[t.numpy().tolist() for t in outputs] for outputs, _, _ in results] == [
        [[k + 1], [101 * k]] for k in range(len(xs))]


def plus_one(x):
    return x + 1


def fan_model(width: int) -> RuntimeModel:
    """`first` on device 0:0:1, then `width` nodes on the host each reading it, each an output."""
    def node(k, inputs, device):
        return {"name": f"n{k}", "alias": None, "loc": "test", "input_num": 1, "output_num": 1,
                "inputs": inputs, "device": device, "attrs": {},
                "pp": {"kind": "py_udf", "udf": 0, "funcs": [{"name": "plus_one", "inputs": [0], "outputs": [0],
                                                              "stream_input": False}]}}
    nodes = [node(0, [{"data": 0}], "0:0:1")] + [node(k, [{"node": 0, "port": 0}], "-1") for k in range(1, width + 1)]
    plan = {"format": 1, "name": "fan", "inputs": [{"name": "x", "index": 0, "dtype": None, "shape": None}],
            "outputs": [{"node": k, "port": 0} for k in range(1, width + 1)], "nodes": nodes,
            "order": list(range(width + 1)), "ge_graphs": [],
            "udfs": [{"partition": 0, "sha256": "0" * 64, "size": 0}]}
    return RuntimeModel(plan, [UdfPayload("function", plus_one).dumps()], None, "fan")


def test_pooled_nodes_fed_by_another_device_wake_the_pool():
    """The producers of the pool's inputs ring its doorbell: here a node of another device."""
    with fan_model(worker.POOL_ABOVE + 6) as model:
        for k in range(5):
            assert model.feed_data([np.array([k], np.int64)]) == 0
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(5)]
    assert [[int(t.numpy()[0]) for t in outputs] for outputs, _, _ in results] == [
        [k + 2] * (worker.POOL_ABOVE + 6) for k in range(5)]
