"""The runtime host: hand-written execution plans of small UDFs, fed and fetched through RuntimeModel.

UDFs run in worker processes (forked): what they record or wait on must be shared with the test
process (multiprocessing events) or come back in their results.
"""
from __future__ import annotations

import multiprocessing
import os
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dfir import data_type as dt
from dfir.core.flow_info import FlowFlag, FlowInfo
from dfir.core.messages import Message, TransactionMeta
from dfir.core.tensor import Tensor
from dfir.core.udf_payload import UdfPayload
from dfir.flow_func import FlowMsgQueue
from dfir.frontend.flow_func.status import FLOW_FUNC_FAILED
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.lowering.ge_graph import lower_ge_graph
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.driver.stall import id_ranges
from dfir.runtime.funcs import FuncSpec, NodeSpec, Source
from dfir.runtime.worker import host
from thread_scheduler import Scheduler
from dfir.runtime.driver.status import (DATATYPE_INVALID, FETCH_TIMEOUT, FEED_TIMEOUT, PARAM_INVALID, SHAPE_INVALID,
                                        RetCode)

WAIT_MS = 5000  # generous bound for results that must arrive; a broken runtime fails, never hangs


# -- plan building ----------------------------------------------------------------------------

def data(k):
    return {"data": k}


def out(node, port=0):
    return {"node": node, "port": port}


def func(name, inputs, outputs, stream_input=False):
    return {"name": name, "inputs": inputs, "outputs": outputs, "stream_input": stream_input}


def py_node(name, inputs, output_num, udf, funcs):
    return {"name": name, "alias": None, "loc": "test", "input_num": len(inputs),
            "output_num": output_num, "inputs": inputs, "device": "-1", "attrs": {},
            "pp": {"kind": "py_udf", "udf": udf, "funcs": funcs}}


def make_plan(input_names, nodes, outputs, dtypes=None, shapes=None):
    inputs = [{"name": name, "index": i, "dtype": (dtypes or {}).get(name),
               "shape": (shapes or {}).get(name)} for i, name in enumerate(input_names)]
    return {"format": 1, "name": "test", "inputs": inputs, "outputs": outputs, "nodes": nodes,
            "order": list(range(len(nodes))), "udfs": udf_entries(nodes), "ge_graphs": []}


def udf_entries(nodes):
    """A `udfs` entry per payload the nodes index (RuntimeModel takes the payloads as given)."""
    count = 1 + max((node["pp"]["udf"] for node in nodes if "udf" in node["pp"]), default=-1)
    return [{"partition": k, "sha256": "0" * 64, "size": 0} for k in range(count)]


def fn_payload(fn, num_returns=None, choice_output=None):
    name = fn.__name__
    return UdfPayload("function", fn, num_returns={name: num_returns} if num_returns else {},
                      choice_output={name: choice_output} if choice_output else {}).dumps()


def single_node_model(fn, num_inputs=1, num_outputs=1, *, num_returns=None, choice_output=None,
                      stream_input=False, **model_kwargs):
    """A one-node graph: inputs i0, i1, ... feed `fn`; its outputs are the graph's outputs."""
    names = [f"i{k}" for k in range(num_inputs)]
    node = py_node(f"{fn.__name__}_fnode", [data(k) for k in range(num_inputs)], num_outputs, 0,
                   [func(fn.__name__, list(range(num_inputs)), list(range(num_outputs)), stream_input)])
    plan = make_plan(names, [node], [out(0, p) for p in range(num_outputs)])
    return RuntimeModel(plan, [fn_payload(fn, num_returns, choice_output)], None, "test", **model_kwargs)


def values(tensors):
    return [t.numpy().tolist() for t in tensors]


# -- user functions (module level: payloads pickle them by reference) ---------------------------

def add(a, b):
    return a + b


def inc(x):
    return x + 1


def double(x):
    return x * 2


def triple(x):
    return x * 3


def identity(x):
    return x


def split(x):
    return x + 1, x * 2


def tag(x):
    return x, f"tag {x}"


def three_values(x):
    return x, x, x


def fail_on_negative(x):
    if (np.asarray(x) < 0).any():
        raise ValueError(f"negative input {np.asarray(x).tolist()}")
    return x


