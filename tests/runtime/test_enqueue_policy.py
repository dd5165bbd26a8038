"""GE's flow attributes on a node: `_flow_attr_depth` bounds its input channels and
`_flow_attr_enqueue_policy` "OVERWRITE" makes a full one drop its oldest message, counted.

The end-to-end tests hold the node's UDF on its first message (a gate file) so that what the
channel holds, drops or refuses is exact."""
from __future__ import annotations

import logging
import os
import re
import time

import numpy as np
import pytest

import dfir.dataflow as df
from dfir.core.messages import Message, TransactionMeta
from dfir.ge.error import GeError
from dfir.om.flow_attrs import QueueAttrs, queue_attrs
from dfir.runtime import channels
from dfir.runtime.channels import READY, TIMEOUT, ChannelSpec
from dfir.runtime.driver.process_scheduler import plan_wiring
from dfir.runtime.driver.status import FEED_TIMEOUT

WAIT_MS = 10000
BIG = 4096  # float64 elements: above INLINE_BYTES, so the body is an arena block


# -- set_attr checks --------------------------------------------------------------------------

@pytest.mark.parametrize("name, value, expected", [
    ("_flow_attr_depth", 0, "attribute _flow_attr_depth must be an int in [2, 65536] (the depth of the "
                            "node's input channels, in messages), got 0"),
    ("_flow_attr_depth", 1, "got 1"),
    ("_flow_attr_depth", -3, "must be an int in [2, 65536] (the depth of the node's input channels, in "
                             "messages), got -3"),
    ("_flow_attr_depth", 65537, "got 65537"),
    ("_flow_attr_depth", True, "got True"),
    ("_flow_attr_depth", "8", "got '8'"),
    ("_flow_attr_enqueue_policy", "LIFO",
     "attribute _flow_attr_enqueue_policy must be one of ['FIFO', 'OVERWRITE'], got 'LIFO'"),
    ("_flow_attr_enqueue_policy", "overwrite", "must be one of ['FIFO', 'OVERWRITE'], got 'overwrite'"),
    ("_flow_attr_enqueue_policy", 1, "must be one of ['FIFO', 'OVERWRITE'], got 1"),
    ("_flow_attr", "yes", "attribute _flow_attr must be a bool, got 'yes'"),
])
def test_a_bad_flow_attribute_is_refused_naming_the_valid_values(name, value, expected):
    node = df.FlowNode(1, 1, name="queued")
    with pytest.raises(GeError, match="node queued .*" + _escaped(expected)):
        node.set_attr(name, value)
    assert name not in node.attrs


def _escaped(text: str) -> str:
    return re.escape(text)


def test_good_flow_attributes_are_kept():
    node = df.FlowNode(1, 1)
    node.set_attr("_flow_attr", True)
    node.set_attr("_flow_attr_depth", 108)
    node.set_attr("_flow_attr_enqueue_policy", "OVERWRITE")
    assert node.attrs == {"_flow_attr": True, "_flow_attr_depth": 108, "_flow_attr_enqueue_policy": "OVERWRITE"}
    assert queue_attrs(node.attrs, "n") == QueueAttrs(108, True)


def test_flow_attr_false_keeps_the_defaults_and_says_so(caplog):
    attrs = {"_flow_attr": False, "_flow_attr_depth": 4, "_flow_attr_enqueue_policy": "OVERWRITE"}
    with caplog.at_level(logging.WARNING, logger="dfir.flow_attrs"):
        assert queue_attrs(attrs, "node 'n'") == QueueAttrs()
    assert ("node 'n': _flow_attr False, so _flow_attr_depth and _flow_attr_enqueue_policy take no "
            "effect (the channels keep the model's defaults)") in caplog.text


def test_defaults_and_fifo_attributes():
    assert queue_attrs({}, "n") == QueueAttrs(None, False)
    assert queue_attrs({"_flow_attr_enqueue_policy": "FIFO", "_flow_attr_depth": 3}, "n") == QueueAttrs(3, False)


