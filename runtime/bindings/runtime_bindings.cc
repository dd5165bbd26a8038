// Bindings of the runtime core: regions (doorbells, channels, worker slots, the tensor arena)
// and the codec that turns dfir.core.messages.Message objects into channel records and back,
// the numpy allocator that gives UDF results arena homes, the dispatcher and the ledger.
// Use them through dfir.runtime.channels, not directly.
#define PY_ARRAY_UNIQUE_SYMBOL dfir_runtime_ARRAY_API
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <numpy/arrayobject.h>
#include <structmember.h>

#include <sys/types.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dispatch.h"
#include "region.h"
#include "watch.h"

namespace py = pybind11;
namespace rt = dfir::rt;

namespace {

constexpr const char* kBlockCapsule = "dfir.runtime.arena_block";

// -- the codec's Python side ------------------------------------------------------------------

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

// Where the slots of the codec's types (Message, TransactionMeta) live in their instances, so that
// the codec reads and writes fields without attribute lookups. Set by configure_codec.
struct SlotTable {
  PyTypeObject* type = nullptr;
  std::vector<std::pair<PyObject*, Py_ssize_t>> offsets;  // interned name -> offset in an instance
};

std::vector<SlotTable>& Slots() {
  static auto* slots = new std::vector<SlotTable>();
  return *slots;
}

// The offset of slot `name` in an instance of exactly `type`, or -1 (not a codec type, no slot).
Py_ssize_t SlotOffset(PyTypeObject* type, PyObject* name) {
  for (const SlotTable& table : Slots()) {
    if (table.type != type) continue;
    for (const auto& [slot, offset] : table.offsets) {
      if (slot == name) return offset;
    }
  }
  return -1;
}

// The slots of `type` (a class with __slots__) among `names`.
SlotTable SlotTableOf(const py::object& type, std::initializer_list<const py::object*> names) {
  SlotTable table;
  table.type = reinterpret_cast<PyTypeObject*>(type.ptr());
  for (const py::object* name : names) {
    PyObject* descriptor = PyObject_GetAttr(type.ptr(), name->ptr());
    if (descriptor == nullptr) {
      PyErr_Clear();
      continue;
    }
    if (Py_IS_TYPE(descriptor, &PyMemberDescr_Type)) {
      PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(descriptor)->d_member;
      if (member->type == T_OBJECT_EX && (member->flags & READONLY) == 0) {
        table.offsets.emplace_back(name->ptr(), member->offset);
      }
    }
    Py_DECREF(descriptor);
  }
  return table;
}

py::object Get(const py::handle& object, const py::object& name) {
  Py_ssize_t offset = SlotOffset(Py_TYPE(object.ptr()), name.ptr());
  if (offset >= 0) {
    PyObject* value = *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(object.ptr()) + offset);
    if (value != nullptr) return py::reinterpret_borrow<py::object>(value);
  }
  PyObject* value = PyObject_GetAttr(object.ptr(), name.ptr());
  if (value == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(value);
}

void CheckConfigured() {
  if (!Types().message_type) throw rt::RuntimeError("the message codec is not configured (call configure_codec)");
}

// A new instance of a slotted, frozen dataclass with its fields set directly.
py::object NewRecordObject(const py::object& type,
                           std::initializer_list<std::pair<const py::object*, py::object>> fields) {
  static PyObject* no_arguments = PyTuple_New(0);
  PyTypeObject* cls = reinterpret_cast<PyTypeObject*>(type.ptr());
  py::object instance = py::reinterpret_steal<py::object>(PyBaseObject_Type.tp_new(cls, no_arguments, nullptr));
  if (!instance) throw py::error_already_set();
  for (const auto& [name, value] : fields) {
    Py_ssize_t offset = SlotOffset(cls, name->ptr());
    if (offset >= 0) {
      PyObject** slot = reinterpret_cast<PyObject**>(reinterpret_cast<char*>(instance.ptr()) + offset);
      PyObject* previous = *slot;
      *slot = py::object(value).release().ptr();
      Py_XDECREF(previous);
    } else if (PyObject_GenericSetAttr(instance.ptr(), name->ptr(), value.ptr()) != 0) {
      throw py::error_already_set();
    }
  }
  return instance;
}

// -- arena blocks owned by Python objects ----------------------------------------------------

// The reference to a block that a received array (through its capsule base) holds. It is given
// back only in the process that took it: a forked child inherits the capsule, not the share.
struct BlockOwner {
  std::shared_ptr<rt::Region> region;
  uint64_t block;
  uint64_t epoch;
};

void ReleaseBlockOwner(PyObject* capsule) {
  auto* owner = static_cast<BlockOwner*>(PyCapsule_GetPointer(capsule, kBlockCapsule));
  if (owner == nullptr) {
    PyErr_Clear();
    return;
  }
  if (owner->epoch == rt::ForkEpoch()) owner->region->arena().Release(owner->block);
  delete owner;
}

py::object OwnBlock(const std::shared_ptr<rt::Region>& region, uint64_t block) {
  auto* owner = new BlockOwner{region, block, rt::ForkEpoch()};
  PyObject* capsule = PyCapsule_New(owner, kBlockCapsule, &ReleaseBlockOwner);
  if (capsule == nullptr) {
    delete owner;
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
      auto* owner = static_cast<BlockOwner*>(PyCapsule_GetPointer(current, kBlockCapsule));
      if (owner->region.get() != &region) return 0;
      block = owner->block;
    } else {
      return 0;
    }
  }
  return region.arena().Covers(block, data, static_cast<uint64_t>(PyArray_NBYTES(array))) ? block : 0;
}

