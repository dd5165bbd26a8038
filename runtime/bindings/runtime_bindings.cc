// Bindings of the runtime core: regions and their channels (runtime/native/region.h,
// channel_io.h), the transaction ledger (ledger.h) and numpy's arena allocator
// (arena_allocator.h). Use them through dfir.runtime.channels, not directly.
//
// What this file does beyond converting arguments touches Python objects by nature, and the
// native core does the rest: the Python side of the message codec reads a
// dfir.core.messages.Message (its slots directly, no attribute lookups) into the header and
// body that runtime/native/message_codec.h writes into a record — pickling an object payload,
// viewing a tensor payload's numpy array in place — and makes a record back into a Message or
// into a numpy array over its arena block; the numpy allocator hooks (NEP 49) call the native
// ArenaAllocator.
#define PY_ARRAY_UNIQUE_SYMBOL dfir_runtime_ARRAY_API
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <numpy/arrayobject.h>

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "arena_allocator.h"
#include "arrival_forecast.h"
#include "blocking.h"
#include "channel_io.h"
#include "dispatch.h"
#include "ledger.h"
#include "message_codec.h"
#include "region.h"
#include "slots.h"
#include "udf_caller.h"
#include "udf_records.h"
#include "watch.h"

namespace py = pybind11;
namespace rt = dfir::rt;

namespace {

using dfir::bindings::Get;
using dfir::bindings::NewRecordObject;
using dfir::bindings::RegisterSlots;

constexpr const char* kBlockCapsule = "dfir.runtime.arena_block";
// How many outputs of a lean batch go out between two rings of their consumers' doorbells
// (PyRegion::FireLean): a ring per output costs a wake-up per message when the consumer waits;
// one per batch leaves it idle while the batch runs.
constexpr uint64_t kLeanSetsPerRing = 8;

// -- the Python types of the codec ------------------------------------------------------------

// The Python types a record becomes, set once by dfir.runtime.channels (configure_codec).
struct PythonTypes {
  py::object message_type;  // dfir.core.messages.Message
  py::object meta_type;     // dfir.core.messages.TransactionMeta
  std::vector<py::object> kinds;  // the members of dfir.core.messages.Kind, in order
  py::object object_kind;         // Kind.OBJECT: its payload is pickled
  rt::MessageKind tensor_kind = 0;  // the position of Kind.TENSOR (the member named TENSOR)
  std::vector<std::pair<py::object, py::object>> other_fields;  // Message fields the codec leaves at their default
  py::object dumps;               // bytes of a Python object (cloudpickle)
  py::object loads;
};

PythonTypes& Types() {
  static auto* types = new PythonTypes();  // never destroyed: outlives interpreter teardown order
  return *types;
}

// The attribute names the codec reads and writes, interned once.
struct Names {
  py::object meta = Intern("meta"), kind = Intern("kind"), payload = Intern("payload"),
             ret_code = Intern("ret_code"), error = Intern("error"), transaction_id = Intern("transaction_id"),
             start_time = Intern("start_time"), end_time = Intern("end_time"), flow_flags = Intern("flow_flags"),
             user_data = Intern("user_data"), route_label = Intern("route_label"), data_label = Intern("data_label");

  static py::object Intern(const char* name) {
    return py::reinterpret_steal<py::object>(PyUnicode_InternFromString(name));
  }
};

const Names& Name() {
  static auto* names = new Names();
  return *names;
}

// A new dfir.core.messages.Message with these fields (the codec's other fields at their defaults),
// its slots set directly.
py::object NewMessage(py::object meta, py::object kind, py::object payload, int32_t ret_code, py::object error,
                      uint32_t route_label, uint32_t data_label) {
  const Names& name = Name();
  py::object message = NewRecordObject(Types().message_type, {{&name.meta, std::move(meta)},
                                                              {&name.kind, std::move(kind)},
                                                              {&name.payload, std::move(payload)},
                                                              {&name.ret_code, py::int_(ret_code)},
                                                              {&name.error, std::move(error)},
                                                              {&name.route_label, py::int_(route_label)},
                                                              {&name.data_label, py::int_(data_label)}});
  for (const auto& [field, value] : Types().other_fields) {
    if (PyObject_GenericSetAttr(message.ptr(), field.ptr(), value.ptr()) != 0) throw py::error_already_set();
  }
  return message;
}

void CheckConfigured() {
  if (!Types().message_type) throw rt::RuntimeError("the message codec is not configured (call configure_codec)");
}

// -- what the native core needs of Python -----------------------------------------------------

// Releases the GIL while the native core blocks (one call's scope).
class GilRelease final : public rt::BlockingScope {
 public:
  void Enter() override { released_.emplace(); }
  void Leave() override { released_.reset(); }

 private:
  std::optional<py::gil_scoped_release> released_;
};

// Local channels carry Python objects; a channel holds one reference to each.
class PythonReferences final : public rt::LocalObjects {
 public:
  void Retain(void* object) override { Py_INCREF(static_cast<PyObject*>(object)); }
  void Release(void* object) override { Py_XDECREF(static_cast<PyObject*>(object)); }
};

PythonReferences& References() {
  static PythonReferences references;
  return references;
}

int StatusCode(rt::WaitStatus status) { return static_cast<int>(status); }

// -- arena blocks owned by Python objects ----------------------------------------------------

void ReleaseBlockReference(PyObject* capsule) {
  auto* reference = static_cast<rt::BlockReference*>(PyCapsule_GetPointer(capsule, kBlockCapsule));
  if (reference == nullptr) {
    PyErr_Clear();
    return;
  }
  delete reference;
}

// A capsule holding one reference to `block` (a received array's base).
py::object OwnBlock(const std::shared_ptr<rt::Region>& region, uint64_t block) {
  auto* reference = new rt::BlockReference(region, block);
  PyObject* capsule = PyCapsule_New(reference, kBlockCapsule, &ReleaseBlockReference);
  if (capsule == nullptr) {
    delete reference;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}

// The arena block of `region` that holds all of `array`'s bytes, or 0: the array (or the array
// it views) was allocated in the arena by the numpy allocator, or received from a channel.
uint64_t ArenaBlockOf(rt::Region& region, PyArrayObject* array) {
  const void* data = PyArray_DATA(array);
  if (!region.arena().Contains(data)) return 0;
  uint64_t block = 0;
  PyObject* current = reinterpret_cast<PyObject*>(array);
  while (block == 0) {
    if (PyArray_Check(current)) {
      auto* owner = reinterpret_cast<PyArrayObject*>(current);
      if (PyArray_CHKFLAGS(owner, NPY_ARRAY_OWNDATA)) {
        block = region.arena().BlockAt(PyArray_DATA(owner));
        if (block == 0) return 0;
      } else if (PyArray_BASE(owner) != nullptr) {
        current = PyArray_BASE(owner);
      } else {
        return 0;
      }
    } else if (PyCapsule_IsValid(current, kBlockCapsule)) {
      auto* reference = static_cast<rt::BlockReference*>(PyCapsule_GetPointer(current, kBlockCapsule));
      if (&reference->region() != &region) return 0;
      block = reference->block();
    } else {
      return 0;
    }
  }
  return region.arena().Covers(block, data, static_cast<uint64_t>(PyArray_NBYTES(array))) ? block : 0;
}

// -- encoding: a Message into a record --------------------------------------------------------

void SetUserData(const py::handle& user_data, rt::TransactionInfo& info) {
  char* bytes = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(user_data.ptr(), &bytes, &size) != 0) throw py::error_already_set();
  info.SetUserData(bytes, static_cast<size_t>(size));
}

// The fields of a TransactionMeta.
rt::TransactionInfo TransactionOf(const py::handle& meta) {
  const Names& name = Name();
  rt::TransactionInfo info;
  info.transaction_id = Get(meta, name.transaction_id).cast<uint64_t>();
  info.start_time = Get(meta, name.start_time).cast<int64_t>();
  info.end_time = Get(meta, name.end_time).cast<int64_t>();
  info.flow_flags = Get(meta, name.flow_flags).cast<uint32_t>();
  SetUserData(Get(meta, name.user_data), info);
  return info;
}

// The fields of a (transaction_id, start_time, end_time, flow_flags, user_data) tuple.
rt::TransactionInfo TransactionOfFields(const py::tuple& fields) {
  if (fields.size() != 5) {
    throw rt::RuntimeError("transaction fields must be (transaction_id, start_time, end_time, flow_flags, "
                           "user_data), got " + std::to_string(fields.size()) + " items");
  }
  rt::TransactionInfo info;
  info.transaction_id = fields[0].cast<uint64_t>();
  info.start_time = fields[1].cast<int64_t>();
  info.end_time = fields[2].cast<int64_t>();
  info.flow_flags = fields[3].cast<uint32_t>();
  SetUserData(fields[4], info);
  return info;
}

rt::MessageKind KindIndex(const py::object& kind) {
  const std::vector<py::object>& kinds = Types().kinds;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kind.is(kinds[i])) return static_cast<rt::MessageKind>(i);
  }
  throw rt::RuntimeError("a message's kind must be a dfir.core.messages.Kind, got " +
                         py::repr(kind).cast<std::string>());
}

