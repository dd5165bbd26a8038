"""Recovery (`dfir.runtime.recover`, default restart) and stalls (`udf_timeout_ms`): a worker that
dies is started again, the transactions in flight fail with their code, none is lost or returned
twice, later transactions run; a call that runs past its node's time limit is stopped, its
transaction fails with the timeout code naming the node and instance."""
from __future__ import annotations

import ctypes
import faulthandler
import os
import signal
import threading
import time

import numpy as np
import dfir.dataflow as df
import pytest

from dfir.core.udf_payload import UdfPayload
from dfir.frontend.flow_func.status import FLOW_FUNC_ERR_TIME_OUT_ERROR
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.driver.process_scheduler import MAX_QUICK_DEATHS, WORKER_FAILED
from test_faults import chain_model
from test_replication import TWO_DEVICES, data, fn_payload, fn_pp, make_plan, node_entry, out, worker_of

WAIT_MS = 10_000
FEEDS = 1000


# -- user code (module level: payloads pickle functions by reference) ---------------------------

def relay(x):
    return x


def double(x):
    return x * 2


def pid_of(x):
    return np.array([int(x[0]), os.getpid()], np.int64)


def segfault_on_two(x):
    if int(x[0]) == 2:
        faulthandler.disable()  # the worker inherited pytest's; its traceback would only be noise
        ctypes.string_at(0)
    return x * 2


def exit_on_two(x):
    if int(x[0]) == 2:
        os._exit(3)
    return x * 2


def out_of_memory_on_two(x):
    if int(x[0]) == 2:
        raise MemoryError("pretend the heap is gone")
    return x * 2


def hang_on_two(x):
    if int(x[0]) == 2:
        time.sleep(3600)
    return x * 2


def spin_on_two(x):
    if int(x[0]) == 2:
        while True:  # holds the GIL but for the interpreter's switches
            pass
    return x * 2


class Counter:
    """A class UDF: its instance is made when the worker builds the node."""

    def __init__(self):
        self.pid = os.getpid()
        self.calls = 0

    def count(self, x):
        self.calls += 1
        return np.array([int(x[0]), self.pid, self.calls], np.int64)


def add(a, b):
    return a + b


# -- helpers --------------------------------------------------------------------------------------

def feed_in_thread(model, values):
    def feed():
        for value in values:
            assert model.feed_data([np.array([value], np.int64)]) == 0
    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return thread


def run_with_a_kill(model, device, kill_after, feeds=FEEDS):
    """Feed `feeds` transactions from a thread, kill the worker of `device` once `kill_after`
    results came back, fetch everything: ({transaction id: (ret, first output as a list)}, the
    seconds from the kill to the first result of a transaction that did not fail)."""
    feeder = feed_in_thread(model, range(feeds))
    results, killed_at, served_at = {}, None, None
    for count in range(feeds):
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert info.transaction_id not in results, "a transaction came back twice"
        results[info.transaction_id] = (int(ret), tensors[0].numpy().tolist() if tensors else None)
        if killed_at is not None and served_at is None and ret == 0 and info.transaction_id > max(
                (t for t, (code, _) in results.items() if code != 0), default=0):
            served_at = time.monotonic()
        if count + 1 == kill_after:
            os.kill(worker_of(model, device), signal.SIGKILL)
            killed_at = time.monotonic()
    feeder.join(WAIT_MS / 1000)
    return results, (served_at - killed_at) if served_at is not None else None


def assert_each_right_or_failed(results, first, feeds, expect):
    """Every transaction first..first+feeds-1 came back once: its right value or WORKER_FAILED."""
    assert sorted(results) == list(range(first, first + feeds))
    for transaction_id, (code, value) in results.items():
        if code == 0:
            assert value == expect(transaction_id - first), transaction_id
        else:
            assert code == WORKER_FAILED, (transaction_id, code)


# -- restarts -------------------------------------------------------------------------------------

def test_killing_a_worker_20_times_in_1000_transactions_loses_nothing_and_serves_again_within_1_s():
    with chain_model([("relay", relay, "0:0:0"), ("double", double, "0:0:1")], recover="restart") as model:
        first = 1
        for round_ in range(20):
            device = TWO_DEVICES[round_ % 2]
            results, served_after = run_with_a_kill(model, device, kill_after=300 + 10 * round_)
            assert_each_right_or_failed(results, first, FEEDS, lambda i: [2 * i])
            failed = sum(code != 0 for code, _ in results.values())
            assert failed < FEEDS - 300  # those fetched before the kill never fail
            assert served_after is not None and served_after < 1.0
            first += FEEDS
        workers = model.stats()["workers"]
        assert [(w["device"], w["restarts"]) for w in workers] == [("0:0:0", 10), ("0:0:1", 10)]
        assert workers[1]["deaths"][-1].startswith("node 'double' on device 0:0:1: worker process ")
        assert workers[1]["deaths"][-1].endswith(" was killed by signal 9 (SIGKILL)")


