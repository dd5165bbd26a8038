// Bindings of a loaded model's driver port: `DriverPort`, the feed and the fetch of plain
// tensors of dfir.runtime.driver.model.RuntimeModel, one native call each, and its refusal codes
// (NOT_A_FEED, EMPTY, ... CLOSED) as class attributes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "arrival_forecast.h"
#include "channel_io.h"
#include "dispatch.h"
#include "message_codec.h"
#include "numpy_api.h"
#include "py_codec.h"
#include "py_ledger.h"
#include "py_region.h"
#include "region.h"
#include "ring.h"
#include "runtime_bindings.h"
#include "shm.h"
#include "trace_log.h"

namespace py = pybind11;

namespace dfir::bindings {

namespace {

// The lock of a model's feeds, or of its fetches, which Python (ProcessScheduler.submit and
// .fetch) and the port both hold while they put (take): the port takes it without a Python
// call. As a threading.Lock: any thread may release it, and a wait releases the GIL and lets
// signal handlers run (a KeyboardInterrupt ends it).
class PortLock {
 public:
  // Takes the lock if it is free.
  bool TryAcquire() {
    std::lock_guard<std::mutex> guard(mutex_);
    if (locked_) return false;
    locked_ = true;
    return true;
  }

  // Takes the lock, waiting up to `timeout_ms` (-1: forever) with the GIL released; whether it
  // did. Raises what a signal handler raised meanwhile.
  bool Acquire(int64_t timeout_ms) {
    if (TryAcquire()) return true;
    if (timeout_ms == 0) return false;
    const rt::Deadline deadline = rt::Deadline::AfterMs(timeout_ms);
    for (;;) {
      Wait outcome;
      {
        py::gil_scoped_release released;
        outcome = WaitAWhile(deadline);
      }
      if (outcome != Wait::kGoOn) return outcome == Wait::kTaken;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
  }

  // Frees the lock; false when it was not held.
  bool Release() {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (!locked_) return false;
      locked_ = false;
    }
    freed_.notify_one();
    return true;
  }

  bool locked() {
    std::lock_guard<std::mutex> guard(mutex_);
    return locked_;
  }

 private:
  enum class Wait { kTaken, kTimedOut, kGoOn };
  static constexpr std::chrono::milliseconds kSignalCheck{50};  // how often a wait lets signal handlers run

  // Waits for the lock to be freed, at most kSignalCheck, and takes it.
  Wait WaitAWhile(const rt::Deadline& deadline) {
    std::unique_lock<std::mutex> hold(mutex_);
    auto slice = std::chrono::duration_cast<std::chrono::nanoseconds>(kSignalCheck);
    if (!deadline.forever()) slice = std::min(slice, deadline.remaining());
    if (freed_.wait_for(hold, slice, [this] { return !locked_; })) {
      locked_ = true;
      return Wait::kTaken;
    }
    return deadline.passed() ? Wait::kTimedOut : Wait::kGoOn;
  }

  std::mutex mutex_;
  std::condition_variable freed_;
  bool locked_ = false;
};

// threading.Lock's acquire(blocking=True, timeout=-1) of a PortLock, with its refusals.
bool AcquireFromPython(PortLock& lock, bool blocking, double timeout) {
  if (!blocking && timeout != -1) throw py::value_error("can't specify a timeout for a non-blocking call");
  if (timeout < 0 && timeout != -1) throw py::value_error("timeout value must be positive");
  if (!blocking) return lock.TryAcquire();
  const double timeout_ms = std::ceil(timeout * 1000.0);
  const bool forever = timeout < 0 || timeout_ms >= static_cast<double>(INT64_MAX);
  return lock.Acquire(forever ? -1 : static_cast<int64_t>(timeout_ms));
}

// threading.Lock's release() of a PortLock.
void ReleaseFromPython(PortLock& lock) {
  if (!lock.Release()) {
    PyErr_SetString(PyExc_RuntimeError, "release unlocked lock");
    throw py::error_already_set();
  }
}

// The values of one feed, one per graph input (null: not fed), held inline for the usual few
// inputs: a feed allocates nothing of its own.
class FedValues {
 public:
  explicit FedValues(size_t count) : count_(count) {
    if (count > kInline) spilled_.resize(count);
  }
  size_t size() const { return count_; }
  py::object& operator[](size_t k) { return count_ > kInline ? spilled_[k] : inline_[k]; }
  const py::object& operator[](size_t k) const { return count_ > kInline ? spilled_[k] : inline_[k]; }

 private:
  static constexpr size_t kInline = 4;
  size_t count_;
  std::array<py::object, kInline> inline_;
  std::vector<py::object> spilled_;
};

// A loaded model's feed and its fetch of plain tensors (dfir.runtime.driver.model.RuntimeModel).
// The feed's acceptance rules live here only: how a feed names its inputs (a list or tuple in
// feed order, or a dict keyed by position, name or an object with that `name`), which values go
// as they are, which shape and GE graph input rules they must meet, and where each goes (fixed
// channels, and by transaction id one instance of each replicated consumer). A feed either puts
// its arrays (one record per channel, the transaction opened in the ledger) or says why not, as
// (Refusal, detail): Python converts values (kConvert) and feeds again, sends an EOS marker
// (kEosMarker), or formats the refusal as the user's error.
class DriverPort {
 public:
  enum Refusal : int {
    kNotAFeed = 1,  // not a dict, list or tuple
    kEmpty,         // nothing fed (and no EOS flag)
    kEosMarker,     // nothing fed, with the EOS flag: an empty message to every input
    kCount,         // detail: how many values a list gave
    kUnknownKey,    // detail: the dict key that names no input
    kIndexRange,    // detail: the integer key out of range
    kTwice,         // detail: the position fed twice
    kMissing,       // detail: the first position not fed
    kConvert,       // detail: a dict {position: value} of what was fed, for Python to convert
    kNotATensor,    // detail: (position, value): an array of objects
    kShape,         // detail: (position, value): an array whose shape the input does not take
    kGraphInput,    // detail: (position, value): an array a GE graph it feeds does not take
    kFlowInfo,      // detail: the flow_info, which is not a FlowInfo
    kTimeout,       // a timeout that is not an int >= -1
    kIndexes,       // detail: output indexes that are not distinct, or none
    kPaired,        // detail: the output indexes, whose fetch pairs them by transaction
    kClosed,        // detail: the output indexes; the region closed
  };