bool HasFlatLayout(PyArrayObject* array) {
  int type = PyArray_TYPE(array);
  bool numeric = PyTypeNum_ISBOOL(type) || PyTypeNum_ISNUMBER(type);
  return numeric && PyArray_ISNOTSWAPPED(array) && PyArray_NDIM(array) <= rt::kMaxDims;
}

class Encoder {
 public:
  Encoder(std::shared_ptr<rt::Region> region, const rt::Deadline& deadline, rt::BlockingScope& blocking)
      : region_(std::move(region)), writer_(*region_, deadline, blocking) {}

  // Fills `record` from `message`; false when no arena room came before the deadline or the
  // region closed. A body that is not inline holds one block reference.
  bool Encode(const py::handle& message, rt::MessageRecord& record) {
    const Names& name = Name();
    rt::TransactionInfo info = TransactionOf(Get(message, name.meta));
    int32_t ret_code = Get(message, name.ret_code).cast<int32_t>();
    uint32_t route_label = Get(message, name.route_label).cast<uint32_t>();
    uint32_t data_label = Get(message, name.data_label).cast<uint32_t>();
    py::object kind = Get(message, name.kind);
    rt::WriteHeader(info, KindIndex(kind), ret_code, route_label, data_label, record);
    py::object payload = Get(message, name.payload);
    if (!payload.is_none()) {
      if (kind.is(Types().object_kind)) return EncodeBytes(Types().dumps(payload), rt::BodyEncoding::kPickle, record);
      return EncodeTensor(payload, record);
    }
    std::string error = Get(message, name.error).cast<std::string>();
    if (error.empty()) return true;
    return EncodeBytes(py::bytes(error), rt::BodyEncoding::kText, record);
  }

  // Fills `record` as Encode fills it for a tensor message whose header `header` holds (see
  // rt::WriteHeader) and whose payload is `array`, a numpy array.
  bool EncodeArray(const rt::MessageRecord& header, const py::object& array, rt::MessageRecord& record) {
    std::memcpy(&record, &header, offsetof(rt::MessageRecord, inline_bytes));
    return EncodeTensor(array, record);
  }

 private:
  bool EncodeTensor(const py::object& payload, rt::MessageRecord& record) {
    if (!PyArray_Check(payload.ptr())) {
      throw rt::RuntimeError("a tensor message must hold a numpy array, got " +
                             py::str(py::type::of(payload).attr("__name__")).cast<std::string>());
    }
    auto* given = reinterpret_cast<PyArrayObject*>(payload.ptr());
    if (!HasFlatLayout(given)) return EncodeBytes(Types().dumps(payload), rt::BodyEncoding::kPickledArray, record);
    py::object contiguous =
        py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(PyArray_GETCONTIGUOUS(given)));
    if (!contiguous) throw py::error_already_set();
    auto* array = reinterpret_cast<PyArrayObject*>(contiguous.ptr());
    rt::ArrayLayout layout;
    layout.dtype_num = PyArray_TYPE(array);
    layout.ndim = PyArray_NDIM(array);
    for (int d = 0; d < layout.ndim; ++d) layout.shape[d] = PyArray_DIM(array, d);
    return writer_.WriteArray(layout, PyArray_DATA(array), static_cast<uint64_t>(PyArray_NBYTES(array)),
                              ArenaBlockOf(*region_, array), record);
  }

  bool EncodeBytes(const py::bytes& body, rt::BodyEncoding encoding, rt::MessageRecord& record) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(body.ptr(), &data, &size) != 0) throw py::error_already_set();
    return writer_.Write(encoding, data, static_cast<uint64_t>(size), 0, record);
  }

  std::shared_ptr<rt::Region> region_;
  rt::BodyWriter writer_;
};

// -- decoding: a record into a Message ---------------------------------------------------------

py::object DecodeMeta(const rt::TransactionInfo& info) {
  const Names& name = Name();
  return NewRecordObject(
      Types().meta_type,
      {{&name.transaction_id, py::int_(info.transaction_id)},
       {&name.start_time, py::int_(info.start_time)},
       {&name.end_time, py::int_(info.end_time)},
       {&name.flow_flags, py::int_(info.flow_flags)},
       {&name.user_data, py::bytes(reinterpret_cast<const char*>(info.user_data.data()), info.user_data_size)}});
}

// A record's transaction as (transaction_id, start_time, end_time, flow_flags, user_data).
py::tuple FieldsOf(const rt::MessageRecord& record) {
  return py::make_tuple(record.transaction_id, record.start_time, record.end_time, record.flow_flags,
                        py::bytes(reinterpret_cast<const char*>(record.user_data), record.user_data_size));
}

class Decoder {
 public:
  explicit Decoder(std::shared_ptr<rt::Region> region) : region_(std::move(region)) {}

  // What a message that left its channel stands for: the Message of a record (taking over its
  // block reference), or the object a local channel carried (taking over its reference).
  py::object Take(const rt::Taken& message) {
    if (message.record == nullptr) return py::reinterpret_steal<py::object>(static_cast<PyObject*>(message.object));
    return Decode(*message.record);
  }

