"""The values a `@pyflow` UDF receives and what its results become, as GE's dataflow gives them:
a tensor arrives as a `df.Tensor` (over the message's array), an array some UDF returned as that
array (GE pickles it), any other object as itself, on every way a worker fires a func (lean loops,
sets, the general path, aligned inputs, stream inputs, generators, class methods), on one device
and across two; a returned array stays a tensor for `fetch_data` but `fetch` gives the array back;
None becomes an empty message; `feed` of an array hands the UDF that array."""
from __future__ import annotations

import numpy as np
import pytest
from dfir.runtime import _native
from dfir.runtime.driver.model import RuntimeModel

import dfir.dataflow as df
from dfir.core.messages import (
    Kind,
    Message,
    MessageError,
    TransactionMeta,
    udf_argument,
)
from dfir.core.tensor import Tensor
from dfir.core.udf_payload import UdfPayload

WAIT_MS = 10000
ONE_DEVICE, TWO_DEVICES = ("-1", "-1"), ("0:0:1", "0:0:2")


# -- user functions (module level: payloads pickle them by reference) ---------------------------

def received(x):
    return type(x).__name__


def plus_one(x):
    return x + 1


def plus_one_tensor(x):
    return df.Tensor(np.asarray(x) + 1)


def nothing(x):
    return None


def twice(x):
    yield x + 1
    yield df.Tensor(np.asarray(x) + 2)


def array_and_tensor(x):
    return x * 10, df.Tensor(np.asarray(x) * 100)


def first_of_queue(queue):
    value = queue.get()
    return f"{type(value).__name__} {np.asarray(value).tolist()}"


def both_received(a, b):
    return f"{type(a).__name__},{type(b).__name__}"


# -- models ---------------------------------------------------------------------------------------

def stage(fn, stream_input=False, num_outputs=1):
    return fn, stream_input, num_outputs


def chain(stages, devices) -> RuntimeModel:
    """Each stage's first output feeds the next stage; stage k runs on `devices[k % 2]`; the graph's
    outputs are the last stage's outputs."""
    nodes = []
    for k, (fn, stream_input, num_outputs) in enumerate(stages):
        source = {"data": 0} if k == 0 else {"node": k - 1, "port": 0}
        nodes.append({"name": f"n{k}", "alias": None, "loc": "test", "input_num": 1, "output_num": num_outputs,
                      "inputs": [source], "device": devices[k % 2], "attrs": {},
                      "pp": {"kind": "py_udf", "udf": k,
                             "funcs": [{"name": fn.__name__, "inputs": [0], "outputs": list(range(num_outputs)),
                                        "stream_input": stream_input}]}})
    last = len(nodes) - 1
    plan = {"format": 1, "name": "values", "inputs": [{"name": "x", "index": 0, "dtype": None, "shape": None}],
            "outputs": [{"node": last, "port": p} for p in range(stages[-1][2])], "nodes": nodes,
            "order": list(range(len(nodes))), "ge_graphs": [],
            "udfs": [{"partition": k, "sha256": "0" * 64, "size": 0} for k in range(len(stages))]}
    payloads = [UdfPayload("function", fn, num_returns={fn.__name__: n} if n > 1 else {}).dumps()
                for fn, _, n in stages]
    return RuntimeModel(plan, payloads, None, "values")


X = np.arange(3, dtype=np.int32)


def fetched(model, **fed):
    """`fetch()`'s values after a `feed_data` of X (or `feed` of `fed["feed"]`)."""
    if "feed" in fed:
        assert model.feed([fed["feed"]], WAIT_MS) == 0
    else:
        assert model.feed_data([X], timeout=WAIT_MS) == 0
    values, ret = model.fetch(timeout=WAIT_MS)
    assert ret == 0, ret
    return values


# -- Tensor works as an array in UDF code -----------------------------------------------------------

