"""Input alignment: the native aligner on its own, and a func with `align` pairing replicated
producers that finish out of order (the seed's scenario), cache overflow and timeout."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dfir
import dfir.dataflow as df
from dfir.frontend.flow_func.status import FLOW_FUNC_ERR_DATA_ALIGN_FAILED
from dfir.ge.error import GeError
from dfir.runtime import channels
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.driver.status import FETCH_TIMEOUT
from test_replication import TWO_DEVICES, WAIT_MS, data, deploy_files, fetch_all, fn_payload, fn_pp, \
    make_plan, node_entry, out

# -- the native aligner ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(inputs=st.integers(1, 4), keys=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), min_size=1,
                                              max_size=12, unique=True), data_=st.data())
def test_every_complete_group_comes_out_once_whatever_the_arrival_order(inputs, keys, data_):
    arrivals = data_.draw(st.permutations([(key, j) for key in keys for j in range(inputs)]))
    aligner = channels.Aligner(inputs, len(keys), -1, False)
    completed = []
    for (tid, label), j in arrivals:
        done, evicted = aligner.push(j, tid, label, (tid, label, j), 0)
        assert evicted is None
        if done is not None:
            completed.append(done)
    assert sorted(completed) == sorted(tuple((tid, label, j) for j in range(inputs)) for tid, label in keys)
    assert aligner.held == 0


def test_a_new_group_beyond_the_cache_evicts_the_oldest():
    aligner = channels.Aligner(2, 2, -1, True)
    assert aligner.push(0, 1, 0, "a1", 0) == (None, None)
    assert aligner.push(1, 2, 0, "b2", 1) == (None, None)
    assert aligner.push(0, 3, 0, "a3", 2) == (None, (1, 0, ("a1", None)))
    assert aligner.push(0, 2, 0, "a2", 3) == (("a2", "b2"), None)
    assert (aligner.held, aligner.dropout, aligner.max_groups) == (1, True, 2)


def test_groups_expire_at_their_deadline_oldest_first():
    aligner = channels.Aligner(2, 8, 100, False)
    assert aligner.next_deadline() is None
    aligner.push(0, 1, 7, "a", 0)
    aligner.push(1, 2, 7, "b", 50)
    assert aligner.next_deadline() == 100
    assert aligner.expire(99) == []
    assert aligner.expire(100) == [(1, 7, ("a", None))]
    assert aligner.next_deadline() == 150
    assert aligner.clear() == [(2, 7, (None, "b"))]


def test_without_a_timeout_nothing_expires():
    aligner = channels.Aligner(2, 8, -1, False)
    aligner.push(0, 1, 0, "a", 0)
    assert (aligner.expire(10 ** 12), aligner.next_deadline(), aligner.held) == ([], None, 1)


def test_a_repeated_key_on_one_input_opens_a_second_group():
    aligner = channels.Aligner(2, 8, -1, False)
    aligner.push(0, 1, 0, "a", 0)
    aligner.push(0, 1, 0, "b", 0)
    assert aligner.push(1, 1, 0, "c", 0) == (("a", "c"), None)
    assert aligner.push(1, 1, 0, "d", 0) == (("b", "d"), None)


def test_groups_are_keyed_by_transaction_and_data_label():
    aligner = channels.Aligner(2, 8, -1, False)
    aligner.push(0, 1, 1, "a1", 0)
    aligner.push(1, 1, 2, "b2", 0)
    assert aligner.push(1, 1, 1, "b1", 0) == (("a1", "b1"), None)


@pytest.mark.parametrize("args, expected", [
    ((0, 1, -1, False), "an aligner needs at least 1 input, got 0"),
    ((2, 0, -1, False), "an aligner needs a cache of at least 1 group, got 0"),
    ((2, 1, 0, False), "an aligner's timeout must be -1 (never) or > 0 ms, got 0"),
    ((2, 1, -5, False), "an aligner's timeout must be -1 (never) or > 0 ms, got -5"),
])
def test_aligner_arguments_are_checked(args, expected):
    with pytest.raises(GeError) as caught:
        channels.Aligner(*args)
    assert caught.value.error_message == expected


def test_a_push_on_an_unknown_input_is_refused():
    with pytest.raises(GeError) as caught:
        channels.Aligner(2, 1, -1, False).push(2, 1, 0, "x", 0)
    assert caught.value.error_message == "aligner input 2 is out of range; it has 2 inputs"


# -- the dispatcher -------------------------------------------------------------------------------

def test_dispatch_by_transaction_or_route_label():
    round_robin = channels.InstanceDispatcher(3)
    by_label = channels.InstanceDispatcher(3, "route_label")
    assert [round_robin.route(t, 2) for t in range(5)] == [0, 1, 2, 0, 1]
    assert [by_label.route(7, label) for label in range(6)] == [1, 0, 1, 2, 0, 1]
    assert (by_label.rule, round_robin.rule, by_label.instances) == ("route_label", "round_robin", 3)
    with pytest.raises(GeError) as caught:
        channels.InstanceDispatcher(2, "random")
    assert caught.value.error_message == "dispatch rule 'random' is unknown; expected 'round_robin' or 'route_label'"
    with pytest.raises(GeError) as caught:
        channels.InstanceDispatcher(0)
    assert caught.value.error_message == "a dispatcher needs at least 1 instance, got 0"


# -- the seed's scenario: X feeds A and B, both replicated; C pairs them ----------------------------

def same(x):
    return x


def a_late_on_even(x):
    """Instance 0 of A (even transactions) finishes late, so A emits odd transactions first."""
    time.sleep(0.3 if x[0] % 2 == 0 else 0.0)
    return x


def b_late_on_odd(x):
    """Instance 1 of B (odd transactions) finishes late, so B emits even transactions first."""
    time.sleep(0.3 if x[0] % 2 == 1 else 0.0)
    return x


def a_shuffled(x):
    time.sleep(0.01 * ((x[0] * 7 + os.getpid()) % 5))
    return x


def b_shuffled(x):
    time.sleep(0.01 * ((x[0] * 3 + os.getpid()) % 4))
    return x


def pair(a, b):
    return np.concatenate([a, b])


@df.pyflow
def same_flow(x):
    return x


@df.pyflow
def pair_flow(a, b):
    return pair(a, b)


def seed_scenario(a_fn, b_fn, align):
    """X (host) -> A, B (2 instances each) -> C (2 inputs, `align`); C's output is the graph's."""
    nodes = [node_entry("X", [data(0)], 1, fn_pp(0, same, [0], [0])),
             node_entry("A", [out(0)], 1, fn_pp(1, a_fn, [0], [0]), TWO_DEVICES),
             node_entry("B", [out(0)], 1, fn_pp(2, b_fn, [0], [0]), TWO_DEVICES),
             node_entry("C", [out(1), out(2)], 1, fn_pp(3, pair, [0, 1], [0]), align=align)]
    payloads = [fn_payload(fn) for fn in (same, a_fn, b_fn, pair)]
    return RuntimeModel(make_plan(1, nodes, [out(3)]), payloads, None, "seed")


@pytest.mark.parametrize("a_fn, b_fn, count", [(a_late_on_even, b_late_on_odd, 2), (a_shuffled, b_shuffled, 24)])
def test_alignment_pairs_outputs_that_replicas_finish_out_of_order(a_fn, b_fn, count, tmp_path):
    """The seed's scenario compiled from a FlowGraph with a deploy file and input alignment."""
    x = same_flow.fnode()(df.FlowData(name="x"))
    a_node, b_node = df.pyflow(a_fn).fnode(), df.pyflow(b_fn).fnode()
    graph = df.FlowGraph([pair_flow.fnode()(a_node(x), b_node(x))])
    graph.set_inputs_align_attrs(256, -1, False)
    options = deploy_files(tmp_path, {"same_flow_fnode": "-1", a_node.name: "0:0:0~1", b_node.name: "0:0:0~1",
                                      "pair_flow_fnode": "-1"})
    with dfir.load(dfir.compile(graph, options).om) as model:
        assert model._scheduler.devices == ("-1", "0:0:0", "0:0:1")
        for t in range(1, count + 1):
            model.feed_data([np.array([t])])
        results = fetch_all(model, count)
    assert {t: v[0].tolist() for t, v in results.items()} == {t: [t, t] for t in range(1, count + 1)}


