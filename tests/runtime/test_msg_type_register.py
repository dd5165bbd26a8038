"""`msg_type_register`: a user type with its own serialize/deserialize crosses feed, UDFs and
fetch as its msg type's bytes (the native codec's user-type body), and the registry's rules."""
from __future__ import annotations

import json
import threading

import cloudpickle
import numpy as np
import pytest

import dfir.dataflow as df
from dfir.core.errors import DfException, GeError
from dfir.core.msg_types import MsgTypeRegister
from dfir.core.udf_payload import UdfPayload
from dfir.runtime.driver.model import RuntimeModel

WAIT_MS = 5000
CALLS: list[str] = []


class Reading:
    """A user type that pickle cannot carry (it holds a lock): only its own functions can."""

    def __init__(self, sensor: str, values: list[int], hops: int = 0):
        self.sensor, self.values, self.hops = sensor, values, hops
        self.lock = threading.Lock()


def serialize_reading(reading: Reading) -> bytes:
    """Its fields as JSON, counting each process boundary crossed in `hops`."""
    CALLS.append("serialize")
    return json.dumps({"sensor": reading.sensor, "values": reading.values, "hops": reading.hops + 1}).encode()


def deserialize_reading(buffer: bytes) -> Reading:
    CALLS.append("deserialize")
    fields = json.loads(buffer)
    return Reading(fields["sensor"], fields["values"], fields["hops"])


df.msg_type_register.register(1100, Reading, serialize_reading, deserialize_reading)


@df.pyflow
def calibrate(reading):
    assert type(reading) is Reading and type(reading.lock) is type(threading.Lock())
    return Reading(reading.sensor.upper(), [v * 10 for v in reading.values], reading.hops)


def test_a_registered_type_crosses_feed_a_udf_and_fetch_through_its_own_functions():
    x = df.FlowData()
    graph = df.FlowGraph([calibrate.fnode()(x)])
    CALLS.clear()
    assert graph.feed({x: Reading("t1", [1, 2])}) == 0
    outputs, ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 0 and type(outputs[0]) is Reading
    assert (outputs[0].sensor, outputs[0].values, outputs[0].hops) == ("T1", [10, 20], 2)
    # this process: serialized by the feed, deserialized by the fetch (the worker's calls are its own)
    assert CALLS == ["serialize", "deserialize"]


def relay_reading(reading):
    assert type(reading) is Reading
    return reading


@pytest.mark.parametrize("devices, hops", [(("-1", "-1"), 2), (("-1", "0:0:1"), 3)])
def test_a_registered_type_crosses_each_process_boundary_as_its_bytes(devices, hops):
    """Fed to node a, relayed to node b, fetched: one crossing more when b runs in another worker."""
    nodes = [{"name": name, "alias": None, "loc": "test", "input_num": 1, "output_num": 1,
              "inputs": [{"data": 0} if k == 0 else {"node": 0, "port": 0}], "device": device, "attrs": {},
              "pp": {"kind": "py_udf", "udf": k, "funcs": [{"name": "relay_reading", "inputs": [0], "outputs": [0],
                                                             "stream_input": False}]}}
             for k, (name, device) in enumerate(zip("ab", devices))]
    plan = {"format": 1, "name": "hops", "inputs": [{"name": "x", "index": 0, "dtype": None, "shape": None}],
            "outputs": [{"node": 1, "port": 0}], "nodes": nodes, "order": [0, 1], "ge_graphs": [],
            "udfs": [{"partition": k, "sha256": "0" * 64, "size": 0} for k in range(2)]}
    payloads = [UdfPayload("function", relay_reading).dumps()] * 2
    with RuntimeModel(plan, payloads, None, "hops") as model:
        assert model.feed([Reading("t", [1])]) == 0
        outputs, ret = model.fetch(timeout=WAIT_MS)
    assert (ret, type(outputs[0]), outputs[0].values, outputs[0].hops) == (0, Reading, [1], hops)


def test_a_large_registered_object_travels_in_the_arena():
    x = df.FlowData()
    graph = df.FlowGraph([calibrate.fnode()(x)])
    values = list(range(5000))  # far beyond a record's inline bytes
    assert graph.feed({x: Reading("big", values)}) == 0
    outputs, ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 0 and outputs[0].values == [v * 10 for v in values]


def test_fetch_data_of_a_registered_object_returns_param_invalid():
    x = df.FlowData()
    graph = df.FlowGraph([calibrate.fnode()(x)], name="objects")
    assert graph.feed({x: Reading("t", [1])}) == 0
    tensors, _, ret = graph.fetch_data(timeout=WAIT_MS)
    assert (tensors, ret) == ([], 145000)
    assert ret.message == "output 0 holds a Python object (Reading), not a tensor; fetch() returns objects"