  // The Message a record stands for; takes over the record's block reference. Consecutive
  // records of one transaction (a set's inputs) share one TransactionMeta (it is immutable).
  py::object Decode(const rt::MessageRecord& record) {
    std::string error;
    py::object payload = DecodeBody(record, error);
    if (!last_meta_ || !rt::SameTransaction(last_transaction_, record)) {
      last_meta_ = DecodeMeta(rt::TransactionOf(record));
      std::memcpy(&last_transaction_, &record, offsetof(rt::MessageRecord, ret_code));
    }
    return MessageOf(record, last_meta_, std::move(payload), error);
  }

  // A record's payload (None without one), its error text into `error`; takes over the record's
  // block reference.
  py::object DecodeBody(const rt::MessageRecord& record, std::string& error) {
    switch (record.encoding) {
      case rt::BodyEncoding::kNone:
        break;
      case rt::BodyEncoding::kArray:
        return DecodeArray(record);
      case rt::BodyEncoding::kPickledArray:
      case rt::BodyEncoding::kPickle: {
        py::object payload = Types().loads(BodyView(record));
        rt::ReleaseBody(*region_, record);
        return payload;
      }
      case rt::BodyEncoding::kText:
        error.assign(reinterpret_cast<const char*>(rt::BodyOf(*region_, record)), record.body_size);
        rt::ReleaseBody(*region_, record);
        break;
    }
    return py::none();
  }

  // The Message of `record`'s header with `meta` (a TransactionMeta), `payload` and `error`.
  static py::object MessageOf(const rt::MessageRecord& record, py::object meta, py::object payload,
                              const std::string& error) {
    py::object text = py::reinterpret_steal<py::object>(
        PyUnicode_DecodeUTF8(error.data(), static_cast<Py_ssize_t>(error.size()), "replace"));
    if (record.kind >= Types().kinds.size()) {
      throw rt::RuntimeError("a channel record has kind " + std::to_string(record.kind) + "; there are " +
                             std::to_string(Types().kinds.size()));
    }
    return NewMessage(std::move(meta), Types().kinds[record.kind], std::move(payload), record.ret_code, std::move(text),
                      record.route_label, record.data_label);
  }

  // The numpy array of an array body; takes over the record's block reference.
  py::object DecodeArray(const rt::MessageRecord& record) {
    npy_intp dims[rt::kMaxDims];
    for (int d = 0; d < record.ndim; ++d) dims[d] = static_cast<npy_intp>(record.shape[d]);
    if (record.inline_body != 0) {
      PyObject* array = PyArray_SimpleNew(record.ndim, dims, record.dtype_num);
      if (array == nullptr) throw py::error_already_set();
      std::memcpy(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array)), record.inline_bytes, record.body_size);
      return py::reinterpret_steal<py::object>(array);
    }
    py::object owner = OwnBlock(region_, record.block);  // the array's base gives the block back
    PyArray_Descr* descr = PyArray_DescrFromType(record.dtype_num);
    PyObject* array = PyArray_NewFromDescr(&PyArray_Type, descr, record.ndim, dims, nullptr,
                                           region_->base() + record.body_offset, NPY_ARRAY_CARRAY, nullptr);
    if (array == nullptr) throw py::error_already_set();
    if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), owner.release().ptr()) != 0) {
      Py_DECREF(array);
      throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(array);
  }

 private:
  py::object BodyView(const rt::MessageRecord& record) const {
    return py::memoryview::from_memory(static_cast<const void*>(rt::BodyOf(*region_, record)),
                                       static_cast<py::ssize_t>(record.body_size));
  }

  std::shared_ptr<rt::Region> region_;
  py::object last_meta_;                // the TransactionMeta of the last record decoded
  rt::MessageRecord last_transaction_;  // its transaction fields (those before ret_code)
};

// -- numpy's allocator (NEP 49) ----------------------------------------------------------------

// numpy's hooks over a native ArenaAllocator; freed with the capsule numpy holds. Requests below
// the allocator's threshold go to the handler that was current before (numpy's own, whose cache
// of small buffers makes the many small arrays of a message cheap), as does everything that does
// not lie in the arena.
struct NumpyArenaHandler {
  PyDataMem_Handler handler;
  rt::ArenaAllocator allocator;
  py::object previous_capsule;  // keeps `previous` alive
  PyDataMem_Handler* previous = nullptr;

  PyDataMemAllocator& fallback() const { return previous->allocator; }
};

void* HandlerMalloc(void* context, size_t size) {
  auto* hooks = static_cast<NumpyArenaHandler*>(context);
  if (size < hooks->allocator.threshold()) return hooks->fallback().malloc(hooks->fallback().ctx, size);
  return hooks->allocator.Allocate(size);
}

void* HandlerCalloc(void* context, size_t count, size_t element_size) {
  auto* hooks = static_cast<NumpyArenaHandler*>(context);
  if (count * element_size < hooks->allocator.threshold()) {
    return hooks->fallback().calloc(hooks->fallback().ctx, count, element_size);
  }
  return hooks->allocator.AllocateZeroed(count, element_size);
}

void* HandlerRealloc(void* context, void* data, size_t size) {
  auto* hooks = static_cast<NumpyArenaHandler*>(context);
  if (data != nullptr && hooks->allocator.InArena(data)) return hooks->allocator.Reallocate(data, size);
  return hooks->fallback().realloc(hooks->fallback().ctx, data, size);
}

void HandlerFree(void* context, void* data, size_t size) {
  auto* hooks = static_cast<NumpyArenaHandler*>(context);
  if (data != nullptr && hooks->allocator.InArena(data)) {
    hooks->allocator.Free(data);
  } else {
    hooks->fallback().free(hooks->fallback().ctx, data, size);
  }
}

void DestroyHandler(PyObject* capsule) { delete static_cast<NumpyArenaHandler*>(PyCapsule_GetContext(capsule)); }

// Makes numpy allocate from `region`'s arena in the calling thread (a context variable).
void UseArenaAllocator(const std::shared_ptr<rt::Region>& region, uint64_t threshold) {
  auto* hooks = new NumpyArenaHandler{{}, rt::ArenaAllocator(region, threshold)};
  hooks->previous_capsule = py::reinterpret_steal<py::object>(PyDataMem_GetHandler());
  hooks->previous = hooks->previous_capsule
                        ? static_cast<PyDataMem_Handler*>(PyCapsule_GetPointer(hooks->previous_capsule.ptr(), "mem_handler"))
                        : nullptr;
  if (hooks->previous == nullptr) {
    delete hooks;
    throw py::error_already_set();
  }
  std::snprintf(hooks->handler.name, sizeof hooks->handler.name, "dfir_arena");
  hooks->handler.version = 1;
  hooks->handler.allocator = {hooks, HandlerMalloc, HandlerCalloc, HandlerRealloc, HandlerFree};
  PyObject* capsule = PyCapsule_New(&hooks->handler, "mem_handler", &DestroyHandler);
  if (capsule == nullptr || PyCapsule_SetContext(capsule, hooks) != 0) {
    delete hooks;
    throw py::error_already_set();
  }
  py::object handler = py::reinterpret_steal<py::object>(capsule);
  PyObject* previous = PyDataMem_SetHandler(handler.ptr());
  if (previous == nullptr) throw py::error_already_set();
  Py_DECREF(previous);
}