// -- encoding ---------------------------------------------------------------------------------

// Copies a TransactionMeta's fields into `record`.
void EncodeMeta(const py::handle& meta, rt::MessageRecord& record) {
  const Names& name = Name();
  record.transaction_id = Get(meta, name.transaction_id).cast<uint64_t>();
  record.start_time = Get(meta, name.start_time).cast<int64_t>();
  record.end_time = Get(meta, name.end_time).cast<int64_t>();
  record.flow_flags = Get(meta, name.flow_flags).cast<uint32_t>();
  py::object user_data = Get(meta, name.user_data);
  char* bytes = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(user_data.ptr(), &bytes, &size) != 0) throw py::error_already_set();
  if (size > rt::kUserDataBytes) {
    throw rt::RuntimeError("transaction user data has " + std::to_string(size) + " bytes; at most " +
                           std::to_string(rt::kUserDataBytes) + " travel with a message");
  }
  record.user_data_size = static_cast<uint32_t>(size);
  std::memcpy(record.user_data, bytes, static_cast<size_t>(size));
}

// Copies the fields of a (transaction_id, start_time, end_time, flow_flags, user_data) tuple into
// `record`, as EncodeMeta copies a TransactionMeta's.
void EncodeMetaFields(const py::tuple& fields, rt::MessageRecord& record) {
  if (fields.size() != 5) {
    throw rt::RuntimeError("transaction fields must be (transaction_id, start_time, end_time, flow_flags, "
                           "user_data), got " + std::to_string(fields.size()) + " items");
  }
  record.transaction_id = fields[0].cast<uint64_t>();
  record.start_time = fields[1].cast<int64_t>();
  record.end_time = fields[2].cast<int64_t>();
  record.flow_flags = fields[3].cast<uint32_t>();
  char* bytes = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(fields[4].ptr(), &bytes, &size) != 0) throw py::error_already_set();
  if (size > rt::kUserDataBytes) {
    throw rt::RuntimeError("transaction user data has " + std::to_string(size) + " bytes; at most " +
                           std::to_string(rt::kUserDataBytes) + " travel with a message");
  }
  record.user_data_size = static_cast<uint32_t>(size);
  std::memcpy(record.user_data, bytes, static_cast<size_t>(size));
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
  Encoder(std::shared_ptr<rt::Region> region, const rt::Deadline& deadline)
      : region_(std::move(region)), deadline_(deadline) {}

  // Fills `record` from `message`; false when no arena room came before the deadline or the
  // region closed. A body that is not inline holds one block reference.
  bool Encode(const py::handle& message, rt::MessageRecord& record) {
    std::memset(&record, 0, offsetof(rt::MessageRecord, inline_bytes));
    EncodeMeta(Get(message, Name().meta), record);
    record.ret_code = Get(message, Name().ret_code).cast<int32_t>();
    record.route_label = Get(message, Name().route_label).cast<uint32_t>();
    record.data_label = Get(message, Name().data_label).cast<uint32_t>();
    record.kind = KindIndex(Get(message, Name().kind));
    py::object payload = Get(message, Name().payload);
    if (!payload.is_none()) {
      if (Get(message, Name().kind).is(Types().object_kind)) {
        return EncodeBytes(Types().dumps(payload), rt::BodyEncoding::kPickle, record);
      }
      return EncodeTensor(payload, record);
    }
    std::string error = Get(message, Name().error).cast<std::string>();
    if (error.empty()) return true;
    return EncodeBytes(py::bytes(error), rt::BodyEncoding::kText, record);
  }

  // Fills `record` as Encode fills it for a tensor message whose metadata `header` holds (its
  // fields up to the body: transaction, kind, labels; the body fields zero) and whose payload is
  // `array`, a numpy array.
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
    record.encoding = rt::BodyEncoding::kArray;
    record.dtype_num = PyArray_TYPE(array);
    record.ndim = static_cast<uint8_t>(PyArray_NDIM(array));
    for (int d = 0; d < PyArray_NDIM(array); ++d) record.shape[d] = PyArray_DIM(array, d);
    const uint64_t size = static_cast<uint64_t>(PyArray_NBYTES(array));
    record.body_size = size;
    if (size <= rt::kInlineBytes) {
      record.inline_body = 1;
      std::memcpy(record.inline_bytes, PyArray_DATA(array), size);
      return true;
    }
    uint64_t shared = ArenaBlockOf(*region_, array);
    if (shared != 0) {  // zero copy: the consumer reads the producer's buffer
      region_->arena().Retain(shared);
      record.block = shared;
      record.body_offset = static_cast<uint64_t>(static_cast<uint8_t*>(PyArray_DATA(array)) - region_->base());
      return true;
    }
    return CopyToBlock(PyArray_DATA(array), size, record);
  }

  bool EncodeBytes(const py::bytes& body, rt::BodyEncoding encoding, rt::MessageRecord& record) {
    char* data = nullptr;
    Py_ssize_t size = 0;
    if (PyBytes_AsStringAndSize(body.ptr(), &data, &size) != 0) throw py::error_already_set();
    record.encoding = encoding;
    record.body_size = static_cast<uint64_t>(size);
    if (record.body_size <= rt::kInlineBytes) {
      record.inline_body = 1;
      std::memcpy(record.inline_bytes, data, record.body_size);
      return true;
    }
    return CopyToBlock(data, record.body_size, record);
  }

  bool CopyToBlock(const void* data, uint64_t size, rt::MessageRecord& record) {
    py::gil_scoped_release unlocked;
    uint64_t block = region_->AllocateBlock(size, deadline_);
    if (block == 0) return false;
    std::memcpy(region_->arena().Data(block), data, size);
    record.block = block;
    record.body_offset = block + rt::kBlockHeaderBytes;
    return true;
  }

  std::shared_ptr<rt::Region> region_;
  rt::Deadline deadline_;
};