  // The instances of a replicated consumer's input: one channel each, picked by `dispatcher`.
  struct Spread {
    rt::InstanceDispatcher dispatcher;
    std::vector<uint32_t> channels;
  };

  // What a GE graph that a graph input feeds takes: a dtype, and a (lo, hi) range per dimension
  // (hi -1: unbounded).
  struct GraphRule {
    py::object dtype;
    std::vector<std::pair<int64_t, int64_t>> ranges;
  };

  struct Input {
    std::vector<uint32_t> fixed;
    std::vector<Spread> spread;
    py::object dtype;  // a numpy dtype, or None: any dtype but object
    bool any_shape = true;
    std::vector<npy_intp> shape;  // -1: any size
    std::vector<GraphRule> graph_rules;
  };

  // `inputs`: per graph input, (fixed channels, [(InstanceDispatcher, channels)] of replicated
  // consumers, dtype or None, shape or None, [(dtype, [(lo, hi)])] of the GE graphs it feeds).
  // `positions`: input name -> position. `eos_flag`: the flow flag of an EOS marker. `outputs`:
  // the graph outputs' channels; `pairs`: whether a fetch of several of them pairs them by
  // transaction (the driver's doorbell is `bell`). A feed puts under `submit_lock`, a fetch
  // takes under `fetch_lock` (PortLocks, which Python's own puts and takes hold too). A
  // fetch's result holds Tensors as `tensor(array)` (Tensor.of_array) makes them, here made
  // once per dtype and shape and then copied with the same description, and a
  // `flow_info_type` (FlowInfo) with the fields FlowInfo.of_fields sets;
  // `plain_result(fields, arrays)` builds the result when `tensor` raises (a dtype with no GE
  // data type). A feed's flow_info must be a `flow_info_type`.
  DriverPort(py::object region, py::object ledger, const py::list& inputs, py::dict positions, uint32_t eos_flag,
             std::vector<uint32_t> outputs, bool pairs, uint32_t bell, py::object submit_lock, py::object fetch_lock,
             py::object tensor, py::object flow_info_type, py::object plain_result, py::object succeeded)
      : region_owner_(std::move(region)), ledger_owner_(std::move(ledger)), positions_(std::move(positions)),
        eos_flag_(eos_flag), outputs_(std::move(outputs)), pairs_(pairs), bell_(bell),
        submit_lock_owner_(std::move(submit_lock)), fetch_lock_owner_(std::move(fetch_lock)),
        tensor_(std::move(tensor)), flow_info_type_(std::move(flow_info_type)),
        plain_result_(std::move(plain_result)), succeeded_(std::move(succeeded)) {
    submit_lock_ = submit_lock_owner_.cast<PortLock*>();
    fetch_lock_ = fetch_lock_owner_.cast<PortLock*>();
    user_data_bytes_ = flow_info_type_.attr("MAX_USER_DATA_SIZE").cast<size_t>();
    region_ = region_owner_.cast<PyRegion*>();
    ledger_ = ledger_owner_.cast<PyLedger*>();
    for (const py::handle& item : inputs) inputs_.push_back(InputOf(py::reinterpret_borrow<py::tuple>(item)));
    spreads_ = std::any_of(inputs_.begin(), inputs_.end(), [](const Input& input) { return !input.spread.empty(); });
    for (const Input& input : inputs_) fixed_routes_.push_back(input.fixed);
  }

  // READY, TIMEOUT or CLOSED (a wait status) once the feed was put or could not be; otherwise
  // (Refusal, detail): why it was not.
  py::object Feed(const py::handle& feed, const py::handle& flow_info, const py::handle& timeout, bool partial) {
    rt::TransactionInfo info;
    if (!flow_info.is_none()) {
      if (PyObject_IsInstance(flow_info.ptr(), flow_info_type_.ptr()) != 1) {
        return Refused(kFlowInfo, py::reinterpret_borrow<py::object>(flow_info));
      }
      ReadFlowInfo(flow_info, info);
    }
    if ((info.flow_flags & eos_flag_) && IsEmpty(feed)) return Refused(kEosMarker);
    FedValues values(inputs_.size());
    if (py::object refused = Order(feed, partial, values)) return refused;
    for (size_t k = 0; k < values.size(); ++k) {
      if (!values[k]) continue;
      if (Refusal refusal = Judge(inputs_[k], values[k].ptr())) {
        return refusal == kConvert ? Refused(kConvert, Fed(values)) : Refused(refusal, py::make_tuple(k, values[k]));
      }
    }
    for (size_t k = 0; k < values.size(); ++k) {
      if (values[k] && !MeetsGraphRules(inputs_[k], values[k].ptr())) {
        return Refused(kGraphInput, py::make_tuple(k, values[k]));
      }
    }
    int64_t timeout_ms = 0;
    if (!IntValue(timeout, timeout_ms) || timeout_ms < -1) return Refused(kTimeout);
    if (info.transaction_id == 0) info.transaction_id = next_transaction_id_++;
    const bool traced = trace_ && trace_->Sampled(info.transaction_id);
    std::optional<rt::ByteMeter> meter;
    if (traced) meter.emplace();
    const int64_t begin_ns = traced ? trace_->Now() : 0;
    const int status = Put(values, info, timeout_ms);
    if (traced && status == StatusCode(rt::WaitStatus::kReady)) {
      trace_->Append({rt::kFeedSlice, 0, info.transaction_id, begin_ns, trace_->Now(), 0, meter->bytes_out()},
                     feed_lane_);
    }
    return py::int_(status);
  }