class Unserializable:
    pass


df.msg_type_register.register(1101, Unserializable, lambda obj: {"not": "bytes"}, lambda buffer: Unserializable())


def test_a_serialize_func_that_returns_no_bytes_is_an_error_naming_the_msg_type():
    x = df.FlowData()
    graph = df.FlowGraph([calibrate.fnode()(x)])
    assert graph.feed({x: Reading("t", [1])}) == 0  # loads the model
    assert graph.fetch(timeout=WAIT_MS)[1] == 0
    with pytest.raises(GeError, match=r"^the serialize_func of msg type 1101 returned dict, not bytes$"):
        graph.feed({x: Unserializable()})


class LateType:
    pass


@df.pyflow
def relay(value):
    return value


def test_a_type_registered_after_the_model_loads_is_unknown_to_its_workers():
    x = df.FlowData()
    graph = df.FlowGraph([relay.fnode()(x)], name="late")
    assert graph.feed({x: "first"}) == 0
    assert graph.fetch(timeout=WAIT_MS) == (["first"], 0)
    df.msg_type_register.register(1102, LateType, lambda obj: b"late", lambda buffer: LateType())
    assert graph.feed({x: LateType()}) == 0
    outputs, ret = graph.fetch(timeout=WAIT_MS)
    assert (outputs, ret) == ([], 545000)
    assert ("a message of user msg type 1102 arrived, but this process has no deserialize_func for it: register "
            "the type (msg_type_register.register) before the model loads") in ret.message


# -- the registry -------------------------------------------------------------------------------

def test_the_registry_answers_as_ges_does():
    register = MsgTypeRegister()
    size = len
    register.register(2000, Reading, serialize_reading, deserialize_reading, size)
    register.register(2000, Reading, serialize_reading, deserialize_reading)  # the same pair again is fine
    assert register.registered(2000) and register.registered(65535) and not register.registered(2001)
    assert (register.get_msg_type(Reading), register.get_msg_type(str)) == (2000, None)
    assert register.get_serialize_func(2000) is serialize_reading
    assert register.get_deserialize_func(2000) is deserialize_reading
    assert (register.get_size_func(2000), register.get_size_func(2001)) == (size, None)
    pickled = register.get_serialize_func(65535)({"k": [1]})
    assert register.get_deserialize_func(65535)(pickled) == {"k": [1]}
    assert register.get_msg_type("__PickledMsg__") == 65535
    register.register(1023, bytearray, bytes, bytearray)  # GE's torch tensor type lies below the user range
    assert register.get_msg_type(bytearray) == 1023


def test_the_module_registry_is_exported_where_ge_exports_it():
    from dfir.dataflow.utils.msg_type_register import msg_type_register  # GE's module path
    assert df.msg_type_register is msg_type_register is df.utils.msg_type_register.msg_type_register
    assert df.msg_type_register.get_msg_type(Reading) == 1100


@pytest.mark.parametrize("args, message", [
    ((2000, str, bytes, bytes), "msg_type:2000 has been registered, class:<class "),
    ((2001, Reading, bytes, bytes), "class:<class "),
    ((2002, int, "dumps", bytes), "msg_type_register.register: serialize_func must be callable, got str"),
    ((2002, int, bytes, None), "msg_type_register.register: deserialize_func must be callable, got NoneType"),
    (("2002", int, bytes, bytes), "msg_type_register.register: msg_type must be an int, got '2002'"),
    ((65536, int, bytes, bytes), "msg_type_register.register: msg_type 65536 is out of range; a msg type is in "
                                 "[0, 65535]"),
    ((-1, int, bytes, bytes), "msg_type_register.register: msg_type -1 is out of range; a msg type is in [0, 65535]"),
])
def test_a_conflicting_or_malformed_registration_raises_df_exception(args, message):
    register = MsgTypeRegister()
    register.register(2000, Reading, serialize_reading, deserialize_reading)
    with pytest.raises(DfException) as caught:
        register.register(*args)
    assert caught.value.error_code == 145000 and caught.value.message.startswith(message)
    if args[0] == 2001:
        assert caught.value.message.endswith("has been registered, msg_type:2000; it cannot also be msg_type:2001")


def test_deserialize_from_file_reads_a_cloudpickled_object(tmp_path):
    path = tmp_path / "obj.pkl"
    path.write_bytes(cloudpickle.dumps({"answer": np.int32(42)}))
    assert MsgTypeRegister().deserialize_from_file(str(path), str(tmp_path)) == {"answer": 42}