def test_alignment_pairs_the_inputs_of_a_ge_graph_node(tmp_path):
    """C may be a GE graph: it takes both inputs at once, so alignment pairs them too."""
    from dfir import data_type as dt
    from dfir.ge.graph import Graph
    adder = Graph("adder")
    adder.set_outputs([adder.add(adder.data(0, shape=[1], dtype=dt.DT_INT64, name="a"),
                                 adder.data(1, shape=[1], dtype=dt.DT_INT64, name="b"))])
    x = same_flow.fnode()(df.FlowData(name="x"))
    a_node, b_node = df.pyflow(a_late_on_even).fnode(), df.pyflow(b_late_on_odd).fnode()
    c_node = df.GraphProcessPoint(df.Framework.ONNX, adder).fnode(2, 1, name="C")
    graph = df.FlowGraph([c_node(a_node(x), b_node(x))])
    graph.set_inputs_align_attrs(16, -1, False)
    options = deploy_files(tmp_path, {"same_flow_fnode": "-1", a_node.name: "0:0:0~1",
                                      b_node.name: "0:0:0~1", "C": "-1"})
    with dfir.load(dfir.compile(graph, options).om) as model:
        for t in (1, 2):  # A emits 1 before 2, B emits 2 before 1: FIFO pairing would add 1 + 2 twice
            model.feed_data([np.array([t])])
        results = fetch_all(model, 2)
    assert {t: v[0].tolist() for t, v in results.items()} == {1: [2], 2: [4]}