def test_a_tensor_takes_numpys_operators_and_ufuncs_giving_plain_arrays():
    a, b = Tensor(np.array([1, 2, 3], dtype=np.int32)), Tensor.of_array(np.array([10, 20, 30], dtype=np.int32))
    for result, expected in [(a + b, [11, 22, 33]), (b - 1, [9, 19, 29]), (2 * a, [2, 4, 6]), (-a, [-1, -2, -3]),
                             (a == b - 9, [True, False, False]), (np.maximum(a, 2), [2, 2, 3]),
                             (a @ b, 140), (np.sqrt(a * a), [1.0, 2.0, 3.0])]:
        assert type(result) in (np.ndarray, np.int32) and np.asarray(result).tolist() == expected
    out = np.zeros(3, dtype=np.int32)
    assert np.add(a, b, out=out) is out and out.tolist() == [11, 22, 33]
    target = Tensor(np.zeros(3, dtype=np.int32))
    np.add(a, b, out=target)
    assert target.numpy().tolist() == [11, 22, 33]  # a Tensor as out writes into its array
    before = target
    target += a
    assert target is before and target.numpy().tolist() == [12, 24, 36]
    assert np.array([1, 1, 1], dtype=np.int32) + a is not None and type(np.ones(3) + a) is np.ndarray
    assert divmod(b, 7)[1].tolist() == [3, 6, 2] and (~a).tolist() == [-2, -3, -4] and abs(-a).tolist() == [1, 2, 3]
    assert {a: 1}[a] == 1  # hashable by identity, as GE's Tensor is


def test_a_tensor_reads_as_its_array_and_keeps_ges_methods():
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    tensor = Tensor.of_array(array)
    assert (tensor.shape, tensor.dtype, tensor.ndim, tensor.size, len(tensor)) == ((2, 3), np.float32, 2, 6, 2)
    assert tensor[1].tolist() == [3.0, 4.0, 5.0] and tensor[0, 2] == 2.0
    assert [row.tolist() for row in tensor] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert (tensor.get_shape(), tensor.get_data_type(), tensor.get_element_cnt()) == ([2, 3], df.DT_FLOAT, 6)
    assert tensor.numpy() is array and np.asarray(tensor) is array
    with pytest.raises(AttributeError):
        tensor.shape = (3, 2)  # read-only, as the array's description must stay true


# -- messages: results and what a UDF receives ------------------------------------------------------

META = TransactionMeta(1)


@pytest.mark.parametrize("result, kind, as_array", [
    (np.arange(2), Kind.TENSOR, True), (Tensor(np.arange(2)), Kind.TENSOR, False), (None, Kind.EMPTY, False),
    (3, Kind.OBJECT, False), (np.int64(3), Kind.TENSOR, True), ({"k": 1}, Kind.OBJECT, False), (np.ma.masked_array([1, 2]), Kind.TENSOR, True)])
def test_a_result_becomes_the_message_ge_makes_of_it(result, kind, as_array):
    message = Message.from_result(META, result)
    assert (message.kind, message.as_array) == (kind, as_array)
    if as_array:
        assert type(message.payload) is np.ndarray


def test_a_udf_receives_a_tensor_over_the_array_an_array_result_as_itself_and_objects_as_they_are():
    array = np.arange(3)
    tensor = Message.tensor(META, array).udf_value()
    assert type(tensor) is Tensor and tensor.numpy() is array  # no copy
    assert Message.from_result(META, array).udf_value() is array
    assert Message.from_object(META, array).udf_value() is array  # feed() of an array: the object
    assert Message.empty(META).udf_value() is None
    complex_array = np.zeros(2, dtype=np.complex64)  # no GE data type: the array itself
    assert udf_argument(Message.tensor(META, complex_array)) is complex_array
    with pytest.raises(MessageError, match="failed upstream with code 7: broke"):
        Message.failure(META, 7, "broke").udf_value()


def test_the_native_codec_keeps_the_array_mark():
    meta = TransactionMeta(5)
    marked = _native.new_message(meta, Kind.TENSOR, np.arange(2), True)
    assert marked == Message.from_result(meta, marked.payload) and marked.as_array
    assert not _native.new_message(meta, Kind.TENSOR, np.arange(2)).as_array


# -- every firing path, one device and two -----------------------------------------------------------

@pytest.mark.parametrize("devices", [ONE_DEVICE, TWO_DEVICES])
@pytest.mark.parametrize("first, expected", [(received, "Tensor"), (plus_one, "ndarray"),
                                             (plus_one_tensor, "Tensor")])
def test_a_udf_receives_a_tensor_for_a_tensor_and_the_array_an_upstream_udf_returned(
        devices, first, expected, plain_firing, lean_executor):
    stages = [stage(first), stage(received)] if first is not received else [stage(received)]
    with chain(stages, devices) as model:
        assert fetched(model) == [expected]