void ReleaseBody(rt::Region& region, const rt::MessageRecord& record) {
  if (record.inline_body == 0 && record.block != 0) region.arena().Release(record.block);
}

// -- decoding ---------------------------------------------------------------------------------

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

rt::TransactionInfo InfoOf(const rt::MessageRecord& record) {
  rt::TransactionInfo info;
  info.transaction_id = record.transaction_id;
  info.start_time = record.start_time;
  info.end_time = record.end_time;
  info.flow_flags = record.flow_flags;
  info.user_data_size = record.user_data_size;
  std::memcpy(info.user_data.data(), record.user_data, record.user_data_size);
  return info;
}

rt::TransactionInfo InfoOf(const py::handle& meta) {
  rt::MessageRecord record{};
  EncodeMeta(meta, record);
  return InfoOf(record);
}

class Decoder {
 public:
  explicit Decoder(std::shared_ptr<rt::Region> region) : region_(std::move(region)) {}

  // The Message a record stands for; takes over the record's block reference.
  py::object Decode(const rt::MessageRecord& record) {
    py::object payload = py::none();
    std::string error;
    switch (record.encoding) {
      case rt::BodyEncoding::kNone:
        break;
      case rt::BodyEncoding::kArray:
        payload = DecodeArray(record);
        break;
      case rt::BodyEncoding::kPickledArray:
      case rt::BodyEncoding::kPickle:
        payload = Types().loads(BodyView(record));
        ReleaseBody(*region_, record);
        break;
      case rt::BodyEncoding::kText:
        error.assign(reinterpret_cast<const char*>(Body(record)), record.body_size);
        ReleaseBody(*region_, record);
        break;
    }
    py::object text = py::reinterpret_steal<py::object>(
        PyUnicode_DecodeUTF8(error.data(), static_cast<Py_ssize_t>(error.size()), "replace"));
    const Names& name = Name();
    if (record.kind >= Types().kinds.size()) {
      throw rt::RuntimeError("a channel record has kind " + std::to_string(record.kind) + "; there are " +
                             std::to_string(Types().kinds.size()));
    }
    py::object message = NewRecordObject(Types().message_type, {{&name.meta, DecodeMeta(InfoOf(record))},
                                                                {&name.kind, Types().kinds[record.kind]},
                                                                {&name.payload, payload},
                                                                {&name.ret_code, py::int_(record.ret_code)},
                                                                {&name.error, text},
                                                                {&name.route_label, py::int_(record.route_label)},
                                                                {&name.data_label, py::int_(record.data_label)}});
    for (const auto& [field, value] : Types().other_fields) {
      if (PyObject_GenericSetAttr(message.ptr(), field.ptr(), value.ptr()) != 0) throw py::error_already_set();
    }
    return message;
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
  const uint8_t* Body(const rt::MessageRecord& record) const {
    return record.inline_body != 0 ? record.inline_bytes : region_->base() + record.body_offset;
  }

  py::object BodyView(const rt::MessageRecord& record) const {
    return py::memoryview::from_memory(static_cast<const void*>(Body(record)),
                                       static_cast<py::ssize_t>(record.body_size));
  }

  std::shared_ptr<rt::Region> region_;
};

// -- numpy's allocator (NEP 49) ----------------------------------------------------------------

// Arrays of at least `threshold` bytes get arena blocks (when there is room), so a UDF's result
// is already in shared memory when it is sent; smaller ones and overflow use malloc.
struct ArenaAllocator {
  PyDataMem_Handler handler;
  std::shared_ptr<rt::Region> region;
  uint64_t threshold;
};

void* ArenaMalloc(void* context, size_t size) {
  auto* allocator = static_cast<ArenaAllocator*>(context);
  if (size >= allocator->threshold) {
    uint64_t block = allocator->region->arena().TryAllocate(size);
    if (block != 0) return allocator->region->arena().Data(block);
  }
  return std::malloc(size);
}

void* ArenaCalloc(void* context, size_t count, size_t element_size) {
  auto* allocator = static_cast<ArenaAllocator*>(context);
  size_t size = count * element_size;
  if (element_size != 0 && size / element_size != count) return nullptr;
  if (size < allocator->threshold) return std::calloc(count, element_size);
  void* data = ArenaMalloc(context, size);
  if (data != nullptr) std::memset(data, 0, size);
  return data;
}

void ArenaFree(void* context, void* data, size_t /*size*/) {
  auto* allocator = static_cast<ArenaAllocator*>(context);
  if (data != nullptr && allocator->region->arena().Contains(data)) {
    allocator->region->arena().Release(allocator->region->arena().BlockAt(data));
  } else {
    std::free(data);
  }
}

void* ArenaRealloc(void* context, void* data, size_t size) {
  auto* allocator = static_cast<ArenaAllocator*>(context);
  if (data == nullptr || !allocator->region->arena().Contains(data)) return std::realloc(data, size);
  uint64_t block = allocator->region->arena().BlockAt(data);
  uint64_t capacity = allocator->region->arena().Capacity(block);
  if (size <= capacity) return data;
  void* moved = ArenaMalloc(context, size);
  if (moved == nullptr) return nullptr;
  std::memcpy(moved, data, capacity);
  allocator->region->arena().Release(block);
  return moved;
}

void DestroyAllocator(PyObject* capsule) {
  delete static_cast<ArenaAllocator*>(PyCapsule_GetContext(capsule));
}

// Makes numpy allocate from `region`'s arena in the calling thread (a context variable).
void UseArenaAllocator(const std::shared_ptr<rt::Region>& region, uint64_t threshold) {
  auto* allocator = new ArenaAllocator{};
  std::snprintf(allocator->handler.name, sizeof allocator->handler.name, "dfir_arena");
  allocator->handler.version = 1;
  allocator->handler.allocator = {allocator, ArenaMalloc, ArenaCalloc, ArenaRealloc, ArenaFree};
  allocator->region = region;
  allocator->threshold = threshold;
  PyObject* capsule = PyCapsule_New(&allocator->handler, "mem_handler", &DestroyAllocator);
  if (capsule == nullptr || PyCapsule_SetContext(capsule, allocator) != 0) {
    delete allocator;
    throw py::error_already_set();
  }
  py::object handler = py::reinterpret_steal<py::object>(capsule);
  PyObject* previous = PyDataMem_SetHandler(handler.ptr());
  if (previous == nullptr) throw py::error_already_set();
  Py_DECREF(previous);
}

// -- the ledger's Python side ------------------------------------------------------------------

class PyLedger {
 public:
  explicit PyLedger(size_t capacity) : ledger_(capacity) {}
  void Open(const py::handle& meta) { ledger_.Open(InfoOf(meta)); }
  void OpenFields(const py::tuple& fields) {
    rt::MessageRecord record{};
    EncodeMetaFields(fields, record);
    ledger_.Open(InfoOf(record));
  }
  void OpenInfo(const rt::TransactionInfo& info) { ledger_.Open(info); }
  bool Settle(uint64_t transaction_id) { return ledger_.Settle(transaction_id); }
  py::object TakeOldest() {
    CheckConfigured();
    std::optional<rt::TransactionInfo> oldest = ledger_.TakeOldest();
    return oldest ? DecodeMeta(*oldest) : py::none();
  }
  size_t open() const { return ledger_.open(); }

