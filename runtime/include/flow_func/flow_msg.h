// Tensor and FlowMsg: the messages a C++ UDF receives, allocates and emits. The runtime
// implements them; a UDF only uses these interfaces (and never deletes what it did not allocate).
#ifndef DFIR_FLOW_FUNC_FLOW_MSG_H_
#define DFIR_FLOW_FUNC_FLOW_MSG_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "flow_func_defines.h"
#include "tensor_data_type.h"

namespace FlowFunc {

enum class MsgType : uint16_t {
  MSG_TYPE_TENSOR_DATA = 0,
  MSG_TYPE_RAW_MSG = 1,
  MSG_TYPE_TENSOR_LIST = 2,  // not made by dfir: AllocTensorListMsg is refused
  MSG_TYPE_USER_DEFINE_START = 1024,
  MSG_TYPE_PICKLED_MSG = 65535,  // dfir: a Python object a Python UDF sent
};

enum class FlowFlag : uint32_t {
  FLOW_FLAG_EOS = (1U << 0U),  // the end of a stream
  FLOW_FLAG_SEG = (1U << 1U),  // the end of a segment
};

// FlowMsg::GetFlowFlags() bits as plain numbers.
constexpr uint32_t FLOW_FLAG_EOS = static_cast<uint32_t>(FlowFlag::FLOW_FLAG_EOS);
constexpr uint32_t FLOW_FLAG_SEG = static_cast<uint32_t>(FlowFlag::FLOW_FLAG_SEG);

// A dense tensor in host memory.
class FLOW_FUNC_VISIBILITY Tensor {
 public:
  Tensor() = default;
  virtual ~Tensor() = default;
  virtual const std::vector<int64_t>& GetShape() const = 0;
  virtual TensorDataType GetDataType() const = 0;
  virtual void* GetData() const = 0;
  virtual uint64_t GetDataSize() const = 0;  // bytes
  virtual int64_t GetElementCnt() const = 0;
  // A new shape with the same element count; FLOW_FUNC_ERR_PARAM_INVALID otherwise.
  virtual int32_t Reshape(const std::vector<int64_t>& shape) {
    (void)shape;
    return FLOW_FUNC_ERR_NOT_SUPPORT;
  }
  // The bytes the tensor's buffer holds (its data size rounded up to its alignment).
  virtual uint64_t GetDataBufferSize() const { return GetDataSize(); }
};

// Tensors outside a message (wrap one with MetaRunContext::ToFlowMsg). nullptr for a shape with
// a negative dim, a data type without a fixed size, or an align that is no power of two <= 4096.
class FLOW_FUNC_VISIBILITY FlowBufferFactory {
 public:
  __attribute__((visibility("hidden"))) static inline std::shared_ptr<Tensor> AllocTensor(
      const std::vector<int64_t>& shape, TensorDataType dataType, uint32_t align = 512U);
};

// One message of a transaction: a tensor, raw bytes or nothing, a return code and metadata.
// Input buffers may be shared with other consumers: read them, do not write them.
class FLOW_FUNC_VISIBILITY FlowMsg {
 public:
  FlowMsg() = default;
  virtual ~FlowMsg() = default;
  virtual MsgType GetMsgType() const = 0;
  virtual Tensor* GetTensor() const = 0;  // nullptr unless a tensor message
  virtual int32_t GetRetCode() const = 0;
  virtual void SetRetCode(int32_t retCode) = 0;
  virtual void SetStartTime(uint64_t startTime) = 0;
  virtual uint64_t GetStartTime() const = 0;
  virtual void SetEndTime(uint64_t endTime) = 0;
  virtual uint64_t GetEndTime() const = 0;
  virtual void SetFlowFlags(uint32_t flags) = 0;
  virtual uint32_t GetFlowFlags() const = 0;
  virtual void SetRouteLabel(uint32_t routeLabel) = 0;
  virtual uint64_t GetTransactionId() const { return 0U; }
  // The tensors of a tensor-list message (dfir makes none: empty).
  virtual const std::vector<Tensor*> GetTensorList() const { return std::vector<Tensor*>(); }
  // The bytes of a raw data (or tensor) message; FLOW_FUNC_ERR_PARAM_INVALID for an empty one.
  virtual int32_t GetRawData(void*& dataPtr, uint64_t& dataSize) const {
    (void)dataPtr;
    (void)dataSize;
    return FLOW_FUNC_ERR_NOT_SUPPORT;
  }
  // A raw data message may take MSG_TYPE_RAW_MSG or a user type (>= MSG_TYPE_USER_DEFINE_START,
  // as msg_type_register in Python knows them); other changes are refused with an error log.
  virtual void SetMsgType(MsgType msgType) { (void)msgType; }
  virtual void SetTransactionId(uint64_t transactionId) { (void)transactionId; }
};

namespace detail {

// What the runtime lends a library when it loads it (DfirFlowFuncSetHost).
struct HostApi {
  LogSink log;
  // A zeroed tensor, or nullptr (and a logged reason) for bad arguments.
  void (*alloc_tensor)(const std::vector<int64_t>& shape, TensorDataType dtype, uint32_t align,
                       std::shared_ptr<Tensor>& tensor);
};

__attribute__((visibility("hidden"))) inline const HostApi*& HostSlot() {
  static const HostApi* host = nullptr;
  return host;
}

}  // namespace detail

inline std::shared_ptr<Tensor> FlowBufferFactory::AllocTensor(const std::vector<int64_t>& shape,
                                                              TensorDataType dataType, uint32_t align) {
  std::shared_ptr<Tensor> tensor;
  const detail::HostApi* host = detail::HostSlot();
  if (host != nullptr && host->alloc_tensor != nullptr) host->alloc_tensor(shape, dataType, align, tensor);
  return tensor;
}

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_FLOW_MSG_H_