@pytest.mark.parametrize("udf, how", [
    (segfault_on_two, "was killed by signal 11 (SIGSEGV)"),
    (exit_on_two, "exited with code 3"),
    (out_of_memory_on_two, "exited with code 70: MemoryError in node 'crash': pretend the heap is gone"),
])
def test_a_worker_dying_on_one_input_fails_what_was_in_flight_and_runs_the_rest(udf, how):
    with chain_model([("relay", relay, "-1"), ("crash", udf, "0:0:1")], recover="restart") as model:
        pid = worker_of(model, "0:0:1")
        assert model.feed_data([np.array([1])]) == 0
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert (tensors[0].numpy().tolist(), info.transaction_id, ret) == ([2], 1, 0)
        for value in (2, 3):
            assert model.feed_data([np.array([value])]) == 0
        failures = [model.fetch_data(timeout=WAIT_MS) for _ in range(2)]
        lost = (f"node 'crash' on device 0:0:1: worker process {pid} {how}; the worker was restarted and "
                f"this transaction, in flight, failed")
        assert sorted((info.transaction_id, int(ret), ret.message) for _, info, ret in failures) == [
            (2, WORKER_FAILED, lost), (3, WORKER_FAILED, lost)]
        assert model.feed_data([np.array([4])]) == 0
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert (tensors[0].numpy().tolist(), info.transaction_id, ret) == ([8], 4, 0)
        assert worker_of(model, "0:0:1") != pid
        assert model.fetch_data(timeout=100)[2] != 0  # nothing more: the failures came once


def test_a_restarted_worker_builds_its_nodes_anew():
    plan = make_plan(1, [node_entry("count", [data(0)], 1, {
        "kind": "py_udf", "udf": 0, "funcs": [{"name": "count", "inputs": [0], "outputs": [0],
                                              "stream_input": False}]}, ["0:0:0"])], [out(0)])
    with RuntimeModel(plan, [UdfPayload("class", Counter).dumps()], None, "m") as model:
        model.feed_data([np.array([1])])
        before = model.fetch_data(timeout=WAIT_MS)[0][0].numpy().tolist()
        os.kill(worker_of(model, "0:0:0"), signal.SIGKILL)
        deadline = time.monotonic() + 5
        while model.stats()["workers"][0]["restarts"] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        model.feed_data([np.array([2])])
        after = model.fetch_data(timeout=WAIT_MS)[0][0].numpy().tolist()
        assert before[0] == 1 and before[2] == 1
        assert after[0] == 2 and after[1] != before[1] and after[2] == 1  # a new instance: calls from 1


def test_a_replica_keeps_serving_while_the_other_restarts():
    plan = make_plan(1, [node_entry("pid", [data(0)], 1, fn_pp(0, pid_of, [0], [0]), TWO_DEVICES)], [out(0)])
    with RuntimeModel(plan, [fn_payload(pid_of)], None, "m") as model:
        survivor = worker_of(model, "0:0:0")
        results, _ = run_with_a_kill(model, "0:0:1", kill_after=200)
        assert sorted(results) == list(range(1, FEEDS + 1))
        served = [value for code, value in results.values() if code == 0]
        assert all(value[0] == t - 1 for t, (code, value) in results.items() if code == 0)
        assert {pid for _, pid in served} >= {survivor}
        assert worker_of(model, "0:0:0") == survivor  # never restarted


def test_aligned_outputs_stay_paired_across_a_restart():
    plan = make_plan(1, [node_entry("relay", [data(0)], 1, fn_pp(0, relay, [0], [0]), ["0:0:0"]),
                         node_entry("double", [data(0)], 1, fn_pp(1, double, [0], [0]), ["0:0:1"])],
                     [out(0), out(1)])
    plan["align"] = {"cache": 1024, "timeout": -1, "dropout": False}
    with RuntimeModel(plan, [fn_payload(relay), fn_payload(double)], None, "m") as model:
        feeder = feed_in_thread(model, range(400))
        seen = {}
        for count in range(400):
            tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
            seen[info.transaction_id] = (int(ret), [t.numpy().tolist() for t in tensors])
            if count == 100:
                os.kill(worker_of(model, "0:0:1"), signal.SIGKILL)
        feeder.join()
        assert sorted(seen) == list(range(1, 401))
        for transaction_id, (code, values) in seen.items():
            assert (code, values) == (0, [[transaction_id - 1], [2 * (transaction_id - 1)]]) or \
                (code, values) == (WORKER_FAILED, [])


