// MetaMultiFunc, the base of a multi-func UDF class, and FLOW_FUNC_REGISTRAR, which registers
// its proc funcs under the names a compile config's func_list gives:
//
//   class Add : public MetaMultiFunc { ... int32_t Proc1(context, inputs); ... };
//   FLOW_FUNC_REGISTRAR(Add).RegProcFunc("Proc1", &Add::Proc1).RegProcFunc("Proc2", &Add::Proc2);
//
// A proc taking `const std::vector<std::shared_ptr<FlowMsgQueue>>&` instead of messages is a
// stream-input proc (its func has `stream_input: true` in the compile config). A node builds
// one object per class its funcs belong to; Init runs once, then the procs run per transaction
// (never two at once on one object).
#ifndef DFIR_FLOW_FUNC_META_MULTI_FUNC_H_
#define DFIR_FLOW_FUNC_META_MULTI_FUNC_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "flow_func_ascend_string.h"
#include "flow_func_defines.h"
#include "flow_func_log.h"
#include "flow_msg.h"
#include "flow_msg_queue.h"
#include "meta_params.h"
#include "meta_run_context.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY MetaMultiFunc {
 public:
  MetaMultiFunc() = default;
  virtual ~MetaMultiFunc() = default;
  virtual int32_t Init(const std::shared_ptr<MetaParams>& params) {
    (void)params;
    return FLOW_FUNC_SUCCESS;
  }
  // Brings the object back to its state after Init, when the model is reset (dfir: the
  // runtime's reset_flow_func_state). The default does nothing and says so.
  virtual int32_t ResetFlowFuncState(const std::shared_ptr<MetaParams>& params) {
    (void)params;
    FLOW_FUNC_LOG_WARN("ResetFlowFuncState is not implemented by this class");
    return FLOW_FUNC_ERR_NOT_SUPPORT;
  }
};

using PROC_FUNC_WITH_CONTEXT =
    std::function<int32_t(const std::shared_ptr<MetaRunContext>&, const std::vector<std::shared_ptr<FlowMsg>>&)>;
using PROC_FUNC_WITH_CONTEXT_Q =
    std::function<int32_t(const std::shared_ptr<MetaRunContext>&, const std::vector<std::shared_ptr<FlowMsgQueue>>&)>;
// Makes `multiFunc` when it is null (or checks it is of the registering class) and binds the
// class's proc funcs to it in `procFuncList`.
using MULTI_FUNC_CREATOR_FUNC = std::function<int32_t(std::shared_ptr<MetaMultiFunc>& multiFunc,
                                                      std::map<AscendString, PROC_FUNC_WITH_CONTEXT>& procFuncList)>;
using MULTI_FUNC_WITH_Q_CREATOR_FUNC = std::function<int32_t(
    std::shared_ptr<MetaMultiFunc>& multiFunc, std::map<AscendString, PROC_FUNC_WITH_CONTEXT_Q>& procFuncList)>;

// Record a func of this library; false for a null name or one registered before (the runtime
// then refuses the library).
__attribute__((visibility("hidden"))) inline bool RegisterMultiFunc(const char* flowFuncName,
                                                                    const MULTI_FUNC_CREATOR_FUNC& funcCreator) noexcept;
__attribute__((visibility("hidden"))) inline bool RegisterMultiFunc(
    const char* flowFuncName, const MULTI_FUNC_WITH_Q_CREATOR_FUNC& funcWithQCreator) noexcept;

template <typename T>
class FlowFuncRegistrar {
  static_assert(std::is_base_of<MetaMultiFunc, T>::value, "a UDF class derives from FlowFunc::MetaMultiFunc");

 public:
  using CUSTOM_PROC_FUNC = std::function<int32_t(T*, const std::shared_ptr<MetaRunContext>&,
                                                 const std::vector<std::shared_ptr<FlowMsg>>&)>;
  using CUSTOM_PROC_FUNC_WITH_Q = std::function<int32_t(T*, const std::shared_ptr<MetaRunContext>&,
                                                        const std::vector<std::shared_ptr<FlowMsgQueue>>&)>;