@pytest.mark.parametrize("devices", [ONE_DEVICE, TWO_DEVICES])
def test_fetch_gives_an_array_result_back_as_the_array_and_fetch_data_as_a_tensor(devices, plain_firing):
    with chain([stage(plus_one), stage(plus_one)], devices) as model:
        values = fetched(model)
        assert type(values[0]) is np.ndarray and values[0].tolist() == [2, 3, 4]
        assert model.feed_data([X], timeout=WAIT_MS) == 0
        tensors, _, ret = model.fetch_data(timeout=WAIT_MS)
        assert ret == 0 and type(tensors[0]) is Tensor and tensors[0].numpy().tolist() == [2, 3, 4]
    with chain([stage(plus_one), stage(plus_one_tensor)], devices) as model:
        values = fetched(model)
        assert type(values[0]) is Tensor and values[0].numpy().tolist() == [2, 3, 4]


def test_fetch_gives_a_fed_tensor_that_no_udf_returned_as_a_tensor():
    with chain([stage(plus_one)], ONE_DEVICE) as model:
        assert model.feed([df.Tensor(X)], WAIT_MS) == 0
        values, ret = model.fetch(timeout=WAIT_MS)
        assert ret == 0 and type(values[0]) is np.ndarray  # plus_one returned an array
    with chain([stage(plus_one_tensor)], ONE_DEVICE) as model:
        values = fetched(model, feed=df.Tensor(X))
        assert type(values[0]) is Tensor and values[0].numpy().tolist() == [1, 2, 3]


@pytest.mark.parametrize("devices", [ONE_DEVICE, TWO_DEVICES])
def test_feed_of_an_array_hands_the_udf_that_array_and_of_a_tensor_a_tensor(devices, plain_firing):
    with chain([stage(plus_one), stage(received)], devices) as model:
        assert fetched(model, feed=X) == ["ndarray"]
    with chain([stage(received)], devices) as model:
        assert fetched(model, feed=X) == ["ndarray"]
        assert fetched(model, feed=df.Tensor(X)) == ["Tensor"]
        assert fetched(model, feed={"k": 1}) == ["dict"]


@pytest.mark.parametrize("devices", [ONE_DEVICE, TWO_DEVICES])
def test_a_none_result_is_an_empty_message(devices):
    with chain([stage(plus_one), stage(nothing)], devices) as model:
        assert fetched(model) == [None]
        assert model.feed_data([X], timeout=WAIT_MS) == 0
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert (tensors, info.transaction_id, ret) == ([], 2, 0)  # fetch_data leaves empty messages out


@pytest.mark.parametrize("devices", [ONE_DEVICE, TWO_DEVICES])
def test_a_stream_input_queue_gives_what_a_plain_input_gives(devices):
    with chain([stage(first_of_queue, stream_input=True)], devices) as model:
        assert fetched(model) == ["Tensor [0, 1, 2]"]
    with chain([stage(plus_one), stage(first_of_queue, stream_input=True)], devices) as model:
        assert fetched(model) == ["ndarray [1, 2, 3]"]


@pytest.mark.parametrize("devices", [ONE_DEVICE, TWO_DEVICES])
def test_a_generators_results_follow_the_same_rules(devices):
    with chain([stage(received), stage(twice)][1:], devices) as model:
        assert model.feed_data([X], timeout=WAIT_MS) == 0
        first, ret = model.fetch(timeout=WAIT_MS)
        second, ret2 = model.fetch(timeout=WAIT_MS)
        assert (ret, ret2) == (0, 0)
        assert type(first[0]) is np.ndarray and first[0].tolist() == [1, 2, 3]
        assert type(second[0]) is Tensor and second[0].numpy().tolist() == [2, 3, 4]


@pytest.mark.parametrize("devices", [ONE_DEVICE, TWO_DEVICES])
def test_a_multi_output_func_follows_the_same_rules(devices):
    with chain([stage(plus_one), stage(array_and_tensor, num_outputs=2)], devices) as model:
        values = fetched(model)
        assert [type(v) for v in values] == [np.ndarray, Tensor]
        assert (values[0].tolist(), values[1].numpy().tolist()) == ([10, 20, 30], [100, 200, 300])


