"""GE's user message types on C++ UDFs: a raw message a C++ UDF typed with `FlowMsg::SetMsgType`
(>= MSG_TYPE_USER_DEFINE_START) leaves as that type's object (`TypedBytes`, or a registered class's
deserialized object), and an object with a message type of its own reaches a C++ UDF as a raw
message of that type holding its bytes, across Python UDF projects, feed/fetch, two C++ UDFs on
one device (records), and stream-input calls."""
import json
from pathlib import Path

import msg_type_udf_classes as classes
import numpy as np
import pytest
from dfir.runtime.driver.process_scheduler import plan_wiring
from dfir.runtime.om import read_om

import dfir
import dfir.dataflow as df
from dfir.core.messages import TypedBytes
from dfir.frontend.flow_func.msg import typed_object, typed_raw
from dfir.om.schema import PartitionType

WAIT_MS = 10000

MSG_TYPES_CPP = r'''
#include <cstring>
#include <vector>
#include "flow_func/meta_multi_func.h"

using namespace FlowFunc;

class MsgTypes : public MetaMultiFunc {
 public:
  // Sends input 0's tensor bytes as a raw message of user type 1030.
  int32_t Send1030(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& in) {
    return Send(*context, *in[0], 1030);
  }

  // Sends input 0's tensor bytes as a raw message of user type 1041 (a registered class).
  int32_t Send1041(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& in) {
    return Send(*context, *in[0], 1041);
  }

  // Answers with [msg type, byte count, first byte] of the raw message on input 0.
  int32_t Receive(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& in) {
    return context->SetOutput(0, Report(*context, *in[0]));
  }

  // A stream-input proc passing one message of input 0 on unchanged.
  int32_t StreamRelay(const std::shared_ptr<MetaRunContext>& context,
                      const std::vector<std::shared_ptr<FlowMsgQueue>>& queues) {
    std::shared_ptr<FlowMsg> msg;
    if (queues[0]->Dequeue(msg, 5000) != FLOW_FUNC_SUCCESS) return FLOW_FUNC_FAILED;
    return context->SetOutput(0, msg);
  }

 private:
  static int32_t Send(MetaRunContext& context, FlowMsg& in, uint32_t msg_type) {
    Tensor* tensor = in.GetTensor();
    const uint64_t size = tensor->GetDataSize();
    std::shared_ptr<FlowMsg> out = context.AllocRawDataMsg(static_cast<int64_t>(size));
    void* data = nullptr;
    uint64_t capacity = 0;
    if (out->GetRawData(data, capacity) != FLOW_FUNC_SUCCESS || capacity != size) return FLOW_FUNC_FAILED;
    std::memcpy(data, tensor->GetData(), size);
    out->SetMsgType(static_cast<MsgType>(msg_type));
    return context.SetOutput(0, out);
  }

  static std::shared_ptr<FlowMsg> Report(MetaRunContext& context, const FlowMsg& in) {
    void* data = nullptr;
    uint64_t size = 0;
    const int32_t got = in.GetRawData(data, size);
    std::vector<int32_t> values = {static_cast<int32_t>(in.GetMsgType()), static_cast<int32_t>(size),
                                   got == FLOW_FUNC_SUCCESS && size > 0 ? *static_cast<uint8_t*>(data) : -1};
    std::shared_ptr<FlowMsg> out = context.AllocTensorMsg({3}, TensorDataType::DT_INT32);
    std::memcpy(out->GetTensor()->GetData(), values.data(), sizeof(int32_t) * values.size());
    return out;
  }
};
FLOW_FUNC_REGISTRAR(MsgTypes)
    .RegProcFunc("Send1030", &MsgTypes::Send1030)
    .RegProcFunc("Send1041", &MsgTypes::Send1041)
    .RegProcFunc("Receive", &MsgTypes::Receive)
    .RegProcFunc("StreamRelay", &MsgTypes::StreamRelay);
'''