  // Appends a slice of each feed it puts and each fetch it takes to `log` (a traced model).
  void Trace(std::shared_ptr<rt::TraceLog> log) {
    trace_ = std::move(log);
    feed_lane_ = trace_->NewLane();  // feeds and fetches each hold their own lock: a lane each
    fetch_lane_ = trace_->NewLane();
  }

  // {position: value} of what `feed` gives, or (Refusal, detail) as Feed says it: the feed's
  // ordering rules, for the feeds Python puts itself.
  py::object Ordered(const py::handle& feed, bool partial) const {
    FedValues values(inputs_.size());
    if (py::object refused = Order(feed, partial, values)) return refused;
    return Fed(values);
  }

  // The next result of graph outputs `indexes` (None: all of them), waiting up to `timeout` ms:
  // (tensors, flow_info, succeeded) for a set of plain tensors; the set's Messages (a list) for
  // any other set, for Python to finish; [] on timeout. Otherwise (Refusal, detail): kTimeout;
  // kIndexRange (detail: the index) or kIndexes (detail: the indexes) for outputs that are not
  // distinct outputs of the model; kPaired (detail: the indexes) for a fetch whose outputs are
  // paired by transaction (Python's OutputPairing); kClosed (detail: the indexes) once the region
  // closed, for Python's fetch to return what the outputs and the ledger still hold.
  // With `values` (fetch() rather than fetch_data()), an array a UDF returned as such
  // (rt::kFlagArrayValue) is given as the array itself, not as a Tensor.
  py::object Fetch(const py::handle& indexes, const py::handle& timeout, bool values) {
    int64_t timeout_ms = 0;
    if (!IntValue(timeout, timeout_ms) || timeout_ms < -1) return Refused(kTimeout);
    std::vector<uint32_t> picked;
    if (py::object refused = Picked(indexes, picked)) return refused;
    const std::vector<uint32_t>& chosen = indexes.is_none() ? outputs_ : picked;
    if (pairs_ && chosen.size() > 1) return Refused(kPaired, IndexesOf(indexes));
    if (region_->region().closing()) return Refused(kClosed, IndexesOf(indexes));
    rt::Deadline deadline = rt::Deadline::AfterMs(timeout_ms);
    const int64_t begin_ns = trace_ ? trace_->Now() : 0;
    if (!fetch_lock_->Acquire(timeout_ms)) return py::list();
    Unlock unlock{*fetch_lock_};
    if (indexes.is_none() && !AllHoldOne(chosen)) {
      // Waits as TakeTensorSet would, but wakes before the result is due (see ArrivalForecast);
      // whatever it returns, TakeTensorSet takes the set or says why there is none.
      py::gil_scoped_release released;
      forecast_.Await(region_->region(), chosen, bell_, deadline);
    }
    rt::MessageRecord first;
    std::optional<rt::ByteMeter> meter;
    if (trace_) meter.emplace();
    ArrayValues array_values(chosen.size());
    py::list arrays(chosen.size());
    py::object set = region_->TakeTensorSet(
        chosen, bell_, deadline, ledger_,
        [&](size_t i, const rt::MessageRecord& record) {
          if (i == 0) std::memcpy(&first, &record, offsetof(rt::MessageRecord, ret_code));
          array_values.Set(i, values && (record.flags & rt::kFlagArrayValue) != 0);
        },
        arrays);
    if (set.is_none()) return Refused(kClosed, IndexesOf(indexes));
    if (trace_ && (set.is(arrays) || py::len(set) != 0) && trace_->Sampled(first.transaction_id)) {
      trace_->Append({rt::kFetchSlice, 0, first.transaction_id, begin_ns, trace_->Now(), meter->bytes_in(), 0},
                     fetch_lane_);
    }
    if (!set.is(arrays)) return set;
    py::list tensors(chosen.size());
    for (size_t i = 0; i < chosen.size(); ++i) {
      if (array_values.Get(i)) {
        PyList_SET_ITEM(tensors.ptr(), static_cast<Py_ssize_t>(i), py::object(arrays[i]).release().ptr());
        continue;
      }
      py::object tensor = TensorOf(arrays[i]);
      if (!tensor) {  // a dtype with no GE data type: plain_result says so
        PyErr_Clear();
        return plain_result_(FieldsOf(first), arrays);
      }
      PyList_SET_ITEM(tensors.ptr(), static_cast<Py_ssize_t>(i), tensor.release().ptr());
    }
    return py::make_tuple(std::move(tensors), FlowInfoOf(first), succeeded_);
  }

  uint64_t NextTransactionId() { return next_transaction_id_++; }

