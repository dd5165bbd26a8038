// The C++ UDF host's messages, params, run context and records (runtime/native/udf_messages.h,
// udf_params.h, udf_context.h, udf_records.h), without a loaded library.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>

#include "helpers.h"
#include "udf_context.h"
#include "udf_messages.h"
#include "udf_params.h"
#include "udf_records.h"

using dfir::udf::Buffer;
using dfir::udf::CallFacts;
using dfir::udf::HostAttrValue;
using dfir::udf::HostFlowMsg;
using dfir::udf::HostRunContext;
using dfir::udf::MsgMeta;
using dfir::udf::Payload;
using FlowFunc::AffinityPolicy;
using FlowFunc::BalanceConfig;
using FlowFunc::OutOptions;
using FlowFunc::FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
using FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
using FlowFunc::FLOW_FUNC_SUCCESS;
using FlowFunc::MsgType;
using FlowFunc::TensorDataType;

namespace {

MsgMeta Meta(uint64_t id) {
  MsgMeta meta;
  meta.transaction_id = id;
  meta.start_time = 10;
  meta.end_time = 20;
  meta.flow_flags = 1;
  return meta;
}

// A context of func "f" whose outputs are the node's outputs `ports`.
HostRunContext Context(std::vector<uint32_t> ports, const std::string& user_data = "") {
  CallFacts call;
  call.meta = Meta(7);
  call.user_data = user_data;
  return HostRunContext("f", std::move(ports), call, nullptr);
}

// The record kinds and numpy type numbers the bindings would set.
dfir::udf::RecordTypes Types() {
  dfir::udf::RecordTypes types;
  types.tensor = 1;
  types.raw = 2;
  types.empty = 3;
  types.dtype_of_num = {{11, TensorDataType::DT_FLOAT}, {5, TensorDataType::DT_INT32}, {2, TensorDataType::DT_UINT8}};
  types.num_of_dtype = {{TensorDataType::DT_FLOAT, 11}, {TensorDataType::DT_INT32, 5}, {TensorDataType::DT_UINT8, 2}};
  return types;
}

// A balance config of a rows x cols weight matrix, as a UDF makes one through OutOptions.
FlowFunc::detail::BalanceConfigData Balance(int32_t rows, int32_t cols,
                                            AffinityPolicy policy = AffinityPolicy::NO_AFFINITY) {
  FlowFunc::detail::BalanceConfigData config;
  FlowFunc::BalanceWeight weight;
  weight.rowNum = rows;
  weight.colNum = cols;
  config.SetBalanceWeight(weight);
  config.SetAffinityPolicy(policy);
  return config;
}

OutOptions Options(int32_t rows, int32_t cols, AffinityPolicy policy,
                   const std::vector<std::pair<int32_t, int32_t>>& positions) {
  OutOptions options;
  FlowFunc::BalanceWeight weight;
  weight.rowNum = rows;
  weight.colNum = cols;
  options.MutableBalanceConfig()->SetBalanceWeight(weight);
  options.MutableBalanceConfig()->SetAffinityPolicy(policy);
  options.MutableBalanceConfig()->SetDataPos(positions);
  return options;
}

}  // namespace

