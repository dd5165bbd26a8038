// Bindings of the shared region (runtime/native/region.h, channel_io.h) as Region, and of the
// firing pool's FiringGroups: the bodies of PyRegion (py_region.h) — its puts and takes in
// Messages or plain tensors, the native firing of lean chains, C++ UDFs and native sets, the
// firing pool's readiness scan, the workers' status — and their binding. Use them through
// dfir.runtime.channels, not directly.
#include "py_region.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "arena_bindings.h"
#include "channel_io.h"
#include "message_codec.h"
#include "numpy_api.h"
#include "py_codec.h"
#include "py_ledger.h"
#include "region.h"
#include "runtime_bindings.h"
#include "shm.h"
#include "slots.h"
#include "udf_caller.h"
#include "udf_records.h"

namespace py = pybind11;

namespace dfir::bindings {

namespace {

// How many outputs of a lean batch go out between two rings of their consumers' doorbells
// (PyRegion::FireLean): a ring per output costs a wake-up per message when the consumer waits;
// one per batch leaves it idle while the batch runs.
constexpr uint64_t kLeanSetsPerRing = 8;

}  // namespace

// The messages FireUdf took, set by set: shared channels' records (whose body references are
// given back here unless a set takes them over) and local channels' objects.
class PyRegion::TakenSets {
 public:
  TakenSets(rt::Region& region, size_t width) : region_(region), width_(width) {}
  ~TakenSets() {
    for (size_t i = 0; i < records_.size(); ++i) {
      if (objects_[i] == nullptr && !consumed_[i]) rt::ReleaseBody(region_, records_[i]);
      Py_XDECREF(static_cast<PyObject*>(objects_[i]));
    }
  }
  TakenSets(const TakenSets&) = delete;
  TakenSets& operator=(const TakenSets&) = delete;

  void Add(const rt::Taken& message) {
    records_.push_back(message.record != nullptr ? *message.record : rt::MessageRecord{});
    objects_.push_back(message.object);
    consumed_.push_back(false);
  }
  size_t width() const { return width_; }
  // Message j of set n: its record (nullptr for a local channel's object) and object.
  const rt::MessageRecord* record(uint64_t n, size_t j) const {
    return objects_[n * width_ + j] == nullptr ? &records_[n * width_ + j] : nullptr;
  }
  // Hands over message j of set n: its body reference (a record) or its object reference.
  void* Consume(uint64_t n, size_t j) {
    const size_t i = n * width_ + j;
    consumed_[i] = true;
    void* object = objects_[i];
    objects_[i] = nullptr;
    return object;
  }

