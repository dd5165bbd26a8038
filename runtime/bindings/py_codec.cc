// The Python side of the message codec (see py_codec.h) and its bindings: `configure_codec`
// (the Python types records decode to), `new_message`, and the record's limits INLINE_BYTES and
// MAX_DIMS.
#include "py_codec.h"

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime_bindings.h"
#include "slots.h"

namespace py = pybind11;

namespace dfir::bindings {

namespace {

constexpr const char* kBlockCapsule = "dfir.runtime.arena_block";

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

void SetUserData(const py::handle& user_data, rt::TransactionInfo& info) {
  char* bytes = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(user_data.ptr(), &bytes, &size) != 0) throw py::error_already_set();
  info.SetUserData(bytes, static_cast<size_t>(size));
}

rt::MessageKind KindIndex(const py::object& kind) {
  const std::vector<py::object>& kinds = Types().kinds;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kind.is(kinds[i])) return static_cast<rt::MessageKind>(i);
  }
  throw rt::RuntimeError("a message's kind must be a dfir.core.messages.Kind, got " +
                         py::repr(kind).cast<std::string>());
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
                                     &name.route_label, &name.data_label, &name.as_array});
  RegisterSlots(types.meta_type, {&name.transaction_id, &name.start_time, &name.end_time, &name.flow_flags,
                                  &name.user_data});
}

// Sets the user message types: `user_types` maps a class to (msg type, serialize_func) and
// `user_loaders` a msg type to deserialize_func; the registry keeps filling these dicts.
// Sets what a Python UDF receives for a tensor message's array (dfir.core.tensor.udf_tensor) and
// the Tensor type it makes (slots _array and _desc).
void SetUdfTensor(py::object udf_tensor, py::object tensor_type) {
  Types().udf_tensor = std::move(udf_tensor);
  Types().tensor_type = std::move(tensor_type);
  RegisterSlots(Types().tensor_type, {&Name().array, &Name().desc});
}

// The Tensor descriptions UdfArgument shares, by shape and numpy type number (the last item).
using Descriptions = std::map<std::vector<npy_intp>, py::object>;
constexpr size_t kMaxDescriptions = 256;

Descriptions& UdfDescriptions() {
  static auto* descriptions = new Descriptions();  // never destroyed, as Types()
  return *descriptions;
}

void SetUserTypes(const py::dict& user_types, const py::dict& user_loaders) {
  Types().user_types = user_types;
  Types().user_loaders = user_loaders;
}

// The (msg type, serialize_func) of `payload`'s class when it is a registered user type (borrowed),
// else nullptr.
PyObject* UserTypeOf(const py::object& payload) {
  const py::object& user_types = Types().user_types;
  if (!user_types) return nullptr;
  PyObject* entry = PyDict_GetItemWithError(user_types.ptr(), reinterpret_cast<PyObject*>(Py_TYPE(payload.ptr())));
  if (entry == nullptr && PyErr_Occurred()) throw py::error_already_set();
  return entry;
}

}  // namespace

PythonTypes& Types() {
  static auto* types = new PythonTypes();  // never destroyed: outlives interpreter teardown order
  return *types;
}

const Names& Name() {
  static auto* names = new Names();
  return *names;
}

py::object NewMessage(py::object meta, py::object kind, py::object payload, int32_t ret_code, py::object error,
                      uint32_t route_label, uint32_t data_label, bool as_array) {
  const Names& name = Name();
  py::object message = NewRecordObject(Types().message_type, {{&name.meta, std::move(meta)},
                                                              {&name.kind, std::move(kind)},
                                                              {&name.payload, std::move(payload)},
                                                              {&name.ret_code, py::int_(ret_code)},
                                                              {&name.error, std::move(error)},
                                                              {&name.route_label, py::int_(route_label)},
                                                              {&name.data_label, py::int_(data_label)},
                                                              {&name.as_array, py::bool_(as_array)}});
  for (const auto& [field, value] : Types().other_fields) {
    if (PyObject_GenericSetAttr(message.ptr(), field.ptr(), value.ptr()) != 0) throw py::error_already_set();
  }
  return message;
}

