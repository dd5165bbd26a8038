#include "udf_context.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

namespace dfir::udf {

namespace {

constexpr int64_t kMaxBalanceCells = 65536;

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

bool IsPowerOfTwo(uint32_t value) { return value != 0 && (value & (value - 1)) == 0; }

}  // namespace

bool BalanceLabels(const FlowFunc::BalanceConfig& config, size_t count,
                   std::vector<std::pair<uint32_t, uint32_t>>& labels, std::string& problem) {
  const int64_t rows = config.GetBalanceWeight().rowNum;
  const int64_t cols = config.GetBalanceWeight().colNum;
  if (rows <= 0 || cols <= 0) {
    problem = "the balance weight's rowNum and colNum must be > 0, got " + std::to_string(rows) + " x " +
              std::to_string(cols);
    return false;
  }
  if (rows * cols > kMaxBalanceCells) {
    problem = "the balance weight's matrix " + std::to_string(rows) + " x " + std::to_string(cols) + " has " +
              std::to_string(rows * cols) + " cells; at most " + std::to_string(kMaxBalanceCells) + " are allowed";
    return false;
  }
  const auto& positions = config.GetDataPos();
  if (positions.size() != count) {
    problem = "the balance config has " + std::to_string(positions.size()) + " data positions for " +
              std::to_string(count) + " message(s); SetDataPos gives one per message";
    return false;
  }
  labels.clear();
  for (const auto& [row, col] : positions) {
    if (row < 0 || row >= rows || col < 0 || col >= cols) {
      problem = "data position (" + std::to_string(row) + ", " + std::to_string(col) + ") lies outside the " +
                std::to_string(rows) + " x " + std::to_string(cols) + " matrix";
      return false;
    }
    const int64_t position = row * cols + col;
    int64_t route = position;
    if (config.GetAffinityPolicy() == FlowFunc::AffinityPolicy::ROW_AFFINITY) route = row;
    if (config.GetAffinityPolicy() == FlowFunc::AffinityPolicy::COL_AFFINITY) route = col;
    labels.emplace_back(static_cast<uint32_t>(position + 1), static_cast<uint32_t>(route + 1));
  }
  return true;
}

std::shared_ptr<HostTensor> AllocHostTensor(const char* api, const std::vector<int64_t>& shape, TensorDataType dtype,
                                            uint32_t align, std::string& problem) {
  const uint64_t element_size = ElementSize(dtype);
  if (element_size == 0) {
    problem = std::string(api) + ": data type " + std::to_string(static_cast<int32_t>(dtype)) + " cannot be allocated";
    return nullptr;
  }
  if (!IsPowerOfTwo(align) || align > kMaxAlign) {
    problem = std::string(api) + ": align must be a power of two in [1, 4096], got " + std::to_string(align);
    return nullptr;
  }
  for (const int64_t dim : shape) {
    if (dim < 0) {
      problem = std::string(api) + ": shape must hold dims >= 0, got " + ShapeText(shape);
      return nullptr;
    }
  }
  // The byte size of the non-zero dims must fit an int64, as numpy requires (so the element
  // count, an int64, cannot wrap either); a zero dim makes the tensor empty.
  uint64_t bytes = element_size;
  bool empty = false;
  for (const int64_t dim : shape) {
    if (dim == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes) || bytes > static_cast<uint64_t>(INT64_MAX)) {
      problem = std::string(api) + ": shape " + ShapeText(shape) + " of " + std::to_string(element_size) +
                "-byte elements is too big: its byte size does not fit an int64";
      return nullptr;
    }
  }
  if (empty) bytes = 0;
  try {
    return std::make_shared<HostTensor>(shape, dtype, Buffer::Allocate(bytes, align));
  } catch (const std::bad_alloc&) {
    problem = std::string(api) + ": could not allocate " + std::to_string(bytes) + " bytes";
    return nullptr;
  }
}

std::shared_ptr<FlowFunc::FlowMsg> HostRunContext::AllocTensorMsg(const std::vector<int64_t>& shape,
                                                                  TensorDataType dtype) {
  return AllocTensorMsgWithAlign(shape, dtype, 64);
}

std::shared_ptr<FlowFunc::FlowMsg> HostRunContext::AllocTensorMsgWithAlign(const std::vector<int64_t>& shape,
                                                                           TensorDataType dtype, uint32_t align) {
  std::string problem;
  const std::shared_ptr<HostTensor> tensor = AllocHostTensor("AllocTensorMsg", shape, dtype, align, problem);
  if (tensor == nullptr) {
    Note(std::move(problem));
    return nullptr;
  }
  return HostFlowMsg::Tensor(shape, dtype, tensor->buffer(), call_.meta);
}