def count_up(a):
    for i in range(5):
        yield a + i


def seed_stream(a, b):
    data1 = a.get()
    data2 = a.get()
    data3 = b.get()
    return data1 + data2 + data3


_FORK = multiprocessing.get_context("fork")
UDF_BLOCKED = _FORK.Event()


def wait_for_b(a, b):
    a.get()
    UDF_BLOCKED.set()
    return b.get()


RELEASE = _FORK.Event()


def wait_for_release(x):
    RELEASE.wait(WAIT_MS / 1000)
    return x


def probe_queue(q):
    try:
        q.put(1)
    except NotImplementedError as exc:
        refusal = str(exc)
    return isinstance(q, FlowMsgQueue), q.qsize(), q.get_nowait().tolist(), q.full(), refusal


class CallCounter:
    """Counts its calls (in its worker process); each result appends the count so far."""

    def __init__(self):
        self.calls = 0

    def record_call(self, x):
        self.calls += 1
        return np.append(x, self.calls)


CONSTRUCTED = []  # filled where a Scaler is built: in a worker process, never in the test's


class Scaler:
    def __init__(self, factor):
        self.factor = factor
        self.added = 0
        CONSTRUCTED.append(self)

    def add(self, x):
        self.added += 1
        return x + self.factor

    def scale(self, y):
        return y * self.factor + self.added


# -- pipelines --------------------------------------------------------------------------------

def test_two_node_chain_adds_then_increments():
    nodes = [py_node("add_fnode", [data(0), data(1)], 1, 0, [func("add", [0, 1], [0])]),
             py_node("inc_fnode", [out(0)], 1, 1, [func("inc", [0], [0])])]
    plan = make_plan(["a", "b"], nodes, [out(1)])
    with RuntimeModel(plan, [fn_payload(add), fn_payload(inc)], None, "chain") as model:
        assert model.input_names == ["a", "b"] and model.num_outputs == 1
        assert model.feed_data({"a": np.array([1, 2]), "b": np.array([3, 4])}) == 0
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert (values(tensors), info.transaction_id, ret) == ([[5, 7]], 1, 0)
        assert isinstance(tensors[0], Tensor) and isinstance(ret, RetCode)
        assert (repr(ret), repr(RetCode(FLOW_FUNC_FAILED, "why"))) == ("0", "RetCode(564000, 'why')")
        with pytest.raises(AttributeError, match="^RetCode is immutable; cannot set 'message'$"):
            ret.message = "changed"  # success codes are shared between fetches


def test_diamond_joins_both_branches_per_transaction():
    nodes = [py_node("src", [data(0)], 1, 0, [func("inc", [0], [0])]),
             py_node("left", [out(0)], 1, 1, [func("double", [0], [0])]),
             py_node("right", [out(0)], 1, 2, [func("triple", [0], [0])]),
             py_node("join", [out(1), out(2)], 1, 3, [func("add", [0, 1], [0])])]
    plan = make_plan(["x"], nodes, [out(3)])
    payloads = [fn_payload(inc), fn_payload(double), fn_payload(triple), fn_payload(add)]
    with RuntimeModel(plan, payloads, None, "diamond") as model:
        for x in range(10):
            assert model.feed_data([np.array(x)]) == 0
        results = [model.fetch_data(timeout=WAIT_MS)[0][0].numpy().item() for _ in range(10)]
    assert results == [5 * (x + 1) for x in range(10)]


def test_multiple_outputs_fetch_all_or_by_index():
    with single_node_model(split, num_outputs=2, num_returns=2) as model:
        model.feed_data({"i0": np.array(3)})
        model.feed_data({"i0": np.array(10)})
        tensors, _, ret = model.fetch_data(timeout=WAIT_MS)
        assert (values(tensors), ret) == ([4, 6], 0)
        assert values(model.fetch_data(indexes=[1], timeout=WAIT_MS)[0]) == [20]
        assert values(model.fetch_data(indexes=[0], timeout=WAIT_MS)[0]) == [11]


