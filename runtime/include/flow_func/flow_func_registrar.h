// FLOW_FUNC_REGISTRAR: register the proc funcs of a UDF class, as in the seeds:
//
//   FLOW_FUNC_REGISTRAR(Add)
//       .RegProcFunc("Add1", &Add::AddProc1)
//       .RegProcFunc("Add2", &Add::AddProc2);
//
// A proc taking `const std::vector<std::shared_ptr<FlowMsgQueue>>&` instead of messages is a
// stream-input proc (its func has `stream_input: true` in the compile config).
//
// A func name is what a compile config's func_list names. This header also defines the entry
// points the runtime looks up in the library (weak, so every translation unit may include it).
#ifndef DFIR_FLOW_FUNC_FLOW_FUNC_REGISTRAR_H_
#define DFIR_FLOW_FUNC_FLOW_FUNC_REGISTRAR_H_

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_multi_func.h"

namespace FlowFunc {
namespace detail {

// This library's registry (hidden: each library keeps its own).
__attribute__((visibility("hidden"))) inline FuncRegistry& LibraryRegistry() {
  static FuncRegistry registry;
  return registry;
}

}  // namespace detail

template <typename Clazz>
class FlowFuncRegistrar {
  static_assert(std::is_base_of<MetaMultiFunc, Clazz>::value, "a UDF class derives from FlowFunc::MetaMultiFunc");

 public:
  using ProcFunc = int32_t (Clazz::*)(const std::shared_ptr<MetaRunContext>&,
                                      const std::vector<std::shared_ptr<FlowMsg>>&);

  using StreamProcFunc = int32_t (Clazz::*)(const std::shared_ptr<MetaRunContext>&,
                                            const std::vector<std::shared_ptr<FlowMsgQueue>>&);

  explicit FlowFuncRegistrar(const char* class_name) : class_name_(class_name) {}

  FlowFuncRegistrar& RegProcFunc(const char* func_name, ProcFunc proc) {
    ProcFuncEntry entry = Entry();
    entry.call = [proc](MetaMultiFunc& object, const std::shared_ptr<MetaRunContext>& context,
                        const std::vector<std::shared_ptr<FlowMsg>>& inputs) {
      return (static_cast<Clazz&>(object).*proc)(context, inputs);
    };
    detail::LibraryRegistry().Add(func_name, std::move(entry));
    return *this;
  }

  FlowFuncRegistrar& RegProcFunc(const char* func_name, StreamProcFunc proc) {
    ProcFuncEntry entry = Entry();
    entry.stream_call = [proc](MetaMultiFunc& object, const std::shared_ptr<MetaRunContext>& context,
                               const std::vector<std::shared_ptr<FlowMsgQueue>>& queues) {
      return (static_cast<Clazz&>(object).*proc)(context, queues);
    };
    detail::LibraryRegistry().Add(func_name, std::move(entry));
    return *this;
  }

 private:
  ProcFuncEntry Entry() const {
    ProcFuncEntry entry;
    entry.class_name = class_name_;
    entry.create = [] { return std::shared_ptr<MetaMultiFunc>(std::make_shared<Clazz>()); };
    return entry;
  }

  std::string class_name_;
};

}  // namespace FlowFunc

#define FLOW_FUNC_REGISTRAR(clazz) \
  static auto g_##clazz##FlowFuncRegistrar __attribute__((unused)) = ::FlowFunc::FlowFuncRegistrar<clazz>(#clazz)

extern "C" {
__attribute__((weak, visibility("default"))) int32_t DfirFlowFuncAbiVersion() {
  return ::FlowFunc::kFlowFuncAbiVersion;
}
__attribute__((weak, visibility("default"))) const ::FlowFunc::FuncRegistry* DfirFlowFuncRegistry() {
  return &::FlowFunc::detail::LibraryRegistry();
}
__attribute__((weak, visibility("default"))) void DfirFlowFuncSetLogSink(::FlowFunc::LogSink sink) {
  ::FlowFunc::detail::LogSinkSlot() = sink;
}
}

#endif  // DFIR_FLOW_FUNC_FLOW_FUNC_REGISTRAR_H_