 private:
  // Which outputs of a fetch are given as arrays (rt::kFlagArrayValue); a bit mask while the
  // outputs are few.
  class ArrayValues {
   public:
    explicit ArrayValues(size_t count) : many_(count > 64 ? count : 0) {}
    void Set(size_t i, bool value) {
      if (!many_.empty()) {
        many_[i] = value;
      } else if (value) {
        few_ |= uint64_t{1} << i;
      }
    }
    bool Get(size_t i) const { return many_.empty() ? ((few_ >> i) & 1) != 0 : many_[i]; }

   private:
    uint64_t few_ = 0;
    std::vector<bool> many_;
  };

  // Whether every channel of `channels` holds a message: then a fetch need not wait.
  bool AllHoldOne(const std::vector<uint32_t>& channels) const {
    for (uint32_t channel : channels) {
      if (region_->region().ring(channel).Ready(1) == 0) return false;
    }
    return true;
  }

  // Releases a lock on leaving a scope.
  struct Unlock {
    PortLock& lock;
    ~Unlock() { lock.Release(); }
  };

  // The value of an int (not a bool) that fits in 64 bits, into `out`.
  static bool IntValue(const py::handle& value, int64_t& out) {
    if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr())) return false;
    int overflow = 0;
    out = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    return overflow == 0 && !(out == -1 && PyErr_Occurred());
  }

  // The value of an integer index (anything with __index__, such as a numpy integer; not a
  // bool), into `out`.
  static bool IndexValue(const py::handle& index, int64_t& out) {
    if (PyBool_Check(index.ptr())) return false;
    auto value = py::reinterpret_steal<py::object>(PyNumber_Index(index.ptr()));
    bool fits = value && IntValue(value, out);
    PyErr_Clear();
    return fits;
  }

  // Whether `feed` is empty (falsy); an object whose truth raises is not.
  static bool IsEmpty(const py::handle& feed) {
    int truth = PyObject_IsTrue(feed.ptr());
    if (truth < 0) PyErr_Clear();
    return truth == 0;
  }

  // The transaction fields of a FlowInfo (as transaction_fields reads them); a GeError naming
  // the field that holds what no record can carry.
  static void ReadFlowInfo(const py::handle& flow_info, rt::TransactionInfo& info) {
    int64_t id = 0, start = 0, end = 0, flags = 0, size = 0;
    const ResultNames& name = Result();
    ReadField(flow_info, name.transaction_id, id, 0, INT64_MAX);
    ReadField(flow_info, name.start_time, start, INT64_MIN, INT64_MAX);
    ReadField(flow_info, name.end_time, end, INT64_MIN, INT64_MAX);
    ReadField(flow_info, name.flow_flags, flags, 0, UINT32_MAX);
    ReadField(flow_info, name.public_data_size, size, 0, static_cast<int64_t>(rt::kUserDataBytes));
    py::object data = flow_info.attr(name.public_user_data);
    if (!PyByteArray_Check(data.ptr()) || PyByteArray_GET_SIZE(data.ptr()) < size) {
      throw rt::RuntimeError("flow_info's user data must be a bytearray of at least its data size");
    }
    info.transaction_id = static_cast<uint64_t>(id);
    info.start_time = start;
    info.end_time = end;
    info.flow_flags = static_cast<uint32_t>(flags);
    info.SetUserData(PyByteArray_AS_STRING(data.ptr()), static_cast<size_t>(size));
  }

  static void ReadField(const py::handle& flow_info, PyObject* name, int64_t& out, int64_t lo, int64_t hi) {
    py::object value = flow_info.attr(name);
    if (!IntValue(value, out) || out < lo || out > hi) {
      PyErr_Clear();
      throw rt::RuntimeError("flow_info." + std::string(PyUnicode_AsUTF8(name)) + " must be an int in [" +
                             std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                             py::repr(value).cast<std::string>());
    }
  }

  // The channels of graph outputs `indexes` (None: all) and the indexes as a list, or why not.
  // The channels of graph outputs `indexes` into `picked` (none for None: all of them, the port's
  // `outputs_`), or why not.
  py::object Picked(const py::handle& indexes, std::vector<uint32_t>& picked) const {
    if (indexes.is_none()) return outputs_.empty() ? Refused(kIndexes, py::list()) : py::object();
    py::list listed = py::reinterpret_steal<py::list>(PySequence_List(indexes.ptr()));
    if (!listed) throw py::error_already_set();
    for (const py::handle& index : listed) {
      int64_t i = 0;
      if (!IndexValue(index, i) || i < 0 || i >= static_cast<int64_t>(outputs_.size())) {
        return Refused(kIndexRange, py::reinterpret_borrow<py::object>(index));
      }
      picked.push_back(outputs_[i]);
    }
    std::vector<uint32_t> distinct = picked;
    std::sort(distinct.begin(), distinct.end());
    if (picked.empty() || std::adjacent_find(distinct.begin(), distinct.end()) != distinct.end()) {
      return Refused(kIndexes, listed);
    }
    return py::object();
  }

  // The output indexes a fetch named, as a list (None: all of them), for a refusal's detail.
  py::list IndexesOf(const py::handle& indexes) const {
    if (!indexes.is_none()) return py::reinterpret_steal<py::list>(PySequence_List(indexes.ptr()));
    py::list all;
    for (size_t i = 0; i < outputs_.size(); ++i) all.append(py::int_(i));
    return all;
  }