def test_num_returns_mismatch_fails_that_transaction():
    nodes = [py_node("add_fnode", [data(0)], 2, 0, [func("add", [0], [0, 1])])]
    payload = UdfPayload("function", three_values, num_returns={"add": 2}).dumps()
    with RuntimeModel(make_plan(["x"], nodes, [out(0, 0), out(0, 1)]), [payload], None, "m") as model:
        model.feed_data([np.array(1)])
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
    assert (tensors, info.transaction_id, ret) == ([], 1, FLOW_FUNC_FAILED)
    assert ret.message == "UDF add_fnode.add returned 3 values but num_returns is 2"


def test_a_non_tuple_result_for_several_outputs_fails_that_transaction():
    with single_node_model(identity, num_outputs=2, num_returns=2) as model:
        model.feed_data([np.array(1)])
        _, _, ret = model.fetch_data(timeout=WAIT_MS)
    assert ret == FLOW_FUNC_FAILED
    assert ret.message == ("UDF identity_fnode.identity returned Tensor but num_returns is 2; "
                           "expected a tuple of 2 values")


def test_udf_exception_fails_only_its_transaction_and_is_forwarded_not_rerun():
    nodes = [py_node("check", [data(0)], 1, 0, [func("fail_on_negative", [0], [0])]),
             py_node("sink", [out(0)], 1, 1, [func("record_call", [0], [0])])]
    plan = make_plan(["x"], nodes, [out(1)])
    payloads = [fn_payload(fail_on_negative), UdfPayload("class", CallCounter).dumps()]
    with RuntimeModel(plan, payloads, None, "m") as model:
        for x in (1, -2, 3):
            model.feed_data([np.array([x])])
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(3)]
    # the sink's second call is the third transaction's: the failed one was forwarded past it
    assert [(values(t), info.transaction_id, int(ret)) for t, info, ret in results] == [
        ([[1, 1]], 1, 0), ([], 2, FLOW_FUNC_FAILED), ([[3, 2]], 3, 0)]
    assert results[1][2].message == ("UDF check.fail_on_negative raised ValueError: negative input [-2]\n"
                                     f"  at test_scheduler.py:{fail_on_negative.__code__.co_firstlineno + 2} "
                                     "in fail_on_negative")


def test_choice_output_suppresses_outputs_it_rejects():
    def keep_positive(value):
        return value > 0

    with single_node_model(split, num_outputs=2, num_returns=2, choice_output=keep_positive) as model:
        model.feed_data([np.array(-1)])   # outputs (0, -2): neither is emitted
        model.feed_data([np.array(5)])    # outputs (6, 10): both are emitted
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert (values(tensors), info.transaction_id, ret) == ([6, 10], 2, 0)
        assert model.fetch_data(timeout=50)[2] == FETCH_TIMEOUT


def test_generator_udf_emits_one_result_per_yield():
    with single_node_model(count_up) as model:
        model.feed_data([np.array(10)])
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(5)]
        assert [values(t) for t, _, _ in results] == [[10], [11], [12], [13], [14]]
        assert {info.transaction_id for _, info, _ in results} == {1}
        assert model.fetch_data(timeout=50)[2] == FETCH_TIMEOUT


def test_stream_input_func_gets_from_its_queues_as_in_the_seed():
    with single_node_model(seed_stream, num_inputs=2, stream_input=True) as model:
        model.feed_data([np.array(1), np.array(10)])
        model.feed_data([np.array(2), np.array(20)])
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert (values(tensors), info.transaction_id, ret) == ([13], 2, 0)   # 1 + 2 + 10
        assert model.fetch_data(timeout=50)[2] == FETCH_TIMEOUT              # waits for a's next two
        model.feed_data([np.array(3), np.array(30)])
        model.feed_data([np.array(4), np.array(40)])
        assert values(model.fetch_data(timeout=WAIT_MS)[0]) == [27]          # 3 + 4 + 20


def test_stream_input_queue_is_a_read_only_queue():
    with single_node_model(probe_queue, stream_input=True) as model:
        model.feed_data([np.array([7])])
        probed, ret = model.fetch(timeout=WAIT_MS)
    assert (probed, ret) == ([(True, 1, [7], False, "FlowMsgQueue.put is not allowed: the runtime fills the "
                                                     "queue; a UDF can only get() from it")], 0)


