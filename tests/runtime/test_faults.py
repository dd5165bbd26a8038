"""Worker processes that die (segfault, os._exit, MemoryError) in a model that does not recover
(`recover` "off"; restarts are tests/runtime/test_recovery.py's), models closed and loaded again,
shutdown by close / df.finalize / interpreter exit / a killed driver, and backpressure: what the
user sees, and that no process, shared-memory segment, mapping or descriptor is left behind."""
from __future__ import annotations

import ctypes
import faulthandler
import gc
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from dfir.core.errors import DfAbortException, DfException
from dfir.core.flow_info import FlowInfo
from dfir.core.udf_payload import UdfPayload
from dfir.ge.error import GeError
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.driver.process_scheduler import WORKER_FAILED
from dfir.runtime.driver.status import FEED_TIMEOUT

WAIT_MS = 5000
TESTS = Path(__file__).resolve().parent
GATE = multiprocessing.get_context("fork").Event()


# -- plans: a chain of one-input nodes, each on the device given ----------------------------------

def chain_model(stages, name="m", recover="off", udf_timeouts=None, **model_kwargs) -> RuntimeModel:
    """`stages`: (node name, function, device) per node, in order; the last node's output is the
    graph's output. `recover` and `udf_timeouts` are the plan's."""
    nodes = []
    for i, (node_name, fn, device) in enumerate(stages):
        nodes.append({"name": node_name, "alias": None, "loc": "test", "input_num": 1, "output_num": 1,
                      "inputs": [{"data": 0} if i == 0 else {"node": i - 1, "port": 0}],
                      "device": device, "attrs": {},
                      "pp": {"kind": "py_udf", "udf": i,
                             "funcs": [{"name": fn.__name__, "inputs": [0], "outputs": [0],
                                        "stream_input": False}]}})
    plan = {"format": 1, "name": name, "inputs": [{"name": "x", "index": 0, "dtype": None, "shape": None}],
            "outputs": [{"node": len(nodes) - 1, "port": 0}], "nodes": nodes,
            "order": list(range(len(nodes))), "ge_graphs": [], "recover": recover,
            "udf_timeouts": udf_timeouts or {},
            "udfs": [{"partition": k, "sha256": "0" * 64, "size": 0} for k in range(len(stages))]}
    payloads = [UdfPayload("function", fn).dumps() for _, fn, _ in stages]
    return RuntimeModel(plan, payloads, None, name, **model_kwargs)


def relay(x):
    return x


def segfault_on_two(x):
    if int(np.sum(x)) == 2:
        faulthandler.disable()  # the worker inherited pytest's; its traceback would only be noise
        ctypes.string_at(0)
    return x


def exit_on_two(x):
    if int(np.sum(x)) == 2:
        os._exit(3)
    return x


def out_of_memory_on_two(x):
    if int(np.sum(x)) == 2:
        raise MemoryError("pretend the heap is gone")
    return x


def sleep_forever(x):
    time.sleep(3600)
    return x


def wait_for_gate(x):
    GATE.wait(WAIT_MS / 1000)
    return x


# -- what a test process holds --------------------------------------------------------------------

def child_processes() -> set[int]:
    """This process's children, zombies included (an unreaped child is a leftover too)."""
    children = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                children.add(int(entry))
    return children


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie has finished)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def holdings() -> dict:
    gc.collect()
    return {"children": child_processes(),
            "dev_shm": set(os.listdir("/dev/shm")),
            "fds": len(os.listdir("/proc/self/fd")),
            "mappings": [line for line in Path("/proc/self/maps").read_text().splitlines()
                         if "memfd:dfir:" in line]}


# -- a dying worker -------------------------------------------------------------------------------