 private:
  rt::TransactionLedger ledger_;
};

// -- the Python-facing region ------------------------------------------------------------------

int StatusCode(rt::WaitStatus status) { return static_cast<int>(status); }

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
    if (epoch_ == rt::ForkEpoch()) DrainLocalChannels();
  }

  rt::Region& region() const { return *region_; }
  const std::shared_ptr<rt::Region>& shared() const { return region_; }

  // Puts each message on its channel, all or nothing: waits until every channel has room.
  int Put(const std::vector<std::pair<uint32_t, py::object>>& targets, int64_t timeout_ms) {
    CheckConfigured();
    if (region_->closing()) return StatusCode(rt::WaitStatus::kClosed);
    rt::Deadline deadline = rt::Deadline::AfterMs(timeout_ms);
    std::vector<uint32_t> channels;
    for (const auto& target : targets) channels.push_back(target.first);
    std::vector<rt::MessageRecord> records(targets.size());
    if (!EncodeShared(targets, deadline, records)) {
      return StatusCode(region_->closing() ? rt::WaitStatus::kClosed : rt::WaitStatus::kTimeout);
    }
    rt::WaitStatus status = rt::WaitStatus::kReady;
    if (!AllHaveRoom(channels)) {  // only a wait lets other threads run: releasing costs a switch
      py::gil_scoped_release unlocked;
      status = region_->WaitForRoom(channels, deadline);
    }
    if (status != rt::WaitStatus::kReady) {
      for (size_t i = 0; i < targets.size(); ++i) {
        if (IsShared(targets[i].first)) ReleaseBody(*region_, records[i]);
      }
      return StatusCode(status);
    }
    for (size_t i = 0; i < targets.size(); ++i) PushOne(targets[i].first, targets[i].second, records[i], deadline);
    RingConsumers(channels);
    return StatusCode(rt::WaitStatus::kReady);
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
    if (region_->closing()) return StatusCode(rt::WaitStatus::kClosed);
    rt::Deadline deadline = rt::Deadline::AfterMs(timeout_ms);
    rt::MessageRecord header;
    std::memset(&header, 0, offsetof(rt::MessageRecord, inline_bytes));
    EncodeMetaFields(fields, header);
    header.kind = Types().tensor_kind;
    std::vector<uint32_t> channels;
    std::vector<rt::MessageRecord> records;
    Encoder encoder(region_, deadline);
    auto release_all = [&] {
      for (const rt::MessageRecord& record : records) ReleaseBody(*region_, record);
    };
    try {
      for (size_t k = 0; k < arrays.size(); ++k) {
        py::object array = arrays[k];
        if (array.is_none()) continue;
        bool first = true;
        for (const py::handle& item : routes[k].cast<py::sequence>()) {
          uint32_t channel = item.cast<uint32_t>();
          if (!IsShared(channel)) throw rt::RuntimeError("put_arrays needs shared channels; " +
                                                         std::to_string(channel) + " is local");
          records.emplace_back();
          if (first) {
            if (!encoder.EncodeArray(header, array, records.back())) {
              records.pop_back();
              release_all();
              return StatusCode(region_->closing() ? rt::WaitStatus::kClosed : rt::WaitStatus::kTimeout);
            }
            first = false;
          } else {  // the same body on one more channel: one more reference, no copy
            records.back() = records[records.size() - 2];
            if (records.back().inline_body == 0 && records.back().block != 0) region_->arena().Retain(records.back().block);
          }
          channels.push_back(channel);
        }
      }
    } catch (...) {
      release_all();
      throw;
    }
    if (channels.empty()) return StatusCode(rt::WaitStatus::kReady);
    rt::WaitStatus status = rt::WaitStatus::kReady;
    if (!AllHaveRoom(channels)) {
      py::gil_scoped_release unlocked;
      status = region_->WaitForRoom(channels, deadline);
    }
    if (status != rt::WaitStatus::kReady) {
      release_all();
      return StatusCode(status);
    }
    if (ledger != nullptr) ledger->OpenInfo(InfoOf(header));
    py::object none = py::none();
    for (size_t i = 0; i < channels.size(); ++i) PushOne(channels[i], none, records[i], deadline);
    RingConsumers(channels);
    return StatusCode(rt::WaitStatus::kReady);
  }

  // One set from `channels` as (fields, arrays) when every message is a plain tensor (no return
  // code, array body): `fields` the transaction's (transaction_id, start_time, end_time,
  // flow_flags, user_data), `arrays` one numpy array per channel; otherwise the set's Messages (a
  // list). [] on timeout; None once the region closes. Waits as Take. With a `ledger`, the
  // transaction of the first channel's message is settled in it (shared channels only).
  py::object TakeTensors(const std::vector<uint32_t>& channels, uint32_t bell, int64_t timeout_ms, PyLedger* ledger) {
    CheckConfigured();
    if (channels.empty()) throw rt::RuntimeError("take_tensors needs at least one channel");
    bool all_shared = true;
    for (uint32_t channel : channels) all_shared = all_shared && IsShared(channel);
    if (ReadySets(channels, 1) == 0) {
      rt::WaitStatus status;
      {
        py::gil_scoped_release unlocked;
        status = region_->WaitForMessages(channels, bell, rt::Deadline::AfterMs(timeout_ms));
      }
      if (status == rt::WaitStatus::kClosed) return py::none();
      if (status == rt::WaitStatus::kTimeout) return py::list();
    }
    if (ledger != nullptr && all_shared) {
      ledger->Settle(reinterpret_cast<const rt::MessageRecord*>(region_->ring(channels[0]).Peek(0))->transaction_id);
    }
    Decoder decoder(region_);
    if (all_shared && AllPlainTensors(channels)) {
      py::list arrays(channels.size());
      rt::MessageRecord record;
      for (size_t i = 0; i < channels.size(); ++i) {
        if (!region_->ring(channels[i]).TryPop([&](const uint8_t* slot) { std::memcpy(&record, slot, sizeof record); })) {
          LostMessage(channels[i]);
        }
        arrays[i] = decoder.DecodeArray(record);
      }
      py::tuple fields = py::make_tuple(
          record.transaction_id, record.start_time, record.end_time, record.flow_flags,
          py::bytes(reinterpret_cast<const char*>(record.user_data), record.user_data_size));
      for (uint32_t channel : channels) region_->ring(channel).NotifySpace();
      return py::make_tuple(std::move(fields), std::move(arrays));
    }
    py::list set(channels.size());
    for (size_t i = 0; i < channels.size(); ++i) set[i] = PopOne(channels[i], decoder);
    for (uint32_t channel : channels) region_->ring(channel).NotifySpace();
    return set;
  }

  // Up to `max_sets` tuples holding one message from each channel, once all of them hold one;
  // [] on timeout; None once the region closes.
  py::object Take(const std::vector<uint32_t>& channels, uint32_t bell, uint32_t max_sets, int64_t timeout_ms) {
    CheckConfigured();
    if (channels.empty() || max_sets == 0) throw rt::RuntimeError("take needs at least one channel and one set");
    uint64_t ready = ReadySets(channels, max_sets);
    if (ready == 0) {
      rt::WaitStatus status;
      {
        py::gil_scoped_release unlocked;
        status = region_->WaitForMessages(channels, bell, rt::Deadline::AfterMs(timeout_ms));
      }
      if (status == rt::WaitStatus::kClosed) return py::none();
      if (status == rt::WaitStatus::kTimeout) return py::list();
      ready = ReadySets(channels, max_sets);
    }
    py::list sets;
    Decoder decoder(region_);
    for (uint64_t n = 0; n < ready; ++n) {
      py::tuple set(channels.size());
      for (size_t i = 0; i < channels.size(); ++i) set[i] = PopOne(channels[i], decoder);
      sets.append(std::move(set));
    }
    for (uint32_t channel : channels) region_->ring(channel).NotifySpace();
    return sets;
  }

  int WaitForChange(const std::vector<uint32_t>& channels, uint32_t bell, int64_t stalled, int64_t timeout_ms) {
    py::gil_scoped_release unlocked;
    return StatusCode(region_->WaitForChange(channels, bell, stalled, rt::Deadline::AfterMs(timeout_ms)));
  }

  int WaitForClose(uint32_t bell, int64_t timeout_ms) {
    py::gil_scoped_release unlocked;
    return StatusCode(region_->WaitForClose(bell, rt::Deadline::AfterMs(timeout_ms)));
  }

  // The transaction ids of the messages waiting in a shared channel, oldest first.
  std::vector<uint64_t> WaitingTransactions(uint32_t channel) const {
    rt::Ring ring = region_->ring(channel);
    if (!IsShared(channel)) throw rt::RuntimeError("channel " + std::to_string(channel) + " is local");
    std::vector<uint64_t> ids;
    for (uint64_t i = 0; i < ring.size(); ++i) {
      const uint8_t* payload = ring.Peek(i);
      if (payload == nullptr) break;
      ids.push_back(reinterpret_cast<const rt::MessageRecord*>(payload)->transaction_id);
    }
    return ids;
  }

  void SetLastWords(uint32_t worker, const std::string& text) {
    rt::WorkerSlot& slot = region_->worker(worker);
    size_t size = std::min<size_t>(text.size(), rt::kLastWordsBytes - 1);
    std::memcpy(slot.last_words, text.data(), size);
    slot.last_words[size] = '\0';
  }

  py::tuple WorkerStatus(uint32_t worker) const {
    rt::WorkerSlot& slot = region_->worker(worker);
    std::string words(slot.last_words, strnlen(slot.last_words, rt::kLastWordsBytes));
    return py::make_tuple(slot.pid.load(), slot.running_node.load(), py::str(words));
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
  bool IsShared(uint32_t channel) const { return region_->kind(channel) == rt::ChannelKind::kShared; }

  // How many sets (one message from each channel), up to `limit`, can be taken now.
  uint64_t ReadySets(const std::vector<uint32_t>& channels, uint64_t limit) const {
    for (uint32_t channel : channels) limit = std::min(limit, region_->ring(channel).Ready(limit));
    return limit;
  }

  // Whether the next message of each (shared) channel is a tensor with an array body and no
  // return code, the fields of the first one's transaction being every one's.
  bool AllPlainTensors(const std::vector<uint32_t>& channels) const {
    const rt::MessageRecord* first = nullptr;
    for (uint32_t channel : channels) {
      const auto* record = reinterpret_cast<const rt::MessageRecord*>(region_->ring(channel).Peek(0));
      if (record == nullptr || record->ret_code != 0 || record->kind != Types().tensor_kind ||
          record->encoding != rt::BodyEncoding::kArray) {
        return false;
      }
      if (first == nullptr) {
        first = record;
      } else if (record->transaction_id != first->transaction_id || record->start_time != first->start_time ||
                 record->end_time != first->end_time || record->flow_flags != first->flow_flags ||
                 record->user_data_size != first->user_data_size ||
                 std::memcmp(record->user_data, first->user_data, first->user_data_size) != 0) {
        return false;
      }
    }
    return true;
  }

  bool AllHaveRoom(const std::vector<uint32_t>& channels) const {
    for (uint32_t channel : channels) {
      if (!region_->ring(channel).has_room()) return false;
    }
    return true;
  }

  // Encodes the messages bound for shared channels, each distinct message once; false (with
  // nothing held) when the arena had no room in time.
  bool EncodeShared(const std::vector<std::pair<uint32_t, py::object>>& targets, const rt::Deadline& deadline,
                    std::vector<rt::MessageRecord>& records) {
    Encoder encoder(region_, deadline);
    std::unordered_map<PyObject*, size_t> encoded;  // message -> index of its first record
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!IsShared(targets[i].first)) continue;
      auto found = encoded.find(targets[i].second.ptr());
      if (found != encoded.end()) {
        records[i] = records[found->second];
        if (records[i].inline_body == 0 && records[i].block != 0) region_->arena().Retain(records[i].block);
        continue;
      }
      bool ok = false;
      try {
        ok = encoder.Encode(targets[i].second, records[i]);
      } catch (...) {
        ReleaseEncoded(targets, records, encoded);
        throw;
      }
      if (!ok) {
        ReleaseEncoded(targets, records, encoded);
        return false;
      }
      encoded.emplace(targets[i].second.ptr(), i);
    }
    return true;
  }

  void ReleaseEncoded(const std::vector<std::pair<uint32_t, py::object>>& targets,
                      std::vector<rt::MessageRecord>& records, const std::unordered_map<PyObject*, size_t>& encoded) {
    for (size_t i = 0; i < targets.size(); ++i) {
      if (IsShared(targets[i].first) && encoded.count(targets[i].second.ptr()) != 0) ReleaseBody(*region_, records[i]);
    }
  }

  void PushOne(uint32_t channel, const py::object& message, const rt::MessageRecord& record,
               const rt::Deadline& deadline) {
    rt::Ring ring = region_->ring(channel);
    bool shared = IsShared(channel);
    PyObject* object = message.ptr();
    for (;;) {
      bool pushed = shared ? ring.TryPush([&](uint8_t* slot) { std::memcpy(slot, &record, sizeof record); })
                           : ring.TryPush([&](uint8_t* slot) {
                               Py_INCREF(object);
                               std::memcpy(slot, &object, sizeof object);
                             });
      if (pushed) return;
      // Another producer took the room this put waited for; wait again (no message is dropped).
      rt::WaitStatus status;
      {
        py::gil_scoped_release unlocked;
        status = region_->WaitForRoom({channel}, deadline);
      }
      if (status != rt::WaitStatus::kReady) {
        if (shared) ReleaseBody(*region_, record);
        throw rt::RuntimeError("channel " + std::to_string(channel) + " stayed full while a put was half done");
      }
    }
  }

  // Pops a message that Ready() counted (the caller is the channel's one consumer).
  py::object PopOne(uint32_t channel, Decoder& decoder) {
    rt::Ring ring = region_->ring(channel);
    if (IsShared(channel)) {
      rt::MessageRecord record;
      if (!ring.TryPop([&](const uint8_t* slot) { std::memcpy(&record, slot, sizeof record); })) LostMessage(channel);
      return decoder.Decode(record);
    }
    PyObject* object = nullptr;
    if (!ring.TryPop([&](const uint8_t* slot) { std::memcpy(&object, slot, sizeof object); })) LostMessage(channel);
    return py::reinterpret_steal<py::object>(object);
  }

  [[noreturn]] static void LostMessage(uint32_t channel) {
    throw rt::RuntimeError("channel " + std::to_string(channel) +
                           " lost a ready message: another consumer took it (a channel has one consumer)");
  }

  void RingConsumers(const std::vector<uint32_t>& channels) {
    for (size_t i = 0; i < channels.size(); ++i) {
      uint32_t bell = region_->ring(channels[i]).header().consumer_bell;
      bool rung = false;
      for (size_t j = 0; j < i && !rung; ++j) rung = region_->ring(channels[j]).header().consumer_bell == bell;
      if (!rung) rt::NotifyAll(region_->bell(bell));
    }
  }

  // Drops the Python references that local channels still hold.
  void DrainLocalChannels() {
    for (uint32_t channel = 0; channel < region_->channel_count(); ++channel) {
      if (IsShared(channel)) continue;
      rt::Ring ring = region_->ring(channel);
      PyObject* object = nullptr;
      while (ring.TryPop([&](const uint8_t* slot) { std::memcpy(&object, slot, sizeof object); })) Py_XDECREF(object);
    }
  }

  std::shared_ptr<rt::Region> region_;
  uint64_t epoch_ = 0;
};

