// One node's use of a C++ UDF library: an object per registered class the node's funcs belong to,
// built when the model loads, initialized once, and called per transaction — one call at a time
// per node, with no Python on the path.
#ifndef DFIR_RUNTIME_NATIVE_UDF_INSTANCE_H_
#define DFIR_RUNTIME_NATIVE_UDF_INSTANCE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "flow_func/meta_multi_func.h"
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

  // Runs func `func` (one of the constructor's) on `inputs`; exceptions become FLOW_FUNC_FAILED.
  // `ports`: the node's output index of each of the func's outputs (HostRunContext).
  ProcResult Proc(const std::string& func, const std::vector<uint32_t>& ports,
                  const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs, CallFacts call, ModelInvoker invoker);

  // Runs stream-input func `func` with one FlowMsgQueue per input reading through `inputs`.
  ProcResult ProcStream(const std::string& func, const std::vector<uint32_t>& ports, StreamInputs inputs,
                        CallFacts call, ModelInvoker invoker);

 private:
  struct Bound {
    FlowFunc::MetaMultiFunc* object;
    const FlowFunc::ProcFuncEntry* entry;
  };
  using Body = std::function<int32_t(const Bound& bound, const std::shared_ptr<HostRunContext>& context)>;

  // A call of `func`: the context, the lock, the log scope, exceptions as FLOW_FUNC_FAILED.
  ProcResult Run(const std::string& func, const std::vector<uint32_t>& ports, CallFacts call, ModelInvoker invoker,
                 const Body& body);

  std::shared_ptr<UdfLibrary> library_;
  std::shared_ptr<HostMetaParams> params_;
  std::map<std::string, std::shared_ptr<FlowFunc::MetaMultiFunc>> objects_;  // by class name
  std::map<std::string, Bound> funcs_;
  std::mutex mutex_;
};

}  // namespace dfir::udf

#endif  // DFIR_RUNTIME_NATIVE_UDF_INSTANCE_H_
