"""The runtime's fast paths give what the general ones give: `fetch_data` of plain tensors
(native `take_tensors`, `Tensor.of_array`, `FlowInfo.of_fields`) and a worker's lean loop for
chains of plain single-input, single-output funcs (errors forwarded, failures of a put turned
into the transaction's failure, order kept)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dfir
import dfir.dataflow as df
from dfir.core.flow_info import FlowInfo
from dfir.core.messages import Kind, Message, TransactionMeta, new_message
from dfir.core.tensor import Tensor
from dfir.core.udf_payload import UdfPayload
from dfir.frontend.dataflow import names
from dfir.frontend.flow_func.status import FLOW_FUNC_FAILED
from dfir.ge.error import GeError
from dfir.om.schema import PartitionType
from dfir.runtime import _native
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.driver.status import DATATYPE_INVALID, PARAM_INVALID, SHAPE_INVALID
from dfir.runtime.om import read_om

WAIT_MS = 5000


def chain_model(stages, name="fast") -> RuntimeModel:
    """`stages`: (node name, function, device) per node, each feeding the next; the last node's
    output is the graph's output."""
    nodes = [{"name": node_name, "alias": None, "loc": "test", "input_num": 1, "output_num": 1,
              "inputs": [{"data": 0} if i == 0 else {"node": i - 1, "port": 0}], "device": device,
              "attrs": {}, "pp": {"kind": "py_udf", "udf": i,
                                  "funcs": [{"name": fn.__name__, "inputs": [0], "outputs": [0],
                                             "stream_input": False}]}}
             for i, (node_name, fn, device) in enumerate(stages)]
    plan = {"format": 1, "name": name, "inputs": [{"name": "x", "index": 0, "dtype": None, "shape": None}],
            "outputs": [{"node": len(nodes) - 1, "port": 0}], "nodes": nodes,
            "order": list(range(len(nodes))), "ge_graphs": [],
            "udfs": [{"partition": k, "sha256": "0" * 64, "size": 0} for k in range(len(stages))]}
    payloads = [UdfPayload("function", fn).dumps() for _, fn, _ in stages]
    return RuntimeModel(plan, payloads, None, name)


def inc(x):
    return x + 1


def fail_on_two(x):
    if int(np.sum(x)) == 2:
        raise ValueError("two")
    return x


def lock_on_two(x):
    """An object that cannot be pickled for 2: its put to another device fails."""
    import threading
    return threading.Lock() if int(np.sum(x)) == 2 else x


def to_complex(x):
    return x.astype(np.complex64)


def test_of_array_and_of_fields_build_what_the_constructors_build():
    array = np.arange(6, dtype=np.float16).reshape(2, 3)
    fast, slow = Tensor.of_array(array), Tensor(array)
    assert fast.numpy() is array
    assert (fast.tensor_desc, fast.get_shape(), fast.get_data_type()) == (
        slow.tensor_desc, slow.get_shape(), slow.get_data_type())
    assert Tensor.of_array(array.copy()).tensor_desc is fast.tensor_desc  # described once per (dtype, shape)
    with pytest.raises(GeError) as error:
        Tensor.of_array(np.zeros(2, dtype=np.complex64))
    assert str(error.value).startswith("numpy dtype complex64 has no GE data type; supported: ['bool', ")
    expected = FlowInfo(1, 2, 3, 4)
    expected.set_user_data(b"abc")
    info = FlowInfo.of_fields(1, 2, 3, 4, b"abc")
    assert vars(info) == vars(expected) and info.get_user_data(3) == bytearray(b"abc")
    assert vars(FlowInfo.of_fields(0, 0, 0, 0, b"")) == vars(FlowInfo())


@pytest.mark.parametrize("kind, payload", [(Kind.TENSOR, np.arange(3)), (Kind.RAW, np.zeros(4, np.uint8)),
                                           (Kind.OBJECT, {"k": 1}), (Kind.EMPTY, None)])