def test_class_udf_methods_serve_their_own_inputs_and_outputs_on_one_instance():
    CONSTRUCTED.clear()
    node = py_node("Scaler_fnode", [data(0), data(1)], 2, 0,
                   [func("add", [0], [0]), func("scale", [1], [1])])
    payload = UdfPayload("class", Scaler, args=(10,)).dumps()
    with RuntimeModel(make_plan(["x", "y"], [node], [out(0, 0), out(0, 1)]), [payload], None, "c") as model:
        model.feed_data({"x": np.array(1)}, partial_inputs=True)
        assert values(model.fetch_data(indexes=[0], timeout=WAIT_MS)[0]) == [11]
        model.feed_data({"y": np.array(2)}, partial_inputs=True)
        assert values(model.fetch_data(indexes=[1], timeout=WAIT_MS)[0]) == [21]  # 2 * 10 + one add
    assert CONSTRUCTED == []  # the one instance lives in the worker process


def test_results_come_back_in_feed_order_over_200_transactions():
    with single_node_model(inc) as model:
        for x in range(200):
            assert model.feed_data([np.array(x)]) == 0
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(200)]
    assert [t[0].numpy().item() for t, _, _ in results] == [x + 1 for x in range(200)]
    assert [info.transaction_id for _, info, _ in results] == list(range(1, 201))


def test_a_full_pipeline_blocks_feeding_until_results_are_fetched():
    RELEASE.clear()
    with single_node_model(wait_for_release, channel_depth=1) as model:
        assert model.feed_data([np.array(1)]) == 0   # taken by the worker, which waits
        tries = []  # each feed takes a transaction id, a refused one too

        def fill():
            tries.append(None)
            return model.feed_data([np.array(2)], timeout=0) == 0
        _wait_until(fill)  # fills the input channel, as transaction 1 + len(tries)
        filled = 1 + len(tries)
        ret = model.feed_data([np.array(3)], timeout=50)
        assert (ret, ret.message) == (FEED_TIMEOUT, (
            f"no room in the input channels within 50 ms: 2 transactions in flight ({id_ranges([1, filled])}); the "
            f"oldest, 1, is in no channel: node 'wait_for_release_fnode' (device host) is at work; full: input 0 of "
            f"node 'wait_for_release_fnode' (device host) (1 of 1: {filled})"))
        RELEASE.set()
        assert [values(model.fetch_data(timeout=WAIT_MS)[0]) for _ in range(2)] == [[1], [2]]


# -- timeouts and shutdown ----------------------------------------------------------------------

@pytest.mark.parametrize("timeout_ms", [0, 100, 300])
def test_fetch_timeout_is_honoured(timeout_ms):
    with single_node_model(inc) as model:
        start = time.monotonic()
        tensors, info, ret = model.fetch_data(timeout=timeout_ms)
        elapsed_ms = (time.monotonic() - start) * 1000
    assert timeout_ms <= elapsed_ms < timeout_ms + 200
    stall = ": no transaction is in flight; full: none; empty: output 0" if timeout_ms else ""
    assert (tensors, info.transaction_id, ret, ret.message) == (
        [], 0, FETCH_TIMEOUT, f"no result within {timeout_ms} ms{stall}")


def test_close_stops_a_udf_blocked_in_get_promptly():
    UDF_BLOCKED.clear()
    model = single_node_model(wait_for_b, num_inputs=2, stream_input=True)
    model.feed_data({"i0": np.array(1)}, partial_inputs=True)
    assert UDF_BLOCKED.wait(WAIT_MS / 1000)
    workers = model._scheduler.worker_pids
    assert len(workers) == 1 and workers[0] != os.getpid()
    start = time.monotonic()
    model.close()
    assert time.monotonic() - start < 0.5
    for pid in workers:  # exited and reaped
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_close_wakes_a_fetch_waiting_forever():
    model = single_node_model(inc)
    threading.Timer(0.1, model.close).start()
    with pytest.raises(GeError, match="^fetch_data failed; model=test; the model is closed$"):
        model.fetch_data()


def test_calls_after_close_raise():
    model = single_node_model(inc)
    model.close()
    model.close()
    with pytest.raises(GeError) as error:
        model.feed_data([np.array(1)])
    assert str(error.value) == "feed_data failed; model=test; the model is closed"
    with pytest.raises(GeError, match="^fetch failed; model=test; the model is closed$"):
        model.fetch(timeout=0)