CMAKELISTS = '''
cmake_minimum_required(VERSION 3.16)
set(TOOLCHAIN "g++" CACHE STRING "")
set(RELEASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}/release" CACHE PATH "")
set(RESOURCE_TYPE "X86" CACHE STRING "")
set(UDF_TARGET_LIB "msg_types" CACHE STRING "")
set(CMAKE_CXX_COMPILER "${TOOLCHAIN}")
project(msg_types_udf LANGUAGES CXX)
get_filename_component(RELEASE_DIR "${RELEASE_DIR}" ABSOLUTE BASE_DIR "${CMAKE_BINARY_DIR}")
add_library(${UDF_TARGET_LIB} SHARED msg_types.cpp)
target_compile_features(${UDF_TARGET_LIB} PRIVATE cxx_std_17)
target_compile_options(${UDF_TARGET_LIB} PRIVATE -O1 -fvisibility=hidden)
target_include_directories(${UDF_TARGET_LIB} PRIVATE "${DFIR_INCLUDE_DIR}")
set_target_properties(${UDF_TARGET_LIB} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${RELEASE_DIR}")
'''


class Pixel:
    """A user type registered as msg type 1041: one byte."""

    def __init__(self, value: int):
        self.value = value


class Broken:
    """A user type registered as msg type 1042 whose serialize_func returns no bytes."""


df.msg_type_register.register(1041, Pixel, lambda pixel: bytes([pixel.value]), lambda data: Pixel(data[0]))
df.msg_type_register.register(1042, Broken, lambda broken: {"not": "bytes"}, lambda data: Broken())


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """The C++ MsgTypes workspace, built by the first compile that needs it."""
    folder = tmp_path_factory.mktemp("cpp_msg_types") / "ws"
    folder.mkdir()
    (folder / "msg_types.cpp").write_text(MSG_TYPES_CPP)
    (folder / "CMakeLists.txt").write_text(CMAKELISTS)
    return folder


@pytest.fixture
def session():
    df.init({})
    yield
    df.finalize()


def cpp_node(workspace: Path, func: str, stream: bool = False) -> df.FlowNode:
    entry = {"func_name": func, **({"stream_input": True} if stream else {})}
    config = workspace.parent / f"{func}.json"
    config.write_text(json.dumps({"func_list": [entry], "input_num": 1, "output_num": 1,
                                  "workspace": str(workspace), "target_bin": "libmsg_types.so"}))
    node = df.FlowNode(input_num=1, output_num=1, name=func.lower())
    node.add_process_point(df.FuncProcessPoint(compile_config_path=str(config)))
    return node


def python_node(cls: type, tmp_path: Path) -> df.FlowNode:
    node = df.FlowNode(input_num=1, output_num=1)
    node.add_process_point(df.FuncProcessPoint(py_func=cls, workspace_dir=str(tmp_path / "py_ws")))
    return node


def uint8(*values: int) -> df.Tensor:
    return df.Tensor(np.array(values, dtype=np.uint8))


def test_a_cpp_user_type_reaches_a_python_udf_project_and_fetch_as_typed_bytes(workspace, session, tmp_path):
    data = df.FlowData()
    sent = cpp_node(workspace, "Send1030")(data)
    received = python_node(classes.TypedReceiver, tmp_path)(sent)
    graph = df.FlowGraph([received, sent])
    assert graph.feed({data: uint8(7, 8)}) == 0
    values, ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 0
    assert values[0].numpy().tolist() == [1030, 2, 7]
    assert type(values[1]) is TypedBytes
    assert (bytes(values[1]), values[1].msg_type) == (b"\x07\x08", 1030)


def test_a_python_udf_projects_user_type_reaches_a_cpp_udf_as_raw_data_of_it(workspace, session, tmp_path):
    data = df.FlowData()
    graph = df.FlowGraph([cpp_node(workspace, "Receive")(python_node(classes.TypedSender, tmp_path)(data))])
    assert graph.feed({data: uint8(7, 8)}) == 0
    values, ret = graph.fetch(timeout=WAIT_MS)
    assert (values[0].numpy().tolist(), ret) == ([1030, 2, 7], 0)


