#include "udf_messages.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "udf_log.h"

namespace dfir::udf {

uint64_t ElementSize(TensorDataType dtype) {
  switch (dtype) {
    case TensorDataType::DT_INT8:
    case TensorDataType::DT_UINT8:
    case TensorDataType::DT_BOOL:
      return 1;
    case TensorDataType::DT_FLOAT16:
    case TensorDataType::DT_BF16:
    case TensorDataType::DT_INT16:
    case TensorDataType::DT_UINT16:
      return 2;
    case TensorDataType::DT_FLOAT:
    case TensorDataType::DT_INT32:
    case TensorDataType::DT_UINT32:
      return 4;
    case TensorDataType::DT_INT64:
    case TensorDataType::DT_UINT64:
    case TensorDataType::DT_DOUBLE:
      return 8;
    default:
      return 0;
  }
}

Buffer Buffer::Allocate(uint64_t size, uint32_t align) {
  // malloc and an aligned start inside: glibc's aligned allocations cost several times a
  // malloc for the small buffers most messages hold.
  void* memory = std::malloc(size + align);
  if (memory == nullptr) throw std::bad_alloc();
  const auto address = reinterpret_cast<uintptr_t>(memory);
  Buffer buffer;
  buffer.owner = std::shared_ptr<void>(memory, std::free);
  buffer.data = reinterpret_cast<uint8_t*>((address + align - 1) / align * align);
  buffer.size = size;
  std::memset(buffer.data, 0, size);
  return buffer;
}

namespace {

int64_t ElementCount(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (const int64_t dim : shape) count *= dim;
  return count;
}

}  // namespace

HostTensor::HostTensor(std::vector<int64_t> shape, TensorDataType dtype, Buffer buffer)
    : shape_(std::move(shape)), dtype_(dtype), buffer_(std::move(buffer)) {}

int64_t HostTensor::GetElementCnt() const { return ElementCount(shape_); }

int32_t HostTensor::Reshape(const std::vector<int64_t>& shape) {
  for (const int64_t dim : shape) {
    if (dim < 0) return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  }
  if (ElementCount(shape) != GetElementCnt()) return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  shape_ = shape;
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

std::shared_ptr<HostFlowMsg> HostFlowMsg::Tensor(std::vector<int64_t> shape, TensorDataType dtype, Buffer buffer,
                                                 const MsgMeta& meta) {
  auto msg = std::make_shared<HostFlowMsg>(Key(), MsgType::MSG_TYPE_TENSOR_DATA, Payload::kTensor, meta);
  msg->tensor_.emplace(std::move(shape), dtype, std::move(buffer));
  return msg;
}

std::shared_ptr<HostFlowMsg> HostFlowMsg::Raw(Buffer buffer, const MsgMeta& meta) {
  auto msg = std::make_shared<HostFlowMsg>(Key(), MsgType::MSG_TYPE_RAW_MSG, Payload::kRaw, meta);
  msg->raw_ = std::move(buffer);
  return msg;
}

std::shared_ptr<HostFlowMsg> HostFlowMsg::Empty(MsgType type, const MsgMeta& meta) {
  return std::make_shared<HostFlowMsg>(Key(), type, Payload::kEmpty, meta);
}

const Buffer& HostFlowMsg::buffer() const { return tensor_ ? tensor_->buffer() : raw_; }

int32_t HostFlowMsg::GetRawData(void*& data, uint64_t& size) const {
  if (payload_ == Payload::kEmpty) return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  data = buffer().data;
  size = buffer().size;
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

void HostFlowMsg::SetMsgType(MsgType msg_type) {
  const auto number = static_cast<uint32_t>(msg_type);
  const bool raw_type = msg_type == MsgType::MSG_TYPE_RAW_MSG || IsUserMsgType(msg_type);
  if (msg_type == type_ || payload_ == Payload::kEmpty || (payload_ == Payload::kRaw && raw_type)) {
    type_ = msg_type;
    return;
  }
  const char* holds = payload_ == Payload::kTensor ? "a tensor" : "raw data";
  HostLogSink(kLogError, ("SetMsgType: a message holding " + std::string(holds) + " cannot take msg type " +
                          std::to_string(number) + "; raw data messages take MSG_TYPE_RAW_MSG (1) or a user type "
                          ">= MSG_TYPE_USER_DEFINE_START (1024)").c_str());
}

void HostFlowMsg::SetLabels(uint32_t data_label, uint32_t route_label) {
  data_label_ = data_label;
  route_label_ = route_label;
}

}  // namespace dfir::udf
