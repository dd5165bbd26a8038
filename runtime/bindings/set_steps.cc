// The set loop and its four steps (set_steps.h), bound as SetStep, LeanStep, UdfStep,
// OutputsStep and MessageStep. Use them through runtime/worker/executor.py.
#include "set_steps.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "message_codec.h"
#include "numpy_api.h"
#include "py_region.h"
#include "slots.h"
#include "udf_caller.h"
#include "udf_records.h"

namespace py = pybind11;

namespace dfir::bindings {

namespace {

// How many sets go out between two rings of their consumers' doorbells: a ring per output costs
// a wake-up per message when the consumer waits; one per batch leaves it idle while the batch runs.
constexpr uint64_t kSetsPerRing = 8;

// The step's batch, let go of however the batch ends; the worker's running node reset and the
// sinks' consumers rung.
class BatchScope {
 public:
  explicit BatchScope(SetStep& step) : step_(step), running_(step.region().worker(step.worker()).running_node) {}
  ~BatchScope() {
    running_.store(-1);
    if (step_.timer() != nullptr) step_.timer()->Stop();
    if (!step_.sinks().empty()) rt::RingConsumers(step_.region(), step_.sinks());
    step_.Release();
  }
  BatchScope(const BatchScope&) = delete;
  BatchScope& operator=(const BatchScope&) = delete;

  std::atomic<int32_t>& running() { return running_; }