  // A new instance of `type` with `fields` set (in this order: its __dict__ keeps it).
  static py::object NewInstance(const py::object& type, std::initializer_list<std::pair<PyObject*, py::object>> fields) {
    static PyObject* no_arguments = PyTuple_New(0);
    PyObject* raw = PyBaseObject_Type.tp_new(reinterpret_cast<PyTypeObject*>(type.ptr()), no_arguments, nullptr);
    if (raw == nullptr) throw py::error_already_set();
    py::object instance = py::reinterpret_steal<py::object>(raw);
    for (const auto& [name, value] : fields) {
      if (PyObject_GenericSetAttr(raw, name, value.ptr()) != 0) throw py::error_already_set();
    }
    return instance;
  }

  // The attribute names of the FlowInfos a feed reads and of the instances a fetch makes,
  // interned once.
  struct ResultNames {
    PyObject* public_user_data = PyUnicode_InternFromString("user_data");
    PyObject* public_data_size = PyUnicode_InternFromString("data_size");
    PyObject* start_time = PyUnicode_InternFromString("start_time");
    PyObject* end_time = PyUnicode_InternFromString("end_time");
    PyObject* flow_flags = PyUnicode_InternFromString("flow_flags");
    PyObject* transaction_id = PyUnicode_InternFromString("transaction_id");
    PyObject* user_data = PyUnicode_InternFromString("_user_data");
    PyObject* data_size = PyUnicode_InternFromString("_data_size");
    PyObject* array = PyUnicode_InternFromString("_array");
    PyObject* desc = PyUnicode_InternFromString("_desc");
  };

  static const ResultNames& Result() {
    static auto* names = new ResultNames();
    return *names;
  }