def two_outputs(tmp_path, align):
    """X feeds A and B (2 instances each, finishing in opposite orders); both are graph outputs."""
    x = same_flow.fnode()(df.FlowData(name="x"))
    a_node, b_node = df.pyflow(a_late_on_even).fnode(), df.pyflow(b_late_on_odd).fnode()
    graph = df.FlowGraph([a_node(x), b_node(x)])
    if align:
        graph.set_inputs_align_attrs(*align)
    options = deploy_files(tmp_path, {"same_flow_fnode": "-1", a_node.name: "0:0:0~1", b_node.name: "0:0:0~1"})
    return dfir.load(dfir.compile(graph, options).om)


def test_alignment_pairs_graph_outputs_that_replicas_finish_out_of_order(tmp_path):
    with two_outputs(tmp_path, (16, -1, False)) as model:
        for t in (1, 2):  # A emits 1 before 2, B emits 2 before 1: the channels' heads differ
            model.feed_data([np.array([t])])
        results = fetch_all(model, 2)
        assert {t: [v.tolist() for v in vs] for t, vs in results.items()} == {1: [[1], [1]], 2: [[2], [2]]}
        model.feed_data([np.array([3])])
        tensors, info, ret = model.fetch_data([1], timeout=WAIT_MS)  # one output: nothing to pair
        assert (ret, info.transaction_id, tensors[0].numpy().tolist()) == (0, 3, [3])


def test_graph_outputs_past_the_alignment_timeout_fail_their_transaction(tmp_path):
    with two_outputs(tmp_path, (16, 100, False)) as model:
        model.feed_data([np.array([1])])
        assert model.fetch_data([1], timeout=WAIT_MS)[2] == 0  # take B's output away: A's never pairs
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert (tensors, info.transaction_id, int(ret)) == ([], 1, FLOW_FUNC_ERR_DATA_ALIGN_FAILED)
        assert ret.message == ("graph outputs: transaction 1 data label 0 was not aligned: the alignment "
                               "timeout of 100 ms passed before output(s) 1 arrived")