void BindRegion(py::module_& m) {
  py::class_<PyRegion>(m, "Region", "The shared region of one loaded model (see runtime/native/region.h).")
      .def(py::init<uint32_t, const std::vector<std::tuple<std::string, uint32_t, uint32_t>>&, uint32_t, uint64_t,
                    const std::string&>(),
           py::arg("bells"), py::arg("channels"), py::arg("workers"), py::arg("arena_bytes"), py::arg("name"))
      .def("put", &PyRegion::Put, py::arg("targets"), py::arg("timeout_ms"))
      .def("put_arrays", &PyRegion::PutArrays, py::arg("routes"), py::arg("arrays"), py::arg("fields"),
           py::arg("timeout_ms"), py::arg("ledger") = nullptr)
      .def("take", &PyRegion::Take, py::arg("channels"), py::arg("bell"), py::arg("max_sets"), py::arg("timeout_ms"))
      .def("take_tensors", &PyRegion::TakeTensors, py::arg("channels"), py::arg("bell"), py::arg("timeout_ms"),
           py::arg("ledger") = nullptr)
      .def("wait_for_change", &PyRegion::WaitForChange, py::arg("channels"), py::arg("bell"), py::arg("stalled"),
           py::arg("timeout_ms"))
      .def("wait_for_close", &PyRegion::WaitForClose, py::arg("bell"), py::arg("timeout_ms"))
      .def("waiting_transactions", &PyRegion::WaitingTransactions, py::arg("channel"))
      .def("size", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).size(); })
      .def("pops", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).pops(); })
      .def("capacity", [](const PyRegion& self, uint32_t channel) { return self.region().ring(channel).capacity(); })
      .def("is_shared",
           [](const PyRegion& self, uint32_t channel) { return self.region().kind(channel) == rt::ChannelKind::kShared; })
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
      .def("set_last_words", &PyRegion::SetLastWords, py::arg("worker"), py::arg("text"))
      .def("worker_status", &PyRegion::WorkerStatus, py::arg("worker"))
      .def("arena_stats", &PyRegion::ArenaStats)
      .def("locate", &PyRegion::Locate, py::arg("array"))
      .def(
          "use_arena_allocator",
          [](PyRegion& self, uint64_t threshold) { UseArenaAllocator(self.shared(), threshold); },
          py::arg("threshold"));
}

