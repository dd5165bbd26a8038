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

// Input `input` of a stream-input call; what it reads moves the call to the message's transaction.
class StreamQueue final : public FlowFunc::FlowMsgQueue {
 public:
  StreamQueue(const StreamInputs& inputs, size_t input, HostRunContext& context)
      : inputs_(inputs), input_(input), context_(context) {}

  int32_t Dequeue(std::shared_ptr<FlowFunc::FlowMsg>& msg, int32_t timeout) override {
    std::shared_ptr<HostFlowMsg> taken;
    const int32_t ret = inputs_.take(input_, timeout, taken);
    if (ret == FlowFunc::FLOW_FUNC_SUCCESS) {
      context_.ReadMessageOf(taken->meta());
      msg = std::move(taken);
    }
    return ret;
  }
  int32_t Depth() const override { return inputs_.depth; }
  int32_t Size() const override { return inputs_.size(input_); }

 private:
  const StreamInputs& inputs_;
  size_t input_;
  HostRunContext& context_;
};

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

ProcResult UdfInstance::Proc(const std::string& func, const std::vector<uint32_t>& ports,
                             const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& messages, CallFacts call,
                             ModelInvoker invoker) {
  return Run(func, ports, std::move(call), std::move(invoker),
             [&](const Bound& bound, const std::shared_ptr<HostRunContext>& context) {
               if (!bound.entry->call) {
                 context->Note("C++ UDF func '" + func + "' takes queues (stream input), but its compile config "
                               "does not set stream_input");
                 return FlowFunc::FLOW_FUNC_FAILED;
               }
               return bound.entry->call(*bound.object, context, messages);
             });
}

ProcResult UdfInstance::ProcStream(const std::string& func, const std::vector<uint32_t>& ports, StreamInputs inputs,
                                   CallFacts call, ModelInvoker invoker) {
  return Run(func, ports, std::move(call), std::move(invoker),
             [&](const Bound& bound, const std::shared_ptr<HostRunContext>& context) {
               if (!bound.entry->stream_call) {
                 context->Note("C++ UDF func '" + func + "' takes messages, but its compile config sets "
                               "stream_input");
                 return FlowFunc::FLOW_FUNC_FAILED;
               }
               std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>> queues;
               for (size_t j = 0; j < inputs.count; ++j) queues.push_back(std::make_shared<StreamQueue>(inputs, j, *context));
               return bound.entry->stream_call(*bound.object, context, queues);
             });
}

ProcResult UdfInstance::Run(const std::string& func, const std::vector<uint32_t>& ports, CallFacts call,
                            ModelInvoker invoker, const Body& body) {
  const auto bound = funcs_.find(func);
  if (bound == funcs_.end()) throw UdfError(Node(*params_) + " has no func '" + func + "'");
  auto context = std::make_shared<HostRunContext>(func, ports, std::move(call), std::move(invoker));
  ProcResult result;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const LogScope scope{params_->facts().name, func, params_->facts().instance_id};
    const ScopedLogScope log_scope(scope);
    try {
      result.ret = body(bound->second, context);
    } catch (const std::exception& error) {
      result.ret = FlowFunc::FLOW_FUNC_FAILED;
      context->Note("C++ UDF func '" + func + "' threw: " + error.what());
    } catch (...) {
      result.ret = FlowFunc::FLOW_FUNC_FAILED;
      context->Note("C++ UDF func '" + func + "' threw a non-standard exception");
    }
    result.last_error = std::move(scope.last_error);
  }
  result.outputs = context->TakeOutputs();
  result.problems = context->TakeProblems();
  result.raised = context->raised();
  result.raised_code = context->raised_code();
  result.raised_context = context->raised_context();
  result.meta = context->meta();
  return result;
}

}  // namespace dfir::udf