// -- the ledger --------------------------------------------------------------------------------

class PyLedger {
 public:
  explicit PyLedger(size_t capacity) : ledger_(capacity) {}
  void Open(const py::handle& meta) { ledger_.Open(TransactionOf(meta)); }
  void OpenFields(const py::tuple& fields) { ledger_.Open(TransactionOfFields(fields)); }
  bool Settle(uint64_t transaction_id) { return ledger_.Settle(transaction_id); }
  py::object TakeOldest() {
    CheckConfigured();
    std::optional<rt::TransactionInfo> oldest = ledger_.TakeOldest();
    return oldest ? DecodeMeta(*oldest) : py::none();
  }
  size_t open() const { return ledger_.open(); }
  rt::TransactionLedger& native() { return ledger_; }

 private:
  rt::TransactionLedger ledger_;
};

// -- the region --------------------------------------------------------------------------------

// The units of a worker's firing pool (runtime/worker/executor.py): per unit, its input channels and the
// channels its outputs go to (its sinks), which must have room before it fires.
struct FiringGroups {
  std::vector<std::vector<uint32_t>> inputs;
  std::vector<std::vector<uint32_t>> sinks;
};

class PyRegion {
 public:
  PyRegion(uint32_t bells, const std::vector<std::tuple<std::string, uint32_t, uint32_t>>& channels, uint32_t workers,
           uint64_t arena_bytes, const std::string& name) {
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

  ~PyRegion() {
    if (epoch_ == rt::ForkEpoch()) rt::DrainLocalChannels(*region_, References());
  }

  rt::Region& region() const { return *region_; }
  const std::shared_ptr<rt::Region>& shared() const { return region_; }

  // Puts each message on its channel, all or nothing (rt::PendingPut), each distinct message
  // encoded once.
  int Put(const std::vector<std::pair<uint32_t, py::object>>& targets, int64_t timeout_ms, bool ring) {
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

  // Puts one transaction of tensors without Message objects: `arrays[k]` (a numpy array, or None:
  // not fed) goes to every channel of `routes[k]` (shared channels) as Put would put
  // Message.tensor(meta, arrays[k]); `fields` is (transaction_id, start_time, end_time, flow_flags,
  // user_data). Each array is encoded once. All or nothing, statuses as Put. With a `ledger`, the
  // transaction is opened in it once it is put (not when nothing is).
  int PutArrays(const py::sequence& routes, const py::sequence& arrays, const py::tuple& fields, int64_t timeout_ms,
                PyLedger* ledger) {
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

  // PutArrays over native routes: `arrays[k]` (borrowed; None: not fed) to `routes[k]`.
  int PutArrayList(const std::vector<std::vector<uint32_t>>& routes, PyObject* const* arrays,
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

  // One set from `channels` as (fields, arrays) when every message is a plain tensor (no return
  // code, array body) of one transaction: `fields` its (transaction_id, start_time, end_time,
  // flow_flags, user_data), `arrays` one numpy array per channel; otherwise the set's Messages (a
  // list). [] on timeout; None once the region closes. Waits as Take. With a `ledger`, the
  // transaction of the first channel's message is settled in it (shared channels only).
  py::object TakeTensors(const std::vector<uint32_t>& channels, uint32_t bell, int64_t timeout_ms, PyLedger* ledger) {
    py::object fields;
    py::list arrays(channels.size());
    py::object set = TakeTensorSet(channels, bell, rt::Deadline::AfterMs(timeout_ms), ledger,
                                   [&](const rt::MessageRecord& record) { fields = FieldsOf(record); }, arrays);
    return set.is(arrays) ? py::make_tuple(std::move(fields), std::move(arrays)) : set;
  }

  // TakeTensors' wait and take: `arrays` (one item per channel) filled and returned for a set of
  // plain tensors, after `first(record)` saw the first channel's record; else as TakeTensors.
  template <typename First>
  py::object TakeTensorSet(const std::vector<uint32_t>& channels, uint32_t bell, const rt::Deadline& deadline,
                           PyLedger* ledger, First&& first, py::list& arrays) {
    CheckConfigured();
    if (channels.empty()) throw rt::RuntimeError("take_tensors needs at least one channel");
    GilRelease gil;
    rt::SetsReady ready = rt::AwaitSets(*region_, channels, bell, 1, deadline, gil);
    if (ready.status == rt::WaitStatus::kClosed) return py::none();
    if (ready.sets == 0) return py::list();
    if (ledger != nullptr) rt::SettleNextSet(*region_, channels, ledger->native());
    Decoder decoder(region_);
    if (rt::NextSetIsPlainTensors(*region_, channels, Types().tensor_kind)) {
      rt::TakeSets(*region_, channels, 1, [&](size_t i, const rt::Taken& message) {
        if (i == 0) first(*message.record);
        arrays[i] = decoder.DecodeArray(*message.record);
      });
      return arrays;
    }
    py::list set(channels.size());
    rt::TakeSets(*region_, channels, 1, [&](size_t i, const rt::Taken& message) { set[i] = decoder.Take(message); });
    return set;
  }

  // Up to `max_sets` tuples holding one message from each channel, once all of them hold one;
  // [] on timeout; None once the region closes.
  py::object Take(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets, int64_t timeout_ms) {
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

  // Fires a lean chain (runtime/worker/executor.py: plain single-output Python functions, each handing
  // its result to the next) on up to `max_sets` input sets of `channels`, waiting as Take: calls
  // the first function of `steps` ((node, fn) pairs) on each set's payloads, each next one on the
  // result, and puts the last result on every channel of `targets` before the next set runs,
  // ringing their doorbells once at the end. The output carries the transaction of the set's
  // latest input (highest id) and its first input's data label. Array results of a set of plain
  // inputs (no return code) never become Messages here; Python does the rest:
  // `emit(meta, outcome, raised, data_label, step) -> status` takes over from `steps[step]`,
  // which returned `outcome` (anything but an array) or raised it (an Exception; other
  // exceptions, MemoryError among them, propagate), and `fire_set(messages)` runs a set holding
  // an error message. `worker`'s running node is the step's node while it runs. The number of
  // sets fired; None once the region closes.
  py::object FireLean(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets, int64_t timeout_ms,
                      const std::vector<std::pair<int32_t, py::object>>& steps, const std::vector<uint32_t>& targets,
                      uint32_t worker, const py::object& emit, const py::object& fire_set) {
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
      } else {
        input.header = *message.record;
        input.ret_code = message.record->ret_code;
        input.payload = decoder.DecodeBody(*message.record, input.error);
      }
    });
    const size_t width = channels.size();
    std::vector<PyObject*> arguments(width);
    return FireEach(ready.sets, targets, worker, steps[0].first, [&](uint64_t n) {
      return FireLeanSet(&taken[n * width], width, steps, targets, worker, emit, fire_set, arguments, gil);
    });
  }

  // Fires a plain C++ UDF func (runtime/worker/executor.py) on up to `max_sets` input sets of `channels`,
  // waiting as Take. A set of records a C++ UDF takes natively (udf::MsgOfRecord: tensors, raw
  // data, empty messages; no error) runs through `caller` as native messages over the records'
  // bodies; when the call succeeds cleanly, each output goes as a record to every channel of
  // `targets[index]` (shared channels) before the next set runs, labelled with the set's first
  // input's data label unless the UDF labelled it, and the consumers are rung as FireLean rings
  // them. Python does the rest: `fire_set(messages)` runs any other set (an error, an object, a
  // local channel's Message), `emit(output_sets, data_label)` delivers what `caller` settled for
  // a call that did not succeed cleanly. `worker`'s running node is `node` meanwhile. The number
  // of sets fired; None once the region closes.
  py::object FireUdf(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets, int64_t timeout_ms,
                     dfir::udf::UdfCaller& caller, const std::vector<std::vector<uint32_t>>& targets, uint32_t worker,
                     int32_t node, const py::object& fire_set, const py::object& emit) {
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

  // Fires a plain func of the general path (runtime/worker/executor.py: `_fire`, `_emit`) on up to
  // `max_sets` input sets of `channels`, waiting as Take: `run(messages)` (a list of Messages,
  // one per channel) returns the output sets, [[(port, Message)], ...]; each Message goes to every
  // channel of `targets[k]` for port `ports[k]`, labelled with the set's first input's data label
  // unless it has one, all of a set's outputs in one put, before the next set runs; the consumers
  // are rung as FireLean rings them. Python does the rest: `fire_set(messages)` runs a set holding
  // an error message (which it forwards), and `emit(output_sets, messages)` delivers output sets
  // that are not such a list, that must be relabelled for a local channel, or that cannot be
  // encoded (it fails them as the general path does). `worker`'s running node is `node`
  // meanwhile. The number of sets fired; None once the region closes.
  py::object FireSets(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets, int64_t timeout_ms,
                      const py::object& run, const std::vector<uint32_t>& ports,
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

 private:
  // The loop FireLean, FireUdf and FireSets share: `fire(n)` for each of `sets` taken sets (false
  // once the region closes), `worker` running `node` meanwhile, the consumers of `sinks` rung
  // every kLeanSetsPerRing sets and once at the end, however it ends. The number of sets fired;
  // None once the region closes.
  template <typename Fire>
  py::object FireEach(uint64_t sets, const std::vector<uint32_t>& sinks, uint32_t worker, int32_t node, Fire&& fire) {
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

  // One set of FireSets; false once the region closes.
  bool FireSet(const py::list& messages, const py::object& run, const std::vector<uint32_t>& ports,
               const std::vector<std::vector<uint32_t>>& targets, const py::object& fire_set, const py::object& emit,
               GilRelease& gil) {
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

  // Adds the Messages of `output_sets` to `put` as FireSets sends them; false when Python must
  // deliver them (not a list of lists of (port, Message) pairs, a relabelled message for a local
  // channel, a message that cannot be encoded).
  bool PutOutputSets(const py::object& output_sets, uint32_t label, const std::vector<uint32_t>& ports,
                     const std::vector<std::vector<uint32_t>>& targets, const rt::Deadline& deadline, GilRelease& gil,
                     rt::PendingPut& put) {
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

  // The messages FireUdf took, set by set: shared channels' records (whose body references are
  // given back here unless a set takes them over) and local channels' objects.
  class TakenSets {
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

  // Set n of FireUdf; false once the region closes.
  bool FireUdfSet(TakenSets& taken, uint64_t n, dfir::udf::UdfCaller& caller,
                  const std::vector<std::vector<uint32_t>>& targets, const py::object& fire_set, const py::object& emit,
                  GilRelease& gil) {
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

  // A message of a lean chain's input set: a local channel's Message, or a shared channel's
  // record header with its payload (error text) decoded.
  struct LeanInput {
    py::object message;  // set for a local channel, or once made (LeanMessage)
    rt::MessageRecord header{};
    py::object payload;
    std::string error;
    int32_t ret_code = 0;
  };

  static py::object LeanMessage(LeanInput& input) {
    if (!input.message) {
      input.message = Decoder::MessageOf(input.header, DecodeMeta(rt::TransactionOf(input.header)), input.payload,
                                         input.error);
    }
    return input.message;
  }

  // One set of FireLean; false once the region closes.
  bool FireLeanSet(LeanInput* set, size_t width, const std::vector<std::pair<int32_t, py::object>>& steps,
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
      arguments[j] = set[j].payload.ptr();
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
    rt::Deadline forever = rt::Deadline::Forever();
    Encoder encoder(region_, forever, gil);
    rt::PendingPut put(*region_);
    py::object local;  // the Message local channels carry, made once
    for (uint32_t channel : targets) {
      if (!rt::IsShared(*region_, channel)) {
        if (!local) local = NewMessage(MetaOf(*latest), Types().kinds[Types().tensor_kind], value, 0, py::str(""), 0, data_label);
        put.AddLocal(channel, local.ptr());
      } else if (!put.AddAgain(channel, result)) {
        rt::MessageRecord record;
        if (!encoder.EncodeArray(header, value, record)) return false;
        put.Add(channel, record, result);
      }
    }
    return put.Push(forever, gil, References(), false) == rt::WaitStatus::kReady;
  }

  // The exception being raised, taken, with its traceback (the UDF's frames name the failure).
  static py::object RaisedException() {
    PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (traceback != nullptr) PyException_SetTraceback(value, traceback);
    Py_XDECREF(type);
    Py_XDECREF(traceback);
    return py::reinterpret_steal<py::object>(value);
  }

  static uint64_t TransactionIdOf(const LeanInput& input) {
    return input.message ? Get(Get(input.message, Name().meta), Name().transaction_id).cast<uint64_t>()
                         : input.header.transaction_id;
  }

  static py::object MetaOf(const LeanInput& input) {
    return input.message ? Get(input.message, Name().meta) : DecodeMeta(rt::TransactionOf(input.header));
  }

 public:
  int WaitForChange(const std::vector<uint32_t>& channels, uint32_t bell, int64_t stalled, int64_t timeout_ms) {
    py::gil_scoped_release unlocked;
    return StatusCode(region_->WaitForChange(channels, bell, stalled, rt::Deadline::AfterMs(timeout_ms)));
  }

  // ([(unit, sets)], blocked): each unit of `groups` that can fire now, as every input holds a
  // message and every sink has room, with how many input sets (at most `limit`) it can take
  // without filling a sink; `blocked` when some unit with its inputs ready has a full sink.
  std::pair<std::vector<std::pair<uint32_t, uint64_t>>, bool> Ready(const FiringGroups& groups, uint64_t limit) const {
    std::vector<std::pair<uint32_t, uint64_t>> ready;
    bool blocked = false;
    for (size_t unit = 0; unit < groups.inputs.size(); ++unit) {
      uint64_t sets = limit;
      for (uint32_t channel : groups.inputs[unit]) sets = std::min(sets, region_->ring(channel).Ready(sets));
      if (sets == 0) continue;
      for (uint32_t channel : groups.sinks[unit]) {
        rt::Ring sink = region_->ring(channel);
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

  int WaitForClose(uint32_t bell, int64_t timeout_ms) {
    py::gil_scoped_release unlocked;
    return StatusCode(region_->WaitForClose(bell, rt::Deadline::AfterMs(timeout_ms)));
  }

  py::tuple WorkerStatus(uint32_t worker) const {
    rt::WorkerSlot& slot = region_->worker(worker);
    return py::make_tuple(slot.pid.load(), slot.running_node.load(), py::str(region_->LastWords(worker)));
  }

  py::dict ArenaStats() const {
    rt::ArenaStats stats = region_->arena().Stats();
    py::dict out;
    out["capacity"] = stats.capacity;
    out["used"] = stats.used;
    out["live_blocks"] = stats.live_blocks;
    out["live_bytes"] = stats.live_bytes;
    out["cached_bytes"] = stats.cached_bytes;
    return out;
  }

  // The region offset of an array's bytes and the arena block holding them (0: not in the arena).
  py::tuple Locate(const py::object& array) const {
    if (!PyArray_Check(array.ptr())) throw rt::RuntimeError("locate needs a numpy array");
    auto* raw = reinterpret_cast<PyArrayObject*>(array.ptr());
    uint64_t block = ArenaBlockOf(*region_, raw);
    uint64_t offset = block == 0 ? 0 : static_cast<uint64_t>(static_cast<uint8_t*>(PyArray_DATA(raw)) - region_->base());
    return py::make_tuple(block, offset);
  }

 private:
  // The status of a put whose encoding found no arena room in time.
  int NoRoomStatus() const {
    return StatusCode(region_->closing() ? rt::WaitStatus::kClosed : rt::WaitStatus::kTimeout);
  }

  std::shared_ptr<rt::Region> region_;
  uint64_t epoch_ = 0;
};

// -- the driver's port ------------------------------------------------------------------------

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
    kFlowInfo,      // not a FlowInfo
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
  // transaction (the driver's doorbell is `bell`). A fetch's result holds what the public
  // constructors make: `tensor(array)` (Tensor.of_array) per output and `flow_info(start_time,
  // end_time, flow_flags, transaction_id, user_data)` (FlowInfo.of_fields); `plain_result(fields,
  // arrays)` builds the result when `tensor` raises (a dtype with no GE data type). A feed's
  // flow_info must be a `flow_info_type`.
  DriverPort(py::object region, py::object ledger, const py::list& inputs, py::dict positions, uint32_t eos_flag,
             std::vector<uint32_t> outputs, bool pairs, uint32_t bell, const py::object& submit_lock,
             const py::object& fetch_lock, py::object tensor, py::object flow_info_type, py::object flow_info,
             py::object plain_result, py::object succeeded)
      : region_owner_(std::move(region)), ledger_owner_(std::move(ledger)), positions_(std::move(positions)),
        eos_flag_(eos_flag), outputs_(std::move(outputs)), pairs_(pairs), bell_(bell),
        submit_acquire_(submit_lock.attr("acquire")), submit_release_(submit_lock.attr("release")),
        fetch_acquire_(fetch_lock.attr("acquire")), fetch_release_(fetch_lock.attr("release")),
        tensor_(std::move(tensor)), flow_info_type_(std::move(flow_info_type)), flow_info_(std::move(flow_info)),
        plain_result_(std::move(plain_result)), succeeded_(std::move(succeeded)) {
    region_ = region_owner_.cast<PyRegion*>();
    ledger_ = ledger_owner_.cast<PyLedger*>();
    for (const py::handle& item : inputs) inputs_.push_back(InputOf(py::reinterpret_borrow<py::tuple>(item)));
  }

  // READY, TIMEOUT or CLOSED (a wait status) once the feed was put or could not be; otherwise
  // (Refusal, detail): why it was not.
  py::object Feed(const py::handle& feed, const py::handle& flow_info, const py::handle& timeout, bool partial) {
    rt::TransactionInfo info;
    if (!flow_info.is_none()) {
      if (PyObject_IsInstance(flow_info.ptr(), flow_info_type_.ptr()) != 1) return Refused(kFlowInfo);
      ReadFlowInfo(flow_info, info);
    }
    if (!PyObject_IsTrue(feed.ptr()) && (info.flow_flags & eos_flag_)) return Refused(kEosMarker);
    std::vector<py::object> values(inputs_.size());
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
    if (!ExactInt(timeout, timeout_ms) || timeout_ms < -1) return Refused(kTimeout);
    if (info.transaction_id == 0) info.transaction_id = next_transaction_id_++;
    return py::int_(Put(values, info, timeout_ms));
  }

  // {position: value} of what `feed` gives, or (Refusal, detail) as Feed says it: the feed's
  // ordering rules, for the feeds Python puts itself.
  py::object Ordered(const py::handle& feed, bool partial) const {
    std::vector<py::object> values(inputs_.size());
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
  py::object Fetch(const py::handle& indexes, const py::handle& timeout) {
    int64_t timeout_ms = 0;
    if (!ExactInt(timeout, timeout_ms) || timeout_ms < -1) return Refused(kTimeout);
    std::vector<uint32_t> chosen;
    py::list chosen_indexes;
    if (py::object refused = Chosen(indexes, chosen, chosen_indexes)) return refused;
    if (pairs_ && chosen.size() > 1) return Refused(kPaired, chosen_indexes);
    if (region_->region().closing()) return Refused(kClosed, chosen_indexes);
    rt::Deadline deadline = rt::Deadline::AfterMs(timeout_ms);
    if (!Acquire(fetch_acquire_, timeout_ms)) return py::list();
    Unlock unlock{fetch_release_};
    if (indexes.is_none()) {
      // Waits as TakeTensorSet would, but wakes before the result is due (see ArrivalForecast);
      // whatever it returns, TakeTensorSet takes the set or says why there is none.
      py::gil_scoped_release released;
      forecast_.Await(region_->region(), chosen, bell_, deadline);
    }
    rt::MessageRecord first;
    py::list arrays(chosen.size());
    py::object set = region_->TakeTensorSet(
        chosen, bell_, deadline, ledger_,
        [&](const rt::MessageRecord& record) { std::memcpy(&first, &record, offsetof(rt::MessageRecord, ret_code)); },
        arrays);
    if (set.is_none()) return Refused(kClosed, chosen_indexes);
    if (!set.is(arrays)) return set;
    py::list tensors(chosen.size());
    for (size_t i = 0; i < chosen.size(); ++i) {
      PyObject* tensor = PyObject_CallOneArg(tensor_.ptr(), arrays[i].ptr());
      if (tensor == nullptr) {  // a dtype with no GE data type: plain_result says so
        PyErr_Clear();
        return plain_result_(FieldsOf(first), arrays);
      }
      PyList_SET_ITEM(tensors.ptr(), static_cast<Py_ssize_t>(i), tensor);
    }
    py::object info = flow_info_(first.start_time, first.end_time, first.flow_flags, first.transaction_id,
                                 py::bytes(reinterpret_cast<const char*>(first.user_data), first.user_data_size));
    return py::make_tuple(std::move(tensors), std::move(info), succeeded_);
  }

  uint64_t NextTransactionId() { return next_transaction_id_++; }

 private:
  // Calls a lock's `release` on leaving a scope.
  struct Unlock {
    const py::object& release;
    ~Unlock() {
      PyObject* done = PyObject_CallNoArgs(release.ptr());
      if (done == nullptr) {
        PyErr_WriteUnraisable(release.ptr());
      }
      Py_XDECREF(done);
    }
  };

  static bool ExactInt(const py::handle& value, int64_t& out) {
    if (!PyLong_CheckExact(value.ptr()) && !(PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr()))) return false;
    int overflow = 0;
    out = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    return overflow == 0 && !(out == -1 && PyErr_Occurred());
  }

  static bool Attribute(const py::handle& object, const char* name, int64_t& out) {
    PyObject* value = PyObject_GetAttrString(object.ptr(), name);
    if (value == nullptr) {
      PyErr_Clear();
      return false;
    }
    bool fits = ExactInt(value, out);
    Py_DECREF(value);
    PyErr_Clear();
    return fits;
  }

  // The transaction fields of a FlowInfo (as transaction_fields reads them); a GeError naming
  // the field that holds what no record can carry.
  static void ReadFlowInfo(const py::handle& flow_info, rt::TransactionInfo& info) {
    int64_t id = 0, start = 0, end = 0, flags = 0, size = 0;
    ReadField(flow_info, "transaction_id", id, 0, INT64_MAX);
    ReadField(flow_info, "start_time", start, INT64_MIN, INT64_MAX);
    ReadField(flow_info, "end_time", end, INT64_MIN, INT64_MAX);
    ReadField(flow_info, "flow_flags", flags, 0, UINT32_MAX);
    ReadField(flow_info, "data_size", size, 0, static_cast<int64_t>(rt::kUserDataBytes));
    py::object data = flow_info.attr("user_data");
    if (!PyByteArray_Check(data.ptr()) || PyByteArray_GET_SIZE(data.ptr()) < size) {
      throw rt::RuntimeError("flow_info's user data must be a bytearray of at least its data size");
    }
    info.transaction_id = static_cast<uint64_t>(id);
    info.start_time = start;
    info.end_time = end;
    info.flow_flags = static_cast<uint32_t>(flags);
    info.SetUserData(PyByteArray_AS_STRING(data.ptr()), static_cast<size_t>(size));
  }

  static void ReadField(const py::handle& flow_info, const char* name, int64_t& out, int64_t lo, int64_t hi) {
    py::object value = flow_info.attr(name);
    if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr()) || !ExactInt(value, out) || out < lo || out > hi) {
      PyErr_Clear();
      throw rt::RuntimeError("flow_info." + std::string(name) + " must be an int in [" +
                             std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                             py::repr(value).cast<std::string>());
    }
  }

  // The channels of graph outputs `indexes` (None: all) and the indexes as a list, or why not.
  py::object Chosen(const py::handle& indexes, std::vector<uint32_t>& chosen, py::list& chosen_indexes) const {
    if (indexes.is_none()) {
      for (size_t i = 0; i < outputs_.size(); ++i) chosen_indexes.append(py::int_(i));
      chosen = outputs_;
    } else {
      chosen_indexes = py::reinterpret_steal<py::list>(PySequence_List(indexes.ptr()));
      if (!chosen_indexes) throw py::error_already_set();
      for (const py::handle& index : chosen_indexes) {
        int64_t i = 0;
        if (PyBool_Check(index.ptr()) || !ExactInt(index, i) || i < 0 || i >= static_cast<int64_t>(outputs_.size())) {
          PyErr_Clear();
          return Refused(kIndexRange, py::reinterpret_borrow<py::object>(index));
        }
        chosen.push_back(outputs_[i]);
      }
    }
    std::vector<uint32_t> distinct = chosen;
    std::sort(distinct.begin(), distinct.end());
    if (chosen.empty() || std::adjacent_find(distinct.begin(), distinct.end()) != distinct.end()) {
      return Refused(kIndexes, chosen_indexes);
    }
    return py::object();
  }

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
  static py::dict Fed(const std::vector<py::object>& values) {
    py::dict fed;
    for (size_t k = 0; k < values.size(); ++k) {
      if (values[k]) fed[py::int_(k)] = values[k];
    }
    return fed;
  }

  // `feed`'s values in feed order, or why not: a list or tuple of one per input, or a dict
  // naming each input once (by position, name, or an object whose `name` is one); a partial
  // feed may leave inputs out (their values stay null).
  py::object Order(const py::handle& feed, bool partial, std::vector<py::object>& values) const {
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
      PyObject* attribute = PyObject_GetAttrString(key, "name");
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
  int Put(const std::vector<py::object>& values, const rt::TransactionInfo& info, int64_t timeout_ms) {
    rt::Deadline deadline = rt::Deadline::AfterMs(timeout_ms);
    if (!Acquire(submit_acquire_, timeout_ms)) return StatusCode(rt::WaitStatus::kTimeout);
    Unlock unlock{submit_release_};
    std::vector<PyObject*> pointers;
    std::vector<std::vector<uint32_t>> routes;
    pointers.reserve(values.size());
    routes.reserve(values.size());
    for (size_t k = 0; k < values.size(); ++k) {
      pointers.push_back(values[k] ? values[k].ptr() : Py_None);
      routes.push_back(Route(inputs_[k], info.transaction_id));
    }
    return region_->PutArrayList(routes, pointers.data(), info, deadline, ledger_);
  }

  // The channels of `input` that a message of `transaction_id` goes to.
  static std::vector<uint32_t> Route(const Input& input, uint64_t transaction_id) {
    std::vector<uint32_t> channels = input.fixed;
    for (const Spread& spread : input.spread) channels.push_back(spread.channels[spread.dispatcher.Route(transaction_id, 0)]);
    return channels;
  }

  // lock.acquire() (timeout_ms -1) or lock.acquire(True, timeout_ms / 1000): whether it was taken.
  static bool Acquire(const py::object& acquire, int64_t timeout_ms) {
    py::object taken = timeout_ms < 0 ? py::reinterpret_steal<py::object>(PyObject_CallNoArgs(acquire.ptr()))
                                      : acquire(true, static_cast<double>(timeout_ms) / 1000.0);
    if (!taken) throw py::error_already_set();
    return taken.ptr() == Py_True;
  }

  py::object region_owner_, ledger_owner_;
  PyRegion* region_ = nullptr;
  PyLedger* ledger_ = nullptr;
  std::vector<Input> inputs_;
  py::dict positions_;
  uint32_t eos_flag_;
  std::vector<uint32_t> outputs_;
  bool pairs_;
  uint32_t bell_;
  py::object submit_acquire_, submit_release_, fetch_acquire_, fetch_release_;
  py::object tensor_, flow_info_type_, flow_info_, plain_result_, succeeded_;
  uint64_t next_transaction_id_ = 1;
  rt::ArrivalForecast forecast_;  // of the waits of Fetch, under the fetch lock
};

void BindDriverPort(py::module_& m) {
  py::class_<DriverPort> port(m, "DriverPort", "A model's feed and its fetch of plain tensors, one native call each.");
  port.def(py::init<py::object, py::object, const py::list&, py::dict, uint32_t, std::vector<uint32_t>, bool,
                    uint32_t, const py::object&, const py::object&, py::object, py::object, py::object, py::object,
                    py::object>(),
           py::arg("region"), py::arg("ledger"), py::arg("inputs"), py::arg("positions"), py::arg("eos_flag"),
           py::arg("outputs"), py::arg("pairs"), py::arg("bell"), py::arg("submit_lock"), py::arg("fetch_lock"), py::arg("tensor"),
           py::arg("flow_info_type"), py::arg("flow_info"), py::arg("plain_result"), py::arg("succeeded"))
      .def("feed", &DriverPort::Feed, py::arg("feed"), py::arg("flow_info"), py::arg("timeout"),
           py::arg("partial_inputs"))
      .def("ordered", &DriverPort::Ordered, py::arg("feed"), py::arg("partial_inputs"))
      .def("fetch", &DriverPort::Fetch, py::arg("indexes"), py::arg("timeout"))
      .def("next_transaction_id", &DriverPort::NextTransactionId);
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

void BindLedger(py::module_& m) {
  py::class_<PyLedger>(m, "TransactionLedger", "The fed transactions with no output seen yet.")
      .def(py::init<size_t>(), py::arg("capacity"))
      .def("open", &PyLedger::Open, py::arg("meta"))
      .def("open_fields", &PyLedger::OpenFields, py::arg("fields"),
           "As open, for a (transaction_id, start_time, end_time, flow_flags, user_data) tuple.")
      .def("settle", &PyLedger::Settle, py::arg("transaction_id"))
      .def("take_oldest", &PyLedger::TakeOldest)
      .def_property_readonly("open_count", &PyLedger::open);
}

// A zero-filled C-contiguous array of `shape` and `dtype` whose data start on an `align`-byte
// boundary (a power of two): a view into a uint8 array `align - 1` bytes longer than needed.
py::object AlignedZeros(const std::vector<npy_intp>& shape, const py::object& dtype, npy_intp align) {
  if (align <= 0 || (align & (align - 1)) != 0) throw py::value_error("align must be a power of two");
  if (shape.size() > NPY_MAXDIMS) throw py::value_error("too many dimensions");
  PyArray_Descr* descr = nullptr;
  if (PyArray_DescrConverter(dtype.ptr(), &descr) != NPY_SUCCEED) throw py::error_already_set();
  npy_intp count = 1;
  for (const npy_intp dim : shape) {
    if (dim < 0) {
      Py_DECREF(descr);
      throw py::value_error("negative dimension");
    }
    count *= dim;
  }
  npy_intp size = count * PyDataType_ELSIZE(descr) + align - 1;
  auto raw = py::reinterpret_steal<py::object>(PyArray_ZEROS(1, &size, NPY_UINT8, 0));
  if (!raw) {
    Py_DECREF(descr);
    throw py::error_already_set();
  }
  auto* bytes = static_cast<char*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(raw.ptr())));
  char* start = bytes + (-reinterpret_cast<uintptr_t>(bytes) & static_cast<uintptr_t>(align - 1));
  // PyArray_NewFromDescr steals `descr`.
  PyObject* array = PyArray_NewFromDescr(&PyArray_Type, descr, static_cast<int>(shape.size()),
                                         const_cast<npy_intp*>(shape.data()), nullptr, start, NPY_ARRAY_CARRAY, nullptr);
  if (array == nullptr) throw py::error_already_set();
  auto result = py::reinterpret_steal<py::object>(array);
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), raw.release().ptr()) != 0) {
    throw py::error_already_set();
  }
  return result;
}

// Sets the Python types records decode to (see PythonTypes).
void ConfigureCodec(py::object message_type, py::object meta_type, const py::tuple& kinds, py::object object_kind,
                    const py::dict& other_fields, py::object dumps, py::object loads) {
  PythonTypes& types = Types();
  types.message_type = std::move(message_type);
  types.meta_type = std::move(meta_type);
  types.kinds.clear();
  for (const py::handle& kind : kinds) {
    if (py::str(kind.attr("name")).cast<std::string>() == "TENSOR") {
      types.tensor_kind = static_cast<rt::MessageKind>(types.kinds.size());
    }
    types.kinds.push_back(py::reinterpret_borrow<py::object>(kind));
  }
  types.object_kind = std::move(object_kind);
  types.other_fields.clear();
  for (const auto& [field, value] : other_fields) {
    types.other_fields.emplace_back(Names::Intern(py::str(field).cast<std::string>().c_str()),
                                    py::reinterpret_borrow<py::object>(value));
  }
  types.dumps = std::move(dumps);
  types.loads = std::move(loads);
  const Names& name = Name();
  RegisterSlots(types.message_type, {&name.meta, &name.kind, &name.payload, &name.ret_code, &name.error,
                                     &name.route_label, &name.data_label});
  RegisterSlots(types.meta_type, {&name.transaction_id, &name.start_time, &name.end_time, &name.flow_flags,
                                  &name.user_data});
}

}  // namespace

void SetupRuntimeBindings(py::module_& m) {
  if (_import_array() < 0) throw py::error_already_set();
  m.def("configure_codec", &ConfigureCodec, py::arg("message_type"), py::arg("meta_type"), py::arg("kinds"),
        py::arg("object_kind"), py::arg("other_fields"), py::arg("dumps"), py::arg("loads"),
        "Sets the Python types records decode to: Message and TransactionMeta (slotted dataclasses), the Kind "
        "members in order, the kind whose payload is pickled, and the Message fields no record carries (name "
        "-> default).");
  m.def(
      "exit_when_process_ends", [](int pid, int exit_code) { rt::ExitWhenProcessEnds(static_cast<pid_t>(pid), exit_code); },
      py::arg("pid"), py::arg("exit_code"));
  m.def(
      "new_message",
      [](py::object meta, py::object kind, py::object payload) {
        CheckConfigured();
        return NewMessage(std::move(meta), std::move(kind), std::move(payload), 0, py::str(""), 0, 0);
      },
      py::arg("meta"), py::arg("kind"), py::arg("payload"),
      "What dfir.core.messages.new_message makes (a message without return code, error or labels), made natively.");
  m.def("aligned_zeros", &AlignedZeros, py::arg("shape"), py::arg("dtype"), py::arg("align"),
        "A zero-filled array of `shape` and `dtype` (anything numpy.dtype takes) whose data start on an "
        "`align`-byte boundary (a power of two).");
  m.attr("INLINE_BYTES") = rt::kInlineBytes;
  m.attr("MAX_DIMS") = rt::kMaxDims;
  BindRegion(m);
  BindLedger(m);
  BindDriverPort(m);
}