def test_the_native_new_message_builds_what_new_message_builds(kind, payload):
    meta = TransactionMeta(7, 1, 2, 3, b"u")
    fast, slow = _native.new_message(meta, kind, payload), new_message(meta, kind, payload)
    assert type(fast) is Message and fast == slow and fast.payload is payload and fast.meta is meta


@pytest.mark.parametrize("devices", [("-1", "-1", "-1"), ("-1", "0:0:1", "0:0:2")])
def test_a_chain_of_plain_funcs_forwards_failures_in_feed_order(devices, lean_executor, plain_firing):
    stages = [("a", inc, devices[0]), ("b", fail_on_two, devices[1]), ("c", inc, devices[2])]
    with chain_model(stages) as model:
        for value in range(4):
            info = FlowInfo(start_time=value, transaction_id=10 + value)
            info.set_user_data(bytes([value + 1]))
            assert model.feed_data([np.array([value], dtype=np.int32)], info) == 0
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(4)]
    got = [([t.numpy().tolist() for t in tensors], info.transaction_id, info.start_time,
            bytes(info.get_user_data(1)), int(ret), ret.message) for tensors, info, ret in results]
    assert got == [([[2]], 10, 0, b"\x01", 0, ""),
                   ([], 11, 1, b"\x02", FLOW_FUNC_FAILED, "UDF b.fail_on_two raised ValueError: two\n"
                    f"  at test_fast_paths.py:{fail_on_two.__code__.co_firstlineno + 2} in fail_on_two"),
                   ([[4]], 12, 2, b"\x03", 0, ""), ([[5]], 13, 3, b"\x04", 0, "")]


def test_an_output_that_cannot_be_put_fails_its_transaction_only(lean_executor, plain_firing):
    with chain_model([("a", lock_on_two, "0:0:1"), ("b", inc, "0:0:2")]) as model:
        for value in (1, 2, 3):
            assert model.feed_data([np.array([value])]) == 0
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(3)]
    assert [int(ret) for _, _, ret in results] == [0, FLOW_FUNC_FAILED, 0]
    assert [t.numpy().tolist() for t in results[0][0] + results[2][0]] == [[2], [4]]
    assert results[1][2].message.startswith("node 'a' func 'lock_on_two' failed: TypeError: ")
    assert "lock" in results[1][2].message


def test_fetching_a_tensor_without_a_ge_type_is_param_invalid():
    with chain_model([("a", to_complex, "0:0:1")]) as model:
        info = FlowInfo(transaction_id=5)
        assert model.feed_data([np.array([1.0])], info) == 0
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
    assert (tensors, info.transaction_id, int(ret)) == ([], 5, PARAM_INVALID)
    assert ret.message.startswith("numpy dtype complex64 has no GE data type")


@df.pyflow
def _relay(x):
    return x


def _in_flight_graph(options=None):
    return df.FlowGraph([_relay.fnode()(df.FlowData(name="x"))], options)


def test_the_default_depth_holds_a_few_hundred_messages_in_flight():
    graph = _in_flight_graph()
    x = graph.inputs[0]
    rets = [graph.feed_data({x: np.array([k], np.int32)}, timeout=100) for k in range(600)]
    try:
        assert rets[0] == 0 and 545601 in rets, "600 unfetched messages fit in the default depth"
    finally:
        df.finalize()


def test_a_deeper_channel_depth_lets_a_driver_keep_that_many_in_flight():
    graph = _in_flight_graph({"dfir.runtime.channel_depth": "1024"})
    x = graph.inputs[0]
    try:
        assert [graph.feed_data({x: np.array([k], np.int32)}, timeout=5000) for k in range(1000)] == [0] * 1000
        fetched = [graph.fetch_data(timeout=5000) for _ in range(1000)]
        assert [int(outputs[0].numpy()[0]) for outputs, _, _ in fetched] == list(range(1000))
    finally:
        df.finalize()