std::shared_ptr<FlowFunc::FlowMsg> HostRunContext::AllocTensorListMsg(const std::vector<std::vector<int64_t>>& shapes,
                                                                      const std::vector<TensorDataType>& dtypes,
                                                                      uint32_t align) {
  (void)shapes;
  (void)dtypes;
  (void)align;
  Note("AllocTensorListMsg: tensor-list messages are not supported; send one tensor message per output");
  return nullptr;
}

std::shared_ptr<FlowFunc::FlowMsg> HostRunContext::ToFlowMsg(std::shared_ptr<FlowFunc::Tensor> tensor) {
  const auto host = std::dynamic_pointer_cast<HostTensor>(tensor);
  if (host == nullptr) {
    Note(std::string("ToFlowMsg: ") + (tensor == nullptr ? "the tensor is null" :
         "the tensor was not allocated by the runtime (use FlowBufferFactory::AllocTensor)"));
    return nullptr;
  }
  return HostFlowMsg::Tensor(host->GetShape(), host->GetDataType(), host->buffer(), call_.meta);
}

bool HostRunContext::AllocateBuffer(const char* api, uint64_t size, uint32_t align, Buffer& buffer) {
  try {
    buffer = Buffer::Allocate(size, align);
    return true;
  } catch (const std::bad_alloc&) {
    Note(std::string(api) + ": could not allocate " + std::to_string(size) + " bytes");
    return false;
  }
}

std::shared_ptr<FlowFunc::FlowMsg> HostRunContext::AllocRawDataMsg(int64_t size, uint32_t align) {
  if (size < 0 || !IsPowerOfTwo(align) || align > kMaxAlign) {
    Note("AllocRawDataMsg: size must be >= 0 and align a power of two in [1, 4096], got size " +
         std::to_string(size) + " and align " + std::to_string(align));
    return nullptr;
  }
  Buffer buffer;
  if (!AllocateBuffer("AllocRawDataMsg", static_cast<uint64_t>(size), align, buffer)) return nullptr;
  return HostFlowMsg::Raw(std::move(buffer), call_.meta);
}

std::shared_ptr<FlowFunc::FlowMsg> HostRunContext::AllocEmptyDataMsg(MsgType msg_type) {
  return HostFlowMsg::Empty(msg_type, call_.meta);
}

int32_t HostRunContext::SetOutput(uint32_t index, std::shared_ptr<FlowFunc::FlowMsg> msg) {
  return Emit("SetOutput", index, {std::move(msg)}, nullptr);
}

int32_t HostRunContext::SetOutput(uint32_t index, std::shared_ptr<FlowFunc::FlowMsg> msg,
                                  const FlowFunc::OutOptions& options) {
  return Emit("SetOutput", index, {std::move(msg)}, options.GetBalanceConfig());
}

int32_t HostRunContext::SetMultiOutputs(uint32_t index, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& msgs,
                                        const FlowFunc::OutOptions& options) {
  if (msgs.empty()) return Refuse("SetMultiOutputs: expected at least one message");
  return Emit("SetMultiOutputs", index, msgs, options.GetBalanceConfig());
}

int32_t HostRunContext::Emit(const char* api, uint32_t index, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& msgs,
                             const FlowFunc::BalanceConfig* config) {
  const auto port = std::find(ports_.begin(), ports_.end(), index);
  if (port == ports_.end()) {
    std::string outputs;
    for (uint32_t p : ports_) outputs += (outputs.empty() ? "" : ", ") + std::to_string(p);
    return Refuse(std::string(api) + ": output index " + std::to_string(index) + " is not an output of func '" + func_ +
                  "'; its outputs are [" + outputs + "]");
  }
  const auto position = static_cast<uint32_t>(port - ports_.begin());
  std::vector<std::shared_ptr<HostFlowMsg>> own;
  for (const auto& msg : msgs) {
    auto host = std::dynamic_pointer_cast<HostFlowMsg>(msg);
    if (host == nullptr) {
      return Refuse(std::string(api) + ": " + (msg == nullptr ? "the message is null" :
                    "the message was not allocated by the runtime (use the context's Alloc* calls)"));
    }
    own.push_back(std::move(host));
  }
  if (config != nullptr) {
    std::vector<std::pair<uint32_t, uint32_t>> labels;
    std::string problem;
    if (!BalanceLabels(*config, own.size(), labels, problem)) return Refuse(std::string(api) + ": " + problem);
    for (size_t i = 0; i < own.size(); ++i) own[i]->SetLabels(labels[i].first, labels[i].second);
  }
  for (auto& msg : own) outputs_.push_back({position, std::move(msg)});
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

int32_t HostRunContext::RunFlowModel(const char* model_key, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
                                     std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& outputs, int32_t timeout) {
  outputs.clear();
  const std::string key = model_key == nullptr ? "" : model_key;
  if (timeout < -1) return Refuse("RunFlowModel: timeout must be -1 or >= 0 ms, got " + std::to_string(timeout));
  std::vector<std::shared_ptr<HostFlowMsg>> tensors;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto host = std::dynamic_pointer_cast<HostFlowMsg>(inputs[i]);
    if (host == nullptr || host->payload() != Payload::kTensor) {
      return Refuse("RunFlowModel: input " + std::to_string(i) + " must be a tensor message of the runtime");
    }
    tensors.push_back(std::move(host));
  }
  std::vector<std::shared_ptr<HostFlowMsg>> results;
  std::string problem;
  const int32_t ret = invoker_(key, tensors, timeout, call_.meta, results, problem);
  if (ret != FlowFunc::FLOW_FUNC_SUCCESS) {
    Note("RunFlowModel('" + key + "'): " + problem);
    return ret;
  }
  outputs.assign(results.begin(), results.end());
  return ret;
}

