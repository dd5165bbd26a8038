// One node's use of a C++ UDF library: an object per multi-func class the node's funcs belong to
// and one per single func (MetaFlowFunc), built when the model loads, initialized once, and called
// per transaction — one call at a time per node, with no Python on the path.
#ifndef DFIR_RUNTIME_NATIVE_UDF_INSTANCE_H_
#define DFIR_RUNTIME_NATIVE_UDF_INSTANCE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "flow_func/flow_func_registry.h"
#include "udf_context.h"
#include "udf_library.h"
#include "udf_messages.h"
#include "udf_params.h"

namespace dfir::udf {

// What one proc call did: its return code, the outputs it set (for the func's own output
// indexes), why calls were refused or the proc failed, and an exception it raised.
struct ProcResult {
  int32_t ret = 0;
  std::vector<HostRunContext::Output> outputs;
  std::vector<std::string> problems;
  bool raised = false;
  int32_t raised_code = 0;
  uint64_t raised_context = 0;
  MsgMeta meta;  // the transaction the outputs belong to (a stream-input call's latest read)
  std::string last_error;  // the last error record the call logged
};

// How a stream-input call reads its inputs: `take(input, timeout_ms, msg)` the next message of
// an input (a FlowFunc status: SUCCESS, ERR_TIME_OUT_ERROR, STATUS_EXIT), `size(input)` how many
// wait; `depth` is each input's capacity.
struct StreamInputs {
  size_t count = 0;
  int32_t depth = 0;
  std::function<int32_t(size_t input, int32_t timeout_ms, std::shared_ptr<HostFlowMsg>& msg)> take;
  std::function<int32_t(size_t input)> size;
};

class UdfInstance {
 public:
  // UdfError naming the node when `library` lacks one of `funcs` or a class cannot be built.
  UdfInstance(std::shared_ptr<UdfLibrary> library, std::shared_ptr<HostMetaParams> params,
              const std::vector<std::string>& funcs);

  // Init of every object; FLOW_FUNC_SUCCESS, or the first other code and why in `problem`.
  int32_t Init(std::string& problem);

  // ResetFlowFuncState of every object, stopping at the first that does not return
  // FLOW_FUNC_SUCCESS (its code, and why in `problem`).
  int32_t ResetState(std::string& problem);

  // Runs func `func` (one of the constructor's) on `inputs`; exceptions become FLOW_FUNC_FAILED.
  // `ports`: the node's output index of each of the func's outputs (HostRunContext).
  ProcResult Proc(const std::string& func, const std::vector<uint32_t>& ports,
                  const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs, CallFacts call, ModelInvoker invoker);

  // Runs stream-input func `func` with one FlowMsgQueue per input reading through `inputs`.
  ProcResult ProcStream(const std::string& func, const std::vector<uint32_t>& ports, StreamInputs inputs,
                        CallFacts call, ModelInvoker invoker);

 private:
  // How one func of the node runs: a multi-func proc (`call` or `stream_call`) or a single func.
  struct Bound {
    FlowFunc::PROC_FUNC_WITH_CONTEXT call;
    FlowFunc::PROC_FUNC_WITH_CONTEXT_Q stream_call;
    FlowFunc::MetaFlowFunc* single = nullptr;
  };
  using Body = std::function<int32_t(const Bound& bound, const std::shared_ptr<HostRunContext>& context)>;

  // A call of `func`: the context, the lock, the log scope, exceptions as FLOW_FUNC_FAILED.
  ProcResult Run(const std::string& func, const std::vector<uint32_t>& ports, CallFacts call, ModelInvoker invoker,
                 const Body& body);
  Bound BindSingle(const std::string& func, const FlowFunc::FLOW_FUNC_CREATOR_FUNC& creator);
  // The proc of `func` from `procs`, creating (or reusing) the object of its class with `creator`.
  template <typename ProcFn, typename Creator>
  ProcFn BindMulti(const std::string& func, const Creator& creator, std::map<FlowFunc::AscendString, ProcFn>& procs);
  // Runs `step` on every object under the lock and the log scope `what` (Init, Reset).
  int32_t ForEachObject(const char* what, std::string& problem,
                        const std::function<int32_t(FlowFunc::MetaMultiFunc&)>& multi,
                        const std::function<int32_t(FlowFunc::MetaFlowFunc&)>& single);

  std::shared_ptr<UdfLibrary> library_;
  std::shared_ptr<HostMetaParams> params_;
  std::shared_ptr<HostMetaContext> meta_context_;  // the single funcs' context
  std::vector<std::shared_ptr<FlowFunc::MetaMultiFunc>> objects_;
  std::vector<std::pair<std::string, std::shared_ptr<FlowFunc::MetaFlowFunc>>> singles_;  // by func name
  std::map<FlowFunc::AscendString, FlowFunc::PROC_FUNC_WITH_CONTEXT> procs_;
  std::map<FlowFunc::AscendString, FlowFunc::PROC_FUNC_WITH_CONTEXT_Q> stream_procs_;
  std::map<std::string, Bound> funcs_;
  std::mutex mutex_;
};

}  // namespace dfir::udf

#endif  // DFIR_RUNTIME_NATIVE_UDF_INSTANCE_H_