def test_the_channel_depth_is_in_the_plan_and_checked_as_an_option():
    compiled = dfir.compile(_in_flight_graph(), {"dfir.runtime.channel_depth": "512"})
    assert json.loads(bytes(read_om(compiled.om).models[0].partition(PartitionType.FLOW_MODEL).data)
                      )["channel_depth"] == 512
    with pytest.raises(GeError, match=r"option dfir.runtime.channel_depth has malformed value '0': "
                                      r"expected a channel depth in \[1, 65536\] \(messages\)"):
        dfir.compile(_in_flight_graph(), {"dfir.runtime.channel_depth": "0"})


def _mlp_model():
    from dfir.ge.graph import Graph
    import dfir.data_type as dt
    g = Graph("mlp")
    x = g.data(0, shape=[-1, 4], dtype=dt.DT_FLOAT, name="x")
    g.set_outputs([g.relu(g.matmul(x, g.const(np.ones((4, 2), np.float32))))])
    return dfir.load(dfir.compile(g, {"ge.inputShape": "x:1~8,4"}).om)


@pytest.mark.parametrize("array, got, code", [
    (np.ones((2, 4), np.int32), "DT_INT32 [2, 4]", DATATYPE_INVALID),
    (np.ones((2, 5), np.float32), "DT_FLOAT [2, 5]", SHAPE_INVALID),
    (np.ones((9, 4), np.float32), "DT_FLOAT [9, 4]", SHAPE_INVALID),
    (np.ones(4, np.float32), "DT_FLOAT [4]", SHAPE_INVALID)])
def test_a_feed_the_ge_graph_cannot_take_fails_at_once_naming_the_input(array, got, code, caplog):
    with _mlp_model() as model:
        for feed in ([array], {"x": array}):
            caplog.clear()
            ret = model.feed_data(feed)
            reason = f"input 'x' is {got}, but it feeds input 0 of GE graph mlp (node mlp), which takes DT_FLOAT [1~8, 4]"
            assert (ret, ret.message) == (code, reason)
            assert caplog.messages == [f"feed_data failed; model=mlp_flow; {reason}"]
        assert model.feed_data([np.ones((3, 4), np.float32)]) == 0
        outputs, _, ret = model.fetch_data(timeout=5000)
        assert ret == 0 and outputs[0].numpy().shape == (3, 2)


# -- dict feeds --------------------------------------------------------------------------------

@df.pyflow
def _subtract(a, b):
    return a - b


@pytest.fixture(scope="module")
def two_inputs():
    """A loaded model of `a - b` over two FlowData, and those FlowData."""
    names.reset()
    a, b = df.FlowData(name="a"), df.FlowData(name="b")
    with dfir.load(dfir.compile(df.FlowGraph([_subtract.fnode()(a, b)])).om) as model:
        yield model, a, b


def _without_general_path(model, monkeypatch):
    """Make the Python feed path fail: a feed of ready arrays is put by the driver port."""
    def general(*_):
        raise AssertionError("a feed of ready arrays took the general path")
    monkeypatch.setattr(model._scheduler, "submit", general)


class _Info(FlowInfo):
    pass


_A, _B = np.array([1]), np.array([2])
_OBJECTS = np.array([1], dtype=object)
_EOS = FlowInfo(flow_flags=1)


@pytest.mark.parametrize("feed, flow_info, timeout, partial, refusal, detail", [
    (7, None, -1, False, "NOT_A_FEED", None),
    ([], None, -1, False, "EMPTY", None),
    ({}, _EOS, -1, False, "EOS_MARKER", None),
    (None, _EOS, -1, False, "EOS_MARKER", None),
    ([_A], None, -1, False, "COUNT", 1),
    ({"a": _A, "c": _B}, None, -1, False, "UNKNOWN_KEY", "c"),
    ({"a": _A, True: _B}, None, -1, False, "UNKNOWN_KEY", True),
    ({"a": _A, 5: _B}, None, -1, False, "INDEX_RANGE", 5),
    ({"a": _A, 0: _B}, None, -1, False, "TWICE", 0),
    ({"b": _B}, None, -1, False, "MISSING", 0),
    ([[1], _B], None, -1, False, "CONVERT", {0: [1], 1: [2]}),  # a list to make an array of
    ([_OBJECTS, _B], None, -1, False, "NOT_A_TENSOR", (0, _OBJECTS)),
    ([_A, _B], "info", -1, False, "FLOW_INFO", "info"),
    ([_A, _B], None, True, False, "TIMEOUT_VALUE", None),
    ([_A, _B], None, -2, False, "TIMEOUT_VALUE", None),
])
def test_the_driver_port_says_why_it_does_not_put_a_feed(two_inputs, feed, flow_info, timeout, partial, refusal,
                                                         detail):
    port = two_inputs[0]._port
    got, got_detail = port.feed(feed, flow_info, timeout, partial)
    assert got == getattr(port, refusal)
    if isinstance(detail, dict):
        assert {k: np.asarray(v).tolist() for k, v in got_detail.items()} == detail
    elif isinstance(detail, tuple):
        assert got_detail[0] == detail[0] and got_detail[1] is detail[1]
    else:
        assert got_detail == detail


