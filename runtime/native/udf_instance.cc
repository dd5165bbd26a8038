#include "udf_instance.h"

#include <cxxabi.h>

#include <cstdlib>
#include <exception>
#include <typeinfo>
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

// The C++ name of `object`'s class, as the UDF's source spells it (e.g. FlowFunc::AddFlowFunc).
template <typename T>
std::string ClassName(const T& object) {
  const char* mangled = typeid(object).name();
  int status = 0;
  char* readable = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && readable != nullptr ? readable : mangled;
  std::free(readable);
  return name;
}

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
    : library_(std::move(library)), params_(std::move(params)), meta_context_(std::make_shared<HostMetaContext>(params_)) {
  const FlowFunc::FuncRegistry& registry = library_->registry();
  for (const std::string& func : funcs) {
    const FlowFunc::AscendString key(func.data(), func.size());
    Bound bound;
    try {
      if (registry.single.count(key) != 0U) {
        bound = BindSingle(func, registry.single.at(key));
      } else if (registry.multi.count(key) != 0U) {
        bound.call = BindMulti(func, registry.multi.at(key), procs_);
      } else if (registry.multi_with_q.count(key) != 0U) {
        bound.stream_call = BindMulti(func, registry.multi_with_q.at(key), stream_procs_);
      } else {
        throw UdfError(Node(*params_) + ": C++ UDF library " + library_->name() + " registers funcs " +
                       NameList(library_->FuncNames()) + ", not '" + func + "'");
      }
    } catch (const UdfError&) {
      throw;
    } catch (const std::exception& error) {
      throw UdfError(Node(*params_) + ": constructing the class of func '" + func + "' of " + library_->name() +
                     " threw: " + error.what());
    }
    funcs_[func] = std::move(bound);
  }
}

UdfInstance::Bound UdfInstance::BindSingle(const std::string& func, const FlowFunc::FLOW_FUNC_CREATOR_FUNC& creator) {
  std::shared_ptr<FlowFunc::MetaFlowFunc> object = creator();
  if (object == nullptr) {
    throw UdfError(Node(*params_) + ": the creator of single func '" + func + "' of " + library_->name() +
                   " made no object");
  }
  object->SetContext(meta_context_.get());
  singles_.emplace_back(func, object);
  Bound bound;
  bound.single = object.get();
  return bound;
}

template <typename ProcFn, typename Creator>
ProcFn UdfInstance::BindMulti(const std::string& func, const Creator& creator,
                            std::map<FlowFunc::AscendString, ProcFn>& procs) {
  const FlowFunc::AscendString key(func.data(), func.size());
  // An object made for an earlier func of the same class binds this one too; the creator of
  // another class refuses it (FLOW_FUNC_FAILED).
  for (auto& object : objects_) {
    if (procs.count(key) != 0U) break;
    std::shared_ptr<FlowFunc::MetaMultiFunc> existing = object;
    (void)creator(existing, procs);
  }
  if (procs.count(key) == 0U) {
    std::shared_ptr<FlowFunc::MetaMultiFunc> fresh;
    const int32_t ret = creator(fresh, procs);
    if (ret != FlowFunc::FLOW_FUNC_SUCCESS || fresh == nullptr || procs.count(key) == 0U) {
      throw UdfError(Node(*params_) + ": the creator of func '" + func + "' of " + library_->name() +
                     " returned " + std::to_string(ret) + " without binding it");
    }
    objects_.push_back(std::move(fresh));
  }
  return procs.at(key);
}

int32_t UdfInstance::ForEachObject(const char* what, std::string& problem,
                                   const std::function<int32_t(FlowFunc::MetaMultiFunc&)>& multi,
                                   const std::function<int32_t(FlowFunc::MetaFlowFunc&)>& single) {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::string, std::function<int32_t()>>> steps;
  for (const auto& object : objects_) steps.emplace_back(ClassName(*object), [&multi, &object] { return multi(*object); });
  for (const auto& entry : singles_) {
    steps.emplace_back(ClassName(*entry.second), [&single, &entry] { return single(*entry.second); });
  }
  for (const auto& step : steps) {
    const LogScope scope{params_->facts().name, what, params_->facts().instance_id};
    const ScopedLogScope log_scope(scope);
    int32_t ret = FlowFunc::FLOW_FUNC_FAILED;
    try {
      ret = step.second();
    } catch (const std::exception& error) {
      problem = step.first + "::" + what + " threw: " + error.what();
      return FlowFunc::FLOW_FUNC_FAILED;
    } catch (...) {
      problem = step.first + "::" + what + " threw a non-standard exception";
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    if (ret != FlowFunc::FLOW_FUNC_SUCCESS) {
      problem = step.first + "::" + what + " returned " + std::to_string(ret);
      return ret;
    }
  }
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

int32_t UdfInstance::Init(std::string& problem) {
  return ForEachObject(
      "Init", problem, [this](FlowFunc::MetaMultiFunc& object) { return object.Init(params_); },
      [](FlowFunc::MetaFlowFunc& object) { return object.Init(); });
}

int32_t UdfInstance::ResetState(std::string& problem) {
  return ForEachObject(
      "ResetFlowFuncState", problem,
      [this](FlowFunc::MetaMultiFunc& object) { return object.ResetFlowFuncState(params_); },
      [](FlowFunc::MetaFlowFunc& object) { return object.ResetFlowFuncState(); });
}

ProcResult UdfInstance::Proc(const std::string& func, const std::vector<uint32_t>& ports,
                             const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& messages, CallFacts call,
                             ModelInvoker invoker) {
  return Run(func, ports, std::move(call), std::move(invoker),
             [&](const Bound& bound, const std::shared_ptr<HostRunContext>& context) {
               if (bound.single != nullptr) {
                 meta_context_->Enter(context.get());
                 struct Leave {
                   HostMetaContext& meta;
                   ~Leave() { meta.Leave(); }
                 } leave{*meta_context_};
                 return bound.single->Proc(messages);
               }
               if (!bound.call) {
                 context->Note("C++ UDF func '" + func + "' takes queues (stream input), but its compile config "
                               "does not set stream_input");
                 return FlowFunc::FLOW_FUNC_FAILED;
               }
               return bound.call(context, messages);
             });
}

ProcResult UdfInstance::ProcStream(const std::string& func, const std::vector<uint32_t>& ports, StreamInputs inputs,
                                   CallFacts call, ModelInvoker invoker) {
  return Run(func, ports, std::move(call), std::move(invoker),
             [&](const Bound& bound, const std::shared_ptr<HostRunContext>& context) {
               if (!bound.stream_call) {
                 context->Note("C++ UDF func '" + func + "' takes messages, but its compile config sets "
                               "stream_input");
                 return FlowFunc::FLOW_FUNC_FAILED;
               }
               std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>> queues;
               for (size_t j = 0; j < inputs.count; ++j) queues.push_back(std::make_shared<StreamQueue>(inputs, j, *context));
               return bound.stream_call(context, queues);
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
