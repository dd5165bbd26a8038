// The funcs a UDF library registers (REGISTER_FLOW_FUNC, FLOW_FUNC_REGISTRAR), kept per library,
// and the entry points the runtime looks up in it when it loads the library: weak, so every
// translation unit may define them; default visibility, so -fvisibility=hidden keeps them.
// Only standard containers whose layout does not depend on _GLIBCXX_USE_CXX11_ABI cross here.
#ifndef DFIR_FLOW_FUNC_FLOW_FUNC_REGISTRY_H_
#define DFIR_FLOW_FUNC_FLOW_FUNC_REGISTRY_H_

#include <map>
#include <vector>

#include "flow_func_ascend_string.h"
#include "flow_func_log.h"
#include "flow_msg.h"
#include "meta_flow_func.h"
#include "meta_multi_func.h"

namespace FlowFunc {

// The funcs of one library, by func name.
struct FuncRegistry {
  std::map<AscendString, MULTI_FUNC_CREATOR_FUNC> multi;
  std::map<AscendString, MULTI_FUNC_WITH_Q_CREATOR_FUNC> multi_with_q;
  std::map<AscendString, FLOW_FUNC_CREATOR_FUNC> single;
  // Names registered more than once, or null names (as ""): the runtime refuses the library.
  std::vector<AscendString> refused;

  bool Has(const AscendString& name) const {
    return multi.count(name) != 0U || multi_with_q.count(name) != 0U || single.count(name) != 0U;
  }
};

namespace detail {

__attribute__((visibility("hidden"))) inline FuncRegistry& LibraryRegistry() {
  static FuncRegistry registry;
  return registry;
}

// Adds `creator` under `name` to `table` unless the name is null or registered already.
template <typename Table, typename Creator>
__attribute__((visibility("hidden"))) inline bool Register(const char* name, const Creator& creator, Table& table) {
  FuncRegistry& registry = LibraryRegistry();
  const AscendString key(name);
  if (name == nullptr || registry.Has(key)) {
    registry.refused.push_back(key);
    return false;
  }
  table[key] = creator;
  return true;
}

}  // namespace detail

inline bool RegisterMultiFunc(const char* flowFuncName, const MULTI_FUNC_CREATOR_FUNC& funcCreator) noexcept {
  return detail::Register(flowFuncName, funcCreator, detail::LibraryRegistry().multi);
}

inline bool RegisterMultiFunc(const char* flowFuncName, const MULTI_FUNC_WITH_Q_CREATOR_FUNC& funcWithQCreator) noexcept {
  return detail::Register(flowFuncName, funcWithQCreator, detail::LibraryRegistry().multi_with_q);
}

inline bool RegisterFlowFunc(const char* flowFuncName, const FLOW_FUNC_CREATOR_FUNC& func) noexcept {
  return detail::Register(flowFuncName, func, detail::LibraryRegistry().single);
}

}  // namespace FlowFunc

extern "C" {
__attribute__((weak, visibility("default"))) int32_t DfirFlowFuncAbiVersion() {
  return ::FlowFunc::kFlowFuncAbiVersion;
}
__attribute__((weak, visibility("default"))) const ::FlowFunc::FuncRegistry* DfirFlowFuncRegistry() {
  return &::FlowFunc::detail::LibraryRegistry();
}
__attribute__((weak, visibility("default"))) void DfirFlowFuncSetHost(const ::FlowFunc::detail::HostApi* host) {
  ::FlowFunc::detail::HostSlot() = host;
  ::FlowFunc::detail::LogSinkSlot() = host == nullptr ? nullptr : host->log;
}
}

#endif  // DFIR_FLOW_FUNC_FLOW_FUNC_REGISTRY_H_