def test_the_driver_port_puts_partial_feeds_and_flow_info_subclasses(two_inputs):
    model = two_inputs[0]
    port = model._port
    assert port.feed({"a": _A}, None, -1, True) == 0   # partial: only a's channel gets a message
    assert port.feed({"b": _B}, _Info(transaction_id=1), -1, True) == 0  # pairs with it as transaction 1
    (tensor,), info, ret = model.fetch_data(timeout=WAIT_MS)
    assert (tensor.numpy().tolist(), ret) == ([-1], 0)


@pytest.mark.parametrize("field, value, expected", [
    ("transaction_id", -1, "flow_info.transaction_id must be an int in [0, 9223372036854775807], got -1"),
    ("flow_flags", "1", "flow_info.flow_flags must be an int in [0, 4294967295], got '1'"),
])
def test_a_flow_info_field_no_record_can_carry_is_an_error_naming_it(two_inputs, field, value, expected):
    info = FlowInfo()
    setattr(info, field, value)
    with pytest.raises(GeError) as error:
        two_inputs[0].feed_data([_A, _B], info)
    assert str(error.value) == expected


def test_the_driver_port_judges_ge_graph_inputs_and_fetches_chosen_outputs():
    with _mlp_model() as model:
        ready = np.ones((3, 4), np.float32)
        assert model._port.feed([ready], None, -1, False) == 0
        too_wide = np.ones((3, 5), np.float32)
        refusal, (position, value) = model._port.feed([too_wide], None, -1, False)
        assert (refusal, position, value is too_wide) == (model._port.GRAPH_INPUT, 0, True)
        outputs, info, ret = model._port.fetch([0], WAIT_MS)
        assert (ret, info.transaction_id, outputs[0].numpy().shape) == (0, 1, (3, 2))
    assert model._port.fetch(None, WAIT_MS) == (model._port.CLOSED, [0])  # Python's fetch says what is left
    with pytest.raises(GeError, match="the model is closed"):
        model.fetch_data()


@pytest.mark.parametrize("indexes, timeout, refusal, detail", [
    ([1], -1, "INDEX_RANGE", 1),
    ([True], -1, "INDEX_RANGE", True),
    (["0"], -1, "INDEX_RANGE", "0"),
    ([0, 0], -1, "INDEXES", [0, 0]),
    ([], -1, "INDEXES", []),
    (None, -2, "TIMEOUT_VALUE", None),
    (None, 1.5, "TIMEOUT_VALUE", None),
])
def test_the_driver_port_says_why_it_does_not_fetch(two_inputs, indexes, timeout, refusal, detail):
    port = two_inputs[0]._port
    assert port.fetch(indexes, timeout) == (getattr(port, refusal), detail)