  // What FlowInfo.of_fields makes of a record's transaction, made natively: through the public
  // constructor a fetch took 0.6 us more a message (about a tenth of a 3-stage pipeline's
  // throughput, measured), so the port sets the instance's fields itself.
  py::object FlowInfoOf(const rt::MessageRecord& record) const {
    auto user_data = py::reinterpret_steal<py::object>(
        PyByteArray_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(user_data_bytes_)));
    if (!user_data) throw py::error_already_set();
    char* bytes = PyByteArray_AS_STRING(user_data.ptr());
    size_t size = std::min<size_t>(record.user_data_size, user_data_bytes_);
    std::memcpy(bytes, record.user_data, size);
    std::memset(bytes + size, 0, user_data_bytes_ - size);
    const ResultNames& name = Result();
    return NewInstance(flow_info_type_, {{name.start_time, py::int_(record.start_time)},
                                         {name.end_time, py::int_(record.end_time)},
                                         {name.flow_flags, py::int_(record.flow_flags)},
                                         {name.transaction_id, py::int_(record.transaction_id)},
                                         {name.user_data, std::move(user_data)},
                                         {name.data_size, py::int_(size)}});
  }

  // Tensor.of_array(array), its description found once per dtype and shape and then shared
  // natively (for the same reason); a null object with the Python error set when `tensor_` raises.
  py::object TensorOf(const py::handle& array) {
    auto* raw = reinterpret_cast<PyArrayObject*>(array.ptr());
    if (PyArray_NDIM(raw) > rt::kMaxDims) {  // no record carries such an array flat: no key for it
      return py::reinterpret_steal<py::object>(PyObject_CallOneArg(tensor_.ptr(), array.ptr()));
    }
    ShapeKey key(raw);
    if (last_description_ == nullptr || !(key == last_key_)) {
      auto found = descriptions_.find(key);
      if (found == descriptions_.end()) {
        PyObject* made = PyObject_CallOneArg(tensor_.ptr(), array.ptr());
        if (made == nullptr) return py::object();
        py::object tensor = py::reinterpret_steal<py::object>(made);
        if (descriptions_.size() >= kMaxDescriptions) {
          descriptions_.clear();
          last_description_ = nullptr;
        }
        descriptions_.emplace(key, std::make_pair(py::type::of(tensor), tensor.attr("_desc")));
        return tensor;
      }
      last_key_ = key;
      last_description_ = &found->second;
    }
    const auto& [type, description] = *last_description_;
    return NewInstance(type, {{Result().array, py::reinterpret_borrow<py::object>(array)}, {Result().desc, description}});
  }

  static constexpr size_t kMaxDescriptions = 256;

  // An array's dtype and shape, the key of its Tensor description.
  struct ShapeKey {
    int type = -1;
    int ndim = 0;
    std::array<npy_intp, rt::kMaxDims> dims{};

    ShapeKey() = default;
    explicit ShapeKey(PyArrayObject* array) : type(PyArray_TYPE(array)), ndim(PyArray_NDIM(array)) {
      std::copy(PyArray_DIMS(array), PyArray_DIMS(array) + ndim, dims.begin());
    }
    bool operator<(const ShapeKey& other) const {
      return std::tie(type, ndim, dims) < std::tie(other.type, other.ndim, other.dims);
    }
    bool operator==(const ShapeKey& other) const {
      return type == other.type && ndim == other.ndim && dims == other.dims;
    }
  };

  static Input InputOf(const py::tuple& item) {
    auto [fixed, spread, dtype, shape, rules] =
        item.cast<std::tuple<std::vector<uint32_t>, py::list, py::object, py::object, py::list>>();
    Input input;
    input.fixed = std::move(fixed);
    for (const py::handle& group : spread) {
      auto [dispatcher, channels] = group.cast<std::tuple<py::object, std::vector<uint32_t>>>();
      input.spread.push_back({dispatcher.cast<rt::InstanceDispatcher>(), std::move(channels)});
    }
    input.dtype = std::move(dtype);
    input.any_shape = shape.is_none();
    if (!input.any_shape) input.shape = shape.cast<std::vector<npy_intp>>();
    for (const py::handle& rule : rules) {
      auto [rule_dtype, ranges] = rule.cast<std::tuple<py::object, std::vector<std::pair<int64_t, int64_t>>>>();
      input.graph_rules.push_back({std::move(rule_dtype), std::move(ranges)});
    }
    return input;
  }

  static py::object Refused(Refusal refusal, py::object detail = py::none()) {
    return py::make_tuple(static_cast<int>(refusal), std::move(detail));
  }

  // {position: value} of what was fed.
  static py::dict Fed(const FedValues& values) {
    py::dict fed;
    for (size_t k = 0; k < values.size(); ++k) {
      if (values[k]) fed[py::int_(k)] = values[k];
    }
    return fed;
  }

  // `feed`'s values in feed order, or why not: a list or tuple of one per input, or a dict
  // naming each input once (by position, name, or an object whose `name` is one); a partial
  // feed may leave inputs out (their values stay null).
  py::object Order(const py::handle& feed, bool partial, FedValues& values) const {
    PyObject* raw = feed.ptr();
    auto count = static_cast<Py_ssize_t>(values.size());
    bool sequence = PyList_Check(raw) || PyTuple_Check(raw);
    if (!sequence && !PyDict_Check(raw)) return Refused(kNotAFeed);
    if (PyObject_Length(raw) == 0) return Refused(kEmpty);
    if (sequence) {
      if (PySequence_Fast_GET_SIZE(raw) != count) return Refused(kCount, py::int_(PySequence_Fast_GET_SIZE(raw)));
      for (Py_ssize_t k = 0; k < count; ++k) values[k] = py::reinterpret_borrow<py::object>(PySequence_Fast_GET_ITEM(raw, k));
      return py::object();
    }
    Py_ssize_t at = 0;
    PyObject* key = nullptr;
    PyObject* value = nullptr;
    while (PyDict_Next(raw, &at, &key, &value)) {
      Py_ssize_t position = PositionOf(key);
      if (position == kOutOfRange) return Refused(kIndexRange, py::reinterpret_borrow<py::object>(key));
      if (position == kNoInput) return Refused(kUnknownKey, py::reinterpret_borrow<py::object>(key));
      if (values[position]) return Refused(kTwice, py::int_(position));
      values[position] = py::reinterpret_borrow<py::object>(value);
    }
    if (partial) return py::object();
    for (Py_ssize_t k = 0; k < count; ++k) {
      if (!values[k]) return Refused(kMissing, py::int_(k));
    }
    return py::object();
  }

  static constexpr Py_ssize_t kOutOfRange = -1, kNoInput = -2;

  // The position a dict key names: an int (not a bool) is one, a str or an object's `name`
  // names one.
  Py_ssize_t PositionOf(PyObject* key) const {
    if (PyLong_Check(key) && !PyBool_Check(key)) {
      int overflow = 0;
      long long position = PyLong_AsLongLongAndOverflow(key, &overflow);
      bool inside = overflow == 0 && position >= 0 && position < static_cast<long long>(inputs_.size());
      return inside ? static_cast<Py_ssize_t>(position) : kOutOfRange;
    }
    py::object name;
    if (PyUnicode_Check(key)) {
      name = py::reinterpret_borrow<py::object>(key);
    } else {
      static PyObject* const name_attribute = PyUnicode_InternFromString("name");
      PyObject* attribute = PyObject_GetAttr(key, name_attribute);
      if (attribute == nullptr) {
        PyErr_Clear();
        return kNoInput;
      }
      name = py::reinterpret_steal<py::object>(attribute);
      if (!PyUnicode_Check(name.ptr())) return kNoInput;
    }
    PyObject* position = PyDict_GetItemWithError(positions_.ptr(), name.ptr());
    if (position == nullptr) {
      if (PyErr_Occurred()) throw py::error_already_set();
      return kNoInput;
    }
    return PyLong_AsSsize_t(position);
  }

  // 0 when `value` is a numpy array the input takes as it is; kConvert when it must be
  // converted to the input's dtype first; kNotATensor or kShape when no conversion helps.
  static Refusal Judge(const Input& input, PyObject* value) {
    if (!PyArray_Check(value)) return kConvert;
    auto* array = reinterpret_cast<PyArrayObject*>(value);
    PyArray_Descr* descr = PyArray_DESCR(array);
    if (input.dtype.is_none()) {
      if (descr->type_num == NPY_OBJECT) return kNotATensor;
    } else if (!PyArray_EquivTypes(descr, reinterpret_cast<PyArray_Descr*>(input.dtype.ptr()))) {
      return kConvert;
    }
    if (input.any_shape) return Refusal{};
    if (PyArray_NDIM(array) != static_cast<int>(input.shape.size())) return kShape;
    for (size_t d = 0; d < input.shape.size(); ++d) {
      if (input.shape[d] != -1 && input.shape[d] != PyArray_DIM(array, static_cast<int>(d))) return kShape;
    }
    return Refusal{};
  }

  static bool MeetsGraphRules(const Input& input, PyObject* value) {
    auto* array = reinterpret_cast<PyArrayObject*>(value);
    for (const GraphRule& rule : input.graph_rules) {
      if (!PyArray_EquivTypes(PyArray_DESCR(array), reinterpret_cast<PyArray_Descr*>(rule.dtype.ptr())) ||
          PyArray_NDIM(array) != static_cast<int>(rule.ranges.size())) {
        return false;
      }
      for (size_t d = 0; d < rule.ranges.size(); ++d) {
        auto [lo, hi] = rule.ranges[d];
        npy_intp size = PyArray_DIM(array, static_cast<int>(d));
        if (size < lo || (hi != -1 && size > hi)) return false;
      }
    }
    return true;
  }

  // Puts `values` (null: not fed) as one transaction, under the feed lock.
  int Put(const FedValues& values, const rt::TransactionInfo& info, int64_t timeout_ms) {
    rt::Deadline deadline = rt::Deadline::AfterMs(timeout_ms);
    if (!submit_lock_->Acquire(timeout_ms)) return StatusCode(rt::WaitStatus::kTimeout);
    Unlock unlock{*submit_lock_};
    std::array<PyObject*, 8> few;
    std::vector<PyObject*> many(values.size() > few.size() ? values.size() : 0);
    PyObject** pointers = many.empty() ? few.data() : many.data();
    for (size_t k = 0; k < values.size(); ++k) pointers[k] = values[k] ? values[k].ptr() : Py_None;
    int status;
    if (!spreads_) {
      status = region_->PutArrayList(fixed_routes_, pointers, info, deadline, ledger_);
    } else {
      std::vector<std::vector<uint32_t>> routes;
      routes.reserve(values.size());
      for (const Input& input : inputs_) routes.push_back(Route(input, info.transaction_id));
      status = region_->PutArrayList(routes, pointers, info, deadline, ledger_);
    }
    return status;
  }

  // The channels of `input` that a message of `transaction_id` goes to.
  static std::vector<uint32_t> Route(const Input& input, uint64_t transaction_id) {
    std::vector<uint32_t> channels = input.fixed;
    for (const Spread& spread : input.spread) channels.push_back(spread.channels[spread.dispatcher.Route(transaction_id, 0)]);
    return channels;
  }

  py::object region_owner_, ledger_owner_;
  PyRegion* region_ = nullptr;
  PyLedger* ledger_ = nullptr;
  std::vector<Input> inputs_;
  bool spreads_ = false;                              // whether an input feeds a replicated consumer
  std::shared_ptr<rt::TraceLog> trace_;
  uint64_t feed_lane_ = 0, fetch_lane_ = 0;
  std::vector<std::vector<uint32_t>> fixed_routes_;   // each input's fixed channels
  py::dict positions_;
  uint32_t eos_flag_;
  std::vector<uint32_t> outputs_;
  bool pairs_;
  uint32_t bell_;
  py::object submit_lock_owner_, fetch_lock_owner_;
  PortLock* submit_lock_ = nullptr;
  PortLock* fetch_lock_ = nullptr;
  py::object tensor_, flow_info_type_, plain_result_, succeeded_;
  size_t user_data_bytes_ = 0;
  std::map<ShapeKey, std::pair<py::object, py::object>> descriptions_;  // -> (Tensor, its desc)
  ShapeKey last_key_;                                                   // the last description found
  const std::pair<py::object, py::object>* last_description_ = nullptr;
  uint64_t next_transaction_id_ = 1;
  rt::ArrivalForecast forecast_;  // of the waits of Fetch, under the fetch lock
};