 private:
  rt::Region& region_;
  size_t width_;
  std::vector<rt::MessageRecord> records_;
  std::vector<void*> objects_;
  std::vector<bool> consumed_;
};

// A message of a lean chain's input set: a local channel's Message, or a shared channel's
// record header with its payload (error text) decoded.
struct PyRegion::LeanInput {
  py::object message;  // set for a local channel, or once made (LeanMessage)
  rt::MessageRecord header{};
  py::object payload;
  py::object argument;  // what the first step's function receives for it (UdfArgument)
  std::string error;
  int32_t ret_code = 0;
};

PyRegion::PyRegion(uint32_t bells, const std::vector<std::tuple<std::string, uint32_t, uint32_t>>& channels,
                   uint32_t workers, uint64_t arena_bytes, const std::string& name) {
  rt::RegionLayout layout;
  layout.bells = bells;
  layout.workers = workers;
  layout.arena_bytes = arena_bytes;
  for (const auto& [kind, capacity, bell] : channels) {
    if (kind != "shared" && kind != "local") {
      throw rt::RuntimeError("channel kind '" + kind + "' is not 'shared' or 'local'");
    }
    layout.channels.push_back(
        rt::ChannelSpec{kind == "shared" ? rt::ChannelKind::kShared : rt::ChannelKind::kLocal, capacity, bell});
  }
  region_ = rt::Region::Create(layout, name);
  epoch_ = rt::ForkEpoch();
}

PyRegion::~PyRegion() {
  if (epoch_ == rt::ForkEpoch()) rt::DrainLocalChannels(*region_, References());
}

int PyRegion::Put(const std::vector<std::pair<uint32_t, py::object>>& targets, int64_t timeout_ms, bool ring) {
  CheckConfigured();
  if (region_->closing()) return StatusCode(rt::WaitStatus::kClosed);
  rt::Deadline deadline = rt::Deadline::AfterMs(timeout_ms);
  GilRelease gil;
  Encoder encoder(region_, deadline, gil);
  rt::PendingPut put(*region_);
  for (const auto& [channel, message] : targets) {
    if (!rt::IsShared(*region_, channel)) {
      put.AddLocal(channel, message.ptr());
    } else if (!put.AddAgain(channel, message.ptr())) {
      rt::MessageRecord record;
      if (!encoder.Encode(message, record)) return NoRoomStatus();
      put.Add(channel, record, message.ptr());
    }
  }
  return StatusCode(put.Push(deadline, gil, References(), ring));
}

int PyRegion::PutArrays(const py::sequence& routes, const py::sequence& arrays, const py::tuple& fields,
                        int64_t timeout_ms, PyLedger* ledger) {
  CheckConfigured();
  if (routes.size() != arrays.size()) {
    throw rt::RuntimeError("put_arrays needs one route per array: " + std::to_string(routes.size()) +
                           " routes, " + std::to_string(arrays.size()) + " arrays");
  }
  std::vector<std::vector<uint32_t>> channels;
  std::vector<py::object> held;  // the arrays, alive while their addresses key the put
  channels.reserve(routes.size());
  held.reserve(arrays.size());
  for (size_t k = 0; k < arrays.size(); ++k) {
    held.push_back(py::object(arrays[k]));
    channels.push_back(held.back().is_none() ? std::vector<uint32_t>{} : routes[k].cast<std::vector<uint32_t>>());
  }
  std::vector<PyObject*> pointers;
  for (const py::object& array : held) pointers.push_back(array.ptr());
  return PutArrayList(channels, pointers.data(), TransactionOfFields(fields), rt::Deadline::AfterMs(timeout_ms),
                      ledger);
}

int PyRegion::PutArrayList(const std::vector<std::vector<uint32_t>>& routes, PyObject* const* arrays,
                           const rt::TransactionInfo& info, const rt::Deadline& deadline, PyLedger* ledger) {
  if (region_->closing()) return StatusCode(rt::WaitStatus::kClosed);
  rt::MessageRecord header;
  rt::WriteHeader(info, Types().tensor_kind, 0, 0, 0, header);
  GilRelease gil;
  Encoder encoder(region_, deadline, gil);
  rt::PendingPut put(*region_);
  for (size_t k = 0; k < routes.size(); ++k) {
    py::handle array(arrays[k]);
    if (array.is_none()) continue;
    for (uint32_t channel : routes[k]) {
      if (!rt::IsShared(*region_, channel)) {
        throw rt::RuntimeError("put_arrays needs shared channels; " + std::to_string(channel) + " is local");
      }
      if (put.AddAgain(channel, array.ptr())) continue;  // one more reference to the body, no copy
      rt::MessageRecord record;
      if (!encoder.EncodeArray(header, py::reinterpret_borrow<py::object>(array), record)) return NoRoomStatus();
      put.Add(channel, record, array.ptr());
    }
  }
  if (ledger != nullptr) put.OpenOnPush(ledger->native(), info);
  return StatusCode(put.Push(deadline, gil, References()));
}

py::object PyRegion::TakeTensors(const std::vector<uint32_t>& channels, uint32_t bell, int64_t timeout_ms,
                                 PyLedger* ledger) {
  py::object fields;
  py::list arrays(channels.size());
  py::object set = TakeTensorSet(channels, bell, rt::Deadline::AfterMs(timeout_ms), ledger,
                                 [&](size_t i, const rt::MessageRecord& record) {
                                   if (i == 0) fields = FieldsOf(record);
                                 }, arrays);
  return set.is(arrays) ? py::make_tuple(std::move(fields), std::move(arrays)) : set;
}

py::object PyRegion::Take(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets, int64_t timeout_ms) {
  CheckConfigured();
  if (channels.empty() || max_sets == 0) throw rt::RuntimeError("take needs at least one channel and one set");
  GilRelease gil;
  rt::SetsReady ready = rt::AwaitSets(*region_, channels, bell, max_sets, rt::Deadline::AfterMs(timeout_ms), gil);
  if (ready.status == rt::WaitStatus::kClosed) return py::none();
  py::list sets;
  Decoder decoder(region_);
  py::tuple set;
  rt::TakeSets(*region_, channels, ready.sets, [&](size_t i, const rt::Taken& message) {
    if (i == 0) set = py::tuple(channels.size());
    set[i] = decoder.Take(message);
    if (i + 1 == channels.size()) sets.append(std::move(set));
  });
  return sets;
}

py::object PyRegion::FireLean(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets,
                              int64_t timeout_ms, const std::vector<std::pair<int32_t, py::object>>& steps,
                              const std::vector<uint32_t>& targets, uint32_t worker, const py::object& emit,
                              const py::object& fire_set) {
  CheckConfigured();
  if (channels.empty() || max_sets == 0 || steps.empty()) {
    throw rt::RuntimeError("fire_lean needs at least one channel, one set and one step");
  }
  GilRelease gil;
  rt::SetsReady ready = rt::AwaitSets(*region_, channels, bell, max_sets, rt::Deadline::AfterMs(timeout_ms), gil);
  if (ready.status == rt::WaitStatus::kClosed) return py::none();
  std::vector<LeanInput> taken(ready.sets * channels.size());
  Decoder decoder(region_);
  rt::TakeSets(*region_, channels, ready.sets, [&, next = size_t{0}](size_t, const rt::Taken& message) mutable {
    LeanInput& input = taken[next++];
    if (message.record == nullptr) {
      input.message = py::reinterpret_steal<py::object>(static_cast<PyObject*>(message.object));
      input.payload = Get(input.message, Name().payload);
      input.ret_code = Get(input.message, Name().ret_code).cast<int32_t>();
      input.argument = UdfArgument(input.payload,
                                   Get(input.message, Name().kind).is(Types().kinds[Types().tensor_kind]) &&
                                       Get(input.message, Name().as_array).ptr() != Py_True);
    } else {
      input.header = *message.record;
      input.ret_code = message.record->ret_code;
      input.payload = decoder.DecodeBody(*message.record, input.error);
      input.argument = UdfArgument(input.payload, AsTensor(*message.record, Types().tensor_kind));
    }
  });
  const size_t width = channels.size();
  std::vector<PyObject*> arguments(width);
  return FireEach(ready.sets, targets, worker, steps[0].first, [&](uint64_t n) {
    return FireLeanSet(&taken[n * width], width, steps, targets, worker, emit, fire_set, arguments, gil);
  });
}

py::object PyRegion::FireUdf(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets,
                             int64_t timeout_ms, dfir::udf::UdfCaller& caller,
                             const std::vector<std::vector<uint32_t>>& targets, uint32_t worker, int32_t node,
                             const py::object& fire_set, const py::object& emit) {
  CheckConfigured();
  if (channels.empty() || max_sets == 0) throw rt::RuntimeError("fire_udf needs at least one channel and one set");
  if (targets.size() != caller.ports().size()) {
    throw rt::RuntimeError("fire_udf needs the channels of each of the func's " +
                           std::to_string(caller.ports().size()) + " outputs, got " + std::to_string(targets.size()));
  }
  std::vector<uint32_t> sinks;
  for (const auto& channels_of_output : targets) {
    for (uint32_t channel : channels_of_output) {
      if (!rt::IsShared(*region_, channel)) {
        throw rt::RuntimeError("fire_udf puts records on shared channels; " + std::to_string(channel) + " is local");
      }
      sinks.push_back(channel);
    }
  }
  GilRelease gil;
  rt::SetsReady ready = rt::AwaitSets(*region_, channels, bell, max_sets, rt::Deadline::AfterMs(timeout_ms), gil);
  if (ready.status == rt::WaitStatus::kClosed) return py::none();
  TakenSets taken(*region_, channels.size());
  rt::TakeSets(*region_, channels, ready.sets, [&](size_t, const rt::Taken& message) { taken.Add(message); });
  return FireEach(ready.sets, sinks, worker, node,
                  [&](uint64_t n) { return FireUdfSet(taken, n, caller, targets, fire_set, emit, gil); });
}

py::object PyRegion::FireSets(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets,
                              int64_t timeout_ms, const py::object& run, const std::vector<uint32_t>& ports,
                              const std::vector<std::vector<uint32_t>>& targets, uint32_t worker, int32_t node,
                              const py::object& fire_set, const py::object& emit) {
  CheckConfigured();
  if (channels.empty() || max_sets == 0) throw rt::RuntimeError("fire_sets needs at least one channel and one set");
  if (ports.size() != targets.size()) {
    throw rt::RuntimeError("fire_sets needs one list of channels per port: " + std::to_string(ports.size()) +
                           " ports, " + std::to_string(targets.size()) + " lists");
  }
  std::vector<uint32_t> sinks;
  for (const auto& channels_of_port : targets) sinks.insert(sinks.end(), channels_of_port.begin(), channels_of_port.end());
  GilRelease gil;
  rt::SetsReady ready = rt::AwaitSets(*region_, channels, bell, max_sets, rt::Deadline::AfterMs(timeout_ms), gil);
  if (ready.status == rt::WaitStatus::kClosed) return py::none();
  const size_t width = channels.size();
  std::vector<py::list> sets(ready.sets);
  Decoder decoder(region_);
  rt::TakeSets(*region_, channels, ready.sets, [&, next = size_t{0}](size_t j, const rt::Taken& message) mutable {
    if (j == 0) sets[next] = py::list(width);
    sets[next][j] = decoder.Take(message);
    if (j + 1 == width) ++next;
  });
  return FireEach(ready.sets, sinks, worker, node,
                  [&](uint64_t n) { return FireSet(sets[n], run, ports, targets, fire_set, emit, gil); });
}

template <typename Fire>
py::object PyRegion::FireEach(uint64_t sets, const std::vector<uint32_t>& sinks, uint32_t worker, int32_t node,
                              Fire&& fire) {
  std::atomic<int32_t>& running = region_->worker(worker).running_node;
  struct RingOnReturn {
    const rt::Region& region;
    const std::vector<uint32_t>& sinks;
    std::atomic<int32_t>& running;
    ~RingOnReturn() {
      running.store(-1);
      if (!sinks.empty()) rt::RingConsumers(region, sinks);
    }
  } ring_on_return{*region_, sinks, running};
  for (uint64_t n = 0; n < sets; ++n) {
    running.store(node);
    if (!fire(n)) return py::none();
    if ((n + 1) % kLeanSetsPerRing == 0 && n + 1 < sets && !sinks.empty()) rt::RingConsumers(*region_, sinks);
  }
  return py::int_(sets);
}

bool PyRegion::FireSet(const py::list& messages, const py::object& run, const std::vector<uint32_t>& ports,
                       const std::vector<std::vector<uint32_t>>& targets, const py::object& fire_set,
                       const py::object& emit, GilRelease& gil) {
  const Names& name = Name();
  for (const py::handle message : messages) {
    if (Get(message, name.ret_code).cast<int32_t>() != 0) {
      fire_set(messages);  // raises Cancelled once the region closes
      return true;
    }
  }
  const uint32_t label = Get(messages[0], name.data_label).cast<uint32_t>();
  py::object output_sets = run(messages);
  rt::Deadline forever = rt::Deadline::Forever();
  rt::PendingPut put(*region_);
  if (!PutOutputSets(output_sets, label, ports, targets, forever, gil, put)) {
    emit(output_sets, messages);  // raises Cancelled once the region closes
    return true;
  }
  return put.Push(forever, gil, References(), false) == rt::WaitStatus::kReady;
}

bool PyRegion::PutOutputSets(const py::object& output_sets, uint32_t label, const std::vector<uint32_t>& ports,
                             const std::vector<std::vector<uint32_t>>& targets, const rt::Deadline& deadline,
                             GilRelease& gil, rt::PendingPut& put) {
  if (!PyList_CheckExact(output_sets.ptr())) return false;
  Encoder encoder(region_, deadline, gil);
  const Names& name = Name();
  for (const py::handle output_set : output_sets) {
    if (!PyList_CheckExact(output_set.ptr())) return false;
    for (const py::handle pair : output_set) {
      if (!PyTuple_CheckExact(pair.ptr()) || PyTuple_GET_SIZE(pair.ptr()) != 2) return false;
      py::handle message(PyTuple_GET_ITEM(pair.ptr(), 1));
      if (Py_TYPE(message.ptr()) != reinterpret_cast<PyTypeObject*>(Types().message_type.ptr())) return false;
      const auto port = std::find(ports.begin(), ports.end(), py::handle(PyTuple_GET_ITEM(pair.ptr(), 0)).cast<uint32_t>());
      if (port == ports.end()) return false;
      const bool relabel = label != 0 && Get(message, name.data_label).cast<uint32_t>() == 0;
      rt::MessageRecord record;
      bool encoded = false;
      for (uint32_t channel : targets[static_cast<size_t>(port - ports.begin())]) {
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

bool PyRegion::FireUdfSet(TakenSets& taken, uint64_t n, dfir::udf::UdfCaller& caller,
                          const std::vector<std::vector<uint32_t>>& targets, const py::object& fire_set,
                          const py::object& emit, GilRelease& gil) {
  const size_t width = taken.width();
  const dfir::udf::RecordTypes& types = dfir::udf::UdfRecordTypes();
  bool native = true;
  for (size_t j = 0; j < width && native; ++j) {
    const rt::MessageRecord* record = taken.record(n, j);
    native = record != nullptr && dfir::udf::TakesNatively(*record, types);
  }
  if (!native) {
    Decoder decoder(region_);
    py::tuple messages(width);
    for (size_t j = 0; j < width; ++j) {
      const rt::MessageRecord* record = taken.record(n, j);
      void* object = taken.Consume(n, j);
      messages[j] = record != nullptr ? decoder.Decode(*record)
                                      : py::reinterpret_steal<py::object>(static_cast<PyObject*>(object));
    }
    fire_set(messages);  // raises Cancelled once the region closes
    return true;
  }
  std::vector<std::shared_ptr<FlowFunc::FlowMsg>> inputs(width);
  const rt::MessageRecord* latest = taken.record(n, 0);
  for (size_t j = 0; j < width; ++j) {
    const rt::MessageRecord* record = taken.record(n, j);
    taken.Consume(n, j);
    inputs[j] = dfir::udf::MsgOfRecord(region_, *record, types);
    if (record->transaction_id >= latest->transaction_id) latest = record;
  }
  const uint32_t data_label = taken.record(n, 0)->data_label;
  dfir::udf::MsgMeta meta;
  meta.transaction_id = latest->transaction_id;
  meta.start_time = static_cast<uint64_t>(latest->start_time);
  meta.end_time = static_cast<uint64_t>(latest->end_time);
  meta.flow_flags = latest->flow_flags;
  const std::string user_data(reinterpret_cast<const char*>(latest->user_data), latest->user_data_size);
  const dfir::udf::ProcResult result = caller.Run(inputs, meta, user_data);
  inputs.clear();  // gives the input bodies back before the outputs wait for room
  if (!dfir::udf::UdfCaller::Clean(result)) {
    emit(caller.Settle(result, meta, user_data), data_label);  // raises Cancelled once the region closes
    return true;
  }
  rt::Deadline forever = rt::Deadline::Forever();
  rt::BodyWriter writer(*region_, forever, gil);
  rt::PendingPut put(*region_);
  for (const auto& output : result.outputs) {
    const auto& channels_of_output = targets.at(output.index);
    if (channels_of_output.empty()) continue;
    rt::MessageRecord record;
    if (!dfir::udf::RecordOfMsg(*output.msg, user_data, data_label, types, *region_, writer, record)) return false;
    put.Add(channels_of_output[0], record, output.msg.get());
    for (size_t c = 1; c < channels_of_output.size(); ++c) put.AddAgain(channels_of_output[c], output.msg.get());
  }
  return put.Push(forever, gil, References(), false) == rt::WaitStatus::kReady;
}

py::object PyRegion::LeanMessage(LeanInput& input) {
  if (!input.message) {
    input.message = Decoder::MessageOf(input.header, DecodeMeta(rt::TransactionOf(input.header)), input.payload,
                                       input.error);
  }
  return input.message;
}

bool PyRegion::FireLeanSet(LeanInput* set, size_t width, const std::vector<std::pair<int32_t, py::object>>& steps,
                           const std::vector<uint32_t>& targets, uint32_t worker, const py::object& emit,
                           const py::object& fire_set, std::vector<PyObject*>& arguments, GilRelease& gil) {
  bool plain = true;
  for (size_t j = 0; j < width; ++j) plain = plain && set[j].ret_code == 0;
  if (!plain) {
    py::tuple messages(width);
    for (size_t j = 0; j < width; ++j) messages[j] = LeanMessage(set[j]);
    fire_set(messages);  // raises Cancelled once the region closes
    return true;
  }
  LeanInput* latest = set;
  for (size_t j = 0; j < width; ++j) {
    arguments[j] = set[j].argument.ptr();
    if (TransactionIdOf(set[j]) > TransactionIdOf(*latest)) latest = &set[j];
  }
  uint32_t data_label = set[0].message ? Get(set[0].message, Name().data_label).cast<uint32_t>() : set[0].header.data_label;
  const int closed = StatusCode(rt::WaitStatus::kClosed);
  py::object value;
  PyObject* result = nullptr;
  for (size_t step = 0; step < steps.size(); ++step) {
    region_->worker(worker).running_node.store(steps[step].first);
    result = step == 0 ? PyObject_Vectorcall(steps[0].second.ptr(), arguments.data(), width, nullptr)
                       : PyObject_CallOneArg(steps[step].second.ptr(), value.ptr());
    if (result == nullptr) {
      if (!PyErr_ExceptionMatches(PyExc_Exception) || PyErr_ExceptionMatches(PyExc_MemoryError)) {
        throw py::error_already_set();
      }
      return emit(MetaOf(*latest), RaisedException(), true, data_label, step).cast<int>() != closed;
    }
    value = py::reinterpret_steal<py::object>(result);
    if (!PyArray_CheckExact(result) || !HasFlatLayout(reinterpret_cast<PyArrayObject*>(result))) {
      return emit(MetaOf(*latest), value, false, data_label, step).cast<int>() != closed;
    }
  }
  if (targets.empty()) return true;
  rt::TransactionInfo info = latest->message ? TransactionOf(Get(latest->message, Name().meta))
                                             : rt::TransactionOf(latest->header);
  rt::MessageRecord header;
  rt::WriteHeader(info, Types().tensor_kind, 0, 0, data_label, header);
  header.flags = rt::kFlagArrayValue;  // an array the UDF returned (Message.as_array)
  rt::Deadline forever = rt::Deadline::Forever();
  Encoder encoder(region_, forever, gil);
  rt::PendingPut put(*region_);
  py::object local;  // the Message local channels carry, made once
  for (uint32_t channel : targets) {
    if (!rt::IsShared(*region_, channel)) {
      if (!local) local = NewMessage(MetaOf(*latest), Types().kinds[Types().tensor_kind], value, 0, py::str(""), 0, data_label,
                                      true);
      put.AddLocal(channel, local.ptr());
    } else if (!put.AddAgain(channel, result)) {
      rt::MessageRecord record;
      if (!encoder.EncodeArray(header, value, record)) return false;
      put.Add(channel, record, result);
    }
  }
  return put.Push(forever, gil, References(), false) == rt::WaitStatus::kReady;
}

py::object PyRegion::RaisedException() {
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (traceback != nullptr) PyException_SetTraceback(value, traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
  return py::reinterpret_steal<py::object>(value);
}

uint64_t PyRegion::TransactionIdOf(const LeanInput& input) {
  return input.message ? Get(Get(input.message, Name().meta), Name().transaction_id).cast<uint64_t>()
                       : input.header.transaction_id;
}

py::object PyRegion::MetaOf(const LeanInput& input) {
  return input.message ? Get(input.message, Name().meta) : DecodeMeta(rt::TransactionOf(input.header));
}

int PyRegion::WaitForChange(const std::vector<uint32_t>& channels, uint32_t bell, int64_t stalled, int64_t timeout_ms) {
  py::gil_scoped_release unlocked;
  return StatusCode(region_->WaitForChange(channels, bell, stalled, rt::Deadline::AfterMs(timeout_ms)));
}

std::pair<std::vector<std::pair<uint32_t, uint64_t>>, bool> PyRegion::Ready(const FiringGroups& groups,
                                                                            uint64_t limit) const {
  std::vector<std::pair<uint32_t, uint64_t>> ready;
  bool blocked = false;
  for (size_t unit = 0; unit < groups.inputs.size(); ++unit) {
    uint64_t sets = limit;
    for (uint32_t channel : groups.inputs[unit]) sets = std::min(sets, region_->ring(channel).Ready(sets));
    if (sets == 0) continue;
    for (uint32_t channel : groups.sinks[unit]) {
      rt::Ring sink = region_->ring(channel);
      if (sink.overwrites()) continue;  // a full OVERWRITE sink drops its oldest, never blocks
      uint64_t size = sink.size();
      sets = std::min<uint64_t>(sets, size < sink.capacity() ? sink.capacity() - size : 0);
    }
    if (sets > 0) {
      ready.emplace_back(static_cast<uint32_t>(unit), sets);
    } else {
      blocked = true;
    }
  }
  return {std::move(ready), blocked};
}

int PyRegion::WaitForClose(uint32_t bell, int64_t timeout_ms) {
  py::gil_scoped_release unlocked;
  return StatusCode(region_->WaitForClose(bell, rt::Deadline::AfterMs(timeout_ms)));
}

py::tuple PyRegion::WorkerStatus(uint32_t worker) const {
  rt::WorkerSlot& slot = region_->worker(worker);
  return py::make_tuple(slot.pid.load(), slot.running_node.load(), py::str(region_->LastWords(worker)));
}

py::dict PyRegion::ArenaStats() const {
  rt::ArenaStats stats = region_->arena().Stats();
  py::dict out;
  out["capacity"] = stats.capacity;
  out["used"] = stats.used;
  out["live_blocks"] = stats.live_blocks;
  out["live_bytes"] = stats.live_bytes;
  out["cached_bytes"] = stats.cached_bytes;
  return out;
}

py::tuple PyRegion::Locate(const py::object& array) const {
  if (!PyArray_Check(array.ptr())) throw rt::RuntimeError("locate needs a numpy array");
  auto* raw = reinterpret_cast<PyArrayObject*>(array.ptr());
  uint64_t block = ArenaBlockOf(*region_, raw);
  uint64_t offset = block == 0 ? 0 : static_cast<uint64_t>(static_cast<uint8_t*>(PyArray_DATA(raw)) - region_->base());
  return py::make_tuple(block, offset);
}

int PyRegion::NoRoomStatus() const {
  return StatusCode(region_->closing() ? rt::WaitStatus::kClosed : rt::WaitStatus::kTimeout);
}

void BindRegion(py::module_& m) {
  py::class_<FiringGroups>(m, "FiringGroups", "The inputs and sinks of a firing pool's units (Region.ready).")
      .def(py::init([](std::vector<std::vector<uint32_t>> inputs, std::vector<std::vector<uint32_t>> sinks) {
             if (inputs.size() != sinks.size()) {
               throw rt::RuntimeError("a firing pool needs the sinks of each of its " +
                                      std::to_string(inputs.size()) + " units, got " + std::to_string(sinks.size()));
             }
             return FiringGroups{std::move(inputs), std::move(sinks)};
           }),
           py::arg("inputs"), py::arg("sinks"));
  py::class_<PyRegion>(m, "Region", "The shared region of one loaded model (see runtime/native/region.h).")
      .def(py::init<uint32_t, const std::vector<std::tuple<std::string, uint32_t, uint32_t>>&, uint32_t, uint64_t,
                    const std::string&>(),
           py::arg("bells"), py::arg("channels"), py::arg("workers"), py::arg("arena_bytes"), py::arg("name"))
      .def("put", &PyRegion::Put, py::arg("targets"), py::arg("timeout_ms"), py::arg("ring") = true,
           "Without `ring`, the consumers' doorbells ring only before a wait for room: ring them later.")
      .def(
          "ring",
          [](const PyRegion& self, const std::vector<uint32_t>& channels) { rt::RingConsumers(self.region(), channels); },
          py::arg("channels"), "Rings the doorbell of each channel's consumer (once per doorbell).")
      .def("put_arrays", &PyRegion::PutArrays, py::arg("routes"), py::arg("arrays"), py::arg("fields"),
           py::arg("timeout_ms"), py::arg("ledger") = nullptr)
      .def("take", &PyRegion::Take, py::arg("channels"), py::arg("bell"), py::arg("max_sets"), py::arg("timeout_ms"))
      .def("fire_lean", &PyRegion::FireLean, py::arg("channels"), py::arg("bell"), py::arg("max_sets"),
           py::arg("timeout_ms"), py::arg("steps"), py::arg("targets"), py::arg("worker"), py::arg("emit"),
           py::arg("fire_set"))
      .def("fire_sets", &PyRegion::FireSets, py::arg("channels"), py::arg("bell"), py::arg("max_sets"),
           py::arg("timeout_ms"), py::arg("run"), py::arg("ports"), py::arg("targets"), py::arg("worker"),
           py::arg("node"), py::arg("fire_set"), py::arg("emit"))
      .def("fire_udf", &PyRegion::FireUdf, py::arg("channels"), py::arg("bell"), py::arg("max_sets"),
           py::arg("timeout_ms"), py::arg("caller"), py::arg("targets"), py::arg("worker"), py::arg("node"),
           py::arg("fire_set"), py::arg("emit"))
      .def("take_tensors", &PyRegion::TakeTensors, py::arg("channels"), py::arg("bell"), py::arg("timeout_ms"),
           py::arg("ledger") = nullptr)
      .def("wait_for_change", &PyRegion::WaitForChange, py::arg("channels"), py::arg("bell"), py::arg("stalled"),
           py::arg("timeout_ms"))
      .def("wait_for_close", &PyRegion::WaitForClose, py::arg("bell"), py::arg("timeout_ms"))
      .def("ready", &PyRegion::Ready, py::arg("groups"), py::arg("limit"))
      .def(
          "set_consumer_bell",
          [](PyRegion& self, const std::vector<uint32_t>& channels, uint32_t bell) {
            self.region().SetConsumerBell(channels, bell);
          },
          py::arg("channels"), py::arg("bell"))
      .def(
          "waiting_transactions",
          [](const PyRegion& self, uint32_t channel) { return rt::WaitingTransactions(self.region(), channel); },
          py::arg("channel"))
      .def("size", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).size(); })
      .def("pops", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).pops(); })
      .def("capacity", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).capacity(); })
      .def(
          "set_overwrite",
          [](PyRegion& self, uint32_t channel) { self.region().ring(channel).SetOverwrite(true); },
          py::arg("channel"),
          "Makes `channel` OVERWRITE: a push that finds it full drops its oldest message. Before any put.")
      .def("overwrites", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).overwrites(); })
      .def("dropped", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).dropped(); })
      .def("is_shared", [](const PyRegion& self, uint32_t channel) { return rt::IsShared(self.region(), channel); })
      .def_property_readonly("closing", [](const PyRegion& self) { return self.region().closing(); })
      .def("close", [](PyRegion& self) { self.region().Close(); })
      .def("detach", [](PyRegion& self) { self.region().Detach(); })
      .def("set_pid", [](PyRegion& self, uint32_t worker, int32_t pid) { self.region().worker(worker).pid.store(pid); })
      .def(
          "running_node",
          [](PyRegion& self, uint32_t worker) {
            std::atomic<int32_t>& slot = self.region().worker(worker).running_node;
            static_assert(sizeof slot == sizeof(int32_t));
            return py::memoryview::from_buffer(reinterpret_cast<int32_t*>(&slot), {1}, {sizeof(int32_t)});
          },
          py::arg("worker"), "A writable one-int view of the node the worker runs now (-1: none).")
      .def(
          "set_last_words",
          [](PyRegion& self, uint32_t worker, const std::string& text) { self.region().SetLastWords(worker, text); },
          py::arg("worker"), py::arg("text"))
      .def("worker_status", &PyRegion::WorkerStatus, py::arg("worker"))
      .def("arena_stats", &PyRegion::ArenaStats)
      .def("locate", &PyRegion::Locate, py::arg("array"))
      .def(
          "use_arena_allocator",
          [](PyRegion& self, uint64_t threshold) { UseArenaAllocator(self.shared(), threshold); },
          py::arg("threshold"));
}

}  // namespace dfir::bindings