def test_a_plan_that_pairs_by_order_restarts_every_worker_with_its_channels_emptied():
    plan = make_plan(1, [node_entry("relay", [data(0)], 1, fn_pp(0, relay, [0], [0]), ["0:0:0"]),
                         node_entry("double", [data(0)], 1, fn_pp(1, double, [0], [0]), ["0:0:1"]),
                         node_entry("add", [out(0), out(1)], 1, fn_pp(2, add, [0, 1], [0]), ["0:0:0"])],
                     [out(2)])
    with RuntimeModel(plan, [fn_payload(relay), fn_payload(double), fn_payload(add)], None, "m") as model:
        pids = model._scheduler.worker_pids
        results, served_after = run_with_a_kill(model, "0:0:1", kill_after=300)
        assert_each_right_or_failed(results, 1, FEEDS, lambda i: [3 * i])
        assert served_after is not None and served_after < 1.0
        assert all(new != old for new, old in zip(model._scheduler.worker_pids, pids))
        assert [w["restarts"] for w in model.stats()["workers"]] == [1, 1]


def fragile_model(cls, marker):
    os.environ["DFIR_TEST_MARKER"] = str(marker)
    plan = make_plan(1, [node_entry("fragile", [data(0)], 1, {
        "kind": "py_udf", "udf": 0, "funcs": [{"name": "count", "inputs": [0], "outputs": [0],
                                              "stream_input": False}]}, ["0:0:0"])], [out(0)])
    return RuntimeModel(plan, [UdfPayload("class", cls).dumps()], None, "m")


def wait_for_failure(model):
    deadline = time.monotonic() + 10
    while model._scheduler.failure is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return model._scheduler.failure


class ExitsSoonWhenRestarted(Counter):
    """Builds once; every later instance (a restarted worker's) ends its process 50 ms after it
    is made, before any input comes."""

    def __init__(self):
        super().__init__()
        marker = os.environ["DFIR_TEST_MARKER"]
        if os.path.exists(marker):
            threading.Timer(0.05, os._exit, (5,)).start()
        open(marker, "w").close()


class FailsWhenRestarted(Counter):
    def __init__(self):
        super().__init__()
        marker = os.environ["DFIR_TEST_MARKER"]
        if os.path.exists(marker):
            raise MemoryError("pretend the restarted worker has no memory")
        open(marker, "w").close()


def test_a_worker_that_keeps_dying_before_taking_input_fails_the_model_with_its_history(tmp_path):
    with fragile_model(ExitsSoonWhenRestarted, tmp_path / "built") as model:
        first = worker_of(model, "0:0:0")
        os.kill(first, signal.SIGKILL)
        failure = wait_for_failure(model)
        assert failure is not None
        deaths = failure.split(": ", 1)[1].split("; it died ")
        assert failure.startswith("node 'fragile' on device 0:0:0: worker process ")
        assert f"; it died {MAX_QUICK_DEATHS} times in a row within 1 s of starting, before taking any input: " \
            f"node 'fragile' on device 0:0:0: worker process {first} was killed by signal 9 (SIGKILL); " in failure
        assert failure.count("exited with code 5") == MAX_QUICK_DEATHS, deaths
        assert model.fetch_data(timeout=1000)[2] != 0


def test_a_worker_whose_nodes_cannot_be_built_again_fails_the_model(tmp_path):
    with fragile_model(FailsWhenRestarted, tmp_path / "built") as model:
        pid = worker_of(model, "0:0:0")
        os.kill(pid, signal.SIGKILL)
        assert wait_for_failure(model) == (
            f"node 'fragile' on device 0:0:0: worker process {pid} was killed by signal 9 (SIGKILL); building its "
            f"nodes again failed: node 'fragile': constructing FailsWhenRestarted raised MemoryError: pretend the "
            f"restarted worker has no memory")


def test_recover_off_fails_the_model_as_before():
    with chain_model([("crash", exit_on_two, "0:0:0")], recover="off") as model:
        model.feed_data([np.array([2])])
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert int(ret) == WORKER_FAILED and model._scheduler.failure is not None
        assert model.stats()["workers"][0]["restarts"] == 0


