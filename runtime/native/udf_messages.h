// The runtime's Tensor and FlowMsg: host buffers shared by reference count, so a message moves
// between Python and a C++ UDF without copying its data.
#ifndef DFIR_RUNTIME_NATIVE_UDF_MESSAGES_H_
#define DFIR_RUNTIME_NATIVE_UDF_MESSAGES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flow_func/flow_msg.h"

namespace dfir::udf {

using FlowFunc::MsgType;
using FlowFunc::TensorDataType;

// Bytes of one element of `dtype`; 0 for a type a C++ UDF cannot hold (DT_STRING, unknown).
uint64_t ElementSize(TensorDataType dtype);

// A span of host memory kept alive by `owner` (an allocation, or a Python buffer's hold).
struct Buffer {
  std::shared_ptr<void> owner;
  uint8_t* data = nullptr;
  uint64_t size = 0;
  uint64_t block = 0;  // the runtime arena block that holds the bytes (0: none), for a put without a copy

  // `size` zero bytes starting on an `align`-byte boundary (align: a power of two).
  static Buffer Allocate(uint64_t size, uint32_t align);
};

// The transaction facts every message carries.
struct MsgMeta {
  uint64_t transaction_id = 0;
  uint64_t start_time = 0;
  uint64_t end_time = 0;
  uint32_t flow_flags = 0;
};

class HostTensor final : public FlowFunc::Tensor {
 public:
  HostTensor(std::vector<int64_t> shape, TensorDataType dtype, Buffer buffer);

  const std::vector<int64_t>& GetShape() const override { return shape_; }
  TensorDataType GetDataType() const override { return dtype_; }
  void* GetData() const override { return buffer_.data; }
  uint64_t GetDataSize() const override { return buffer_.size; }
  int64_t GetElementCnt() const override;
  int32_t Reshape(const std::vector<int64_t>& shape) override;
  uint64_t GetDataBufferSize() const override { return buffer_.size; }

  const Buffer& buffer() const { return buffer_; }

 private:
  std::vector<int64_t> shape_;
  TensorDataType dtype_;
  Buffer buffer_;
};

// What a message holds.
enum class Payload : int32_t { kTensor = 0, kRaw = 1, kEmpty = 2 };

class HostFlowMsg final : public FlowFunc::FlowMsg {
 public:
  static std::shared_ptr<HostFlowMsg> Tensor(std::vector<int64_t> shape, TensorDataType dtype, Buffer buffer,
                                             const MsgMeta& meta);
  static std::shared_ptr<HostFlowMsg> Raw(Buffer buffer, const MsgMeta& meta);
  static std::shared_ptr<HostFlowMsg> Empty(MsgType type, const MsgMeta& meta);

  MsgType GetMsgType() const override { return type_; }
  // A raw message takes MSG_TYPE_RAW_MSG or a user type (>= MSG_TYPE_USER_DEFINE_START); another
  // change is refused with an error log record.
  void SetMsgType(MsgType msg_type) override;
  FlowFunc::Tensor* GetTensor() const override { return tensor_ ? &*tensor_ : nullptr; }
  int32_t GetRawData(void*& data, uint64_t& size) const override;
  int32_t GetRetCode() const override { return ret_code_; }
  void SetRetCode(int32_t ret_code) override { ret_code_ = ret_code; }
  uint64_t GetTransactionId() const override { return meta_.transaction_id; }
  void SetTransactionId(uint64_t transaction_id) override { meta_.transaction_id = transaction_id; }
  uint64_t GetStartTime() const override { return meta_.start_time; }
  void SetStartTime(uint64_t start_time) override { meta_.start_time = start_time; }
  uint64_t GetEndTime() const override { return meta_.end_time; }
  void SetEndTime(uint64_t end_time) override { meta_.end_time = end_time; }
  uint32_t GetFlowFlags() const override { return meta_.flow_flags; }
  void SetFlowFlags(uint32_t flags) override { meta_.flow_flags = flags; }
  void SetRouteLabel(uint32_t route_label) override { route_label_ = route_label; }
  const std::vector<FlowFunc::Tensor*> GetTensorList() const override { return {}; }

  Payload payload() const { return payload_; }
  const HostTensor* tensor() const { return tensor_ ? &*tensor_ : nullptr; }
  // The message's bytes: the tensor's or the raw data's (empty for an empty message).
  const Buffer& buffer() const;
  const MsgMeta& meta() const { return meta_; }
  uint32_t route_label() const { return route_label_; }
  uint32_t data_label() const { return data_label_; }
  void SetLabels(uint32_t data_label, uint32_t route_label);

 private:
  // Lets the factories make messages with std::make_shared (one allocation), and nobody else.
  struct Key {
    explicit Key() = default;
  };

 public:
  HostFlowMsg(Key, MsgType type, Payload payload, const MsgMeta& meta) : type_(type), payload_(payload), meta_(meta) {}

 private:
  MsgType type_;
  Payload payload_;
  mutable std::optional<HostTensor> tensor_;  // GetTensor() hands out a writable tensor
  Buffer raw_;
  int32_t ret_code_ = 0;
  MsgMeta meta_;
  uint32_t route_label_ = 0;
  uint32_t data_label_ = 0;
};

// Whether a raw message of `msg_type` carries a user type of its own (>= MSG_TYPE_USER_DEFINE_START,
// not the pickled type): it leaves the UDF as an object of that type, not as plain raw bytes.
inline bool IsUserMsgType(MsgType msg_type) {
  return static_cast<uint32_t>(msg_type) >= static_cast<uint32_t>(MsgType::MSG_TYPE_USER_DEFINE_START) &&
         msg_type != MsgType::MSG_TYPE_PICKLED_MSG;
}

}  // namespace dfir::udf

#endif  // DFIR_RUNTIME_NATIVE_UDF_MESSAGES_H_