def _plan(attrs: dict) -> dict:
    """A plan of graph input -> node `first` -> node `second` (attributes `attrs`) -> output."""
    def node(name, source):
        return {"name": name, "alias": None, "loc": "test", "input_num": 1, "output_num": 1, "inputs": [source],
                "dispatch": "round_robin", "balance": None, "align": None, "invokes": {},
                "attrs": attrs if name == "second" else {},
                "pp": {"kind": "py_udf", "udf": 0, "funcs": [{"name": "f", "inputs": [0], "outputs": [0],
                                                              "stream_input": False}]}}
    return {"format": 2, "name": "test", "inputs": [{"name": "i0", "index": 0, "dtype": None, "shape": None}],
            "outputs": [{"node": 1, "port": 0}], "nodes": [node("first", {"data": 0}),
                                                           node("second", {"node": 0, "port": 0})],
            "units": [{"node": 0, "instance": 0, "device": "-1"}, {"node": 1, "instance": 0, "device": "-1"}],
            "order": [0, 1], "udfs": [{"partition": 0, "sha256": "0" * 64, "size": 0}], "ge_graphs": []}


def test_the_wiring_gives_the_nodes_input_channels_its_depth_and_policy():
    wiring = plan_wiring(_plan({"_flow_attr_depth": 5, "_flow_attr_enqueue_policy": "OVERWRITE"}), "w", 8)
    # first's input, second's input, the graph output
    assert [(spec.capacity, spec.overwrite) for spec in wiring.channel_specs] == [(8, False), (5, True), (8, False)]
    assert wiring.overwrite_channels == ((1, "node 'second' input 0"),)
    off = plan_wiring(_plan({"_flow_attr": False, "_flow_attr_enqueue_policy": "OVERWRITE"}), "w", 8)
    assert [(spec.capacity, spec.overwrite) for spec in off.channel_specs] == [(8, False)] * 3


def test_a_plan_with_a_bad_flow_attribute_is_refused_at_load():
    with pytest.raises(GeError, match=r"node 'second': attribute _flow_attr_enqueue_policy must be one of "
                                      r"\['FIFO', 'OVERWRITE'\], got 'DROP'"):
        plan_wiring(_plan({"_flow_attr_enqueue_policy": "DROP"}), "w", 8)
    with pytest.raises(GeError, match=r"node 'second': attribute _flow_attr_depth must be an int in "
                                      r"\[2, 65536\]"):
        plan_wiring(_plan({"_flow_attr_depth": 0}), "w", 8)


# -- channels ---------------------------------------------------------------------------------

def _message(i: int, size: int) -> Message:
    return Message.tensor(TransactionMeta(i), np.full(size, i, dtype=np.float64))


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("size", [2, BIG])
def test_an_overwrite_channel_drops_its_oldest_messages_and_counts_them(shared, size):
    region = channels.open_region(2, [ChannelSpec(shared, 3, 1, overwrite=True)], 1, 64 << 20, "ow")
    assert region.overwrites(0)
    for i in range(10):
        assert region.put([(0, _message(i, size))], 0) == READY  # never waits
    assert (region.dropped(0), region.size(0)) == (7, 3)
    sets = region.take([0], 1, 10, 0)
    assert [message.meta.transaction_id for (message,) in sets] == [7, 8, 9]
    assert [float(message.payload[0]) for (message,) in sets] == [7.0, 8.0, 9.0]
    del sets
    assert region.arena_stats()["live_blocks"] == 0  # the dropped bodies were given back


def test_a_fifo_channel_holds_its_capacity_and_then_refuses():
    region = channels.open_region(2, [ChannelSpec(True, 3, 1)], 1, 64 << 20, "fifo")
    assert not region.overwrites(0)
    assert [region.put([(0, _message(i, 2))], 0) for i in range(4)] == [READY, READY, READY, TIMEOUT]
    assert region.dropped(0) == 0
    assert [m.meta.transaction_id for (m,) in region.take([0], 1, 10, 0)] == [0, 1, 2]