@pytest.fixture(autouse=True)
def _no_marker_left():
    yield
    os.environ.pop("DFIR_TEST_MARKER", None)


# -- udf_timeout_ms ---------------------------------------------------------------------------------

@pytest.mark.parametrize("udf", [hang_on_two, spin_on_two])
def test_a_call_past_its_udf_timeout_fails_with_the_timeout_code_naming_node_and_instance(udf):
    with chain_model([("relay", relay, "-1"), ("slow", udf, "0:0:1")], recover="restart",
                     udf_timeouts={"slow": 200}) as model:
        pid = worker_of(model, "0:0:1")
        started = time.monotonic()
        for value in (1, 2, 3):
            assert model.feed_data([np.array([value])]) == 0
        results = {info.transaction_id: (int(ret), ret.message) for _, info, ret in
                   (model.fetch_data(timeout=WAIT_MS) for _ in range(3))}
        elapsed = time.monotonic() - started
        stopped = (f"node 'slow' instance 0 on device 0:0:1: a call ran longer than its udf_timeout_ms (200 ms); "
                   f"worker process {pid} was stopped")
        assert results[1] == (0, "")
        assert results[2] == (FLOW_FUNC_ERR_TIME_OUT_ERROR, stopped)
        assert results[3] == (WORKER_FAILED, f"{stopped}; the worker was restarted and this transaction, "
                                             f"in flight, failed")
        assert 0.2 <= elapsed < 0.2 + 1.0
        assert model.feed_data([np.array([4])]) == 0
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert (tensors[0].numpy().tolist(), info.transaction_id, ret) == ([8], 4, 0)


def test_a_node_without_a_timeout_may_take_as_long_as_it_needs():
    with chain_model([("slow", sleep_briefly, "0:0:0"), ("fast", relay, "0:0:1")], recover="restart",
                     udf_timeouts={"fast": 100}) as model:
        model.feed_data([np.array([5])])
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert (tensors[0].numpy().tolist(), ret) == ([5], 0)
        assert model.stats()["workers"][1]["restarts"] == 0


def sleep_briefly(x):
    time.sleep(0.3)
    return x


# -- through the public API -----------------------------------------------------------------------

@df.pyflow
def hang_on_two_flow(x):
    if int(np.sum(x)) == 2:
        time.sleep(3600)
    return x * 2


def test_a_flow_graph_with_udf_timeout_ms_reports_the_hung_call_and_serves_on():
    data = df.FlowData(name="x")
    graph = df.FlowGraph([hang_on_two_flow.fnode()(data)], {"dfir.runtime.udf_timeout_ms": "300"})
    assert graph.feed_data({data: np.array([1], np.int32)}) == 0  # compiles and loads the graph
    results = [graph.fetch_data(timeout=WAIT_MS)]
    started = time.monotonic()
    for value in (2, 3):
        assert graph.feed_data({data: np.array([value], np.int32)}) == 0
    results += [graph.fetch_data(timeout=WAIT_MS) for _ in range(2)]
    outcomes = [(info.transaction_id, int(ret), [o.numpy().tolist() for o in outs]) for outs, info, ret in results]
    # 3 fails with the stopped worker if it had taken 3's message, else it waits and runs on the new one
    assert outcomes[:2] == [(1, 0, [[2]]), (2, FLOW_FUNC_ERR_TIME_OUT_ERROR, [])]
    assert outcomes[2] in ((3, WORKER_FAILED, []), (3, 0, [[6]])), outcomes[2]
    assert results[1][2].message.startswith(
        "node 'hang_on_two_flow_fnode' instance 0 on device host: a call ran longer than its udf_timeout_ms (300 ms)")
    assert time.monotonic() - started < 0.3 + 1.5
    assert graph.feed_data({data: np.array([4], np.int32)}) == 0
    outs, info, ret = graph.fetch_data(timeout=WAIT_MS)
    assert (outs[0].numpy().tolist(), ret) == ([8], 0)
    df.finalize()


def test_recover_off_in_a_flow_graph_fails_it():
    data = df.FlowData(name="x")
    graph = df.FlowGraph([hang_on_two_flow.fnode()(data)],
                         {"dfir.runtime.udf_timeout_ms": "300", "dfir.runtime.recover": "off"})
    graph.feed_data({data: np.array([2], np.int32)})
    _, _, ret = graph.fetch_data(timeout=WAIT_MS)
    assert int(ret) == WORKER_FAILED
    assert "a call ran longer than its udf_timeout_ms (300 ms)" in ret.message
    df.finalize()