// -- feed and fetch as METH_FASTCALL methods ------------------------------------------------------
// The two calls of every message skip pybind11's generic dispatcher (its argument records and
// type lookups cost about 0.1 us a call): they unpack their arguments themselves.

// The arguments of a call to `function` with parameters `names` (the first `required` of them
// required, the others None unless given), positional or by keyword, into `out`; false with a
// TypeError set when they do not fit.
template <size_t N>
bool UnpackArguments(const char* function, const std::array<const char*, N>& names, size_t required,
                     PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, std::array<PyObject*, N>& out) {
  if (nargs > static_cast<Py_ssize_t>(N)) {
    PyErr_Format(PyExc_TypeError, "%s() takes at most %zu arguments (%zd given)", function, N, nargs);
    return false;
  }
  out.fill(nullptr);
  for (Py_ssize_t k = 0; k < nargs; ++k) out[static_cast<size_t>(k)] = args[k];
  Py_ssize_t keywords = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t k = 0; k < keywords; ++k) {
    PyObject* keyword = PyTuple_GET_ITEM(kwnames, k);
    size_t at = 0;
    while (at < N && PyUnicode_CompareWithASCIIString(keyword, names[at]) != 0) ++at;
    if (at == N) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", function, keyword);
      return false;
    }
    if (out[at] != nullptr) {
      PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", function, names[at]);
      return false;
    }
    out[at] = args[nargs + k];
  }
  for (size_t at = 0; at < N; ++at) {
    if (out[at] != nullptr) continue;
    if (at < required) {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", function, names[at]);
      return false;
    }
    out[at] = Py_None;
  }
  return true;
}

// A bool argument as pybind11 takes one (True, False, None, or what numbers say of their truth);
// -1 with a TypeError set for anything else.
int BoolArgument(const char* function, const char* name, PyObject* value) {
  if (value == Py_True) return 1;
  if (value == Py_False || value == Py_None) return 0;
  if (Py_TYPE(value)->tp_as_number != nullptr && Py_TYPE(value)->tp_as_number->nb_bool != nullptr) {
    int truth = Py_TYPE(value)->tp_as_number->nb_bool(value);
    if (truth >= 0) return truth;
    PyErr_Clear();
  }
  PyErr_Format(PyExc_TypeError, "%s(): %s must be a bool, not %.100s", function, name, Py_TYPE(value)->tp_name);
  return -1;
}