def test_a_put_to_an_overwrite_and_a_full_fifo_channel_waits_for_the_fifo_one():
    region = channels.open_region(2, [ChannelSpec(True, 1, 1, overwrite=True), ChannelSpec(True, 1, 1)],
                                  1, 64 << 20, "mixed")
    assert region.put([(0, _message(0, 2)), (1, _message(0, 2))], 0) == READY
    assert region.put([(0, _message(1, 2)), (1, _message(1, 2))], 50) == TIMEOUT
    assert region.dropped(0) == 0  # all or nothing: nothing was put, so nothing was dropped


# -- a model ----------------------------------------------------------------------------------

@df.pyflow
def passed_on(x):
    return x


def _gated_graph(tmp_path, behind_a_node: bool = False, **attrs):
    """A graph whose node `held` holds its first message until `gate` exists (it creates
    `started` once it holds it) and passes every message on; fed directly, or `behind_a_node`
    that passes the feed on (a channel between two nodes of one worker)."""
    started, gate = str(tmp_path / "started"), str(tmp_path / "gate")

    @df.pyflow
    def held(x):
        if not os.path.exists(started):
            open(started, "w").close()
            deadline = time.monotonic() + WAIT_MS / 1000
            while not os.path.exists(gate) and time.monotonic() < deadline:
                time.sleep(0.002)
        return x
    data = df.FlowData()
    node = held.fnode()
    for name, value in attrs.items():
        node.set_attr(name, value)
    graph = df.FlowGraph([node(passed_on.fnode()(data) if behind_a_node else data)])
    return graph, data, started, gate


def _feed(graph, data, i: int, timeout: int = WAIT_MS) -> int:
    return graph.feed_data({data: np.array([i], dtype=np.int64)}, timeout=timeout)


def _await(path: str) -> None:
    deadline = time.monotonic() + WAIT_MS / 1000
    while not os.path.exists(path):
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.002)


def _fetched(graph, count: int) -> list[int]:
    values = []
    for _ in range(count):
        outputs, _, ret = graph.fetch_data(timeout=WAIT_MS)
        assert ret == 0
        values.append(int(outputs[0].numpy()[0]))
    return values


def _await_dropped(model, expected: dict) -> None:
    deadline = time.monotonic() + WAIT_MS / 1000
    while model.dropped_messages() != expected:
        assert time.monotonic() < deadline, f"dropped {model.dropped_messages()}, expected {expected}"
        time.sleep(0.002)


@pytest.mark.parametrize("behind_a_node", [False, True])
def test_overwrite_drops_the_oldest_messages_under_a_slow_consumer(tmp_path, caplog, behind_a_node):
    graph, data, started, gate = _gated_graph(tmp_path, behind_a_node, _flow_attr_depth=2,
                                              _flow_attr_enqueue_policy="OVERWRITE")
    assert _feed(graph, data, 0) == 0
    _await(started)  # the node holds message 0; its input channel is empty
    assert [_feed(graph, data, i, timeout=0) for i in range(1, 7)] == [0] * 6  # none waits
    model = graph._model
    _await_dropped(model, {"node 'held_fnode' input 0": 4})  # behind a node: once it passed all on
    assert model.dropped_messages() == {"node 'held_fnode' input 0": 4}
    open(gate, "w").close()
    assert _fetched(graph, 3) == [0, 5, 6]  # 1 to 4 were the oldest when the channel was full
    with caplog.at_level(logging.WARNING, logger="dfir.runtime"):
        model.close()
    assert ("node 'held_fnode' input 0 (OVERWRITE) dropped its 4 oldest messages when full"
            in caplog.text)


def test_depth_bounds_what_a_fifo_input_channel_holds(tmp_path):
    graph, data, started, gate = _gated_graph(tmp_path, _flow_attr_depth=2)
    assert _feed(graph, data, 0) == 0
    _await(started)
    assert [_feed(graph, data, i, timeout=0) for i in (1, 2)] == [0, 0]
    assert _feed(graph, data, 3, timeout=100) == FEED_TIMEOUT  # the channel holds 2
    model = graph._model
    assert model.dropped_messages() == {}
    open(gate, "w").close()
    assert _fetched(graph, 3) == [0, 1, 2]
    model.close()
