"""Tracing a loaded model (runtime/driver/tracing.py): the trace log every process appends to,
the slices of node firings and of the driver's feeds and fetches, sampling, counters, the option
and the environment variable that ask for it."""
from __future__ import annotations

import json
import os
import time

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.ge.error import GeError
from dfir.om.schema import PartitionType
from dfir.runtime import _native
from dfir.runtime.driver import tracing
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.driver.trace_model import DRIVER
from dfir.runtime.om import read_om
from test_replication import data, fn_payload, fn_pp, make_plan, node_entry, out

WAIT_MS = 10000
FEEDS = 40


def add_one(x):
    return x + 1


def slow_double(x):
    time.sleep(0.002)
    return x * 2


def negate(x):
    return -x


def meet(a, b):
    return a + b


@pytest.fixture(autouse=True)
def no_trace_env(monkeypatch):
    monkeypatch.delenv(tracing.TRACE_ENV, raising=False)


def three_stages(rate: float) -> RuntimeModel:
    """add_one on 0:0:0, slow_double replicated on 0:0:0 and 0:0:1, negate on the host."""
    plan = make_plan(1, [node_entry("one", [data(0)], 1, fn_pp(0, add_one, [0], [0]), ["0:0:0"]),
                         node_entry("two", [out(0)], 1, fn_pp(1, slow_double, [0], [0]), ["0:0:0", "0:0:1"]),
                         node_entry("three", [out(1)], 1, fn_pp(2, negate, [0], [0]), ["-1"])],
                     [out(2)])
    plan["trace"] = rate
    return RuntimeModel(plan, [fn_payload(add_one), fn_payload(slow_double), fn_payload(negate)], None, "three")


def run(model: RuntimeModel, feeds: int = FEEDS) -> list[int]:
    for k in range(feeds):
        assert model.feed_data([np.array([k], np.int32)]) == 0
    results = [model.fetch_data(timeout=WAIT_MS) for _ in range(feeds)]
    assert [int(ret) for _, _, ret in results] == [0] * feeds
    return sorted(info.transaction_id for _, info, _ in results)


def by_transaction(trace) -> dict[int, list]:
    slices: dict[int, list] = {}
    for s in trace.slices:
        slices.setdefault(s.transaction, []).append(s)
    return {t: sorted(ss, key=lambda s: s.begin_ns) for t, ss in slices.items()}


def test_every_transaction_leaves_a_slice_per_stage_and_driver_call_in_order():
    with three_stages(1.0) as model:
        fetched = run(model)
        trace = model._scheduler.tracer.collect()
    assert trace.devices == ("0:0:0", "0:0:1", "host")
    assert [(u.label, u.worker) for u in trace.units] == [
        ("node 'one' instance 0", 0), ("node 'two' instance 0", 0), ("node 'two' instance 1", 1),
        ("node 'three' instance 0", 2)]
    slices = by_transaction(trace)
    assert sorted(slices) == fetched == list(range(1, FEEDS + 1))
    for transaction, ss in slices.items():
        # in begin order, one clock across processes: each stage began after the one before (a slice
        # may end after its consumer began: it includes putting the outputs)
        nodes = [s for s in ss if s.worker != DRIVER]
        instance = int(nodes[1].name[-1])  # the instance of `two` its dispatch picked
        assert [s.name for s in nodes] == ["node 'one' instance 0", f"node 'two' instance {instance}",
                                           "node 'three' instance 0"]
        assert sorted(s.name for s in ss if s.worker == DRIVER) == ["feed", "fetch"]
        assert [s.worker for s in nodes] == [0, instance, 2]
        assert all(s.begin_ns <= s.end_ns for s in ss)
        two = nodes[1]
        assert two.end_ns - two.begin_ns >= 2_000_000  # slow_double sleeps 2 ms
    assert {s.name for s in trace.slices} >= {"node 'two' instance 0", "node 'two' instance 1"}
    feed = {s.transaction: s for s in trace.slices if s.name == "feed"}
    fetch = {s.transaction: s for s in trace.slices if s.name == "fetch"}
    assert sorted(feed) == sorted(fetch) == fetched
    assert all(feed[t].begin_ns <= slices[t][1].begin_ns and slices[t][-2].end_ns <= fetch[t].end_ns
               for t in fetched)


def test_a_sampling_rate_keeps_every_slice_of_the_transactions_it_samples_and_none_of_the_others():
    with three_stages(0.5) as model:
        fetched = run(model, 200)
        trace = model._scheduler.tracer.collect()
        log = model._scheduler.tracer.log
    slices = by_transaction(trace)
    sampled = [t for t in fetched if log.sampled(t)]
    assert sorted(slices) == sampled and 60 <= len(sampled) <= 140
    assert all(len([s for s in slices[t] if s.worker != DRIVER]) == 3 for t in sampled)