# -- Python objects, flow info, EOS -------------------------------------------------------------

def test_feed_and_fetch_python_objects():
    with single_node_model(identity) as model:
        record = {"name": "frame", "boxes": [(1, 2), (3, 4)]}
        for value in (record, None, Tensor(np.array([1.5], dtype=np.float32))):
            assert model.feed({"i0": value}) == 0
        assert model.fetch(timeout=WAIT_MS) == ([record], 0)
        assert model.fetch(timeout=WAIT_MS) == ([None], 0)
        (tensor,), ret = model.fetch(timeout=WAIT_MS)
        assert (tensor.numpy().tolist(), tensor.get_data_type(), ret) == ([1.5], dt.DT_FLOAT, 0)


def test_udf_receives_the_fed_object_and_may_return_objects():
    def describe(obj):
        return {"type": type(obj).__name__, "len": len(obj)}

    with single_node_model(describe) as model:
        model.feed([["a", "b", "c"]])
        assert model.fetch(timeout=WAIT_MS) == ([{"type": "list", "len": 3}], 0)


def test_fetch_data_of_an_object_output_is_param_invalid():
    with single_node_model(tag, num_outputs=2, num_returns=2) as model:
        model.feed_data([np.array(1)])
        assert values(model.fetch_data(indexes=[0], timeout=WAIT_MS)[0]) == [1]
        tensors, info, ret = model.fetch_data(indexes=[1], timeout=WAIT_MS)
    assert (tensors, info.transaction_id, ret) == ([], 1, PARAM_INVALID)
    assert ret.message == "output 1 holds a Python object (str), not a tensor; fetch() returns objects"


def test_flow_info_travels_with_the_transaction():
    info = FlowInfo(start_time=5, end_time=9, flow_flags=FlowFlag.DATA_FLOW_FLAG_SEG, transaction_id=77)
    info.set_user_data(bytearray(b"UserData123"))
    info.set_user_data(bytearray(b"!"), offset=20)
    with single_node_model(inc) as model:
        model.feed_data([np.array(1)], flow_info=info)
        model.feed_data([np.array(2)])
        _, got, _ = model.fetch_data(timeout=WAIT_MS)
        _, auto, _ = model.fetch_data(timeout=WAIT_MS)
    assert (got.start_time, got.end_time, got.flow_flags, got.transaction_id) == (5, 9, 2, 77)
    assert got.data_size == 21
    assert got.get_user_data(11) == b"UserData123" and got.get_user_data(1, 20) == b"!"
    assert (auto.transaction_id, auto.data_size) == (1, 0)


def test_eos_with_an_empty_feed_sends_an_empty_marker():
    def pass_marker(x):
        return None if x is None else x + 1

    eos = FlowInfo(flow_flags=FlowFlag.DATA_FLOW_FLAG_EOS)
    with single_node_model(pass_marker) as model:
        model.feed_data([np.array(1)])
        assert model.feed_data({}, flow_info=eos) == 0
        assert values(model.fetch_data(timeout=WAIT_MS)[0]) == [2]
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
    assert (tensors, info.flow_flags, info.transaction_id, ret) == ([], 1, 2, 0)


def test_an_empty_feed_without_eos_is_rejected(caplog):
    with single_node_model(inc) as model:
        ret = model.feed_data({})
    reason = "feed is empty; only feed_data with DATA_FLOW_FLAG_EOS set in flow_info may feed nothing"
    assert (ret, ret.message) == (PARAM_INVALID, reason)
    assert caplog.messages == [f"feed_data failed; model=test; {reason}"]


# -- feed validation ----------------------------------------------------------------------------

class _FlowData:
    def __init__(self, name):
        self.name = name


