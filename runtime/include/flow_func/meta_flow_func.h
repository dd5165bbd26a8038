// MetaFlowFunc, the base of a single-func UDF class, and REGISTER_FLOW_FUNC:
//
//   class Add : public MetaFlowFunc {
//     int32_t Init() override { ... context_->GetAttr("out_type", type_) ... }
//     int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>& inputs) override {
//       ... return context_->SetOutput(0, out);
//     }
//   };
//   REGISTER_FLOW_FUNC("Add", Add);
//
// A node builds one object per func; SetContext gives it its MetaContext before Init.
#ifndef DFIR_FLOW_FUNC_META_FLOW_FUNC_H_
#define DFIR_FLOW_FUNC_META_FLOW_FUNC_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "flow_func_defines.h"
#include "flow_func_log.h"
#include "flow_msg.h"
#include "meta_context.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY MetaFlowFunc {
 public:
  MetaFlowFunc() = default;
  virtual ~MetaFlowFunc() = default;
  void SetContext(MetaContext* metaContext) { context_ = metaContext; }
  // Runs once, after SetContext.
  virtual int32_t Init() = 0;
  // One call per transaction: FLOW_FUNC_SUCCESS, or a code that fails the transaction.
  virtual int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>& inputMsgs) = 0;
  // Brings the object back to its state after Init, when the model is reset (dfir: the
  // runtime's reset_flow_func_state). The default does nothing and says so.
  virtual int32_t ResetFlowFuncState() {
    FLOW_FUNC_LOG_WARN("ResetFlowFuncState is not implemented by this class");
    return FLOW_FUNC_ERR_NOT_SUPPORT;
  }

 protected:
  MetaContext* context_ = nullptr;
};

using FLOW_FUNC_CREATOR_FUNC = std::function<std::shared_ptr<MetaFlowFunc>(void)>;

// Record single func `flowFuncName` of this library; false for a null name or one registered
// before (the runtime then refuses the library).
__attribute__((visibility("hidden"))) inline bool RegisterFlowFunc(const char* flowFuncName,
                                                                   const FLOW_FUNC_CREATOR_FUNC& func) noexcept;

}  // namespace FlowFunc

#define REGISTER_FLOW_FUNC_IMPL(name, ctr, clazz)                                                    \
  static std::shared_ptr<::FlowFunc::MetaFlowFunc> Creator_##clazz##ctr##_FlowFunc() {              \
    return std::make_shared<clazz>();                                                                \
  }                                                                                                  \
  static bool g_##clazz##ctr##_FlowFuncCreator __attribute__((unused)) =                            \
      ::FlowFunc::RegisterFlowFunc(name, Creator_##clazz##ctr##_FlowFunc)
#define REGISTER_FLOW_FUNC_INNER(name, ctr, clazz) REGISTER_FLOW_FUNC_IMPL(name, ctr, clazz)
#define REGISTER_FLOW_FUNC(name, clazz) REGISTER_FLOW_FUNC_INNER(name, __COUNTER__, clazz)

#include "flow_func_registry.h"

#endif  // DFIR_FLOW_FUNC_META_FLOW_FUNC_H_