// The DriverPort behind `self` (the method descriptor checked its type); null with a TypeError
// set when its __init__ has not run.
DriverPort* PortOf(PyObject* self) {
  auto holder = reinterpret_cast<py::detail::instance*>(self)->get_value_and_holder();
  if (!holder.holder_constructed()) {
    PyErr_SetString(PyExc_TypeError, "DriverPort is not initialized");
    return nullptr;
  }
  return holder.value_ptr<DriverPort>();
}

// `call()`'s object as a new reference; null with the Python error set for what it raised.
template <typename Call>
PyObject* Guarded(Call&& call) {
  try {
    return call().release().ptr();
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

PyObject* FeedMethod(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static constexpr std::array<const char*, 4> kNames{"feed", "flow_info", "timeout", "partial_inputs"};
  std::array<PyObject*, 4> given;
  DriverPort* port = PortOf(self);
  if (port == nullptr || !UnpackArguments("feed", kNames, 4, args, nargs, kwnames, given)) return nullptr;
  int partial = BoolArgument("feed", "partial_inputs", given[3]);
  if (partial < 0) return nullptr;
  return Guarded([&] { return port->Feed(given[0], given[1], given[2], partial != 0); });
}

PyObject* FetchMethod(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static constexpr std::array<const char*, 3> kNames{"indexes", "timeout", "values"};
  std::array<PyObject*, 3> given;
  DriverPort* port = PortOf(self);
  if (port == nullptr || !UnpackArguments("fetch", kNames, 2, args, nargs, kwnames, given)) return nullptr;
  int values = BoolArgument("fetch", "values", given[2]);
  if (values < 0) return nullptr;
  return Guarded([&] { return port->Fetch(given[0], given[1], values != 0); });
}

PyMethodDef feed_method{"feed", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&FeedMethod)),
                        METH_FASTCALL | METH_KEYWORDS,
                        "feed($self, feed, flow_info, timeout, partial_inputs)\n--\n\n"
                        "Judges and puts one feed: a wait status (int), or (refusal, detail)."};
PyMethodDef fetch_method{"fetch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&FetchMethod)),
                         METH_FASTCALL | METH_KEYWORDS,
                         "fetch($self, indexes, timeout, values=False)\n--\n\n"
                         "The next result of graph outputs `indexes` (None: all), or (refusal, detail)."};

// Makes `method` a method of the class `type`.
void AddFastMethod(py::class_<DriverPort>& type, PyMethodDef& method) {
  PyObject* descriptor = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(type.ptr()), &method);
  if (descriptor == nullptr) throw py::error_already_set();
  type.attr(method.ml_name) = py::reinterpret_steal<py::object>(descriptor);
}

}  // namespace

void BindDriverPort(py::module_& m) {
  py::class_<PortLock>(m, "PortLock", "A model's feed or fetch lock, shared by Python and its DriverPort; as threading.Lock.")
      .def(py::init<>())
      .def("acquire", &AcquireFromPython, py::arg("blocking") = true, py::arg("timeout") = -1.0)
      .def("release", &ReleaseFromPython)
      .def("locked", &PortLock::locked)
      .def("__enter__", [](PortLock& lock) { return lock.Acquire(-1); })
      .def("__exit__", [](PortLock& lock, const py::args&) { ReleaseFromPython(lock); });
  py::class_<DriverPort> port(m, "DriverPort", "A model's feed and its fetch of plain tensors, one native call each.");
  port.def(py::init<py::object, py::object, const py::list&, py::dict, uint32_t, std::vector<uint32_t>, bool,
                    uint32_t, py::object, py::object, py::object, py::object, py::object, py::object>(),
           py::arg("region"), py::arg("ledger"), py::arg("inputs"), py::arg("positions"), py::arg("eos_flag"),
           py::arg("outputs"), py::arg("pairs"), py::arg("bell"), py::arg("submit_lock"), py::arg("fetch_lock"), py::arg("tensor"),
           py::arg("flow_info_type"), py::arg("plain_result"), py::arg("succeeded"))
      .def("ordered", &DriverPort::Ordered, py::arg("feed"), py::arg("partial_inputs"))
      .def("next_transaction_id", &DriverPort::NextTransactionId)
      .def("trace", &DriverPort::Trace, py::arg("log"),
           "Appends a slice of each feed it puts and each fetch it takes to `log` (a TraceLog).");
  AddFastMethod(port, feed_method);
  AddFastMethod(port, fetch_method);
  for (auto [name, refusal] : {std::pair{"NOT_A_FEED", DriverPort::kNotAFeed}, {"EMPTY", DriverPort::kEmpty},
                               {"EOS_MARKER", DriverPort::kEosMarker}, {"COUNT", DriverPort::kCount},
                               {"UNKNOWN_KEY", DriverPort::kUnknownKey}, {"INDEX_RANGE", DriverPort::kIndexRange},
                               {"TWICE", DriverPort::kTwice}, {"MISSING", DriverPort::kMissing},
                               {"CONVERT", DriverPort::kConvert}, {"NOT_A_TENSOR", DriverPort::kNotATensor},
                               {"SHAPE", DriverPort::kShape}, {"GRAPH_INPUT", DriverPort::kGraphInput},
                               {"FLOW_INFO", DriverPort::kFlowInfo}, {"TIMEOUT_VALUE", DriverPort::kTimeout},
                               {"INDEXES", DriverPort::kIndexes}, {"PAIRED", DriverPort::kPaired},
                               {"CLOSED", DriverPort::kClosed}}) {
    port.attr(name) = static_cast<int>(refusal);
  }
}

}  // namespace dfir::bindings