@pytest.mark.parametrize("feed, code, expected", [
    ({"a": 1}, PARAM_INVALID, "feed is missing input 'b'; expected inputs ['a', 'b']"),
    ({"a": 1, "c": 2}, PARAM_INVALID, "feed names input 'c', but the model's inputs are ['a', 'b']"),
    ({"a": 1, 0: 2}, PARAM_INVALID, "input 'a' is fed twice"),
    ({5: 1}, PARAM_INVALID, "input index 5 is out of range; the model has 2 inputs ['a', 'b']"),
    ([1], PARAM_INVALID, "feed lists 1 values but the model has 2 inputs ['a', 'b']"),
    ({"a": "text", "b": 1}, DATATYPE_INVALID,
     "input 'a' cannot be a DT_INT32 tensor: invalid literal for int() with base 10: 'text'"),
    ({"a": [[1, 2, 3]], "b": {"k": 1}}, DATATYPE_INVALID,
     "input 'b' got a dict, not a tensor; feed() carries Python objects"),
    ({"a": [1, 2], "b": 1}, SHAPE_INVALID, "input 'a' expects shape [-1, 3], got [2]"),
])
def test_feed_data_returns_ge_codes_and_logs_why_naming_the_input(feed, code, expected, caplog):
    with _two_input_model(dtypes={"a": "DT_INT32"}, shapes={"a": [-1, 3]}) as model:
        ret = model.feed_data(feed)
    assert (ret, ret.message) == (code, expected)
    assert caplog.messages == [f"feed_data failed; model=test; {expected}"]


def test_feed_keys_may_be_names_positions_or_objects_with_a_name():
    with _two_input_model(dtypes={"a": "DT_INT32"}) as model:
        model.feed_data({_FlowData("a"): [[1, 2, 3]], 1: np.array([[10, 20, 30]])})
        (tensor,), _, ret = model.fetch_data(timeout=WAIT_MS)
    assert (tensor.numpy().tolist(), tensor.get_data_type(), ret) == ([[11, 22, 33]], dt.DT_INT64, 0)


def test_fetch_index_out_of_range_returns_param_invalid():
    with single_node_model(inc) as model:
        tensors, _, ret = model.fetch_data(indexes=[1], timeout=0)
    assert (tensors, ret, ret.message) == ([], PARAM_INVALID, "output index 1 is out of range; the model has 1 outputs")


def _two_input_model(**plan_kwargs):
    node = py_node("add_fnode", [data(0), data(1)], 1, 0, [func("add", [0, 1], [0])])
    return RuntimeModel(make_plan(["a", "b"], [node], [out(0)], **plan_kwargs), [fn_payload(add)],
                        None, "test")


# -- plan errors --------------------------------------------------------------------------------

def test_an_input_no_func_consumes_is_a_plan_error():
    node = py_node("n", [data(0), data(1)], 1, 0, [func("inc", [0], [0])])
    with pytest.raises(GeError, match=r"^node 'n' input 1 is consumed by funcs \[\]; expected exactly one$"):
        RuntimeModel(make_plan(["a", "b"], [node], [out(0)]), [fn_payload(inc)], None, "test")


def test_a_missing_method_is_a_plan_error():
    node = py_node("n", [data(0)], 1, 0, [func("rotate", [0], [0])])
    payload = UdfPayload("class", Scaler, args=(1,)).dumps()
    with pytest.raises(GeError, match="^node 'n' maps func 'rotate', but class Scaler has no method"):
        RuntimeModel(make_plan(["a"], [node], [out(0)]), [payload], None, "test")


def test_an_unloadable_payload_is_a_plan_error():
    node = py_node("n", [data(0)], 1, 0, [func("inc", [0], [0])])
    with pytest.raises(GeError, match="^UDF payload 0 cannot be loaded: "):
        RuntimeModel(make_plan(["a"], [node], [out(0)]), [b"not a pickle"], None, "test")


# -- GE graph nodes, through the scheduler interface directly ----------------------------------

class _FakeRunner:
    def __init__(self, entry, weights):
        self.entry = entry

    def run(self, arrays):
        if arrays[0].shape != (2,):
            raise GeError(f"input 'x' expects shape [2], got {list(arrays[0].shape)}")
        return [arrays[0] @ np.array([[1, 2], [3, 4]])]


