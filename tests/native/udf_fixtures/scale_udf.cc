// A C++ UDF library for the native tests (udf_library_test.cc), built as its users build theirs.
#include <cstring>
#include <stdexcept>

#include "flow_func/flow_func.h"

using namespace FlowFunc;

class Scale : public MetaMultiFunc {
 public:
  int32_t Init(const std::shared_ptr<MetaParams>& params) override {
    auto factor = params->GetAttr("factor");
    if (factor == nullptr) return FLOW_FUNC_ERR_ATTR_NOT_EXITS;
    return factor->GetVal(factor_);
  }

  // out = factor * in, for a float tensor.
  int32_t Scale1(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& inputs) {
    Tensor* in = inputs.at(0)->GetTensor();
    if (in == nullptr || in->GetDataType() != TensorDataType::DT_FLOAT) {
      FLOW_FUNC_LOG_ERROR("input is not a float tensor");
      return FLOW_FUNC_ERR_PARAM_INVALID;
    }
    auto out = context->AllocTensorMsg(in->GetShape(), TensorDataType::DT_FLOAT);
    const auto* a = static_cast<const float*>(in->GetData());
    auto* b = static_cast<float*>(out->GetTensor()->GetData());
    for (int64_t i = 0; i < in->GetElementCnt(); ++i) b[i] = a[i] * static_cast<float>(factor_);
    return context->SetOutput(0, out);
  }

  // Every input goes out on output 0 as it is.
  int32_t PassOn(const std::shared_ptr<MetaRunContext>& context, const std::vector<std::shared_ptr<FlowMsg>>& inputs) {
    for (const auto& input : inputs) {
      int32_t ret = context->SetOutput(0, input);
      if (ret != FLOW_FUNC_SUCCESS) return ret;
    }
    return FLOW_FUNC_SUCCESS;
  }

  int32_t Fail(const std::shared_ptr<MetaRunContext>&, const std::vector<std::shared_ptr<FlowMsg>>&) {
    FLOW_FUNC_LOG_ERROR("failing on purpose, factor %ld", static_cast<long>(factor_));
    return FLOW_FUNC_FAILED;
  }

  int32_t Throw(const std::shared_ptr<MetaRunContext>&, const std::vector<std::shared_ptr<FlowMsg>>&) {
    throw std::runtime_error("thrown on purpose");
  }

  // Sums one int32 scalar from each queue into a raw message of 4 bytes.
  int32_t Sum(const std::shared_ptr<MetaRunContext>& context,
              const std::vector<std::shared_ptr<FlowMsgQueue>>& queues) {
    int32_t sum = 0;
    for (const auto& queue : queues) {
      std::shared_ptr<FlowMsg> msg;
      int32_t ret = queue->Dequeue(msg, 1000);
      if (ret != FLOW_FUNC_SUCCESS) return ret;
      sum += *static_cast<const int32_t*>(msg->GetTensor()->GetData());
    }
    auto out = context->AllocRawDataMsg(sizeof sum);
    void* data = nullptr;
    uint64_t size = 0;
    out->GetRawData(data, size);
    std::memcpy(data, &sum, sizeof sum);
    return context->SetOutput(0, out);
  }

 private:
  int64_t factor_ = 0;
};

FLOW_FUNC_REGISTRAR(Scale)
    .RegProcFunc("Scale", &Scale::Scale1)
    .RegProcFunc("PassOn", &Scale::PassOn)
    .RegProcFunc("Fail", &Scale::Fail)
    .RegProcFunc("Throw", &Scale::Throw)
    .RegProcFunc("Sum", &Scale::Sum);

class Broken : public MetaMultiFunc {
 public:
  Broken() { throw std::runtime_error("cannot build"); }
  int32_t Proc(const std::shared_ptr<MetaRunContext>&, const std::vector<std::shared_ptr<FlowMsg>>&) { return 0; }
};

FLOW_FUNC_REGISTRAR(Broken).RegProcFunc("Broken", &Broken::Proc);

// A single func: out = in + factor + the number of calls since Init or the last reset.
class Offset : public MetaFlowFunc {
 public:
  int32_t Init() override { return context_->GetAttr("factor", factor_); }

  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>& inputs) override {
    Tensor* in = inputs.at(0)->GetTensor();
    auto out = context_->AllocTensorMsg(in->GetShape(), TensorDataType::DT_FLOAT);
    const auto* a = static_cast<const float*>(in->GetData());
    auto* b = static_cast<float*>(out->GetTensor()->GetData());
    for (int64_t i = 0; i < in->GetElementCnt(); ++i) b[i] = a[i] + static_cast<float>(factor_ + calls_);
    ++calls_;
    return context_->SetOutput(1, out);
  }

  int32_t ResetFlowFuncState() override {
    calls_ = 0;
    return FLOW_FUNC_SUCCESS;
  }

 private:
  int64_t factor_ = 0;
  int64_t calls_ = 0;
};

REGISTER_FLOW_FUNC("Offset", Offset);