int32_t HostRunContext::GetUserData(void* data, size_t size, size_t offset) const {
  if (data == nullptr || size == 0 || size > kMaxUserDataSize || offset > kMaxUserDataSize - size) {
    return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  }
  char padded[kMaxUserDataSize] = {};
  std::memcpy(padded, call_.user_data.data(), std::min(call_.user_data.size(), kMaxUserDataSize));
  std::memcpy(data, padded + offset, size);
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

void HostRunContext::RaiseException(int32_t code, uint64_t user_context_id) {
  raised_ = true;
  raised_code_ = code;
  raised_context_ = user_context_id;
  call_.has_exception = true;
  call_.exception_code = code;
  call_.exception_context = user_context_id;
}

bool HostRunContext::GetException(int32_t& code, uint64_t& user_context_id) {
  if (!call_.has_exception) return false;
  code = call_.exception_code;
  user_context_id = call_.exception_context;
  return true;
}

int32_t HostRunContext::Refuse(std::string problem) {
  Note(std::move(problem));
  return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
}

std::shared_ptr<FlowFunc::FlowMsg> HostMetaContext::AllocTensorMsg(const std::vector<int64_t>& shape,
                                                                  TensorDataType dtype) {
  return call_ == nullptr ? nullptr : call_->AllocTensorMsg(shape, dtype);
}

std::shared_ptr<FlowFunc::FlowMsg> HostMetaContext::AllocTensorMsgWithAlign(const std::vector<int64_t>& shape,
                                                                           TensorDataType dtype, uint32_t align) {
  return call_ == nullptr ? nullptr : call_->AllocTensorMsgWithAlign(shape, dtype, align);
}

std::shared_ptr<FlowFunc::FlowMsg> HostMetaContext::AllocEmptyDataMsg(MsgType msg_type) {
  return call_ == nullptr ? nullptr : call_->AllocEmptyDataMsg(msg_type);
}

int32_t HostMetaContext::SetOutput(uint32_t index, std::shared_ptr<FlowFunc::FlowMsg> msg) {
  return call_ == nullptr ? FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT : call_->SetOutput(index, std::move(msg));
}

int32_t HostMetaContext::SetOutput(uint32_t index, std::shared_ptr<FlowFunc::FlowMsg> msg,
                                   const FlowFunc::OutOptions& options) {
  return call_ == nullptr ? FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT : call_->SetOutput(index, std::move(msg), options);
}

int32_t HostMetaContext::SetMultiOutputs(uint32_t index, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& msgs,
                                         const FlowFunc::OutOptions& options) {
  return call_ == nullptr ? FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT : call_->SetMultiOutputs(index, msgs, options);
}

int32_t HostMetaContext::RunFlowModel(const char* model_key, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
                                      std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& outputs, int32_t timeout) {
  if (call_ == nullptr) {
    outputs.clear();
    return FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT;
  }
  return call_->RunFlowModel(model_key, inputs, outputs, timeout);
}

int32_t HostMetaContext::GetUserData(void* data, size_t size, size_t offset) const {
  return call_ == nullptr ? FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT : call_->GetUserData(data, size, offset);
}

void HostMetaContext::RaiseException(int32_t code, uint64_t user_context_id) {
  if (call_ != nullptr) call_->RaiseException(code, user_context_id);
}

bool HostMetaContext::GetException(int32_t& code, uint64_t& user_context_id) {
  return call_ != nullptr && call_->GetException(code, user_context_id);
}

}  // namespace dfir::udf