TEST_SUITE("udf_host") {

TEST_CASE("messages: element sizes, aligned zeroed buffers, reshape by element count") {
  CHECK(dfir::udf::ElementSize(TensorDataType::DT_FLOAT) == 4);
  CHECK(dfir::udf::ElementSize(TensorDataType::DT_BF16) == 2);
  CHECK(dfir::udf::ElementSize(TensorDataType::DT_INT64) == 8);
  CHECK(dfir::udf::ElementSize(TensorDataType::DT_BOOL) == 1);
  CHECK(dfir::udf::ElementSize(TensorDataType::DT_STRING) == 0);
  for (uint32_t align : {1u, 64u, 4096u}) {
    Buffer buffer = Buffer::Allocate(100, align);
    CHECK(reinterpret_cast<uintptr_t>(buffer.data) % align == 0);
    CHECK(buffer.size == 100);
    CHECK(buffer.block == 0);
    bool zero = true;
    for (int i = 0; i < 100; ++i) zero = zero && buffer.data[i] == 0;
    CHECK(zero);
  }
  auto msg = HostFlowMsg::Tensor({2, 3}, TensorDataType::DT_FLOAT, Buffer::Allocate(24, 64), Meta(3));
  FlowFunc::Tensor* tensor = msg->GetTensor();
  REQUIRE(tensor != nullptr);
  CHECK(tensor->GetElementCnt() == 6);
  CHECK(tensor->GetDataSize() == 24);
  CHECK(tensor->Reshape({3, 2}) == FLOW_FUNC_SUCCESS);
  CHECK(tensor->GetShape() == std::vector<int64_t>{3, 2});
  CHECK(tensor->Reshape({4, 2}) == FLOW_FUNC_ERR_PARAM_INVALID);
  CHECK(tensor->Reshape({-2, -3}) == FLOW_FUNC_ERR_PARAM_INVALID);
  CHECK(tensor->GetShape() == std::vector<int64_t>{3, 2});
  CHECK(msg->GetMsgType() == MsgType::MSG_TYPE_TENSOR_DATA);
  CHECK(msg->GetTransactionId() == 3);
  msg->SetTransactionId(4);
  msg->SetRetCode(5);
  msg->SetRouteLabel(6);
  CHECK(msg->GetTransactionId() == 4);
  CHECK(msg->GetRetCode() == 5);
  CHECK(msg->route_label() == 6);
  void* data = nullptr;
  uint64_t size = 0;
  CHECK(msg->GetRawData(data, size) == FLOW_FUNC_SUCCESS);  // a tensor's bytes
  CHECK(size == 24);
  auto empty = HostFlowMsg::Empty(MsgType::MSG_TYPE_RAW_MSG, Meta(1));
  CHECK(empty->GetTensor() == nullptr);
  CHECK(empty->GetRawData(data, size) == FLOW_FUNC_ERR_PARAM_INVALID);
  CHECK(empty->buffer().size == 0);
}

TEST_CASE("params: each attr gives its own type, [] fits every list type, a missing one is null") {
  HostAttrValue number(int64_t{5});
  int64_t i = 0;
  CHECK(number.GetVal(i) == FLOW_FUNC_SUCCESS);
  CHECK(i == 5);
  float f = 0;
  CHECK(number.GetVal(f) == FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH);
  std::vector<int64_t> list{1};
  CHECK(number.GetVal(list) == FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH);
  HostAttrValue empty(dfir::udf::EmptyList{});
  CHECK(empty.GetVal(list) == FLOW_FUNC_SUCCESS);
  CHECK(list.empty());
  std::vector<std::string> names{"x"};
  CHECK(empty.GetVal(names) == FLOW_FUNC_SUCCESS);
  CHECK(names.empty());
  std::vector<std::vector<int64_t>> nested{{1}};
  CHECK(empty.GetVal(nested) == FLOW_FUNC_SUCCESS);
  CHECK(empty.GetVal(i) == FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH);
  HostAttrValue text(std::string("abc"));
  std::string s;
  CHECK(text.GetVal(s) == FLOW_FUNC_SUCCESS);
  CHECK(s == "abc");
  HostAttrValue dtype(TensorDataType::DT_INT32);
  TensorDataType t = TensorDataType::DT_FLOAT;
  CHECK(dtype.GetVal(t) == FLOW_FUNC_SUCCESS);
  CHECK(t == TensorDataType::DT_INT32);
  dfir::udf::NodeFacts facts;
  facts.name = "node";
  facts.input_num = 2;
  facts.device_id = 3;
  facts.instance_id = 1;
  facts.instance_num = 4;
  dfir::udf::HostMetaParams params(facts, {{"n", std::make_shared<const HostAttrValue>(int64_t{9})}});
  CHECK(std::string(params.GetName()) == "node");
  CHECK(params.GetInputNum() == 2);
  CHECK(params.GetRunningDeviceId() == 3);
  CHECK(params.GetRunningInstanceId() == 1);
  CHECK(params.GetRunningInstanceNum() == 4);
  REQUIRE(params.GetAttr("n").get() != nullptr);
  CHECK(params.GetAttr("missing").get() == nullptr);
  CHECK(params.GetAttr(nullptr).get() == nullptr);
}

TEST_CASE("params: strings come as AscendString or std::string") {
  HostAttrValue text(std::string("ab\0c", 4));
  FlowFunc::AscendString ascend;
  CHECK(text.GetVal(ascend) == FLOW_FUNC_SUCCESS);
  CHECK(ascend.GetLength() == 4);
  CHECK(ascend == FlowFunc::AscendString("ab\0c", 4));
  const FlowFunc::AttrValue& base = text;
  std::string plain;
  CHECK(base.GetVal(plain) == FLOW_FUNC_SUCCESS);
  CHECK(plain == std::string("ab\0c", 4));
  HostAttrValue names(std::vector<std::string>{"x", "yz"});
  std::vector<FlowFunc::AscendString> list;
  CHECK(names.GetVal(list) == FLOW_FUNC_SUCCESS);
  REQUIRE(list.size() == 2);
  CHECK(std::string(list[1].GetString()) == "yz");
  int64_t number = 0;
  CHECK(names.GetVal(number) == FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH);
  CHECK(HostAttrValue(int64_t{1}).GetVal(ascend) == FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH);
  CHECK(FlowFunc::AscendString("a") < FlowFunc::AscendString("ab"));
  CHECK(FlowFunc::AscendString(nullptr) == FlowFunc::AscendString(""));
}

TEST_CASE("messages: SetMsgType gives raw data a user type; a tensor keeps its type") {
  auto raw = HostFlowMsg::Raw(Buffer::Allocate(4, 64), Meta(1));
  raw->SetMsgType(static_cast<MsgType>(1025));
  CHECK(static_cast<int>(raw->GetMsgType()) == 1025);
  raw->SetMsgType(MsgType::MSG_TYPE_TENSOR_DATA);
  CHECK(static_cast<int>(raw->GetMsgType()) == 1025);  // refused, with an error record
  auto tensor = HostFlowMsg::Tensor({1}, TensorDataType::DT_FLOAT, Buffer::Allocate(4, 64), Meta(1));
  tensor->SetMsgType(MsgType::MSG_TYPE_RAW_MSG);
  CHECK(tensor->GetMsgType() == MsgType::MSG_TYPE_TENSOR_DATA);
  CHECK(tensor->GetTensorList().empty());
}

TEST_CASE("run context: FlowBufferFactory tensors become messages; tensor lists are refused") {
  HostRunContext context = Context({0});
  std::string problem;
  auto tensor = dfir::udf::AllocHostTensor("AllocTensor", {2, 3}, TensorDataType::DT_INT32, 512, problem);
  REQUIRE(tensor.get() != nullptr);
  CHECK(tensor->GetDataSize() == 24);
  CHECK(reinterpret_cast<uintptr_t>(tensor->GetData()) % 512 == 0);
  auto msg = context.ToFlowMsg(tensor);
  REQUIRE(msg.get() != nullptr);
  CHECK(msg->GetTensor()->GetData() == tensor->GetData());  // the same bytes
  CHECK(msg->GetTransactionId() == 7);
  CHECK(dfir::udf::AllocHostTensor("AllocTensor", {-1}, TensorDataType::DT_INT32, 512, problem).get() == nullptr);
  CHECK(problem == "AllocTensor: shape must hold dims >= 0, got [-1]");
  CHECK(context.ToFlowMsg(nullptr).get() == nullptr);
  CHECK(context.AllocTensorListMsg({{1}}, {TensorDataType::DT_INT32}, 512).get() == nullptr);
  REQUIRE(context.problems().size() == 2);
  CHECK(context.problems()[0] == "ToFlowMsg: the tensor is null");
  CHECK(context.problems()[1] ==
        "AllocTensorListMsg: tensor-list messages are not supported; send one tensor message per output");
}

TEST_CASE("meta context: the node's facts always, message calls only inside a call") {
  dfir::udf::NodeFacts facts;
  facts.name = "node";
  facts.input_num = 2;
  facts.output_num = 3;
  facts.work_path = "/w";
  auto params = std::make_shared<dfir::udf::HostMetaParams>(
      facts, std::map<std::string, std::shared_ptr<const HostAttrValue>>{
                 {"n", std::make_shared<const HostAttrValue>(int64_t{9})}});
  dfir::udf::HostMetaContext meta(params);
  int64_t n = 0;
  CHECK(meta.GetAttr("n", n) == FLOW_FUNC_SUCCESS);
  CHECK(n == 9);
  CHECK(meta.GetAttr("missing", n) == FlowFunc::FLOW_FUNC_ERR_ATTR_NOT_EXITS);
  CHECK(meta.GetInputNum() == 2);
  CHECK(meta.GetOutputNum() == 3);
  CHECK(std::string(meta.GetWorkPath()) == "/w");
  CHECK(meta.AllocTensorMsg({1}, TensorDataType::DT_FLOAT).get() == nullptr);
  std::vector<std::shared_ptr<FlowFunc::FlowMsg>> outputs;
  CHECK(meta.RunFlowModel("k", {}, outputs, -1) == FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT);
  HostRunContext call = Context({0, 2});
  meta.Enter(&call);
  auto msg = meta.AllocTensorMsg({1}, TensorDataType::DT_FLOAT);
  REQUIRE(msg.get() != nullptr);
  CHECK(meta.SetOutput(2, msg) == FLOW_FUNC_SUCCESS);
  CHECK(meta.SetOutput(1, msg) == FLOW_FUNC_ERR_PARAM_INVALID);
  meta.Leave();
  CHECK(meta.SetOutput(2, msg) == FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT);
  REQUIRE(call.outputs().size() == 1);
  CHECK(call.outputs()[0].index == 1);
}

TEST_CASE("balance labels: data label = position + 1, route label by affinity") {
  std::vector<std::pair<uint32_t, uint32_t>> labels;
  std::string problem;
  auto none = Balance(2, 3);
  none.SetDataPos({{0, 0}, {1, 2}});
  REQUIRE(dfir::udf::BalanceLabels(none, 2, labels, problem));
  CHECK(labels == std::vector<std::pair<uint32_t, uint32_t>>{{1, 1}, {6, 6}});
  auto rows = Balance(2, 3, AffinityPolicy::ROW_AFFINITY);
  rows.SetDataPos({{1, 0}, {1, 2}});
  REQUIRE(dfir::udf::BalanceLabels(rows, 2, labels, problem));
  CHECK(labels == std::vector<std::pair<uint32_t, uint32_t>>{{4, 2}, {6, 2}});
  auto cols = Balance(2, 3, AffinityPolicy::COL_AFFINITY);
  cols.SetDataPos({{1, 2}});
  REQUIRE(dfir::udf::BalanceLabels(cols, 1, labels, problem));
  CHECK(labels == std::vector<std::pair<uint32_t, uint32_t>>{{6, 3}});
  CHECK_FALSE(dfir::udf::BalanceLabels(cols, 2, labels, problem));
  CHECK(problem == "the balance config has 1 data positions for 2 message(s); SetDataPos gives one per message");
  auto outside = Balance(2, 3);
  outside.SetDataPos({{2, 0}});
  CHECK_FALSE(dfir::udf::BalanceLabels(outside, 1, labels, problem));
  CHECK(problem == "data position (2, 0) lies outside the 2 x 3 matrix");
  auto zero = Balance(0, 3);
  CHECK_FALSE(dfir::udf::BalanceLabels(zero, 0, labels, problem));
  CHECK(problem == "the balance weight's rowNum and colNum must be > 0, got 0 x 3");
  auto huge = Balance(1000, 1000);
  CHECK_FALSE(dfir::udf::BalanceLabels(huge, 0, labels, problem));
  CHECK(problem == "the balance weight's matrix 1000 x 1000 has 1000000 cells; at most 65536 are allowed");
}

TEST_CASE("run context: allocations carry the call's transaction; bad arguments are refused and noted") {
  HostRunContext context = Context({0, 1});
  auto tensor = context.AllocTensorMsg({2, 2}, TensorDataType::DT_INT32);
  REQUIRE(tensor.get() != nullptr);
  CHECK(tensor->GetTransactionId() == 7);
  CHECK(tensor->GetTensor()->GetDataSize() == 16);
  auto raw = context.AllocRawDataMsg(10, 4096);
  REQUIRE(raw.get() != nullptr);
  void* data = nullptr;
  uint64_t size = 0;
  raw->GetRawData(data, size);
  CHECK(size == 10);
  CHECK(reinterpret_cast<uintptr_t>(data) % 4096 == 0);
  CHECK(context.AllocEmptyDataMsg(MsgType::MSG_TYPE_TENSOR_DATA).get() != nullptr);
  CHECK(context.problems().empty());
  CHECK(context.AllocTensorMsg({2}, TensorDataType::DT_STRING).get() == nullptr);
  CHECK(context.AllocTensorMsgWithAlign({2}, TensorDataType::DT_FLOAT, 48).get() == nullptr);
  CHECK(context.AllocTensorMsg({2, -1}, TensorDataType::DT_FLOAT).get() == nullptr);
  CHECK(context.AllocRawDataMsg(-1, 64).get() == nullptr);
  CHECK(context.AllocRawDataMsg(8, 8192).get() == nullptr);
  REQUIRE(context.problems().size() == 5);
  CHECK(context.problems()[0] == "AllocTensorMsg: data type 13 cannot be allocated");
  CHECK(context.problems()[1] == "AllocTensorMsg: align must be a power of two in [1, 4096], got 48");
  CHECK(context.problems()[2] == "AllocTensorMsg: shape must hold dims >= 0, got [2, -1]");
  CHECK(context.problems()[3] ==
        "AllocRawDataMsg: size must be >= 0 and align a power of two in [1, 4096], got size -1 and align 64");
}

// A shape whose byte size does not fit an int64 is refused and noted like any other bad shape:
// a tiny buffer under a tensor that claims every element would let a UDF write past it.
TEST_CASE("run context: a shape whose byte size overflows is refused") {
  HostRunContext context = Context({0});
  auto wrapped = context.AllocTensorMsg({int64_t{1} << 62}, TensorDataType::DT_FLOAT);  // 2^64 bytes
  if (wrapped != nullptr) {
    MESSAGE("got a tensor of ", wrapped->GetTensor()->GetElementCnt(), " elements over ",
            wrapped->GetTensor()->GetDataSize(), " bytes");
  }
  CHECK(wrapped.get() == nullptr);
  auto squared = context.AllocTensorMsg({int64_t{1} << 32, int64_t{1} << 32}, TensorDataType::DT_UINT8);
  CHECK(squared.get() == nullptr);
  // Numpy's rule: the non-zero dims must fit even when a zero dim makes the tensor empty.
  CHECK(context.AllocTensorMsg({int64_t{1} << 40, int64_t{1} << 40, 0}, TensorDataType::DT_INT8).get() == nullptr);
  REQUIRE(context.problems().size() == 3);
  CHECK(context.problems()[0] ==
        "AllocTensorMsg: shape [4611686018427387904] of 4-byte elements is too big: "
        "its byte size does not fit an int64");
  auto empty = context.AllocTensorMsg({int64_t{1} << 40, 0}, TensorDataType::DT_FLOAT);
  REQUIRE(empty.get() != nullptr);
  CHECK(empty->GetTensor()->GetElementCnt() == 0);
  CHECK(empty->GetTensor()->GetDataSize() == 0);
  // The largest byte size that fits is accepted by the check; malloc refuses it, noted too.
  auto huge = context.AllocTensorMsg({(int64_t{1} << 61) - 1}, TensorDataType::DT_FLOAT);
  CHECK(huge.get() == nullptr);
  CHECK(context.AllocRawDataMsg(INT64_MAX, 64).get() == nullptr);
  REQUIRE(context.problems().size() == 5);
  CHECK(context.problems()[3] == "AllocTensorMsg: could not allocate 9223372036854775804 bytes");
  CHECK(context.problems()[4] == "AllocRawDataMsg: could not allocate 9223372036854775807 bytes");
}

TEST_CASE("run context: outputs by index, with balance labels; foreign or null messages refused") {
  HostRunContext context = Context({0, 1});
  auto a = context.AllocRawDataMsg(4, 64);
  auto b = context.AllocRawDataMsg(4, 64);
  CHECK(context.SetOutput(1, a) == FLOW_FUNC_SUCCESS);
  CHECK(context.SetOutput(2, a) == FLOW_FUNC_ERR_PARAM_INVALID);
  CHECK(context.SetOutput(0, nullptr) == FLOW_FUNC_ERR_PARAM_INVALID);
  const OutOptions config = Options(1, 2, AffinityPolicy::COL_AFFINITY, {{0, 0}, {0, 1}});
  CHECK(context.SetMultiOutputs(0, {a, b}, config) == FLOW_FUNC_SUCCESS);
  CHECK(context.SetMultiOutputs(0, {}, config) == FLOW_FUNC_ERR_PARAM_INVALID);
  CHECK(context.SetOutput(0, a, config) == FLOW_FUNC_ERR_PARAM_INVALID);  // 2 positions, 1 message
  CHECK(context.SetOutput(0, b, OutOptions()) == FLOW_FUNC_SUCCESS);  // no balance config: a plain output
  REQUIRE(context.outputs().size() == 4);
  CHECK(context.outputs()[0].index == 1);
  CHECK(context.outputs()[3].index == 0);
  CHECK(context.outputs()[2].msg->data_label() == 2);
  CHECK(context.outputs()[2].msg->route_label() == 2);
  REQUIRE(context.problems().size() == 4);
  CHECK(context.problems()[0] == "SetOutput: output index 2 is not an output of func 'f'; its outputs are [0, 1]");
  CHECK(context.problems()[1] == "SetOutput: the message is null");
  CHECK(context.problems()[2] == "SetMultiOutputs: expected at least one message");
}

TEST_CASE("run context: an output index is the node's, one of the func's outputs (GE's outputs_index)") {
  HostRunContext context = Context({2, 0});  // the func writes node outputs 2 and 0, in that order
  auto a = context.AllocRawDataMsg(4, 64);
  CHECK(context.SetOutput(0, a) == FLOW_FUNC_SUCCESS);
  CHECK(context.SetOutput(2, a) == FLOW_FUNC_SUCCESS);
  CHECK(context.SetOutput(1, a) == FLOW_FUNC_ERR_PARAM_INVALID);  // in the node's range, not the func's
  REQUIRE(context.outputs().size() == 2);
  CHECK(context.outputs()[0].index == 1);  // positions among the func's outputs
  CHECK(context.outputs()[1].index == 0);
  REQUIRE(context.problems().size() == 1);
  CHECK(context.problems()[0] == "SetOutput: output index 1 is not an output of func 'f'; its outputs are [2, 0]");
}

TEST_CASE("run context: user data by offset, zero-padded to 64 bytes; exceptions raised and read") {
  HostRunContext context = Context({0}, "hello");
  char out[8] = {};
  CHECK(context.GetUserData(out, 5, 0) == FLOW_FUNC_SUCCESS);
  CHECK(std::string(out, 5) == "hello");
  CHECK(context.GetUserData(out, 4, 3) == FLOW_FUNC_SUCCESS);
  CHECK(std::string(out, 4) == std::string("lo\0\0", 4));
  CHECK(context.GetUserData(out, 1, 63) == FLOW_FUNC_SUCCESS);
  CHECK(context.GetUserData(out, 2, 63) == FLOW_FUNC_ERR_PARAM_INVALID);
  CHECK(context.GetUserData(out, 0, 0) == FLOW_FUNC_ERR_PARAM_INVALID);
  CHECK(context.GetUserData(nullptr, 1, 0) == FLOW_FUNC_ERR_PARAM_INVALID);
  CHECK(context.GetUserData(out, 1, std::numeric_limits<size_t>::max()) == FLOW_FUNC_ERR_PARAM_INVALID);
  int32_t code = 0;
  uint64_t user_context = 0;
  CHECK_FALSE(context.GetException(code, user_context));
  context.RaiseException(-3, 99);
  CHECK(context.raised());
  CHECK(context.GetException(code, user_context));
  CHECK(code == -3);
  CHECK(user_context == 99);
}

TEST_CASE("run context: RunFlowModel takes tensors only and notes the invoker's problem") {
  std::string seen_key;
  CallFacts call;
  call.meta = Meta(7);
  using Msgs = std::vector<std::shared_ptr<HostFlowMsg>>;
  HostRunContext context("f", {0}, call, [&](const std::string& key, const Msgs& inputs, int32_t, const MsgMeta& meta,
                                           Msgs& outputs, std::string& problem) {
    seen_key = key;
    if (key == "bad") {
      problem = "no such closure";
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    outputs = inputs;
    CHECK(meta.transaction_id == 7);
    return FLOW_FUNC_SUCCESS;
  });
  auto tensor = context.AllocTensorMsg({1}, TensorDataType::DT_FLOAT);
  std::vector<std::shared_ptr<FlowFunc::FlowMsg>> outputs;
  CHECK(context.RunFlowModel("sub", {tensor}, outputs, -1) == FLOW_FUNC_SUCCESS);
  CHECK(seen_key == "sub");
  CHECK(outputs.size() == 1);
  CHECK(context.RunFlowModel("bad", {tensor}, outputs, 10) == FlowFunc::FLOW_FUNC_FAILED);
  CHECK(outputs.empty());
  CHECK(context.RunFlowModel("sub", {context.AllocRawDataMsg(1, 64)}, outputs, 10) == FLOW_FUNC_ERR_PARAM_INVALID);
  CHECK(context.RunFlowModel("sub", {tensor}, outputs, -2) == FLOW_FUNC_ERR_PARAM_INVALID);
  REQUIRE(context.problems().size() == 3);
  CHECK(context.problems()[0] == "RunFlowModel('bad'): no such closure");
  CHECK(context.problems()[1] == "RunFlowModel: input 0 must be a tensor message of the runtime");
  CHECK(context.problems()[2] == "RunFlowModel: timeout must be -1 or >= 0 ms, got -2");
}

TEST_CASE("records: which a C++ UDF reads natively") {
  const auto types = Types();
  dfir::rt::MessageRecord record;
  dfir::rt::WriteHeader(dfir::testing::Transaction(1), types.tensor, 0, 0, 0, record);
  record.encoding = dfir::rt::BodyEncoding::kArray;
  record.dtype_num = 11;
  CHECK(dfir::udf::TakesNatively(record, types));
  record.dtype_num = 99;  // a dtype the UDF cannot hold
  CHECK_FALSE(dfir::udf::TakesNatively(record, types));
  record.dtype_num = 11;
  record.ret_code = 1;  // an error
  CHECK_FALSE(dfir::udf::TakesNatively(record, types));
  record.ret_code = 0;
  record.encoding = dfir::rt::BodyEncoding::kPickle;  // an object
  CHECK_FALSE(dfir::udf::TakesNatively(record, types));
  record.kind = types.raw;
  record.encoding = dfir::rt::BodyEncoding::kArray;
  CHECK(dfir::udf::TakesNatively(record, types));
  record.kind = types.empty;
  record.encoding = dfir::rt::BodyEncoding::kNone;
  CHECK(dfir::udf::TakesNatively(record, types));
  record.kind = 9;
  record.encoding = dfir::rt::BodyEncoding::kArray;
  CHECK_FALSE(dfir::udf::TakesNatively(record, types));
}

TEST_CASE("records: an arena body becomes a message in place, and goes out again without a copy") {
  auto region = dfir::testing::MakeRegion(1, 4);
  const auto types = Types();
  dfir::testing::CountingScope scope;
  dfir::rt::BodyWriter writer(*region, dfir::rt::Deadline::AfterMs(1000), scope);
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  dfir::rt::MessageRecord record;
  dfir::rt::WriteHeader(dfir::testing::Transaction(5), types.tensor, 0, 4, 3, record);
  dfir::rt::ArrayLayout layout;
  layout.dtype_num = 11;
  layout.ndim = 2;
  layout.shape[0] = 10;
  layout.shape[1] = 100;
  REQUIRE(writer.WriteArray(layout, values.data(), values.size() * 4, 0, record));
  const uint64_t block = record.block;
  REQUIRE(block != 0);
  auto msg = dfir::udf::MsgOfRecord(region, record, types);  // takes the record's reference over
  REQUIRE(msg->tensor() != nullptr);
  CHECK(msg->tensor()->GetShape() == std::vector<int64_t>{10, 100});
  CHECK(msg->tensor()->GetDataType() == TensorDataType::DT_FLOAT);
  CHECK(msg->tensor()->GetData() == region->base() + record.body_offset);  // in place
  CHECK(msg->GetTransactionId() == 5);
  CHECK(msg->data_label() == 3);
  CHECK(msg->route_label() == 4);
  CHECK(region->arena().References(block) == 1);
  dfir::rt::MessageRecord out;
  REQUIRE(dfir::udf::RecordOfMsg(*msg, "ud", 8, types, *region, writer, out));
  CHECK(out.block == block);  // the input passed on keeps its block
  CHECK(region->arena().References(block) == 2);
  CHECK(out.data_label == 3);  // the message's own label wins over the set's
  CHECK(out.user_data_size == 2);
  CHECK(out.kind == types.tensor);
  CHECK(out.dtype_num == 11);
  CHECK(out.shape[1] == 100);
  msg.reset();
  CHECK(region->arena().References(block) == 1);
  dfir::rt::ReleaseBody(*region, out);
  CHECK(region->arena().Stats().live_blocks == 0);
}

TEST_CASE("records: inline bodies are copied out; new outputs take the set's label; bad tensors refused") {
  auto region = dfir::testing::MakeRegion(1, 4);
  const auto types = Types();
  dfir::testing::CountingScope scope;
  dfir::rt::BodyWriter writer(*region, dfir::rt::Deadline::AfterMs(1000), scope);
  dfir::rt::MessageRecord record;
  dfir::rt::WriteHeader(dfir::testing::Transaction(2), types.raw, 0, 0, 0, record);
  const char text[] = "raw bytes";
  REQUIRE(writer.Write(dfir::rt::BodyEncoding::kArray, text, sizeof text, 0, record));
  auto raw = dfir::udf::MsgOfRecord(region, record, types);
  CHECK(raw->payload() == Payload::kRaw);
  CHECK(raw->buffer().data != record.inline_bytes);  // a copy: the slot is reused once taken
  CHECK(std::memcmp(raw->buffer().data, text, sizeof text) == 0);
  dfir::rt::MessageRecord out;
  REQUIRE(dfir::udf::RecordOfMsg(*raw, "", 8, types, *region, writer, out));
  CHECK(out.kind == types.raw);
  CHECK(out.data_label == 8);  // unlabelled: the set's label
  CHECK(out.dtype_num == 2);   // raw bytes go out as uint8
  CHECK(out.ndim == 1);
  CHECK(out.shape[0] == static_cast<int64_t>(sizeof text));
  auto empty = HostFlowMsg::Empty(MsgType::MSG_TYPE_TENSOR_DATA, Meta(3));
  REQUIRE(dfir::udf::RecordOfMsg(*empty, "", 0, types, *region, writer, out));
  CHECK(out.kind == types.empty);
  CHECK(out.encoding == dfir::rt::BodyEncoding::kNone);
  auto int64s = HostFlowMsg::Tensor({1}, TensorDataType::DT_INT64, Buffer::Allocate(8, 8), Meta(3));
  CHECK_THROWS_WITH_AS(dfir::udf::RecordOfMsg(*int64s, "", 0, types, *region, writer, out),
                       "the UDF set a tensor of data type 9, which has no numpy type", dfir::rt::RuntimeError);
  auto wide =
      HostFlowMsg::Tensor(std::vector<int64_t>(9, 1), TensorDataType::DT_FLOAT, Buffer::Allocate(4, 4), Meta(3));
  CHECK_THROWS_WITH_AS(dfir::udf::RecordOfMsg(*wide, "", 0, types, *region, writer, out),
                       "the UDF set a tensor of 9 dimensions; a message holds at most 8", dfir::rt::RuntimeError);
  CHECK(region->arena().Stats().live_blocks == 0);
}

}  // TEST_SUITE
