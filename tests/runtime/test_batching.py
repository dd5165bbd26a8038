"""Input batching (`map_input` with TimeBatch / CountBatch): the batchers on their own, each
parameter and error path, the FlowInfo a batch carries, and whole graphs fed the users' way."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dfir
import dfir.dataflow as df
from dfir.core.batching import CountBatchSpec, TimeBatchSpec
from dfir.core.messages import Kind, Message, TransactionMeta
from dfir.frontend.dataflow import names
from dfir.frontend.flow_func.status import FLOW_FUNC_ERR_PARAM_INVALID
from dfir.ge.error import GeError
from dfir.lowering.plan import lower_graph
from dfir.om.plan import InputBatch, NodeRef, Plan, Unit
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.driver.process_scheduler import WORKER_FAILED
from dfir.runtime.worker.batching import BatchPoint, CountBatcher, TimeBatcher, with_batch_nodes
from test_replication import TWO_DEVICES, data, fetch_all, fn_payload, fn_pp, make_plan, node_entry, out

EOS, SEG = int(df.FlowFlag.DATA_FLOW_FLAG_EOS), int(df.FlowFlag.DATA_FLOW_FLAG_SEG)


def tensor(tid: int, value, start: int = 0, end: int = 0, flags: int = 0, label: int = 0) -> Message:
    meta = TransactionMeta(tid, start, end, flags)
    return Message(meta, Kind.TENSOR, np.asarray(value, np.int32), data_label=label)


def values(outputs: list[Message]) -> list:
    return [m.payload.tolist() for m in outputs]


# -- CountBatch -----------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(size=st.integers(1, 6), data=st.data(), count=st.integers(0, 30))
def test_count_batches_slide_by_their_stride_and_lose_nothing(size, data, count):
    stride = data.draw(st.integers(0, size))
    batcher = CountBatcher("n", CountBatchSpec(size, stride))
    outputs = [o for i in range(count) for o in batcher.push(tensor(i + 1, [i]), 0.0)]
    step = stride or size
    expected = [[[i] for i in range(first, first + size)] for first in range(0, count - size + 1, step)]
    assert values(outputs) == expected
    # each batch is its newest input's transaction
    assert [o.meta.transaction_id for o in outputs] == [first + size for first in range(0, count - size + 1, step)]


def test_a_count_batch_times_out_as_it_is_or_zero_padded():
    plain = CountBatcher("n", CountBatchSpec(4, timeout=100))
    padded = CountBatcher("n", CountBatchSpec(4, timeout=100, padding=True))
    for batcher in (plain, padded):
        assert batcher.wait_seconds(0.0) is None  # no batch started: wait for input
        assert batcher.push(tensor(1, [1, 1]), 10.0) == []
        assert batcher.push(tensor(2, [2, 2]), 10.05) == []
        assert batcher.wait_seconds(10.05) == pytest.approx(0.05)
        assert batcher.expire(10.09) == []  # not yet
    assert values(plain.expire(10.1)) == [[[1, 1], [2, 2]]]
    assert values(padded.expire(10.1)) == [[[1, 1], [2, 2], [0, 0], [0, 0]]]
    assert plain.wait_seconds(10.2) is None  # the batch went out whole: the timer stops


def test_after_a_timeout_a_sliding_window_keeps_its_real_messages_only():
    batcher = CountBatcher("n", CountBatchSpec(4, slide_stride=1, timeout=50, padding=True))
    for i in range(3):
        batcher.push(tensor(i + 1, [i]), 0.0)
    assert values(batcher.expire(0.05)) == [[[0], [1], [2], [0]]]
    assert batcher.wait_seconds(0.05) == pytest.approx(0.05)  # restarted for the rest
    assert values(batcher.push(tensor(4, [3]), 0.06)) == []
    assert values(batcher.push(tensor(5, [4]), 0.07)) == [[[1], [2], [3], [4]]]


def test_without_a_timeout_a_count_batch_waits_for_a_full_batch():
    batcher = CountBatcher("n", CountBatchSpec(3, padding=True))
    batcher.push(tensor(1, [1]), 0.0)
    assert batcher.wait_seconds(1e9) is None
    assert batcher.expire(1e9) == []


def test_a_count_batch_refuses_what_cannot_join_it_and_keeps_its_batch():
    batcher = CountBatcher("n", CountBatchSpec(2))
    batcher.push(tensor(1, [1, 1]), 0.0)
    wrong_shape, = batcher.push(tensor(2, [1, 2, 3]), 0.0)
    wrong_dtype, = batcher.push(Message.tensor(TransactionMeta(3), np.zeros(2, np.float32)), 0.0)
    obj, = batcher.push(Message(TransactionMeta(4), Kind.OBJECT, {"a": 1}), 0.0)
    assert (wrong_shape.ret_code, wrong_shape.meta.transaction_id) == (FLOW_FUNC_ERR_PARAM_INVALID, 2)
    assert wrong_shape.error == "node 'n': CountBatch: a tensor of shape (3,) cannot join a batch of (2,)"
    assert wrong_dtype.error == "node 'n': CountBatch: a tensor of dtype float32 cannot join a batch of int32"
    assert obj.error == "node 'n': CountBatch: a object message cannot be batched, only tensors"
    failed = Message.failure(TransactionMeta(5), 7, "upstream")
    assert batcher.push(failed, 0.0) == [failed]  # an error message passes at once
    assert values(batcher.push(tensor(6, [2, 2]), 0.0)) == [[[1, 1], [2, 2]]]


def test_a_batch_keeps_its_newest_inputs_flow_info_and_data_label():
    batcher = CountBatcher("n", CountBatchSpec(2))
    batcher.push(tensor(1, [1], start=1, end=2, label=3), 0.0)
    batch, = batcher.push(tensor(2, [2], start=5, end=9, flags=SEG, label=4), 0.0)
    assert batch.meta == TransactionMeta(2, 5, 9, SEG) and batch.data_label == 4


# -- TimeBatch ------------------------------------------------------------------------------------

def test_a_time_batch_ends_when_its_window_is_full_and_spans_its_inputs_times():
    batcher = TimeBatcher("n", TimeBatchSpec(5))
    assert batcher.push(tensor(1, [1], 10, 12), 0.0) == []
    assert batcher.push(tensor(2, [2], 12, 14), 0.0) == []
    batch, = batcher.push(tensor(3, [3], 14, 15), 0.0)
    assert batch.payload.tolist() == [[1], [2], [3]]
    assert (batch.meta.transaction_id, batch.meta.start_time, batch.meta.end_time) == (3, 10, 15)


@settings(max_examples=40, deadline=None)
@given(window=st.integers(1, 12), data=st.data())
def test_time_batches_partition_contiguous_inputs_by_window(window, data):
    # batches of durations summing to the window, then a remainder that never fills it
    count = data.draw(st.integers(0, 4))
    cuts = [sorted(data.draw(st.sets(st.integers(1, window - 1), max_size=window - 1))) if window > 1 else []
            for _ in range(count)]
    durations = [d for inner in cuts for d in (b - a for a, b in zip([0, *inner], [*inner, window]))]
    durations += [data.draw(st.integers(0, window - 1))]  # the remainder: its batch stays open
    batcher, start, outputs = TimeBatcher("n", TimeBatchSpec(window)), 0, []
    for tid, duration in enumerate(durations, 1):
        outputs += batcher.push(tensor(tid, [tid], start, start + duration), 0.0)
        start += duration
    assert [(o.meta.start_time, o.meta.end_time) for o in outputs] == [(k * window, (k + 1) * window)
                                                                       for k in range(count)]
    sizes = [len(inner) + 1 for inner in cuts]
    ends = [sum(sizes[:k + 1]) for k in range(count)]
    assert [o.meta.transaction_id for o in outputs] == ends
    assert values(outputs) == [[[tid] for tid in range(end - size + 1, end + 1)] for end, size in zip(ends, sizes)]


@pytest.mark.parametrize("dim, expected", [(-1, [[[1, 2]], [[3, 4]]]), (0, [[1, 2], [3, 4]]), (1, [[1, 2, 3, 4]])])
def test_batch_dim_stacks_or_concatenates(dim, expected):
    batcher = TimeBatcher("n", TimeBatchSpec(2, batch_dim=dim))
    batcher.push(tensor(1, [[1, 2]], 0, 1), 0.0)
    assert values(batcher.push(tensor(2, [[3, 4]], 1, 2), 0.0)) == [expected]


@pytest.mark.parametrize("flag", [EOS, SEG])
def test_an_eos_or_seg_flag_ends_a_batch_and_drop_remainder_drops_it(flag):
    kept = TimeBatcher("n", TimeBatchSpec(10))
    dropped = TimeBatcher("n", TimeBatchSpec(10, drop_remainder=True))
    for batcher in (kept, dropped):
        batcher.push(tensor(1, [1], 0, 2), 0.0)
    assert values(kept.push(tensor(2, [2], 2, 3, flags=flag), 0.0)) == [[[1], [2]]]
    outputs = dropped.push(tensor(2, [2], 2, 3, flags=flag), 0.0)
    if flag == EOS:  # the EOS goes on alone
        assert [(o.kind, o.meta.flow_flags, o.meta.transaction_id) for o in outputs] == [(Kind.EMPTY, EOS, 2)]
    else:
        assert outputs == []


def test_a_window_of_minus_one_waits_for_a_flag_and_an_eos_marker_ends_it():
    batcher = TimeBatcher("n", TimeBatchSpec(-1))
    assert batcher.push(tensor(1, [1], 0, 100), 0.0) == []
    assert batcher.push(tensor(2, [2], 100, 300), 0.0) == []  # however long: no window
    batch, = batcher.push(Message.empty(TransactionMeta(3, 0, 0, EOS)), 0.0)
    assert batch.payload.tolist() == [[1], [2]]
    assert (batch.meta.start_time, batch.meta.end_time, batch.meta.flow_flags) == (0, 300, EOS)
    marker = Message.empty(TransactionMeta(4, 0, 0, EOS))
    assert batcher.push(marker, 0.0) == [marker]  # nothing to end: the marker passes


@pytest.mark.parametrize("message, error", [
    (tensor(2, [2], 9, 8), "start_time 9 is after end_time 8"),
    (tensor(2, [2], 1, 3), "start_time 1 is before the last input's end_time 2"),
    (tensor(2, [2], 2, 11), "end_time 11 is past the window of 10 ms that started at 0"),
    (tensor(2, [2, 2], 2, 3), "a tensor of shape (2,) cannot join a batch of (1,) along dim -1"),
    (Message.empty(TransactionMeta(2)), "an empty message without the EOS flag"),
])
def test_a_time_batch_refuses_a_message_out_of_order_and_keeps_its_batch(message, error):
    batcher = TimeBatcher("n", TimeBatchSpec(10))
    batcher.push(tensor(1, [1], 0, 2), 0.0)
    refused, = batcher.push(message, 0.0)
    assert (refused.ret_code, refused.error) == (FLOW_FUNC_ERR_PARAM_INVALID, f"node 'n': TimeBatch: {error}")
    assert values(batcher.push(tensor(3, [3], 2, 10), 0.0)) == [[[1], [3]]]


def test_batch_dim_must_be_a_dimension_of_the_tensor():
    refused, = TimeBatcher("n", TimeBatchSpec(5, batch_dim=2)).push(tensor(1, [[1]], 0, 1), 0.0)
    assert refused.error == "node 'n': TimeBatch: batch_dim 2 is not a dimension of a tensor of shape (1, 1)"


# -- the plan -------------------------------------------------------------------------------------

def plan_with_batches() -> dict:
    node = node_entry("n", [data(0)], 1, fn_pp(0, plus_one, [0], [0]))
    node["batch"] = [{"input": 0, "kind": "count", "batch_size": 4, "slide_stride": 0, "timeout": 0,
                      "padding": False}]
    return make_plan(1, [node], [out(0)])


def test_a_batched_input_becomes_a_batch_node_in_front_of_its_node():
    plan = Plan.from_json(plan_with_batches())
    expanded = with_batch_nodes(plan)
    node, batch = expanded.nodes
    assert batch.name == "n__BuiltIn_CountBatch_0" and batch.pp == BatchPoint(CountBatchSpec(4))
    assert node.inputs == (NodeRef(1, 0),) and node.batch == () and expanded.order == (1, 0)
    assert plan.nodes[0].batch == (InputBatch(0, CountBatchSpec(4)),)


def test_a_batch_node_runs_one_unit_on_the_first_device_of_its_node():
    document = plan_with_batches()
    document["units"] = [{"node": 0, "instance": 0, "device": "0:0:1"}, {"node": 0, "instance": 1, "device": "0:0:0"}]
    expanded = with_batch_nodes(Plan.from_json(document))
    assert expanded.units == (Unit(0, 0, "0:0:1"), Unit(0, 1, "0:0:0"), Unit(1, 0, "0:0:1"))
    expanded.check()


@pytest.mark.parametrize("batch, error", [
    ({"input": 1, "kind": "count", "batch_size": 4, "slide_stride": 0, "timeout": 0, "padding": False},
     "plan.nodes[0].batch[0].input: 1 is out of range [0, 1)"),
    ({"input": 0, "kind": "count", "batch_size": 4, "slide_stride": 9, "timeout": 0, "padding": False},
     "plan.nodes[0].batch[0]: CountBatch.slide_stride should be in [0, 4], but got 9"),
    ({"input": 0, "kind": "time", "time_window": 0, "batch_dim": -1, "drop_remainder": False},
     "plan.nodes[0].batch[0]: TimeBatch.time_window should be -1 or larger than zero, but got 0"),
    ({"input": 0, "kind": "size", "batch_size": 4},
     "plan.nodes[0].batch[0].kind: "),
])
def test_the_plan_reader_checks_every_batch(batch, error):
    document = plan_with_batches()
    document["nodes"][0]["batch"] = [batch]
    with pytest.raises(GeError) as caught:
        Plan.from_json(document)
    assert error in caught.value.error_message


# -- the frontend ---------------------------------------------------------------------------------

@df.pyflow
def plus_one(x):
    return x + 1


def batched_graph(*attrs, n_mapping=None):
    data = df.FlowData(name="x")
    node = plus_one.fnode()
    out = node(data)
    node.map_input(0, node.process_points[0], 0, list(attrs))
    graph = df.FlowGraph([out])
    if n_mapping is not None:
        graph.set_contains_n_mapping_node(n_mapping)
    return data, graph


@pytest.mark.parametrize("attrs, error", [
    ([df.CountBatch()], "CountBatch.batch_size should be larger than zero, but got 0"),
    ([df.CountBatch(4, slide_stride=-1)], "CountBatch.slide_stride should be in [0, 4], but got -1"),
    ([df.CountBatch(4, timeout=4294967295)], "CountBatch.timeout should be in [0, 4294967295) ms, but got 4294967295"),
    ([df.TimeBatch()], "TimeBatch.time_window should be -1 or larger than zero, but got 0"),
    ([df.TimeBatch(5, batch_dim=-3)], "TimeBatch.batch_dim should be -1 or larger, but got -3"),
    ([df.CountBatch(4), df.TimeBatch(5)], "CountBatch and TimeBatch cannot be set on one input at the same time"),
    ([df.CountBatch(4), df.CountBatch(8)], "input_attrs holds 2 CountBatchs, expected at most one"),
    (["count"], "input_attrs must hold TimeBatch or CountBatch, got str"),
    ([df.CountBatch(4.0)], "CountBatch.batch_size must be an int, got 4.0"),
    ([df.TimeBatch(5, drop_remainder=1)], "TimeBatch.drop_remainder must be a bool, got 1"),
])
def test_map_input_refuses_bad_batching(attrs, error):
    node = plus_one.fnode()
    with pytest.raises(GeError) as caught:
        node.map_input(0, node.process_points[0], 0, attrs)
    assert caught.value.error_message == f"node {node.name}: map_input input 0: {error}"


def test_batching_is_refused_with_exception_catch():
    _, graph = batched_graph(df.CountBatch(2))
    graph.set_exception_catch(True)
    with pytest.raises(GeError, match=r"TimeBatch or CountBatch cannot be set on input 0 while exception "
                                      r"catch is enabled"):
        dfir.compile(graph, {})


def test_the_ir_and_the_plan_carry_the_batching_and_n_mapping():
    _, graph = batched_graph(df.TimeBatch(5, batch_dim=0, drop_remainder=True))
    compiled = dfir.compile(graph, {})
    assert "{n_mapping, " in compiled.ir
    assert "batch = [#df.time_batch<input = 0, window = 5, dim = 0, drop_remainder>]" in compiled.ir
    plan = Plan.from_json(lower_graph(compiled.module).plan.to_bytes())
    assert plan.n_mapping and plan.nodes[0].batch == (InputBatch(0, TimeBatchSpec(5, 0, True)),)


def test_set_contains_n_mapping_node_reaches_the_ir():
    data = df.FlowData(name="x")
    graph = df.FlowGraph([plus_one.fnode()(data)])
    graph.set_contains_n_mapping_node(True)
    assert "n_mapping" in dfir.compile(graph, {}).ir
    plain = df.FlowGraph([plus_one.fnode()(df.FlowData(name="y"))])
    plain.set_contains_n_mapping_node(False)
    assert "n_mapping" not in dfir.compile(plain, {}).ir


# -- whole graphs ---------------------------------------------------------------------------------

def test_a_count_batched_node_gets_each_batch_with_its_newest_transaction():
    data, graph = batched_graph(df.CountBatch(batch_size=4))
    for i in range(8):
        graph.feed_data({data: np.full([2], i, np.int32)}, df.FlowInfo(start_time=i, end_time=i + 1))
    for first in (0, 4):
        outs, info, ret = graph.fetch_data(timeout=10_000)
        assert ret == 0
        assert outs[0].numpy().tolist() == [[i + 1] * 2 for i in range(first, first + 4)]
        assert (info.transaction_id, info.start_time, info.end_time) == (first + 4, first + 3, first + 4)
    df.finalize()


def test_a_count_batch_with_timeout_and_padding_sends_what_it_has():
    data, graph = batched_graph(df.CountBatch(batch_size=4, timeout=50, padding=True))
    graph.feed_data({data: np.array([5], np.int32)})
    outs, _, ret = graph.fetch_data(timeout=10_000)
    assert ret == 0 and outs[0].numpy().tolist() == [[6], [1], [1], [1]]  # zeros, plus one
    df.finalize()


def test_a_time_batched_node_joins_a_window():
    data, graph = batched_graph(df.TimeBatch(time_window=10, batch_dim=0))
    for start in range(0, 20, 5):
        graph.feed_data({data: np.array([start], np.int32)}, df.FlowInfo(start_time=start, end_time=start + 5))
    for first in (0, 10):
        outs, info, ret = graph.fetch_data(timeout=10_000)
        assert ret == 0 and outs[0].numpy().tolist() == [first + 1, first + 6]
        assert (info.start_time, info.end_time) == (first, first + 10)
    df.finalize()


def test_a_refused_message_fails_its_own_transaction_only():
    data, graph = batched_graph(df.CountBatch(batch_size=2))
    graph.feed_data({data: np.array([1], np.int32)})
    graph.feed_data({data: np.array([1, 2], np.int32)})
    graph.feed_data({data: np.array([3], np.int32)})
    outs, info, ret = graph.fetch_data(timeout=10_000)
    assert int(ret) == FLOW_FUNC_ERR_PARAM_INVALID and info.transaction_id == 2
    outs, info, ret = graph.fetch_data(timeout=10_000)
    assert ret == 0 and outs[0].numpy().tolist() == [[2], [4]] and info.transaction_id == 3
    df.finalize()


@df.pyflow
def pair_sum(a, b):
    return a + b


def test_with_alignment_two_batched_inputs_pair_by_their_newest_transaction():
    a, b = df.FlowData(name="a"), df.FlowData(name="b")
    node = pair_sum.fnode()
    out = node(a, b)
    for j in (0, 1):
        node.map_input(j, node.process_points[0], j, [df.CountBatch(batch_size=2)])
    graph = df.FlowGraph([out])
    graph.set_inputs_align_attrs(16, 5_000)
    for i in range(4):
        graph.feed_data({a: np.array([i], np.int32), b: np.array([10 * i], np.int32)})
    results = [graph.fetch_data(timeout=10_000) for _ in range(2)]
    assert [(outs[0].numpy().tolist(), info.transaction_id, ret) for outs, info, ret in results] == [
        ([[0], [11]], 2, 0), ([[22], [33]], 4, 0)]
    df.finalize()


@df.pyflow
def exit_on_second_batch(x):
    if int(np.sum(x)) == 7:
        import os
        os._exit(3)
    return x


def test_a_worker_dying_mid_batch_fails_the_transactions_of_the_lost_batch():
    data = df.FlowData(name="x")
    node = exit_on_second_batch.fnode()
    out = node(data)
    node.map_input(0, node.process_points[0], 0, [df.CountBatch(batch_size=2)])
    graph = df.FlowGraph([out])
    for i in (1, 2, 3, 4):
        graph.feed_data({data: np.array([i], np.int32)})
    outs, info, ret = graph.fetch_data(timeout=10_000)
    assert (outs[0].numpy().tolist(), info.transaction_id, ret) == ([[1], [2]], 2, 0)
    failures = [graph.fetch_data(timeout=10_000) for _ in range(3)]
    # 3 and 4 were lost with the worker. Transactions settle by the id a result carries, so 1,
    # whose result came out in the batch of 2, is reported too: a result is never missed.
    assert [(info.transaction_id, int(ret)) for _, info, ret in failures] == [
        (1, WORKER_FAILED), (3, WORKER_FAILED), (4, WORKER_FAILED)]
    # The worker was restarted (`dfir.runtime.recover` restart): the next batch runs.
    for i in (5, 6):
        graph.feed_data({data: np.array([i], np.int32)})
    outs, info, ret = graph.fetch_data(timeout=10_000)
    assert (outs[0].numpy().tolist(), info.transaction_id, ret) == ([[5], [6]], 6, 0)
    df.finalize()


def batch_sum(x):
    return np.array([int(x.sum()), os.getpid()], dtype=np.int64)


def test_a_replicated_node_gets_its_batches_round_robin_from_one_batch_node():
    node = node_entry("sum", [data(0)], 1, fn_pp(0, batch_sum, [0], [0]), TWO_DEVICES)
    node["batch"] = [{"input": 0, "kind": "count", "batch_size": 2, "slide_stride": 1, "timeout": 0,
                      "padding": False}]
    with RuntimeModel(make_plan(1, [node], [out(0)]), [fn_payload(batch_sum)], None, "replicated") as model:
        for t in range(1, 9):
            assert model.feed_data([np.array([t])]) == 0
        results = fetch_all(model, 7)
    # a batch ends at each transaction from 2 on (stride 1); instance t % 2 takes the one of t
    assert {t: int(r[0][0]) for t, r in results.items()} == {t: 2 * t - 1 for t in range(2, 9)}
    pids = {t: int(r[0][1]) for t, r in results.items()}
    assert len({pids[t] for t in (2, 4, 6, 8)}) == len({pids[t] for t in (3, 5, 7)}) == 1
    assert pids[2] != pids[3]


def test_the_compile_cache_keys_a_graph_by_its_batching(tmp_path):
    cached = {"ge.graph_compiler_cache_dir": str(tmp_path), "ge.graph_key": "batched"}
    irs, keys = [], []
    for size in (4, 8, 8):
        names.reset()
        _, graph = batched_graph(df.CountBatch(batch_size=size))
        compiled = dfir.compile(graph, cached)
        irs.append(compiled.ir)
        keys += [line.split(": ")[2].split()[0] for line in compiled.report if line.startswith("cache: graph key")]
    assert "size = 4," in irs[0] and "size = 8," in irs[1] and irs[2] == irs[1]
    assert keys == ["miss;", "miss;", "hit"]  # another batch size is another graph


def test_a_batched_node_of_a_sub_flow_graph_batches_and_makes_the_plan_n_mapping():
    inner_data = df.FlowData(name="inner")
    inner_node = plus_one.fnode()
    inner_out = inner_node(inner_data)
    inner_node.map_input(0, inner_node.process_points[0], 0, [df.CountBatch(batch_size=2)])
    point = df.FlowGraphProcessPoint(df.FlowGraph([inner_out]))
    outer = df.FlowNode(1, 1)
    outer.add_process_point(point)
    x = df.FlowData(name="x")
    graph = df.FlowGraph([outer(x)])
    plan = lower_graph(dfir.compile(graph, {}).module).plan
    assert plan.n_mapping and [node.batch for node in plan.nodes] == [(InputBatch(0, CountBatchSpec(2)),)]
    for value in (1, 2):
        graph.feed_data({x: np.array([value], np.int32)})
    outs, info, ret = graph.fetch_data(timeout=10_000)
    assert (ret, outs[0].numpy().tolist(), info.transaction_id) == (0, [[2], [3]], 2)
    df.finalize()