@pytest.mark.parametrize("indexes, expected", [
    ([1], "output index 1 is out of range; the model has 1 outputs"),
    (["0"], "output index '0' is out of range; the model has 1 outputs"),
    ([0, 0], "indexes [0, 0] must name distinct outputs, at least one"),
])
def test_a_bad_fetch_returns_param_invalid_naming_what_is_wrong(two_inputs, indexes, expected, caplog):
    for fetch, api in ((two_inputs[0].fetch_data, "fetch_data"), (two_inputs[0].fetch, "fetch")):
        caplog.clear()
        *outputs, ret = fetch(indexes, timeout=0)
        assert (outputs[0], ret, ret.message) == ([], PARAM_INVALID, expected)
        assert caplog.messages == [f"{api} failed; model=FlowGraph; {expected}"]


TIMEOUT = "timeout must be -1 (wait forever) or a number of milliseconds >= 0, got "


@pytest.mark.parametrize("call, api, expected", [
    (lambda m: m.feed_data(np.array([1, 2])), "feed_data", "feed must be a dict or a list, got ndarray"),
    (lambda m: m.feed_data([_A, _B], timeout=True), "feed_data", TIMEOUT + "True"),
    (lambda m: m.feed_data([_A, _B], {"transaction_id": 3}), "feed_data", "flow_info must be a FlowInfo, got dict"),
    (lambda m: m.feed_data([_A, _B], timeout=-2), "feed_data", TIMEOUT + "-2"),
    (lambda m: m.feed([_A, _B], timeout=-2), "feed", TIMEOUT + "-2"),
    (lambda m: m.fetch_data(timeout=True)[-1], "fetch_data", TIMEOUT + "True"),
    (lambda m: m.fetch(timeout=1.5)[-1], "fetch", TIMEOUT + "1.5"),
])
def test_a_bad_feed_or_timeout_returns_param_invalid_saying_why(two_inputs, call, api, expected, caplog):
    ret = call(two_inputs[0])
    assert (ret, ret.message) == (PARAM_INVALID, expected)
    assert caplog.messages == [f"{api} failed; model=FlowGraph; {expected}"]


def test_output_indexes_may_be_numpy_integers():
    with chain_model([("a", inc, "-1")], "numpy_index") as model:
        assert model.feed_data([np.array([1])]) == 0
        tensors, _, ret = model.fetch_data([np.int64(0)], timeout=WAIT_MS)
    assert (ret, tensors[0].numpy().tolist()) == (0, [2])


def test_the_port_and_the_general_feed_count_transactions_together():
    with chain_model([("a", inc, "-1")], "count") as model:
        assert model.feed_data([np.array([1])]) == 0             # the port
        assert model.feed_data([[2]]) == 0                       # converted: the general path
        assert model.feed_data({"x": np.array([3])}, FlowInfo(transaction_id=40)) == 0
        assert model.feed_data([np.array([4])]) == 0
        fetched = [model.fetch_data(timeout=WAIT_MS) for _ in range(4)]
    assert [(info.transaction_id, tensors[0].numpy().tolist()) for tensors, info, _ in fetched] == [
        (1, [2]), (2, [3]), (40, [4]), (3, [5])]


def test_a_fetch_through_the_port_builds_what_of_fields_and_of_array_build():
    with chain_model([("a", inc, "-1")], "built") as model:
        for k in range(3):
            info = FlowInfo(start_time=k, end_time=k + 1, flow_flags=0, transaction_id=7 + k)
            info.set_user_data(bytes([k + 1]) * (k + 1))
            assert model.feed_data([np.array([[k, k]], np.int16)], info) == 0
        fetched = [model._port.fetch(None, WAIT_MS) for _ in range(3)]
    for k, (tensors, info, ret) in enumerate(fetched):
        expected = Tensor.of_array(np.array([[k + 1, k + 1]], np.int16))
        assert vars(info) == vars(FlowInfo.of_fields(k, k + 1, 0, 7 + k, bytes([k + 1]) * (k + 1)))
        assert type(tensors[0]) is Tensor and tensors[0].tensor_desc == expected.tensor_desc
        assert tensors[0].numpy().tolist() == [[k + 1, k + 1]] and ret == 0
    assert fetched[1][0][0].tensor_desc is fetched[2][0][0].tensor_desc  # described once