def test_counters_sample_the_channel_depths_and_the_arena():
    with three_stages(1.0) as model:
        run(model)
        time.sleep(3 * tracing.COUNTER_SECONDS)
        trace = model._scheduler.tracer.collect()
    names = {c.name for c in trace.counters}
    assert names == {"depth: input 0 of node 'one' instance 0 (device 0:0:0)",
                     "depth: input 0 of node 'two' instance 0 (device 0:0:0)",
                     "depth: input 0 of node 'two' instance 1 (device 0:0:1)",
                     "depth: input 0 of node 'three' instance 0 (device host)", "arena bytes in use"}
    last = {}
    for counter in sorted(trace.counters, key=lambda c: c.ts_ns):
        assert last.get(counter.name) != counter.value  # a value is written when it changed
        last[counter.name] = counter.value
    assert all(value == 0 for name, value in last.items() if name.startswith("depth"))


def test_a_traced_model_s_stats_give_each_node_instance_its_calls_and_times_and_each_channel_its_peak():
    with three_stages(1.0) as model:
        run(model)
        time.sleep(3 * tracing.COUNTER_SECONDS)
        stats = model.stats()
    nodes = {(n["node"], n["instance"]): n for n in stats["nodes"]}
    assert sorted(nodes) == [("one", 0), ("three", 0), ("two", 0), ("two", 1)]
    assert nodes["one", 0]["calls"] == nodes["three", 0]["calls"] == FEEDS
    assert nodes["two", 0]["calls"] + nodes["two", 1]["calls"] == FEEDS
    assert [nodes["two", k]["device"] for k in (0, 1)] == ["0:0:0", "0:0:1"]
    two = nodes["two", 0]
    assert 2000 <= two["p50_us"] <= two["p99_us"] <= two["max_us"]  # slow_double sleeps 2 ms
    assert sum(two["histogram_us"].values()) == two["calls"]
    # every call waited from the end of its transaction's previous slice: the feed, or `one`
    assert [nodes[key]["waits"]["calls"] for key in sorted(nodes)] == [nodes[key]["calls"] for key in sorted(nodes)]
    assert nodes["three", 0]["waits"]["max_us"] >= 0
    assert set(stats["peak_depths"]) == {"input 0 of node 'one' instance 0 (device 0:0:0)",
                                         "input 0 of node 'two' instance 0 (device 0:0:0)",
                                         "input 0 of node 'two' instance 1 (device 0:0:1)",
                                         "input 0 of node 'three' instance 0 (device host)"}


def test_an_untraced_model_s_stats_have_no_node_times():
    with three_stages(0.0) as model:
        run(model, 3)
        assert set(model.stats()) == {"workers", "dropped_messages"}


def traced_meet() -> RuntimeModel:
    """`meet` (a + b) on 0:0:0, aligning its two inputs, traced."""
    plan = make_plan(2, [node_entry("meet", [data(0), data(1)], 1, fn_pp(0, meet, [0, 1], [0]), ["0:0:0"],
                                    align={"cache": 64, "timeout": -1, "dropout": False})], [out(0)])
    plan["trace"] = 1.0
    return RuntimeModel(plan, [fn_payload(meet)], None, "meet")


def test_an_aligned_node_leaves_a_slice_per_call_with_its_transaction():
    with traced_meet() as model:
        for k in range(5):
            assert model.feed_data([np.array([k]), np.array([10 * k])]) == 0
        values = [model.fetch_data(timeout=WAIT_MS)[0][0].numpy().tolist() for _ in range(5)]
        trace = model._scheduler.tracer.collect()
    assert values == [[11 * k] for k in range(5)]
    assert sorted(s.transaction for s in trace.slices if s.name == "node 'meet' instance 0") == [1, 2, 3, 4, 5]


def test_closing_keeps_the_trace_among_the_process_traces():
    model = three_stages(1.0)
    with model:
        run(model, 5)
    (trace,) = [t for t in tracing.traces() if t.model == "three" and t is not None][-1:]
    assert len([s for s in trace.slices if s.worker != DRIVER]) == 15


def test_an_untraced_model_has_no_tracer_and_its_trace_call_says_how_to_get_one(tmp_path):
    with three_stages(0.0) as model:
        assert model._scheduler.tracer is None
        with pytest.raises(GeError) as error:
            model.trace(tmp_path / "run.json")
    assert error.value.error_message == (
        "model 'three' is not traced: set the option dfir.runtime.trace to on or a sampling rate, or the "
        "environment variable DFIR_TRACE, before it loads")


