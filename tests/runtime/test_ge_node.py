"""A GE graph node in a loaded model (its worker fires it through the `OutputsStep` of its set
loop, with its one output set built before the call returns), and the driver's fetch that wakes before a
result is due (native `ArrivalForecast`): results, failures and EOS as before, fetches woken by
early results and bounded by their timeouts."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from dfir import data_type as dt
from dfir.core.flow_info import FlowFlag, FlowInfo
from dfir.core.udf_payload import UdfPayload
from dfir.frontend.flow_func.status import FLOW_FUNC_FAILED
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.lowering.ge_graph import lower_ge_graph
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.driver.status import FETCH_TIMEOUT

WAIT_MS = 5000


def ge_model(output_max_bytes: int = -1, device: str = "0:0:1") -> RuntimeModel:
    """relu(x + x) of a float32 vector, as a GE node on `device`."""
    g = Graph("double_relu")
    x = g.data(0, shape=[-1], dtype=dt.DT_FLOAT, name="x")
    g.set_outputs([g.relu(g.add(x, x))])
    entry, _ = lower_ge_graph(g.to_ir())
    node = {"name": "dr", "alias": None, "loc": "test", "input_num": 1, "output_num": 1,
            "inputs": [{"data": 0}], "device": device, "attrs": {}, "pp": {"kind": "ge_graph", "graph": 0}}
    plan = {"format": 1, "name": "ge", "inputs": [{"name": "x", "index": 0, "dtype": None, "shape": None}],
            "outputs": [{"node": 0, "port": 0}], "nodes": [node], "order": [0], "udfs": [],
            "ge_graphs": [dict(entry, weights=[], output_max_bytes=[output_max_bytes])]}
    return RuntimeModel(plan, [], None, "ge")


def test_a_ge_node_in_a_worker_computes_fails_per_transaction_and_passes_eos():
    with ge_model(output_max_bytes=8) as model:
        assert model.feed_data([np.array([-1.0, 2.5], np.float32)]) == 0
        assert model.feed_data([np.array([1.0, 2.0, 3.0], np.float32)]) == 0  # 12 bytes: over its bound
        eos = FlowInfo()
        eos.flow_flags = FlowFlag.DATA_FLOW_FLAG_EOS
        assert model.feed_data({}, eos) == 0
        assert model.feed_data([np.array([4.0, -4.0], np.float32)]) == 0
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(4)]
    (tensors, info, ret), (failed, failed_info, failure), (empty, eos_info, eos_ret), (last, _, _) = results
    assert ([t.numpy().tolist() for t in tensors], info.transaction_id, ret) == ([[0.0, 5.0]], 1, 0)
    assert (failed, failed_info.transaction_id, int(failure)) == ([], 2, FLOW_FUNC_FAILED)
    assert failure.message == ("GE graph node 'dr' (graph 'double_relu') failed: GeError: graph=double_relu; "
                               "output 0 ([3] float32) is 12 bytes, above its outputMaxSize of 8 bytes")
    assert (empty, eos_info.transaction_id, eos_ret, eos_info.flow_flags & FlowFlag.DATA_FLOW_FLAG_EOS) == (
        [], 3, 0, FlowFlag.DATA_FLOW_FLAG_EOS)
    assert last[0].numpy().tolist() == [8.0, 0.0]


def sleep_ms(x):
    """Sleeps x[0] ms, then returns x."""
    time.sleep(float(x[0]) / 1000)
    return x


def sleeping_model() -> RuntimeModel:
    node = {"name": "slow", "alias": None, "loc": "test", "input_num": 1, "output_num": 1,
            "inputs": [{"data": 0}], "device": "0:0:1", "attrs": {},
            "pp": {"kind": "py_udf", "udf": 0,
                   "funcs": [{"name": "sleep_ms", "inputs": [0], "outputs": [0], "stream_input": False}]}}
    plan = {"format": 1, "name": "slow", "inputs": [{"name": "x", "index": 0, "dtype": None, "shape": None}],
            "outputs": [{"node": 0, "port": 0}], "nodes": [node], "order": [0], "ge_graphs": [],
            "udfs": [{"partition": 0, "sha256": "0" * 64, "size": 0}]}
    return RuntimeModel(plan, [UdfPayload("function", sleep_ms).dumps()], None, "slow")


def fetched_in(model: RuntimeModel, timeout_ms: int = WAIT_MS) -> tuple[list, float]:
    start = time.monotonic()
    tensors, _, ret = model.fetch_data(timeout=timeout_ms)
    return (ret, [t.numpy().tolist() for t in tensors]), time.monotonic() - start


def test_a_fetch_that_learnt_long_waits_still_takes_an_early_result_at_once_and_keeps_its_timeout():
    with sleeping_model() as model:
        for _ in range(6):  # the fetch learns waits of 250 ms: it sleeps until 150 ms, then polls
            model.feed_data([np.array([250.0])])
            result, _ = fetched_in(model)
            assert result == (0, [[250.0]])
        model.feed_data([np.array([0.0])])
        result, seconds = fetched_in(model)
        assert result == (0, [[0.0]]) and seconds < 0.1  # the worker's ring ends the forecast's sleep
        (ret, tensors), seconds = fetched_in(model, 30)
        assert (int(ret), tensors) == (FETCH_TIMEOUT, []) and 0.02 <= seconds < 0.12  # not 150 ms
        model.feed_data([np.array([5.0])])  # sooner than learnt: no poll is needed to see it
        assert fetched_in(model)[0] == (0, [[5.0]])


def test_a_model_closed_during_a_forecast_wait_ends_the_fetch():
    with sleeping_model() as model:
        for _ in range(5):
            model.feed_data([np.array([200.0])])
            assert fetched_in(model)[0] == (0, [[200.0]])
        model.feed_data([np.array([3000.0])])
        threading.Timer(0.05, model.close).start()
        start = time.monotonic()
        with pytest.raises(GeError, match="the model is closed"):
            model.fetch_data(timeout=WAIT_MS)
        assert time.monotonic() - start < 2.0