@settings(max_examples=12, deadline=None)
@given(key_kinds=st.tuples(*[st.sampled_from(["name", "position", "flow_data"])] * 2),
       a_first=st.booleans(), values=st.tuples(st.integers(-100, 100), st.integers(-100, 100)))
def test_a_dict_of_ready_arrays_is_fed_as_its_list_would_be(two_inputs, key_kinds, a_first, values):
    model, a, b = two_inputs
    keys = [{"name": data.name, "position": k, "flow_data": data}[kind]
            for k, (data, kind) in enumerate(zip((a, b), key_kinds))]
    arrays = [np.array([v], np.int64) for v in values]
    items = list(zip(keys, arrays))
    with pytest.MonkeyPatch.context() as monkeypatch:
        _without_general_path(model, monkeypatch)
        assert model.feed_data(dict(items if a_first else items[::-1])) == 0
    (tensor,), _, ret = model.fetch_data(timeout=WAIT_MS)
    assert (tensor.numpy().tolist(), ret) == ([values[0] - values[1]], 0)


@pytest.mark.parametrize("keys, expected", [
    (("a", 0), "input 'a' is fed twice"),
    (("a", "c"), "feed names input 'c', but the model's inputs are ['a', 'b']"),
    (("a", 5), "input index 5 is out of range; the model has 2 inputs ['a', 'b']"),
    (("a", True), "feed names input 'True', but the model's inputs are ['a', 'b']"),
])
def test_a_dict_of_ready_arrays_with_a_wrong_key_fails_as_the_general_path_says(two_inputs, keys, expected):
    model = two_inputs[0]
    ret = model.feed_data({key: np.array([1], np.int64) for key in keys})
    assert (ret, ret.message) == (PARAM_INVALID, expected)


def test_a_flow_graph_feeds_its_loaded_model_without_compiling_again(monkeypatch):
    names.reset()
    x = df.FlowData(name="x")
    graph = df.FlowGraph([_relay.fnode()(x)])
    try:
        assert graph.feed_data({x: np.array([1], np.int32)}) == 0
        monkeypatch.setattr(graph, "compile", lambda: pytest.fail("compiled again"))
        _without_general_path(graph._model, monkeypatch)
        assert [graph.feed_data({x: np.array([k], np.int32)}) for k in (2, 3)] == [0, 0]
        fetched = [graph.fetch_data(timeout=WAIT_MS) for _ in range(3)]
        assert [outputs[0].numpy().tolist() for outputs, _, _ in fetched] == [[1], [2], [3]]
    finally:
        df.finalize()


# -- lean loops of multi-input funcs -----------------------------------------------------------

def pair_sum(a, b):
    if int(np.sum(a)) == 3:
        raise ValueError("three")
    return a + b


def pair_model(first_device: str, second_device: str, upstream: bool = False) -> RuntimeModel:
    """`inc(pair_sum(x, y))` on two devices (one: a direct call). With `upstream`, x passes through
    `fail_on_two` first (on the first node's device), so that error messages reach `pair_sum`."""
    def node(name, fn, inputs, device, udf):
        return {"name": name, "alias": None, "loc": "test", "input_num": len(inputs), "output_num": 1,
                "inputs": inputs, "device": device, "attrs": {},
                "pp": {"kind": "py_udf", "udf": udf, "funcs": [{"name": fn.__name__, "inputs": list(range(len(inputs))),
                                                                "outputs": [0], "stream_input": False}]}}
    x = {"node": 2, "port": 0} if upstream else {"data": 0}
    nodes = [node("pair", pair_sum, [x, {"data": 1}], first_device, 0),
             node("inc", inc, [{"node": 0, "port": 0}], second_device, 1)]
    functions = [pair_sum, inc]
    if upstream:
        nodes.append(node("gate", fail_on_two, [{"data": 0}], first_device, 2))
        functions.append(fail_on_two)
    plan = {"format": 1, "name": "pair", "inputs": [{"name": n, "index": k, "dtype": None, "shape": None}
                                                   for k, n in enumerate("xy")],
            "outputs": [{"node": 1, "port": 0}], "nodes": nodes,
            "order": [2, 0, 1] if upstream else [0, 1], "ge_graphs": [],
            "udfs": [{"partition": k, "sha256": "0" * 64, "size": 0} for k in range(len(functions))]}
    return RuntimeModel(plan, [UdfPayload("function", fn).dumps() for fn in functions], None, "pair")