void BindRouting(py::module_& m) {
  py::class_<PyLedger>(m, "TransactionLedger", "The fed transactions with no output seen yet.")
      .def(py::init<size_t>(), py::arg("capacity"))
      .def("open", &PyLedger::Open, py::arg("meta"))
      .def("open_fields", &PyLedger::OpenFields, py::arg("fields"),
           "As open, for a (transaction_id, start_time, end_time, flow_flags, user_data) tuple.")
      .def("settle", &PyLedger::Settle, py::arg("transaction_id"))
      .def("take_oldest", &PyLedger::TakeOldest)
      .def_property_readonly("open_count", &PyLedger::open);
}

}  // namespace

void SetupRuntimeBindings(py::module_& m) {
  if (_import_array() < 0) throw py::error_already_set();
  m.def(
      "configure_codec",
      [](py::object message_type, py::object meta_type, const py::tuple& kinds, py::object object_kind,
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
        Slots() = {SlotTableOf(types.message_type, {&name.meta, &name.kind, &name.payload, &name.ret_code, &name.error,
                                                    &name.route_label, &name.data_label}),
                   SlotTableOf(types.meta_type, {&name.transaction_id, &name.start_time, &name.end_time,
                                                 &name.flow_flags, &name.user_data})};
      },
      py::arg("message_type"), py::arg("meta_type"), py::arg("kinds"), py::arg("object_kind"),
      py::arg("other_fields"), py::arg("dumps"), py::arg("loads"),
      "Sets the Python types records decode to: Message and TransactionMeta (slotted dataclasses), the Kind "
      "members in order, the kind whose payload is pickled, and the Message fields no record carries (name "
      "-> default).");
  m.def(
      "exit_when_process_ends", [](int pid, int exit_code) { rt::ExitWhenProcessEnds(static_cast<pid_t>(pid), exit_code); },
      py::arg("pid"), py::arg("exit_code"));
  m.attr("INLINE_BYTES") = rt::kInlineBytes;
  m.attr("MAX_DIMS") = rt::kMaxDims;
  BindRegion(m);
  BindRouting(m);
}