@pytest.mark.parametrize("udf, how", [
    (segfault_on_two, "was killed by signal 11 (SIGSEGV)"),
    (exit_on_two, "exited with code 3"),
    (out_of_memory_on_two, "exited with code 70: MemoryError in node 'crash': pretend the heap is gone"),
])
def test_a_dying_worker_fails_its_transactions_naming_node_and_device(udf, how, lean_executor):
    with chain_model([("relay", relay, "-1"), ("crash", udf, "0:0:1")]) as model:
        pid = model._scheduler.worker_pids[1]
        for value in (1, 2, 3):
            assert model.feed_data([np.array([value])]) == 0
        ok, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert (ok[0].numpy().tolist(), info.transaction_id, ret) == ([1], 1, 0)
        failures = [model.fetch_data(timeout=1000) for _ in range(3)]  # detected within a second
        expected = f"node 'crash' on device 0:0:1: worker process {pid} {how}"
        assert [(tensors, info.transaction_id, int(ret), ret.message) for tensors, info, ret in failures] == [
            ([], 2, WORKER_FAILED, expected), ([], 3, WORKER_FAILED, expected),
            ([], 0, WORKER_FAILED, expected)]  # no transaction left: at once, without waiting
        with pytest.raises(GeError) as error:
            model.feed_data([np.array([4])])
        assert str(error.value) == (f"feed_data failed; model=m; the model failed: {expected}; close it "
                                    f"and load it again")
    assert not alive(pid)


def abort_on_two(x):
    if int(np.sum(x)) == 2:
        raise DfAbortException("the camera is gone", 9900004)
    return x


def reject_two(x):
    if int(np.sum(x)) == 2:
        raise DfException("two is not allowed", 9900005)
    return x


@pytest.mark.parametrize("devices", [("-1", "-1"), ("-1", "0:0:1")])
def test_a_df_exception_fails_only_its_transaction_with_its_code(devices, lean_executor, plain_firing):
    with chain_model([("reject", reject_two, devices[0]), ("relay", relay, devices[1])]) as model:
        for value in (1, 2, 3):
            assert model.feed_data([np.array([value])]) == 0
        fetched = [model.fetch_data(timeout=WAIT_MS) for _ in range(3)]
    assert [(t[0].numpy().tolist() if t else [], i.transaction_id, int(r)) for t, i, r in fetched] == [
        ([1], 1, 0), ([], 2, 9900005), ([3], 3, 0)]
    assert fetched[1][2].message.startswith("UDF reject.reject_two raised DfException:9900005:two is not allowed")


def test_a_udf_raising_df_abort_exception_stops_the_model_once_fetched(lean_executor, plain_firing):
    with chain_model([("abort", abort_on_two, "-1"), ("relay", relay, "0:0:1")]) as model:
        for value in (1, 2):
            assert model.feed_data([np.array([value])]) == 0
        ok, _, ret = model.fetch_data(timeout=WAIT_MS)
        assert (ok[0].numpy().tolist(), ret) == ([1], 0)
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        expected = ("the model was aborted by UDF abort.abort_on_two, which raised DfAbortException:9900004:the "
                    "camera is gone\n  at test_faults.py:")
        assert (tensors, info.transaction_id, int(ret)) == ([], 2, 9900004)
        assert ret.message.startswith(expected)
        with pytest.raises(GeError) as error:
            model.feed_data([np.array([3])])
        assert str(error.value) == f"feed_data failed; model=m; the model failed: {ret.message}; close it and load it again"
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)  # nothing left: at once
        assert (tensors, info.transaction_id, int(ret)) == ([], 0, WORKER_FAILED) and ret.message.startswith(expected)


def test_an_idle_worker_that_dies_names_every_node_on_its_device():
    with chain_model([("a", relay, "0:0:2"), ("b", relay, "0:0:2")]) as model:
        pid = model._scheduler.worker_pids[0]
        os.kill(pid, signal.SIGKILL)
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
    assert (tensors, info.transaction_id, int(ret)) == ([], 0, WORKER_FAILED)
    assert ret.message == f"nodes 'a', 'b' on device 0:0:2: worker process {pid} was killed by signal 9 (SIGKILL)"


def test_flow_info_of_a_lost_transaction_comes_back():
    info = FlowInfo(start_time=4, end_time=8, transaction_id=41)
    info.set_user_data(bytearray(b"mine"))
    with chain_model([("crash", exit_on_two, "-1")]) as model:
        model.feed_data([np.array([2])], flow_info=info)
        _, got, ret = model.fetch_data(timeout=WAIT_MS)
    assert (got.transaction_id, got.start_time, got.end_time, got.get_user_data(4), ret) == (
        41, 4, 8, b"mine", WORKER_FAILED)


