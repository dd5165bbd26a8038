// Tensor and FlowMsg: the messages a C++ UDF receives, allocates and emits. The runtime
// implements them; a UDF only uses these interfaces (and never deletes what it did not allocate).
#ifndef DFIR_FLOW_FUNC_FLOW_MSG_H_
#define DFIR_FLOW_FUNC_FLOW_MSG_H_

#include <cstdint>
#include <vector>

#include "flow_func/flow_func_defines.h"

namespace FlowFunc {

// A dense tensor in host memory.
class Tensor {
 public:
  virtual ~Tensor() = default;
  virtual const std::vector<int64_t>& GetShape() const = 0;
  virtual TensorDataType GetDataType() const = 0;
  virtual void* GetData() const = 0;
  virtual uint64_t GetDataSize() const = 0;  // bytes
  virtual int64_t GetElementCnt() const = 0;
  // A new shape with the same element count; FLOW_FUNC_ERR_PARAM_INVALID otherwise.
  virtual int32_t Reshape(const std::vector<int64_t>& shape) = 0;
};

// One message of a transaction: a tensor, raw bytes or nothing, a return code and metadata.
// Input buffers may be shared with other consumers: read them, do not write them.
class FlowMsg {
 public:
  virtual ~FlowMsg() = default;
  virtual MsgType GetMsgType() const = 0;
  virtual Tensor* GetTensor() const = 0;  // nullptr unless a tensor message
  // The bytes of a raw data (or tensor) message; FLOW_FUNC_ERR_PARAM_INVALID for an empty one.
  virtual int32_t GetRawData(void*& data, uint64_t& size) const = 0;
  virtual int32_t GetRetCode() const = 0;
  virtual void SetRetCode(int32_t ret_code) = 0;
  virtual uint64_t GetTransactionId() const = 0;
  virtual void SetTransactionId(uint64_t transaction_id) = 0;
  virtual uint64_t GetStartTime() const = 0;
  virtual void SetStartTime(uint64_t start_time) = 0;
  virtual uint64_t GetEndTime() const = 0;
  virtual void SetEndTime(uint64_t end_time) = 0;
  virtual uint32_t GetFlowFlags() const = 0;
  virtual void SetFlowFlags(uint32_t flags) = 0;
  virtual void SetRouteLabel(uint32_t route_label) = 0;
};

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_FLOW_MSG_H_