 private:
  SetStep& step_;
  std::atomic<int32_t>& running_;
};

// The transaction of a message as it leaves its channel: a record's, or a local Message's meta.
uint64_t TakenTransaction(const rt::Taken& message) {
  if (message.record != nullptr) return message.record->transaction_id;
  return py::handle(static_cast<PyObject*>(message.object)).attr("meta").attr("transaction_id").cast<uint64_t>();
}

// The channels of every output, in one list (the channels a step's loop rings).
std::vector<uint32_t> Flattened(const std::vector<std::vector<uint32_t>>& targets) {
  std::vector<uint32_t> all;
  for (const auto& channels : targets) all.insert(all.end(), channels.begin(), channels.end());
  return all;
}

void RequireInputs(const std::vector<uint32_t>& inputs, const char* step) {
  if (inputs.empty()) throw rt::RuntimeError(std::string(step) + " needs at least one input channel");
}

// The exception being raised, taken, with its traceback (the UDF's frames name the failure).
py::object RaisedException() {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (traceback != nullptr) PyException_SetTraceback(value, traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
  return py::reinterpret_steal<py::object>(value);
}

// -- LeanStep --------------------------------------------------------------------------------

// A chain of plain single-output Python functions (`functions`: (node, fn) pairs, each handing
// its result to the next), whose last result goes to every channel of `targets`. The first
// function gets each set's payloads, each next one the result; the output carries the
// transaction of the set's latest input (highest id) and its first input's data label. Array
// results of a set of plain inputs (no return code) never become Messages here; Python does the
// rest: `emit(meta, outcome, raised, data_label, step) -> status` takes over from
// `functions[step]`, which returned `outcome` (anything but an array) or raised it (an
// Exception; other exceptions, MemoryError among them, propagate), and `fire_set(messages)`
// runs a set holding an error message. The running node is the function's node while it runs.
class LeanStep final : public SetStep {
 public:
  LeanStep(const PyRegion& region, std::vector<uint32_t> inputs, uint32_t bell, uint32_t worker,
           std::vector<std::pair<int32_t, py::object>> functions, std::vector<uint32_t> targets, py::object emit,
           py::object fire_set)
      : SetStep(region, std::move(inputs), bell, worker, targets),
        functions_(std::move(functions)),
        emit_(std::move(emit)),
        fire_set_(std::move(fire_set)),
        arguments_(this->inputs().size()) {
    RequireInputs(this->inputs(), "a lean step");
    if (functions_.empty()) throw rt::RuntimeError("a lean step needs at least one function");
  }

  void Begin(uint64_t sets) override {
    taken_.reserve(sets * inputs().size());
    decoder_.emplace(region_);
  }

  void Take(size_t, const rt::Taken& message) override {
    Input& input = taken_.emplace_back();
    if (message.record == nullptr) {
      input.message = py::reinterpret_steal<py::object>(static_cast<PyObject*>(message.object));
      input.payload = Get(input.message, Name().payload);
      input.ret_code = Get(input.message, Name().ret_code).cast<int32_t>();
      input.argument = UdfArgument(input.payload, Get(input.message, Name().kind).is(Types().kinds[Types().tensor_kind]) &&
                                                      Get(input.message, Name().as_array).ptr() != Py_True);
    } else {
      input.header = *message.record;
      input.ret_code = message.record->ret_code;
      input.payload = decoder_->DecodeBody(*message.record, input.error);
      input.argument = UdfArgument(input.payload, AsTensor(*message.record, Types().tensor_kind));
    }
  }

  bool Fire(uint64_t n, GilRelease& gil) override;

  void Release() override {
    taken_.clear();
    decoder_.reset();
  }

  int32_t first_node() const override { return functions_[0].first; }
  // One slice per function: the first is the step's instance; the others, reached by direct
  // calls, are single-instance nodes (instance 0). A set holding an error message goes to
  // Python unsliced.
  bool TracesItsFunctions() const override { return true; }

 private:
  // A message of an input set: a local channel's Message, or a shared channel's record header
  // with its payload (error text) decoded.
  struct Input {
    py::object message;  // set for a local channel, or once made (MessageOf)
    rt::MessageRecord header{};
    py::object payload;
    py::object argument;  // what the first function receives for it (UdfArgument)
    std::string error;
    int32_t ret_code = 0;
  };

  static py::object MessageOf(Input& input) {
    if (!input.message) {
      input.message = Decoder::MessageOf(input.header, DecodeMeta(rt::TransactionOf(input.header)), input.payload,
                                         input.error);
    }
    return input.message;
  }
  static uint64_t TransactionIdOf(const Input& input) {
    return input.message ? Get(Get(input.message, Name().meta), Name().transaction_id).cast<uint64_t>()
                         : input.header.transaction_id;
  }
  static py::object MetaOf(const Input& input) {
    return input.message ? Get(input.message, Name().meta) : DecodeMeta(rt::TransactionOf(input.header));
  }

  // Hands a set holding an error message to Python.
  bool FireWithPython(Input* set) {
    py::tuple messages(inputs().size());
    for (size_t j = 0; j < inputs().size(); ++j) messages[j] = MessageOf(set[j]);
    fire_set_(messages);  // raises Cancelled once the region closes
    return true;
  }

  // Puts `value` (`result`, an array) on every target with the header of `latest`'s transaction.
  bool PutArray(const Input& latest, uint32_t data_label, const py::object& value, GilRelease& gil);

  std::vector<std::pair<int32_t, py::object>> functions_;
  py::object emit_;
  py::object fire_set_;
  std::vector<PyObject*> arguments_;
  std::vector<Input> taken_;
  std::optional<Decoder> decoder_;
};

bool LeanStep::Fire(uint64_t n, GilRelease& gil) {
  const size_t width = inputs().size();
  Input* set = &taken_[n * width];
  for (size_t j = 0; j < width; ++j) {
    if (set[j].ret_code != 0) return FireWithPython(set);
  }
  Input* latest = set;
  for (size_t j = 0; j < width; ++j) {
    arguments_[j] = set[j].argument.ptr();
    if (TransactionIdOf(set[j]) > TransactionIdOf(*latest)) latest = &set[j];
  }
  const uint32_t data_label =
      set[0].message ? Get(set[0].message, Name().data_label).cast<uint32_t>() : set[0].header.data_label;
  const int closed = StatusCode(rt::WaitStatus::kClosed);
  std::atomic<int32_t>& running = region_->worker(worker()).running_node;
  py::object value;
  const uint64_t transaction = trace() != nullptr ? TransactionIdOf(*latest) : 0;
  rt::TraceLog* const log = trace() != nullptr && trace()->Sampled(transaction) ? trace() : nullptr;
  // A traced function's slice ends once what it gave is put, or handed on to the next function.
  std::optional<rt::ByteMeter> meter;
  uint64_t bytes_in = log != nullptr ? batch_bytes_in()[n] : 0;  // a traced step's loop counted them
  int64_t begin_ns = 0;
  auto slice = [&](size_t step, uint64_t handed_on) {
    if (log == nullptr) return;
    log->Append({functions_[step].first, step == 0 ? instance() : 0, transaction, begin_ns, SliceEnd(), bytes_in,
                 meter->bytes_out() + handed_on},
                lane());
    bytes_in = handed_on;
  };
  if (log == nullptr) BreakSlices();
  for (size_t step = 0; step < functions_.size(); ++step) {
    running.store(functions_[step].first);
    if (log != nullptr) {
      meter.emplace();
      begin_ns = SliceBegin();
    }
    PyObject* result = step == 0 ? PyObject_Vectorcall(functions_[0].second.ptr(), arguments_.data(), width, nullptr)
                                 : PyObject_CallOneArg(functions_[step].second.ptr(), value.ptr());
    if (result == nullptr) {
      if (!PyErr_ExceptionMatches(PyExc_Exception) || PyErr_ExceptionMatches(PyExc_MemoryError)) {
        throw py::error_already_set();
      }
      const bool open = emit_(MetaOf(*latest), RaisedException(), true, data_label, step).cast<int>() != closed;
      slice(step, 0);
      return open;
    }
    value = py::reinterpret_steal<py::object>(result);
    if (!PyArray_CheckExact(result) || !HasFlatLayout(reinterpret_cast<PyArrayObject*>(result))) {
      const bool open = emit_(MetaOf(*latest), value, false, data_label, step).cast<int>() != closed;
      slice(step, 0);
      return open;
    }
    if (step + 1 < functions_.size()) {
      slice(step, static_cast<uint64_t>(PyArray_NBYTES(reinterpret_cast<PyArrayObject*>(result))));
    }
  }
  const bool open = sinks().empty() || PutArray(*latest, data_label, value, gil);
  slice(functions_.size() - 1, 0);
  return open;
}

bool LeanStep::PutArray(const Input& latest, uint32_t data_label, const py::object& value, GilRelease& gil) {
  rt::TransactionInfo info = latest.message ? TransactionOf(Get(latest.message, Name().meta))
                                            : rt::TransactionOf(latest.header);
  rt::MessageRecord header;
  rt::WriteHeader(info, Types().tensor_kind, 0, 0, data_label, header);
  header.flags = rt::kFlagArrayValue;  // an array the UDF returned (Message.as_array)
  rt::Deadline forever = rt::Deadline::Forever();
  Encoder encoder(region_, forever, gil);
  rt::PendingPut put(*region_);
  py::object local;  // the Message local channels carry, made once
  for (uint32_t channel : sinks()) {
    if (!rt::IsShared(*region_, channel)) {
      if (!local) {
        local = NewMessage(MetaOf(latest), Types().kinds[Types().tensor_kind], value, 0, py::str(""), 0, data_label, true);
      }
      put.AddLocal(channel, local.ptr());
    } else if (!put.AddAgain(channel, value.ptr())) {
      rt::MessageRecord record;
      if (!encoder.EncodeArray(header, value, record)) return false;
      put.Add(channel, record, value.ptr());
    }
  }
  return put.Push(forever, gil, References(), false) == rt::WaitStatus::kReady;
}

// -- UdfStep ---------------------------------------------------------------------------------

// A plain C++ UDF func (`caller`), whose output i goes to every channel of `targets[i]` (shared
// channels). A set of records a C++ UDF takes natively (udf::MsgOfRecord: tensors, raw data,
// empty messages; no error) runs through `caller` as native messages over the records' bodies;
// when the call succeeds cleanly, each output goes as a record, labelled with the set's first
// input's data label unless the UDF labelled it. Python does the rest: `fire_set(messages)`
// runs any other set (an error, an object, a local channel's Message), `emit(output_sets,
// data_label)` delivers what `caller` settled for a call that did not succeed cleanly.
class UdfStep final : public SetStep {
 public:
  UdfStep(const PyRegion& region, std::vector<uint32_t> inputs, uint32_t bell, uint32_t worker, int32_t node,
          std::shared_ptr<udf::UdfCaller> caller, std::vector<std::vector<uint32_t>> targets, py::object fire_set,
          py::object emit)
      : SetStep(region, std::move(inputs), bell, worker, Flattened(targets)),
        node_(node),
        caller_(std::move(caller)),
        targets_(std::move(targets)),
        fire_set_(std::move(fire_set)),
        emit_(std::move(emit)) {
    RequireInputs(this->inputs(), "a C++ UDF step");
    if (targets_.size() != caller_->ports().size()) {
      throw rt::RuntimeError("a C++ UDF step needs the channels of each of the func's " +
                             std::to_string(caller_->ports().size()) + " outputs, got " + std::to_string(targets_.size()));
    }
    for (uint32_t channel : sinks()) {
      if (!rt::IsShared(*region_, channel)) {
        throw rt::RuntimeError("a C++ UDF step puts records on shared channels; " + std::to_string(channel) +
                               " is local");
      }
    }
  }
  ~UdfStep() override { Release(); }

  void Begin(uint64_t sets) override {
    records_.reserve(sets * inputs().size());
    objects_.reserve(sets * inputs().size());
  }
  void Take(size_t, const rt::Taken& message) override {
    records_.push_back(message.record != nullptr ? *message.record : rt::MessageRecord{});
    objects_.push_back(message.object);
    consumed_.push_back(false);
  }
  bool Fire(uint64_t n, GilRelease& gil) override;
  // Gives back the body references and objects no set took over.
  void Release() override {
    for (size_t i = 0; i < records_.size(); ++i) {
      if (objects_[i] == nullptr && !consumed_[i]) rt::ReleaseBody(*region_, records_[i]);
      Py_XDECREF(static_cast<PyObject*>(objects_[i]));
    }
    records_.clear();
    objects_.clear();
    consumed_.clear();
  }
  int32_t first_node() const override { return node_; }

 private:
  // Message j of set n: its record (nullptr for a local channel's object).
  const rt::MessageRecord* record(uint64_t n, size_t j) const {
    const size_t i = n * inputs().size() + j;
    return objects_[i] == nullptr ? &records_[i] : nullptr;
  }
  // Hands over message j of set n: its body reference (a record) or its object reference.
  void* Consume(uint64_t n, size_t j) {
    const size_t i = n * inputs().size() + j;
    consumed_[i] = true;
    void* object = objects_[i];
    objects_[i] = nullptr;
    return object;
  }
  bool FireWithPython(uint64_t n);

  int32_t node_;
  std::shared_ptr<udf::UdfCaller> caller_;
  std::vector<std::vector<uint32_t>> targets_;
  py::object fire_set_;
  py::object emit_;
  std::vector<rt::MessageRecord> records_;
  std::vector<void*> objects_;
  std::vector<bool> consumed_;
};

bool UdfStep::FireWithPython(uint64_t n) {
  Decoder decoder(region_);
  py::tuple messages(inputs().size());
  for (size_t j = 0; j < inputs().size(); ++j) {
    const rt::MessageRecord* taken = record(n, j);
    void* object = Consume(n, j);
    messages[j] = taken != nullptr ? decoder.Decode(*taken)
                                   : py::reinterpret_steal<py::object>(static_cast<PyObject*>(object));
  }
  fire_set_(messages);  // raises Cancelled once the region closes
  return true;
}

bool UdfStep::Fire(uint64_t n, GilRelease& gil) {
  const size_t width = inputs().size();
  const udf::RecordTypes& types = udf::UdfRecordTypes();
  for (size_t j = 0; j < width; ++j) {
    const rt::MessageRecord* taken = record(n, j);
    if (taken == nullptr || !udf::TakesNatively(*taken, types)) return FireWithPython(n);
  }
  std::vector<std::shared_ptr<FlowFunc::FlowMsg>> messages(width);
  const rt::MessageRecord* latest = record(n, 0);
  for (size_t j = 0; j < width; ++j) {
    const rt::MessageRecord* taken = record(n, j);
    Consume(n, j);
    messages[j] = udf::MsgOfRecord(region_, *taken, types);
    if (taken->transaction_id >= latest->transaction_id) latest = taken;
  }
  const uint32_t data_label = record(n, 0)->data_label;
  udf::MsgMeta meta;
  meta.transaction_id = latest->transaction_id;
  meta.start_time = static_cast<uint64_t>(latest->start_time);
  meta.end_time = static_cast<uint64_t>(latest->end_time);
  meta.flow_flags = latest->flow_flags;
  const std::string user_data(reinterpret_cast<const char*>(latest->user_data), latest->user_data_size);
  const udf::ProcResult result = caller_->Run(messages, meta, user_data);
  messages.clear();  // gives the input bodies back before the outputs wait for room
  if (!udf::UdfCaller::Clean(result)) {
    emit_(caller_->Settle(result, meta, user_data), data_label);  // raises Cancelled once the region closes
    return true;
  }
  rt::Deadline forever = rt::Deadline::Forever();
  rt::BodyWriter writer(*region_, forever, gil);
  rt::PendingPut put(*region_);
  for (const auto& output : result.outputs) {
    const auto& channels = targets_.at(output.index);
    if (channels.empty()) continue;
    rt::MessageRecord encoded;
    if (!udf::RecordOfMsg(*output.msg, user_data, data_label, types, *region_, writer, encoded)) return false;
    put.Add(channels[0], encoded, output.msg.get());
    for (size_t c = 1; c < channels.size(); ++c) put.AddAgain(channels[c], output.msg.get());
  }
  return put.Push(forever, gil, References(), false) == rt::WaitStatus::kReady;
}

// -- steps that decode every set into Messages ------------------------------------------------

// A step that hands Python each set as a list of Messages, one per input.
class DecodingStep : public SetStep {
 public:
  using SetStep::SetStep;

  void Begin(uint64_t sets) override {
    sets_.reserve(sets);
    decoder_.emplace(region_);
  }
  void Take(size_t j, const rt::Taken& message) override {
    if (j == 0) sets_.emplace_back(inputs().size());
    sets_.back()[j] = decoder_->Take(message);
  }
  void Release() override {
    sets_.clear();
    decoder_.reset();
  }

 protected:
  const py::list& set(uint64_t n) const { return sets_[n]; }

 private:
  std::vector<py::list> sets_;
  std::optional<Decoder> decoder_;
};

// -- OutputsStep -----------------------------------------------------------------------------

// Any other plain func whose outputs go to fixed channels: `run(messages)` (a list of Messages,
// one per input) returns the output sets, [[(port, Message)], ...]; each Message goes to every
// channel of `targets[k]` for port `ports[k]`, labelled with the set's first input's data label
// unless it has one, all of a set's outputs in one put. Python does the rest: `fire_set(messages)`
// runs a set holding an error message (which it forwards), and `emit(output_sets, messages)`
// delivers output sets that are not such a list, that must be relabelled for a local channel,
// or that cannot be encoded (it fails them as the general path does).
class OutputsStep final : public DecodingStep {
 public:
  OutputsStep(const PyRegion& region, std::vector<uint32_t> inputs, uint32_t bell, uint32_t worker, int32_t node,
              py::object run, std::vector<uint32_t> ports, std::vector<std::vector<uint32_t>> targets,
              py::object fire_set, py::object emit)
      : DecodingStep(region, std::move(inputs), bell, worker, Flattened(targets)),
        node_(node),
        run_(std::move(run)),
        ports_(std::move(ports)),
        targets_(std::move(targets)),
        fire_set_(std::move(fire_set)),
        emit_(std::move(emit)) {
    RequireInputs(this->inputs(), "an outputs step");
    if (ports_.size() != targets_.size()) {
      throw rt::RuntimeError("an outputs step needs one list of channels per port: " + std::to_string(ports_.size()) +
                             " ports, " + std::to_string(targets_.size()) + " lists");
    }
  }

  bool Fire(uint64_t n, GilRelease& gil) override;
  int32_t first_node() const override { return node_; }

 private:
  // Adds the Messages of `output_sets` to `put`; false when Python must deliver them.
  bool AddOutputSets(const py::object& output_sets, uint32_t label, const rt::Deadline& deadline, GilRelease& gil,
                     rt::PendingPut& put);

  int32_t node_;
  py::object run_;
  std::vector<uint32_t> ports_;
  std::vector<std::vector<uint32_t>> targets_;
  py::object fire_set_;
  py::object emit_;
};

bool OutputsStep::Fire(uint64_t n, GilRelease& gil) {
  const py::list& messages = set(n);
  for (const py::handle message : messages) {
    if (Get(message, Name().ret_code).cast<int32_t>() != 0) {
      fire_set_(messages);  // raises Cancelled once the region closes
      return true;
    }
  }
  const uint32_t label = Get(messages[0], Name().data_label).cast<uint32_t>();
  py::object output_sets = run_(messages);
  rt::Deadline forever = rt::Deadline::Forever();
  rt::PendingPut put(*region_);
  if (!AddOutputSets(output_sets, label, forever, gil, put)) {
    emit_(output_sets, messages);  // raises Cancelled once the region closes
    return true;
  }
  return put.Push(forever, gil, References(), false) == rt::WaitStatus::kReady;
}

bool OutputsStep::AddOutputSets(const py::object& output_sets, uint32_t label, const rt::Deadline& deadline,
                                GilRelease& gil, rt::PendingPut& put) {
  if (!PyList_CheckExact(output_sets.ptr())) return false;
  Encoder encoder(region_, deadline, gil);
  for (const py::handle output_set : output_sets) {
    if (!PyList_CheckExact(output_set.ptr())) return false;
    for (const py::handle pair : output_set) {
      if (!PyTuple_CheckExact(pair.ptr()) || PyTuple_GET_SIZE(pair.ptr()) != 2) return false;
      py::handle message(PyTuple_GET_ITEM(pair.ptr(), 1));
      if (Py_TYPE(message.ptr()) != reinterpret_cast<PyTypeObject*>(Types().message_type.ptr())) return false;
      const auto port = std::find(ports_.begin(), ports_.end(), py::handle(PyTuple_GET_ITEM(pair.ptr(), 0)).cast<uint32_t>());
      if (port == ports_.end()) return false;
      const bool relabel = label != 0 && Get(message, Name().data_label).cast<uint32_t>() == 0;
      rt::MessageRecord record;
      bool encoded = false;
      for (uint32_t channel : targets_[static_cast<size_t>(port - ports_.begin())]) {
        if (!rt::IsShared(*region_, channel)) {
          if (relabel) return false;
          put.AddLocal(channel, message.ptr());
        } else if (!put.AddAgain(channel, message.ptr())) {
          if (!encoded) {
            try {
              if (!encoder.Encode(message, record)) return false;
            } catch (py::error_already_set&) {
              return false;  // Python encodes it again and fails it with the same error
            } catch (const std::exception&) {
              return false;
            }
            if (relabel) record.data_label = label;
            encoded = true;
          }
          put.Add(channel, record, message.ptr());
        }
      }
    }
  }
  return true;
}

// -- MessageStep -----------------------------------------------------------------------------

// The general path: each set, as a list of Messages, to `fire_set(messages)`, which runs the
// func and delivers its outputs itself (to replicated consumers, by direct calls).
class MessageStep final : public DecodingStep {
 public:
  MessageStep(const PyRegion& region, std::vector<uint32_t> inputs, uint32_t bell, uint32_t worker, int32_t node,
              py::object fire_set)
      : DecodingStep(region, std::move(inputs), bell, worker, {}), node_(node), fire_set_(std::move(fire_set)) {
    RequireInputs(this->inputs(), "a message step");
  }

  bool Fire(uint64_t n, GilRelease&) override {
    fire_set_(set(n));  // raises Cancelled once the region closes
    return true;
  }
  int32_t first_node() const override { return node_; }

 private:
  int32_t node_;
  py::object fire_set_;
};

}  // namespace

SetStep::SetStep(const PyRegion& region, std::vector<uint32_t> inputs, uint32_t bell, uint32_t worker,
                 std::vector<uint32_t> sinks)
    : region_(region.shared()), inputs_(std::move(inputs)), bell_(bell), worker_(worker), sinks_(std::move(sinks)) {
  region_->worker(worker_);  // RuntimeError for a worker the region does not have
}

py::object FireBatch(SetStep& step, uint64_t max_sets, int64_t timeout_ms) {
  CheckConfigured();
  if (max_sets == 0) throw rt::RuntimeError("a set loop fires at least one set at a time");
  GilRelease gil;
  rt::SetsReady ready =
      rt::AwaitSets(step.region(), step.inputs(), step.bell(), max_sets, rt::Deadline::AfterMs(timeout_ms), gil,
                    &step.forecast());
  if (ready.status == rt::WaitStatus::kClosed) return py::none();
  if (ready.sets == 0) return py::int_(0);
  BatchScope batch(step);
  step.Begin(ready.sets);
  rt::CallTimer* timer = step.timer();
  rt::TraceLog* trace = step.trace();
  const bool own_slices = !step.TracesItsFunctions();
  // Each set's transaction (its latest input's), for its timer and its slice, and its bytes.
  std::vector<uint64_t>& transactions = step.batch_transactions();
  std::vector<uint64_t>& bytes_in = step.batch_bytes_in();
  transactions.assign(timer != nullptr || trace != nullptr ? ready.sets : 0, 0);
  bytes_in.assign(trace != nullptr ? ready.sets : 0, 0);
  size_t taken = 0;
  rt::TakeSets(step.region(), step.inputs(), ready.sets, [&](size_t j, const rt::Taken& message) {
    if (!transactions.empty()) {
      const size_t n = taken++ / step.inputs().size();
      transactions[n] = std::max(transactions[n], TakenTransaction(message));
      if (!bytes_in.empty()) bytes_in[n] += rt::MessageBytes(message);
    }
    step.Take(j, message);
  });
  const int32_t node = step.first_node();
  step.BreakSlices();
  for (uint64_t n = 0; n < ready.sets; ++n) {
    batch.running().store(node);
    if (timer != nullptr) timer->Start(transactions[n]);
    const bool traced = own_slices && trace != nullptr && trace->Sampled(transactions[n]);
    std::optional<rt::ByteMeter> meter;
    if (traced) meter.emplace();
    const int64_t begin_ns = traced ? step.SliceBegin() : 0;
    if (!step.Fire(n, gil)) return py::none();
    if (traced) {
      trace->Append({node, step.instance(), transactions[n], begin_ns, step.SliceEnd(), bytes_in[n],
                     meter->bytes_out()},
                    step.lane());
    } else if (own_slices) {
      step.BreakSlices();
    }
    if ((n + 1) % kSetsPerRing == 0 && n + 1 < ready.sets && !step.sinks().empty()) {
      rt::RingConsumers(step.region(), step.sinks());
    }
  }
  return py::int_(ready.sets);
}

void RunSetLoop(SetStep& step, uint64_t max_sets) {
  while (!FireBatch(step, max_sets, -1).is_none()) {
  }
}

void BindSetSteps(py::module_& m) {
  py::class_<rt::CallTimer, std::shared_ptr<rt::CallTimer>>(m, "CallTimer",
                                                            "Times one func thread's calls (call_watch.h).")
      .def("start", &rt::CallTimer::Start, py::arg("transaction_id"))
      .def("stop", &rt::CallTimer::Stop)
      .def_property_readonly("limit_ms", &rt::CallTimer::limit_ms);
  py::class_<rt::CallWatch>(m, "CallWatch", "A worker's watchdog over calls with a time limit (call_watch.h).")
      .def(py::init([](const PyRegion& region, uint32_t worker, int exit_code) {
             return std::make_unique<rt::CallWatch>(region.shared(), worker, exit_code);
           }),
           py::arg("region"), py::arg("worker"), py::arg("exit_code"))
      .def("add", &rt::CallWatch::Add, py::arg("what"), py::arg("limit_ms"))
      .def("start", &rt::CallWatch::Start);
  py::class_<SetStep>(m, "SetStep", "A plain func's step in the set loop (runtime/bindings/set_steps.h).")
      .def("fire", &FireBatch, py::arg("max_sets"), py::arg("timeout_ms"),
           "One batch: the number of sets fired (0 on timeout), None once the region closes.")
      .def("run", &RunSetLoop, py::arg("max_sets"), "Fires batches as they come until the region closes.")
      .def("watch", &SetStep::Watch, py::arg("timer"), "Times each set's firing with `timer` (a CallTimer).")
      .def("trace", &SetStep::Trace, py::arg("log"), py::arg("instance"),
           "Appends a slice of each set's firing (of each function, for a lean chain) to `log` (a TraceLog).")
      .def_property_readonly("inputs", &SetStep::inputs)
      .def_property_readonly("sinks", &SetStep::sinks);
  py::class_<LeanStep, SetStep>(m, "LeanStep")
      .def(py::init<const PyRegion&, std::vector<uint32_t>, uint32_t, uint32_t, std::vector<std::pair<int32_t, py::object>>,
                    std::vector<uint32_t>, py::object, py::object>(),
           py::arg("region"), py::arg("inputs"), py::arg("bell"), py::arg("worker"), py::arg("functions"),
           py::arg("targets"), py::arg("emit"), py::arg("fire_set"));
  py::class_<UdfStep, SetStep>(m, "UdfStep")
      .def(py::init<const PyRegion&, std::vector<uint32_t>, uint32_t, uint32_t, int32_t, std::shared_ptr<udf::UdfCaller>,
                    std::vector<std::vector<uint32_t>>, py::object, py::object>(),
           py::arg("region"), py::arg("inputs"), py::arg("bell"), py::arg("worker"), py::arg("node"), py::arg("caller"),
           py::arg("targets"), py::arg("fire_set"), py::arg("emit"));
  py::class_<OutputsStep, SetStep>(m, "OutputsStep")
      .def(py::init<const PyRegion&, std::vector<uint32_t>, uint32_t, uint32_t, int32_t, py::object,
                    std::vector<uint32_t>, std::vector<std::vector<uint32_t>>, py::object, py::object>(),
           py::arg("region"), py::arg("inputs"), py::arg("bell"), py::arg("worker"), py::arg("node"), py::arg("run"),
           py::arg("ports"), py::arg("targets"), py::arg("fire_set"), py::arg("emit"));
  py::class_<MessageStep, SetStep>(m, "MessageStep")
      .def(py::init<const PyRegion&, std::vector<uint32_t>, uint32_t, uint32_t, int32_t, py::object>(),
           py::arg("region"), py::arg("inputs"), py::arg("bell"), py::arg("worker"), py::arg("node"),
           py::arg("fire_set"));
}

}  // namespace dfir::bindings
