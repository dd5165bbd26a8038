"""A feed or fetch that times out says what holds the model up: the transactions in flight, where
the oldest is, the node at work, the channels full or empty (runtime/driver/stall.py)."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

import dfir.dataflow as df
from dfir.runtime.driver.stall import ChannelState, StallSnapshot, describe_stall, id_ranges
from dfir.runtime.driver.status import FEED_TIMEOUT, FETCH_TIMEOUT

GATE = {"path": ""}  # a file whose existence lets `held` return; set before the model's workers fork


@df.pyflow
def held(x):
    while not os.path.exists(GATE["path"]):
        time.sleep(0.01)
    return x


@df.pyflow
def passed_on(x):
    return x


@pytest.fixture
def gate(tmp_path):
    GATE["path"] = str(tmp_path / "open")
    yield GATE["path"]
    open(GATE["path"], "w").close()  # whatever the test left held goes on, so the model closes
    df.finalize()


def feed(graph, value: int, timeout: int = 5000) -> int:
    return graph.feed_data({graph.inputs[0]: np.array([value], np.int32)}, timeout=timeout)


def test_a_fetch_that_times_out_names_the_node_at_work_on_the_oldest_transaction(gate):
    graph = df.FlowGraph([passed_on.fnode()(held.fnode()(df.FlowData(name="x")))])
    assert [feed(graph, k) for k in (1, 2, 3)] == [0, 0, 0]
    tensors, _, ret = graph.fetch_data(timeout=300)
    assert (tensors, ret) == ([], FETCH_TIMEOUT)
    assert ret.message == ("no result within 300 ms: 3 transactions in flight (1-3); the oldest, 1, is in no "
                           "channel: node 'held_fnode' (device host) is at work; full: none; empty: output 0")
    open(gate, "w").close()
    assert [int(graph.fetch_data(timeout=5000)[0][0].numpy()[0]) for _ in range(3)] == [1, 2, 3]


def test_a_feed_that_times_out_names_the_full_channel_and_what_it_holds(gate):
    graph = df.FlowGraph([held.fnode()(df.FlowData(name="x"))], {"dfir.runtime.channel_depth": "2"})
    assert feed(graph, 1) == 0
    time.sleep(0.3)  # the node takes 1 alone, and holds it
    assert [feed(graph, k) for k in (2, 3)] == [0, 0]
    ret = feed(graph, 4, timeout=200)
    assert ret == FEED_TIMEOUT
    assert ret.message == ("no room in the input channels within 200 ms: 3 transactions in flight (1-3); the "
                           "oldest, 1, is in no channel: node 'held_fnode' (device host) is at work; full: input 0 "
                           "of node 'held_fnode' (device host) (2 of 2: 2-3)")


def test_a_poll_that_finds_nothing_says_only_that():
    graph = df.FlowGraph([passed_on.fnode()(df.FlowData(name="x"))])
    try:
        assert feed(graph, 1) == 0 and graph.fetch_data(timeout=5000)[2] == 0
        _, _, ret = graph.fetch_data(timeout=0)
        assert (ret, ret.message) == (FETCH_TIMEOUT, "no result within 0 ms")
        _, _, ret = graph.fetch_data(timeout=50)
        assert ret.message == "no result within 50 ms: no transaction is in flight; full: none; empty: output 0"
    finally:
        df.finalize()


def channel(label, size=0, capacity=4, transactions=()):
    return ChannelState(label, size, capacity, transactions)


def test_the_oldest_transaction_waiting_in_a_channel_is_named_with_it_and_the_nodes_at_work():
    snapshot = StallSnapshot((7, 8, 9), (channel("input 1 of node 'join' (device 0:0:1)", 1, 4, (7,)),
                                         channel("input 0 of node 'join' (device 0:0:1)"),
                                         channel("output 0")),
                             ("node 'a' (device host)", "node 'b' (device 0:0:0)"), (2,))
    assert describe_stall(snapshot) == (
        "3 transactions in flight (7-9); the oldest, 7, waits in input 1 of node 'join' (device 0:0:1); at work: "
        "node 'a' (device host), node 'b' (device 0:0:0); full: none; empty: output 0")


def test_a_transaction_in_no_channel_with_no_node_at_work_is_said_so_and_a_partial_view_too():
    snapshot = StallSnapshot((1,), (channel("input 0 of node 'n' (device host)", 4, 4, None), channel("output 0", 1)),
                             (), (1,), partial=True)
    assert describe_stall(snapshot) == (
        "1 transaction in flight (1); the oldest, 1, is in no channel and no node is at work; full: input 0 of "
        "node 'n' (device host) (4 of 4); the channels and nodes of other processes are not shown")


@pytest.mark.parametrize("ids, text", [
    ((), ""), ((5,), "5"), ((3, 1, 2), "1-3"), ((1, 2, 4, 6, 7), "1-2, 4, 6-7"),
    ((1, 3, 5, 7, 9, 10, 11), "1, 3, 5, 7 and 3 more"), ((2, 2, 3), "2-3"),
])
def test_transaction_ids_read_as_ranges(ids, text):
    assert id_ranges(ids) == text