def test_two_cpp_udfs_on_one_device_keep_the_user_type_in_their_records(workspace):
    graph = df.FlowGraph([cpp_node(workspace, "Receive")(cpp_node(workspace, "Send1030")(df.FlowData(name="x")))])
    om = dfir.compile(graph).om
    wiring = plan_wiring(json.loads(bytes(read_om(om).models[0].partition(PartitionType.FLOW_MODEL).data)), "m", 8)
    [between] = wiring.device.unit_inputs[1]
    assert wiring.device.shared[between], "the sender's output is a record channel inside its device"
    with dfir.load(om) as model:
        assert model.feed_data([np.array([5, 6, 7], dtype=np.uint8)]) == 0
        tensors, _, ret = model.fetch_data(timeout=WAIT_MS)
    assert (tensors[0].numpy().tolist(), int(ret)) == ([1030, 3, 5], 0)


def test_a_registered_user_type_a_cpp_udf_sends_is_fetched_as_its_object(workspace, session):
    data = df.FlowData()
    graph = df.FlowGraph([cpp_node(workspace, "Send1041")(data)])
    assert graph.feed({data: uint8(42)}) == 0
    values, ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 0
    assert type(values[0]) is Pixel and values[0].value == 42


@pytest.mark.parametrize("fed, expected", [(Pixel(9), [1041, 1, 9]), (TypedBytes(b"\x03\x04", 1050), [1050, 2, 3])],
                         ids=["registered class", "typed bytes"])
def test_an_object_with_a_msg_type_reaches_a_cpp_udf_as_raw_data_of_it(workspace, session, fed, expected):
    data = df.FlowData()
    graph = df.FlowGraph([cpp_node(workspace, "Receive")(data)])
    assert graph.feed({data: fed}) == 0
    values, ret = graph.fetch(timeout=WAIT_MS)
    assert (values[0].numpy().tolist(), ret) == (expected, 0)


@pytest.mark.parametrize("fed", [Pixel(9), TypedBytes(b"\x03\x04", 1050)], ids=["registered class", "typed bytes"])
def test_a_stream_input_cpp_udf_passes_a_user_type_on(workspace, session, fed):
    data = df.FlowData()
    graph = df.FlowGraph([cpp_node(workspace, "StreamRelay", stream=True)(data)])
    assert graph.feed({data: fed}) == 0
    values, ret = graph.fetch(timeout=WAIT_MS)
    assert ret == 0
    if isinstance(fed, Pixel):
        assert type(values[0]) is Pixel and values[0].value == 9
    else:
        assert type(values[0]) is TypedBytes and (bytes(values[0]), values[0].msg_type) == (b"\x03\x04", 1050)


def test_an_object_without_a_msg_type_is_still_refused_by_a_cpp_udf(workspace, session):
    data = df.FlowData()
    graph = df.FlowGraph([cpp_node(workspace, "Receive")(data)])
    assert graph.feed({data: "text"}) == 0
    _, ret = graph.fetch(timeout=WAIT_MS)
    assert ret != 0
    assert "input 0 is a object message; a C++ UDF takes tensors, raw data and empty messages" in ret.message


def test_typed_raw_and_typed_object_convert_as_ge_sends_user_types():
    assert typed_raw(Pixel(5)) == (1041, b"\x05")
    assert typed_raw(TypedBytes(b"ab", 1050)) == (1050, b"ab")
    assert typed_raw("text") is None and typed_raw(b"plain") is None
    pixel, typed = typed_object(1041, np.array([6], np.uint8)), typed_object(1050, b"xy")
    assert type(pixel) is Pixel and pixel.value == 6
    assert type(typed) is TypedBytes and (bytes(typed), typed.msg_type) == (b"xy", 1050)


def test_a_serialize_func_returning_no_bytes_is_named():
    with pytest.raises(TypeError) as error:
        typed_raw(Broken())
    assert str(error.value) == "the serialize_func of msg type 1042 returned dict, not bytes"
