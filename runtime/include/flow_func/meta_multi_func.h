// MetaMultiFunc, the base of a C++ UDF class, and FuncRegistry, where FLOW_FUNC_REGISTRAR records
// each proc func of a library; the runtime finds a library's registry by its exported
// DfirFlowFuncRegistry() (flow_func_registrar.h).
#ifndef DFIR_FLOW_FUNC_META_MULTI_FUNC_H_
#define DFIR_FLOW_FUNC_META_MULTI_FUNC_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_msg.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/meta_params.h"
#include "flow_func/meta_run_context.h"

namespace FlowFunc {

// A UDF class: one object per node, built when the model loads; Init runs once, then the procs
// registered for it run per transaction (never two at once on one object).
class MetaMultiFunc {
 public:
  virtual ~MetaMultiFunc() = default;
  virtual int32_t Init(const std::shared_ptr<MetaParams>& params) {
    (void)params;
    return FLOW_FUNC_SUCCESS;
  }
};

using ProcFuncCall = std::function<int32_t(MetaMultiFunc& object, const std::shared_ptr<MetaRunContext>& context,
                                           const std::vector<std::shared_ptr<FlowMsg>>& inputs)>;

using StreamProcFuncCall = std::function<int32_t(MetaMultiFunc& object, const std::shared_ptr<MetaRunContext>& context,
                                                 const std::vector<std::shared_ptr<FlowMsgQueue>>& queues)>;

// One registered proc func: the class that owns it, how to build that class, how to call the proc
// (`call` for one message per input, `stream_call` for a stream-input proc: one queue per input).
struct ProcFuncEntry {
  std::string class_name;
  std::function<std::shared_ptr<MetaMultiFunc>()> create;
  ProcFuncCall call;
  StreamProcFuncCall stream_call;
};

// The proc funcs of one library, by func name.
class FuncRegistry {
 public:
  void Add(const std::string& func_name, ProcFuncEntry entry) {
    if (!entries_.emplace(func_name, std::move(entry)).second) duplicates_.push_back(func_name);
  }
  const ProcFuncEntry* Find(const std::string& func_name) const {
    const auto found = entries_.find(func_name);
    return found == entries_.end() ? nullptr : &found->second;
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& entry : entries_) names.push_back(entry.first);
    return names;
  }
  // Func names registered more than once (the first registration wins; the runtime refuses them).
  const std::vector<std::string>& Duplicates() const { return duplicates_; }

 private:
  std::map<std::string, ProcFuncEntry> entries_;
  std::vector<std::string> duplicates_;
};

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_META_MULTI_FUNC_H_