def test_dfir_trace_in_the_environment_replaces_the_plan_and_is_checked(monkeypatch):
    monkeypatch.setenv(tracing.TRACE_ENV, "on")
    with three_stages(0.0) as model:
        assert model._scheduler.tracer is not None
    monkeypatch.setenv(tracing.TRACE_ENV, "off")
    with three_stages(1.0) as model:
        assert model._scheduler.tracer is None
    monkeypatch.setenv(tracing.TRACE_ENV, "often")
    with pytest.raises(GeError) as error:
        three_stages(1.0)
    assert error.value.error_message == ("environment variable DFIR_TRACE is 'often': expected off, on or a "
                                         "sampling rate in (0, 1]")


@pytest.mark.parametrize("value, rate", [("on", 1.0), ("0.25", 0.25), ("off", None)])
def test_the_option_goes_into_the_plan(value, rate):
    @df.pyflow
    def relay(x):
        return x
    compiled = dfir.compile(df.FlowGraph([relay.fnode()(df.FlowData(name="x"))]), {"dfir.runtime.trace": value})
    plan = json.loads(bytes(read_om(compiled.om).models[0].partition(PartitionType.FLOW_MODEL).data))
    assert plan.get("trace") == rate


@pytest.mark.parametrize("value", ["yes", "0", "1.5", "-0.1", "nan"])
def test_a_malformed_option_is_refused(value):
    @df.pyflow
    def relay(x):
        return x
    with pytest.raises(GeError) as error:
        dfir.compile(df.FlowGraph([relay.fnode()(df.FlowData(name="x"))]), {"dfir.runtime.trace": value})
    assert error.value.error_message == (f"option dfir.runtime.trace has malformed value '{value}': expected off, "
                                         "on or a sampling rate in (0, 1]")


def appending_child(log, node: int, transactions: range) -> int:
    """The pid of a forked child that appends a slice of `node` per transaction, the k-th from k
    to k + 1 ns, and exits."""
    pid = os.fork()
    if pid == 0:
        for k, transaction in enumerate(transactions):
            log.append(node, 0, transaction, k, k + 1)
        os._exit(0)
    return pid


def test_a_lane_keeps_its_newest_records_when_lapped_and_the_log_counts_the_lost():
    log = _native.TraceLog(256, 1.0, "test")  # 64 lanes of 4 records; a thread appends to one lane
    os.waitpid(appending_child(log, 1, range(1, 13)), 0)
    records = np.frombuffer(log.drain(), tracing.TRACE_RECORD)
    assert records["transaction"].tolist() == list(range(9, 13)) and log.lost == 8
    assert records[["node", "instance"]].tolist() == [(1, 0)] * 4
    assert (records["end_ns"] - records["begin_ns"]).tolist() == [1] * 4
    assert log.drain() == b""


def test_threads_append_to_their_own_lanes_and_every_record_is_drained():
    log = _native.TraceLog(1 << 12, 1.0, "test")
    children = [appending_child(log, k, range(100 * k + 1, 100 * k + 21)) for k in range(3)]
    for pid in children:
        os.waitpid(pid, 0)
    records = np.frombuffer(log.drain(final=True), tracing.TRACE_RECORD)
    assert sorted(records["transaction"].tolist()) == [100 * k + t + 1 for k in range(3) for t in range(20)]
    for k in range(3):  # each writer's records in the order it appended them
        assert records["transaction"][records["node"] == k].tolist() == [100 * k + t + 1 for t in range(20)]
    assert log.lost == 0


def test_the_log_refuses_a_capacity_or_rate_it_cannot_hold():
    with pytest.raises(GeError, match="a trace log holds a power of two of records, at least 64, not 96"):
        _native.TraceLog(96, 1.0, "test")
    with pytest.raises(GeError, match=r"a trace log's sampling rate is in \(0, 1\]"):
        _native.TraceLog(64, 0.0, "test")


def test_the_draining_thread_takes_every_record_of_another_process_and_stops_with_the_rest():
    log = _native.TraceLog(1 << 16, 1.0, "test")
    log.start_draining(1)
    os.waitpid(appending_child(log, 2, range(1, 301)), 0)
    first = np.frombuffer(log.take_drained(), tracing.TRACE_RECORD)
    log.stop_draining(True)
    rest = np.frombuffer(log.take_drained(), tracing.TRACE_RECORD)
    assert sorted(first["transaction"].tolist() + rest["transaction"].tolist()) == list(range(1, 301))