  FlowFuncRegistrar& RegProcFunc(const char* flowFuncName, const CUSTOM_PROC_FUNC& func) {
    if (flowFuncName != nullptr) funcMap_[flowFuncName] = func;
    (void)RegisterMultiFunc(flowFuncName, MULTI_FUNC_CREATOR_FUNC(
        [this](std::shared_ptr<MetaMultiFunc>& multiFunc, std::map<AscendString, PROC_FUNC_WITH_CONTEXT>& procs) {
          return CreateMultiFunc(multiFunc, procs);
        }));
    return *this;
  }

  FlowFuncRegistrar& RegProcFunc(const char* flowFuncName, const CUSTOM_PROC_FUNC_WITH_Q& func) {
    if (flowFuncName != nullptr) funcWithQMap_[flowFuncName] = func;
    (void)RegisterMultiFunc(flowFuncName, MULTI_FUNC_WITH_Q_CREATOR_FUNC(
        [this](std::shared_ptr<MetaMultiFunc>& multiFunc, std::map<AscendString, PROC_FUNC_WITH_CONTEXT_Q>& procs) {
          return CreateMultiFuncWithQ(multiFunc, procs);
        }));
    return *this;
  }

  int32_t CreateMultiFunc(std::shared_ptr<MetaMultiFunc>& multiFunc,
                          std::map<AscendString, PROC_FUNC_WITH_CONTEXT>& procFuncMap) const {
    T* object = nullptr;
    if (Instance(multiFunc, object) != FLOW_FUNC_SUCCESS) return FLOW_FUNC_FAILED;
    for (const auto& entry : funcMap_) {
      const CUSTOM_PROC_FUNC proc = entry.second;
      procFuncMap[entry.first] = [object, proc](const std::shared_ptr<MetaRunContext>& context,
                                                const std::vector<std::shared_ptr<FlowMsg>>& inputs) {
        return proc(object, context, inputs);
      };
    }
    return FLOW_FUNC_SUCCESS;
  }

  int32_t CreateMultiFuncWithQ(std::shared_ptr<MetaMultiFunc>& multiFunc,
                               std::map<AscendString, PROC_FUNC_WITH_CONTEXT_Q>& procFuncWithQMap) const {
    T* object = nullptr;
    if (Instance(multiFunc, object) != FLOW_FUNC_SUCCESS) return FLOW_FUNC_FAILED;
    for (const auto& entry : funcWithQMap_) {
      const CUSTOM_PROC_FUNC_WITH_Q proc = entry.second;
      procFuncWithQMap[entry.first] = [object, proc](const std::shared_ptr<MetaRunContext>& context,
                                                     const std::vector<std::shared_ptr<FlowMsgQueue>>& queues) {
        return proc(object, context, queues);
      };
    }
    return FLOW_FUNC_SUCCESS;
  }

 private:
  // A new T when `multiFunc` is null; else `multiFunc` itself when it is a T.
  int32_t Instance(std::shared_ptr<MetaMultiFunc>& multiFunc, T*& object) const {
    if (multiFunc == nullptr) {
      object = new (std::nothrow) T();
      if (object == nullptr) return FLOW_FUNC_FAILED;
      multiFunc.reset(object);
      return FLOW_FUNC_SUCCESS;
    }
    object = dynamic_cast<T*>(multiFunc.get());
    return object == nullptr ? FLOW_FUNC_FAILED : FLOW_FUNC_SUCCESS;
  }

  std::map<AscendString, CUSTOM_PROC_FUNC> funcMap_;
  std::map<AscendString, CUSTOM_PROC_FUNC_WITH_Q> funcWithQMap_;
};

}  // namespace FlowFunc

#define FLOW_FUNC_REGISTRAR(clazz)                                          \
  static ::FlowFunc::FlowFuncRegistrar<clazz> g_##clazz##FlowFuncRegistrar; \
  static auto& g_##clazz##Registrar __attribute__((unused)) = g_##clazz##FlowFuncRegistrar

#include "flow_func_registry.h"

#endif  // DFIR_FLOW_FUNC_META_MULTI_FUNC_H_