py::object UdfArgument(py::object payload, bool as_tensor) {
  if (!as_tensor || !Types().udf_tensor || !PyArray_Check(payload.ptr())) return payload;
  auto* array = reinterpret_cast<PyArrayObject*>(payload.ptr());
  std::vector<npy_intp> key(PyArray_DIMS(array), PyArray_DIMS(array) + PyArray_NDIM(array));
  key.push_back(PyArray_TYPE(array));
  Descriptions& descriptions = UdfDescriptions();
  auto found = descriptions.find(key);
  if (found != descriptions.end()) {
    const Names& name = Name();
    return NewRecordObject(Types().tensor_type, {{&name.array, std::move(payload)}, {&name.desc, found->second}});
  }
  py::object made = Types().udf_tensor(payload);
  if (py::type::of(made).is(Types().tensor_type)) {
    if (descriptions.size() >= kMaxDescriptions) descriptions.clear();
    descriptions.emplace(std::move(key), Get(made, Name().desc));
  }
  return made;
}

void CheckConfigured() {
  if (!Types().message_type) throw rt::RuntimeError("the message codec is not configured (call configure_codec)");
}

PythonReferences& References() {
  static PythonReferences references;
  return references;
}

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

bool HasFlatLayout(PyArrayObject* array) {
  int type = PyArray_TYPE(array);
  bool numeric = PyTypeNum_ISBOOL(type) || PyTypeNum_ISNUMBER(type);
  return numeric && PyArray_ISNOTSWAPPED(array) && PyArray_NDIM(array) <= rt::kMaxDims;
}

bool Encoder::Encode(const py::handle& message, rt::MessageRecord& record) {
  const Names& name = Name();
  rt::TransactionInfo info = TransactionOf(Get(message, name.meta));
  int32_t ret_code = Get(message, name.ret_code).cast<int32_t>();
  uint32_t route_label = Get(message, name.route_label).cast<uint32_t>();
  uint32_t data_label = Get(message, name.data_label).cast<uint32_t>();
  py::object kind = Get(message, name.kind);
  rt::WriteHeader(info, KindIndex(kind), ret_code, route_label, data_label, record);
  if (Get(message, name.as_array).ptr() == Py_True) record.flags |= rt::kFlagArrayValue;
  py::object payload = Get(message, name.payload);
  if (!payload.is_none()) {
    if (kind.is(Types().object_kind)) {
      if (PyObject* entry = UserTypeOf(payload)) return EncodeUserType(payload, entry, record);
      return EncodeBytes(Types().dumps(payload), rt::BodyEncoding::kPickle, record);
    }
    return EncodeTensor(payload, record);
  }
  std::string error = Get(message, name.error).cast<std::string>();
  if (error.empty()) return true;
  return EncodeBytes(py::bytes(error), rt::BodyEncoding::kText, record);
}

bool Encoder::EncodeArray(const rt::MessageRecord& header, const py::object& array, rt::MessageRecord& record) {
  std::memcpy(&record, &header, offsetof(rt::MessageRecord, inline_bytes));
  return EncodeTensor(array, record);
}

bool Encoder::EncodeTensor(const py::object& payload, rt::MessageRecord& record) {
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

bool Encoder::EncodeBytes(const py::bytes& body, rt::BodyEncoding encoding, rt::MessageRecord& record) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(body.ptr(), &data, &size) != 0) throw py::error_already_set();
  return writer_.Write(encoding, data, static_cast<uint64_t>(size), 0, record);
}

bool Encoder::EncodeUserType(const py::object& payload, const py::handle& entry, rt::MessageRecord& record) {
  auto msg_type = py::reinterpret_borrow<py::tuple>(entry)[0].cast<int32_t>();
  py::object body = py::reinterpret_borrow<py::tuple>(entry)[1](payload);
  if (!PyBytes_Check(body.ptr()) && !PyByteArray_Check(body.ptr()) && !PyMemoryView_Check(body.ptr())) {
    throw rt::RuntimeError("the serialize_func of msg type " + std::to_string(msg_type) + " returned " +
                           py::str(py::type::of(body).attr("__name__")).cast<std::string>() + ", not bytes");
  }
  if (!EncodeBytes(py::bytes(body), rt::BodyEncoding::kUserType, record)) return false;
  record.dtype_num = msg_type;
  return true;
}

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

py::tuple FieldsOf(const rt::MessageRecord& record) {
  return py::make_tuple(record.transaction_id, record.start_time, record.end_time, record.flow_flags,
                        py::bytes(reinterpret_cast<const char*>(record.user_data), record.user_data_size));
}

py::object Decoder::Take(const rt::Taken& message) {
  if (message.record == nullptr) return py::reinterpret_steal<py::object>(static_cast<PyObject*>(message.object));
  return Decode(*message.record);
}