@pytest.mark.parametrize("devices", [ONE_DEVICE, TWO_DEVICES])
def test_a_node_that_aligns_its_inputs_receives_the_same_values(devices):
    first = {"name": "n0", "alias": None, "loc": "test", "input_num": 1, "output_num": 1, "inputs": [{"data": 0}],
             "device": devices[0], "attrs": {},
             "pp": {"kind": "py_udf", "udf": 0, "funcs": [{"name": "plus_one", "inputs": [0], "outputs": [0],
                                                           "stream_input": False}]}}
    aligned = {"name": "n1", "alias": None, "loc": "test", "input_num": 2, "output_num": 1,
               "inputs": [{"node": 0, "port": 0}, {"data": 1}], "device": devices[1], "attrs": {},
               "align": {"cache": 16, "timeout": 5000, "dropout": False},
               "pp": {"kind": "py_udf", "udf": 1, "funcs": [{"name": "both_received", "inputs": [0, 1],
                                                             "outputs": [0], "stream_input": False}]}}
    plan = {"format": 1, "name": "aligned", "outputs": [{"node": 1, "port": 0}], "nodes": [first, aligned],
            "inputs": [{"name": n, "index": k, "dtype": None, "shape": None} for k, n in enumerate("xy")],
            "order": [0, 1], "ge_graphs": [], "udfs": [{"partition": k, "sha256": "0" * 64, "size": 0} for k in (0, 1)]}
    payloads = [UdfPayload("function", fn).dumps() for fn in (plus_one, both_received)]
    with RuntimeModel(plan, payloads, None, "aligned") as model:
        assert model.feed_data([X, X], timeout=WAIT_MS) == 0
        assert model.fetch(timeout=WAIT_MS) == (["ndarray,Tensor"], 0)


def test_array_attributes_a_tensor_lacks_read_its_arrays():
    tensor = Tensor(np.array([[1, 2], [3, 4]], dtype=np.int32))
    assert tensor.sum(keepdims=True).tolist() == [[10]] and tensor.T.tolist() == [[1, 3], [2, 4]]
    assert tensor.astype(np.float32).dtype == np.float32 and tensor.tolist() == [[1, 2], [3, 4]]
    assert tensor.reshape([4]) == 0 and tensor.get_shape() == [4]  # GE's reshape, not the array's
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'no_such'"):
        _ = tensor.no_such
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute '_private'"):
        _ = tensor._private


# -- the frontend: the seeds' add, class methods, aligned inputs -------------------------------------

@df.pyflow
def add(a, b):
    return a + b


@df.pyflow
def pair(a, b):
    return both_received(a, b)


@df.pyflow
class Kinds:
    @df.method()
    def pair(self, a, b):
        return both_received(a, b)

    @df.method()
    def scaled(self, a):
        return a * 2


@pytest.fixture
def session():
    df.init({})
    yield
    df.finalize()


A, B = np.array([1, 2, 3], dtype=np.int32), np.array([10, 20, 30], dtype=np.int32)


def test_the_seeds_add_gives_a_tensor_to_fetch_data_and_an_array_to_fetch(session):
    x, y = df.FlowData(), df.FlowData()
    graph = df.FlowGraph([add.fnode()(x, y)])
    assert graph.feed_data({x: A, y: B}, timeout=WAIT_MS) == 0
    tensors, _, ret = graph.fetch_data(timeout=WAIT_MS)
    assert ret == 0 and type(tensors[0]) is Tensor and tensors[0].numpy().tolist() == [11, 22, 33]
    assert graph.feed({x: df.Tensor(A), y: df.Tensor(B)}, WAIT_MS) == 0
    values, ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 0 and type(values[0]) is np.ndarray and values[0].tolist() == [11, 22, 33]
    assert graph.feed({x: A, y: B}, WAIT_MS) == 0  # arrays as objects: the UDF adds the arrays
    values, ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 0 and values[0].tolist() == [11, 22, 33]


def test_the_seeds_add_of_python_numbers_fetches_the_number_as_ge_pickles_it(session):
    x, y = df.FlowData(), df.FlowData()
    graph = df.FlowGraph([add.fnode()(x, y)])
    assert graph.feed({x: 1, y: 2}, WAIT_MS) == 0
    values, ret = graph.fetch(timeout=WAIT_MS)
    assert (values, type(values[0]), ret) == ([3], int, 0)


def test_class_methods_receive_tensors_and_return_arrays(session):
    x, y = df.FlowData(), df.FlowData()
    node = Kinds.fnode()
    pair, scaled = node.pair(x, y), node.scaled(x)
    graph = df.FlowGraph([pair, scaled])
    assert graph.feed_data({x: A, y: B}, timeout=WAIT_MS) == 0
    values, ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 0 and values[0] == "Tensor,Tensor" and type(values[1]) is np.ndarray
    assert values[1].tolist() == [2, 4, 6]


def test_aligned_inputs_arrive_as_tensors(session):
    x, y = df.FlowData(), df.FlowData()
    graph = df.FlowGraph([pair.fnode()(x, y)])
    graph.set_inputs_align_attrs(16, 5000)
    assert graph.feed_data({x: A, y: B}, timeout=WAIT_MS) == 0
    values, ret = graph.fetch(timeout=WAIT_MS)
    assert (values, ret) == (["Tensor,Tensor"], 0)