def fetch_pairs(model, count):
    """`count` results as sorted [transaction id, a, b] rows (ids may repeat when mispaired)."""
    rows = []
    for _ in range(count):
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert ret == 0, repr(ret)
        rows.append([info.transaction_id] + tensors[0].numpy().tolist())
    return sorted(rows)


def test_without_alignment_fifo_pairing_mixes_transactions_up():
    with seed_scenario(a_late_on_even, b_late_on_odd, None) as model:
        model.feed_data([np.array([1])])
        model.feed_data([np.array([2])])
        # A emits 1 then 2, B emits 2 then 1: C pairs them in arrival order (the later id wins)
        assert fetch_pairs(model, 2) == [[2, 1, 2], [2, 2, 1]]


def b_skips_first(x):
    if x[0] != 1:
        yield x


def one_sided_model(align):
    """A passes every transaction, B drops transaction 1: C's group for 1 never completes."""
    nodes = [node_entry("A", [data(0)], 1, fn_pp(0, same, [0], [0])),
             node_entry("B", [data(0)], 1, fn_pp(1, b_skips_first, [0], [0])),
             node_entry("C", [out(0), out(1)], 1, fn_pp(2, pair, [0, 1], [0]), align=align)]
    payloads = [fn_payload(fn) for fn in (same, b_skips_first, pair)]
    return RuntimeModel(make_plan(1, nodes, [out(2)]), payloads, None, "onesided")


def test_a_group_pushed_out_of_the_cache_fails_its_transaction():
    with one_sided_model({"cache": 1, "timeout": -1, "dropout": False}) as model:
        model.feed_data([np.array([1])])
        assert model.fetch_data(timeout=200)[2] == FETCH_TIMEOUT  # held: no timeout, cache not full
        model.feed_data([np.array([2])])
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert (tensors, info.transaction_id, int(ret)) == ([], 1, FLOW_FUNC_ERR_DATA_ALIGN_FAILED)
        assert ret.message == ("node 'C' func 'pair': transaction 1 data label 0 was not aligned: the alignment "
                               "cache of 1 groups overflowed before input(s) 1 arrived")
        assert {t: v[0].tolist() for t, v in fetch_all(model, 1).items()} == {2: [2, 2]}


def test_a_group_pushed_out_of_the_cache_is_dropped_with_dropout():
    with one_sided_model({"cache": 1, "timeout": -1, "dropout": True}) as model:
        model.feed_data([np.array([1])])
        model.feed_data([np.array([2])])
        assert {t: v[0].tolist() for t, v in fetch_all(model, 1).items()} == {2: [2, 2]}
        assert model.fetch_data(timeout=200)[2] == FETCH_TIMEOUT


def test_a_group_past_the_timeout_fails_its_transaction():
    with one_sided_model({"cache": 8, "timeout": 100, "dropout": False}) as model:
        model.feed_data([np.array([1])])
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert (tensors, info.transaction_id, int(ret)) == ([], 1, FLOW_FUNC_ERR_DATA_ALIGN_FAILED)
        assert ret.message == ("node 'C' func 'pair': transaction 1 data label 0 was not aligned: the alignment "
                               "timeout of 100 ms passed before input(s) 1 arrived")
        model.feed_data([np.array([2])])
        assert {t: v[0].tolist() for t, v in fetch_all(model, 1).items()} == {2: [2, 2]}


def test_a_group_past_the_timeout_is_dropped_with_dropout():
    with one_sided_model({"cache": 8, "timeout": 100, "dropout": True}) as model:
        model.feed_data([np.array([1])])
        assert model.fetch_data(timeout=400)[2] == FETCH_TIMEOUT
        model.feed_data([np.array([2])])
        assert {t: v[0].tolist() for t, v in fetch_all(model, 1).items()} == {2: [2, 2]}


def test_a_cache_of_zero_turns_alignment_off():
    with seed_scenario(a_late_on_even, b_late_on_odd, {"cache": 0, "timeout": -1, "dropout": False}) as model:
        model.feed_data([np.array([1])])
        model.feed_data([np.array([2])])
        assert fetch_pairs(model, 2) == [[2, 1, 2], [2, 2, 1]]