py::object Decoder::Decode(const rt::MessageRecord& record) {
  std::string error;
  py::object payload = DecodeBody(record, error);
  if (!last_meta_ || !rt::SameTransaction(last_transaction_, record)) {
    last_meta_ = DecodeMeta(rt::TransactionOf(record));
    std::memcpy(&last_transaction_, &record, offsetof(rt::MessageRecord, ret_code));
  }
  return MessageOf(record, last_meta_, std::move(payload), error);
}

py::object Decoder::DecodeBody(const rt::MessageRecord& record, std::string& error) {
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
    case rt::BodyEncoding::kUserType:
      return DecodeUserType(record);
    case rt::BodyEncoding::kText:
      error.assign(reinterpret_cast<const char*>(rt::BodyOf(*region_, record)), record.body_size);
      rt::ReleaseBody(*region_, record);
      break;
  }
  return py::none();
}

py::object Decoder::DecodeUserType(const rt::MessageRecord& record) {
  py::bytes body(reinterpret_cast<const char*>(rt::BodyOf(*region_, record)), record.body_size);
  rt::ReleaseBody(*region_, record);
  const py::object& loaders = Types().user_loaders;
  PyObject* load = loaders ? PyDict_GetItemWithError(loaders.ptr(), py::int_(record.dtype_num).ptr()) : nullptr;
  if (load == nullptr) {
    if (PyErr_Occurred()) throw py::error_already_set();
    if ((record.flags & rt::kFlagTypedRaw) != 0) {  // a C++ UDF's raw data of an unregistered type
      static const auto* typed_bytes = new py::object(py::module_::import("dfir.core.messages").attr("TypedBytes"));
      return (*typed_bytes)(body, record.dtype_num);
    }
    throw rt::RuntimeError("a message of user msg type " + std::to_string(record.dtype_num) +
                           " arrived, but this process has no deserialize_func for it: register the type "
                           "(msg_type_register.register) before the model loads");
  }
  return py::reinterpret_borrow<py::object>(load)(body);
}

py::object Decoder::MessageOf(const rt::MessageRecord& record, py::object meta, py::object payload,
                              const std::string& error) {
  py::object text = py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(error.data(), static_cast<Py_ssize_t>(error.size()), "replace"));
  if (record.kind >= Types().kinds.size()) {
    throw rt::RuntimeError("a channel record has kind " + std::to_string(record.kind) + "; there are " +
                           std::to_string(Types().kinds.size()));
  }
  return NewMessage(std::move(meta), Types().kinds[record.kind], std::move(payload), record.ret_code, std::move(text),
                    record.route_label, record.data_label, (record.flags & rt::kFlagArrayValue) != 0);
}

py::object Decoder::DecodeArray(const rt::MessageRecord& record) {
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

py::object Decoder::BodyView(const rt::MessageRecord& record) const {
  return py::memoryview::from_memory(static_cast<const void*>(rt::BodyOf(*region_, record)),
                                     static_cast<py::ssize_t>(record.body_size));
}

void BindCodec(py::module_& m) {
  m.def("set_user_types", &SetUserTypes, py::arg("user_types"), py::arg("user_loaders"),
        "Sets the user message types (msg_type_register): {class: (msg type, serialize_func)} and "
        "{msg type: deserialize_func}, dicts the registry keeps filling.");
  m.def("set_udf_tensor", &SetUdfTensor, py::arg("udf_tensor"), py::arg("tensor_type"),
        "Sets what a Python UDF receives for a tensor message's numpy array, udf_tensor(array), and the Tensor "
        "type it makes (its slots _array and _desc are set directly for a dtype and shape seen before).");
  m.def("configure_codec", &ConfigureCodec, py::arg("message_type"), py::arg("meta_type"), py::arg("kinds"),
        py::arg("object_kind"), py::arg("other_fields"), py::arg("dumps"), py::arg("loads"),
        "Sets the Python types records decode to: Message and TransactionMeta (slotted dataclasses), the Kind "
        "members in order, the kind whose payload is pickled, and the Message fields no record carries (name "
        "-> default).");
  m.def(
      "new_message",
      [](py::object meta, py::object kind, py::object payload, bool as_array) {
        CheckConfigured();
        return NewMessage(std::move(meta), std::move(kind), std::move(payload), 0, py::str(""), 0, 0, as_array);
      },
      py::arg("meta"), py::arg("kind"), py::arg("payload"), py::arg("as_array") = false,
      "What dfir.core.messages.new_message makes (a message without return code, error or labels), made natively.");
  m.attr("INLINE_BYTES") = rt::kInlineBytes;
  m.attr("MAX_DIMS") = rt::kMaxDims;
}

}  // namespace dfir::bindings