def test_ge_graph_node_runs_its_graph_and_fails_per_transaction():
    plan = make_plan(["x"], [{"name": "mm", "input_num": 1, "output_num": 1, "inputs": [data(0)],
                              "pp": {"kind": "ge_graph", "graph": 0}}], [out(0)])
    plan["ge_graphs"] = [{"name": "mm_graph", "inputs": [{"name": "x", "index": 0, "dtype": "DT_INT64", "shape": [-1],
                                                         "ranges": [[0, -1]], "value": 0}],
                          "ops": [], "outputs": [0]}]
    nodes = host.build_nodes(plan, [], None, runner_factory=_FakeRunner)
    scheduler = Scheduler("ge", nodes, 1, [Source(0, 0)])
    try:
        for txn, x in enumerate(([1, 1], [1, 2, 3], [0, 1]), start=1):
            assert scheduler.submit([Message.tensor(TransactionMeta(txn), np.array(x))])
        first, failed, third = (scheduler.fetch([0], WAIT_MS)[0] for _ in range(3))
    finally:
        scheduler.close()
    assert (first.payload.tolist(), third.payload.tolist()) == ([4, 6], [3, 4])
    assert (failed.meta.transaction_id, failed.ret_code) == (2, FLOW_FUNC_FAILED)
    assert failed.error == ("GE graph node 'mm' (graph 'mm_graph') failed: GeError: input 'x' "
                            "expects shape [2], got [3]")


def test_ge_graph_node_runs_with_the_reference_kernels():
    g = Graph("double_relu")
    x = g.data(0, shape=[-1], dtype=dt.DT_FLOAT, name="x")
    g.set_outputs([g.relu(g.add(x, x))])
    entry, weights = lower_ge_graph(g.to_ir())
    assert weights == []
    node = {"name": "dr", "input_num": 1, "output_num": 1, "inputs": [data(0)],
            "pp": {"kind": "ge_graph", "graph": 0}}
    plan = make_plan(["x"], [node], [out(0)])
    plan["ge_graphs"] = [dict(entry, weights=[])]
    with RuntimeModel(plan, [], None, "ge") as model:
        model.feed_data([np.array([-1.0, 2.5], dtype=np.float32)])
        (tensor,), _, ret = model.fetch_data(timeout=WAIT_MS)
    assert (tensor.numpy().tolist(), tensor.get_data_type(), ret) == ([0.0, 5.0], dt.DT_FLOAT, 0)


def test_scheduler_fetch_returns_nothing_on_timeout_and_takes_nothing():
    spec = FuncSpec("pair", (0,), (0, 1), False,
                    lambda msgs: iter([[(0, msgs[0])]]))   # emits on output 0 only
    scheduler = Scheduler("s", [NodeSpec("n", (Source(None, 0),), 2, (spec,))], 1,
                          [Source(0, 0), Source(0, 1)])
    try:
        scheduler.submit([Message.tensor(TransactionMeta(1), np.array(1))])
        assert scheduler.fetch([0, 1], 50) == []
        assert scheduler.fetch([0], WAIT_MS)[0].payload.item() == 1
    finally:
        scheduler.close()


# -- property: random chains ------------------------------------------------------------------

def _offset_fn(k):
    def offset(x):
        return x + k
    return offset


@settings(max_examples=15, deadline=None)
@given(offsets=st.lists(st.integers(-50, 50), min_size=1, max_size=4),
       feeds=st.lists(st.lists(st.integers(-1000, 1000), min_size=1, max_size=3), min_size=1, max_size=6))
def test_random_chains_of_offsets(offsets, feeds):
    nodes = [py_node(f"n{i}", [data(0) if i == 0 else out(i - 1)], 1, i, [func("offset", [0], [0])])
             for i in range(len(offsets))]
    payloads = [fn_payload(_offset_fn(k)) for k in offsets]
    with RuntimeModel(make_plan(["x"], nodes, [out(len(nodes) - 1)]), payloads, None, "chain") as model:
        for feed in feeds:
            assert model.feed_data([np.array(feed)]) == 0
        results = [model.fetch_data(timeout=WAIT_MS) for _ in feeds]
    assert [values(t) for t, _, _ in results] == [[[v + sum(offsets) for v in feed]] for feed in feeds]
    assert [info.transaction_id for _, info, _ in results] == list(range(1, len(feeds) + 1))


def _wait_until(condition, timeout_s=WAIT_MS / 1000):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.005)
