#include "udf_instance.h"

#include <exception>
#include <utility>

#include "udf_error.h"
#include "udf_log.h"

namespace dfir::udf {

namespace {

std::string NameList(const std::vector<std::string>& names) {
  std::string text = "[";
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", '" : "'") + names[i] + "'";
  return text + "]";
}

std::string Node(const HostMetaParams& params) { return "node '" + params.facts().name + "'"; }

}  // namespace

UdfInstance::UdfInstance(std::shared_ptr<UdfLibrary> library, std::shared_ptr<HostMetaParams> params,
                         const std::vector<std::string>& funcs)
    : library_(std::move(library)), params_(std::move(params)) {
  for (const std::string& func : funcs) {
    const FlowFunc::ProcFuncEntry* entry = library_->registry().Find(func);
    if (entry == nullptr) {
      throw UdfError(Node(*params_) + ": C++ UDF library " + library_->name() + " registers funcs " +
                     NameList(library_->FuncNames()) + ", not '" + func + "'");
    }
    auto& object = objects_[entry->class_name];
    if (object == nullptr) {
      try {
        object = entry->create();
      } catch (const std::exception& error) {
        throw UdfError(Node(*params_) + ": constructing class " + entry->class_name + " of " + library_->name() +
                       " threw: " + error.what());
      }
    }
    funcs_[func] = Bound{object.get(), entry};
  }
}

int32_t UdfInstance::Init(std::string& problem) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [class_name, object] : objects_) {
    const LogScope scope{params_->facts().name, "Init", params_->facts().instance_id};
    const ScopedLogScope log_scope(scope);
    int32_t ret = FlowFunc::FLOW_FUNC_FAILED;
    try {
      ret = object->Init(params_);
    } catch (const std::exception& error) {
      problem = class_name + "::Init threw: " + error.what();
      return FlowFunc::FLOW_FUNC_FAILED;
    } catch (...) {
      problem = class_name + "::Init threw a non-standard exception";
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    if (ret != FlowFunc::FLOW_FUNC_SUCCESS) {
      problem = class_name + "::Init returned " + std::to_string(ret);
      return ret;
    }
  }
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

ProcResult UdfInstance::Proc(const std::string& func, size_t output_num,
                             const std::vector<std::shared_ptr<HostFlowMsg>>& inputs, CallFacts call,
                             ModelInvoker invoker) {
  const auto bound = funcs_.find(func);
  if (bound == funcs_.end()) throw UdfError(Node(*params_) + " has no func '" + func + "'");
  auto context = std::make_shared<HostRunContext>(func, output_num, std::move(call), std::move(invoker));
  const std::vector<std::shared_ptr<FlowFunc::FlowMsg>> messages(inputs.begin(), inputs.end());
  ProcResult result;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const LogScope scope{params_->facts().name, func, params_->facts().instance_id};
    const ScopedLogScope log_scope(scope);
    try {
      result.ret = bound->second.entry->call(*bound->second.object, context, messages);
    } catch (const std::exception& error) {
      result.ret = FlowFunc::FLOW_FUNC_FAILED;
      context->Note("C++ UDF func '" + func + "' threw: " + error.what());
    } catch (...) {
      result.ret = FlowFunc::FLOW_FUNC_FAILED;
      context->Note("C++ UDF func '" + func + "' threw a non-standard exception");
    }
  }
  result.outputs = context->outputs();
  result.problems = context->problems();
  result.raised = context->raised();
  result.raised_code = context->raised_code();
  result.raised_context = context->raised_context();
  return result;
}

}  // namespace dfir::udf