def _fire_only_in_lean_loops(monkeypatch):
    """Make a worker's general firing step fail its process: a model that works fires lean chains."""
    from dfir.runtime.worker import executor as worker

    def general(*_):
        raise AssertionError("a plain Python func took the general firing step")
    monkeypatch.setattr(worker.DeviceExecutor, "_message_step", general)


@pytest.mark.parametrize("devices", [("-1", "-1"), ("0:0:1", "0:0:2")])
@pytest.mark.parametrize("upstream", [False, True])
def test_a_multi_input_func_runs_in_a_lean_loop_as_the_general_path_would(monkeypatch, devices, upstream,
                                                                         lean_executor):
    _fire_only_in_lean_loops(monkeypatch)
    xs = [1, 2, 3, 4]
    with pair_model(*devices, upstream=upstream) as model:
        for k, x in enumerate(xs):
            info = FlowInfo(start_time=k, transaction_id=20 + k)
            info.set_user_data(bytes([k + 1]))
            assert model.feed_data([np.array([x], np.int32), np.array([10 * x], np.int32)], info) == 0
        results = [model.fetch_data(timeout=WAIT_MS) for _ in xs]
    got = [([t.numpy().tolist() for t in tensors], info.transaction_id, bytes(info.get_user_data(1)), int(ret),
            ret.message.split("\n")[0]) for tensors, info, ret in results]
    gate = ([], 21, b"\x02", FLOW_FUNC_FAILED, "UDF gate.fail_on_two raised ValueError: two")
    assert got == [([[12]], 20, b"\x01", 0, ""),
                   gate if upstream else ([[23]], 21, b"\x02", 0, ""),
                   ([], 22, b"\x03", FLOW_FUNC_FAILED, "UDF pair.pair_sum raised ValueError: three"),
                   ([[45]], 23, b"\x04", 0, "")]


def test_a_multi_input_lean_call_takes_the_latest_transaction_of_its_inputs():
    from dfir.core.messages import Message, TransactionMeta
    from dfir.runtime.worker.host import UdfCall
    call = UdfCall("pair", "pair_sum", pair_sum, (0,), False, False, None)
    old, new, same = TransactionMeta(4, 1), TransactionMeta(9, 2), TransactionMeta(9, 3)
    messages = [Message.tensor(old, np.array([1])), Message.tensor(new, np.array([2])),
                Message.tensor(same, np.array([0]))]
    output = call.call_set(messages[:2])
    assert (output.meta, output.payload.tolist()) == (new, [3])
    three = UdfCall("sum", "pick_sum", lambda *arrays: sum(arrays), (0,), False, False, None)
    assert three.call_set(messages).meta is new  # the first of the latest
    failure = call.call_set([Message.tensor(old, np.array([3])), messages[1]])
    assert (failure.meta, failure.ret_code, failure.error.split("\n")[0]) == (
        new, FLOW_FUNC_FAILED, "UDF pair.pair_sum raised ValueError: three")
    assert list(call(messages[:2]))[0][0][1].meta is call.call_set(messages[:2]).meta


def twice(x):
    yield x
    yield x + 10


def test_a_generator_whose_sets_fire_natively_emits_each_result_in_order():
    """A generator's output sets are no list: the `OutputsStep` hands them to Python's `_emit`."""
    with chain_model([("a", twice, "0:0:1"), ("b", inc, "0:0:2")]) as model:
        for value in (1, 2):
            assert model.feed_data([np.array([value])]) == 0
        got = [model.fetch_data(timeout=WAIT_MS) for _ in range(4)]
    assert [(info.transaction_id, tensors[0].numpy().tolist()) for tensors, info, _ in got] == [
        (1, [2]), (1, [12]), (2, [3]), (2, [13])]