def test_a_failed_model_closes_and_the_same_plan_loads_again():
    before = holdings()
    for _ in range(2):
        model = chain_model([("relay", relay, "-1"), ("crash", exit_on_two, "0:0:1")])
        model.feed_data([np.array([2])])
        assert model.fetch_data(timeout=WAIT_MS)[2] == WORKER_FAILED
        model.close()
        with chain_model([("relay", relay, "-1"), ("crash", exit_on_two, "0:0:1")]) as again:
            again.feed_data([np.array([5])])
            assert again.fetch_data(timeout=WAIT_MS)[0][0].numpy().tolist() == [5]
        del model, again
    assert holdings() == before


# -- shutdown leaves nothing behind ---------------------------------------------------------------

def test_close_and_load_in_a_loop_leaves_nothing_behind():
    before = holdings()
    for round_ in range(5):
        with chain_model([("a", relay, "-1"), ("b", relay, "0:0:1"), ("c", relay, "0:0:2")]) as model:
            assert len(model._scheduler.worker_pids) == 3
            model.feed_data([np.full(100_000, round_)])  # a tensor big enough for the arena
            (result,), _, ret = model.fetch_data(timeout=WAIT_MS)
            assert ret == 0 and int(result.numpy()[0]) == round_
        del model, result
    assert holdings() == before


def test_close_kills_a_worker_busy_in_user_code():
    model = chain_model([("sleeper", sleep_forever, "-1")])
    model.feed_data([np.array([1])])
    pid = model._scheduler.worker_pids[0]
    time.sleep(0.1)
    model.close()  # waits a grace period, then kills
    assert not alive(pid) and pid not in child_processes()


def test_finalize_closes_the_models_of_flow_graphs():
    import dfir.dataflow as df

    @df.pyflow
    def inc(x):
        return x + 1
    x = df.FlowData()
    graph = df.FlowGraph([inc.fnode()(x)])
    graph.feed_data({x: np.array([1], dtype=np.int32)})
    assert graph.fetch_data(timeout=WAIT_MS)[2] == 0
    pids = graph._model._scheduler.worker_pids
    df.finalize()
    assert pids and not any(alive(pid) for pid in pids)


def _driver_script(exit_how: str) -> str:
    return textwrap.dedent(f"""
        import sys, time
        import numpy as np
        sys.path.insert(0, {str(TESTS)!r})
        from test_faults import chain_model, relay, sleep_forever
        model = chain_model([("a", relay, "-1"), ("b", sleep_forever, "0:0:1")])
        model.feed_data([np.array([1])])
        print(" ".join(map(str, model._scheduler.worker_pids)), flush=True)
        {exit_how}
    """)


@pytest.mark.parametrize("exit_how", ["time.sleep(0.2)",            # interpreter exit: atexit closes
                                      "time.sleep(3600)"])          # killed by the test
def test_no_worker_outlives_its_driver(exit_how):
    # cwd outside the checkout: the driver imports the installed dfir, never the source folder
    driver = subprocess.Popen([sys.executable, "-c", _driver_script(exit_how)], stdout=subprocess.PIPE,
                              text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
    pids = [int(pid) for pid in driver.stdout.readline().split()]
    assert len(pids) == 2
    if "3600" in exit_how:
        driver.kill()
    assert driver.wait(WAIT_MS / 1000) in (0, -signal.SIGKILL)
    deadline = time.monotonic() + WAIT_MS / 1000
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(alive(pid) for pid in pids)


# -- backpressure ---------------------------------------------------------------------------------

def test_a_slow_consumer_makes_the_feeder_wait_with_bounded_memory(lean_executor):
    GATE.clear()
    depth, size = 2, 1 << 16
    with chain_model([("fast", relay, "-1"), ("gate", wait_for_gate, "0:0:1")], channel_depth=depth) as model:
        accepted = 0
        while accepted < 100 and model.feed_data([np.full(size, accepted, np.uint8)], timeout=0) == 0:
            accepted += 1
            time.sleep(0.005)
        ret = model.feed_data([np.full(size, accepted, np.uint8)], timeout=50)
        assert ret == FEED_TIMEOUT
        # per stage: its input channel and the batch it took; the gate holds its batch in the UDF
        assert accepted <= 4 * depth
        assert model._scheduler._region.arena_stats()["live_bytes"] <= (accepted + 1) * (size + 64)
        GATE.set()
        results = [int(model.fetch_data(timeout=WAIT_MS)[0][0].numpy()[0]) for _ in range(accepted)]
    assert results == list(range(accepted))
