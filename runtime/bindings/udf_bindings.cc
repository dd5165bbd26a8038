// Bindings of the C++ UDF host (runtime/native/udf_*): load a library, bind a node's funcs, call
// them with the GIL released. A plain func's call (`proc_messages`) takes the runtime's
// dfir.core.messages.Message objects and returns new ones, read and built here (the types are
// set once by `configure_udf_messages`); a tensor's data are never copied: numpy arrays going
// in, arrays over the output message (a capsule holds it) coming out. A stream-input call's
// messages cross as tuples:
//
//   (payload, msg_type, dtype, shape, data, ret_code, transaction_id, start_time, end_time,
//    flow_flags, route_label, data_label)
//
// `payload` is 0 (tensor), 1 (raw bytes) or 2 (empty); `msg_type` the FlowMsg's type (a raw message
// of a user type >= 1024 is an object of that type in Python: typed_object / typed_raw of
// dfir.frontend.flow_func.msg); `dtype` GE's data type number; `data` an
// object with the buffer protocol (a contiguous numpy array going in, a `UdfBuffer` coming out),
// or None for an empty message. runtime/worker/udf_project.py is the Python side.
#define NO_IMPORT_ARRAY  // runtime_bindings.cc imports numpy's C API for the module
#define PY_ARRAY_UNIQUE_SYMBOL dfir_runtime_ARRAY_API
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <numpy/arrayobject.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "slots.h"
#include "udf_caller.h"
#include "udf_context.h"
#include "udf_error.h"
#include "udf_instance.h"
#include "udf_library.h"
#include "udf_log.h"
#include "udf_messages.h"
#include "udf_params.h"

namespace py = pybind11;

namespace {

using dfir::udf::Buffer;
using dfir::udf::CallFacts;
using dfir::udf::HostAttrValue;
using dfir::udf::HostFlowMsg;
using dfir::udf::HostMetaParams;
using dfir::udf::ModelInvoker;
using dfir::udf::MsgMeta;
using dfir::udf::Payload;
using dfir::udf::ProcResult;
using dfir::udf::UdfError;
using dfir::udf::UdfInstance;
using dfir::udf::UdfLibrary;
using FlowFunc::MsgType;
using FlowFunc::TensorDataType;

// The bytes of a message going out to Python: a 1-D uint8 buffer that keeps the message alive.
struct UdfBuffer {
  std::shared_ptr<HostFlowMsg> msg;
};

// Holds `source`'s buffer (released with the GIL) and points `buffer` at its bytes.
void HoldBuffer(const py::object& source, Buffer& buffer) {
  auto* view = new Py_buffer;
  if (PyObject_GetBuffer(source.ptr(), view, PyBUF_ANY_CONTIGUOUS) != 0) {
    delete view;
    throw py::error_already_set();
  }
  buffer.data = static_cast<uint8_t*>(view->buf);
  buffer.size = static_cast<uint64_t>(view->len);
  buffer.owner = std::shared_ptr<void>(view, [](void* held) {
    const py::gil_scoped_acquire gil;
    PyBuffer_Release(static_cast<Py_buffer*>(held));
    delete static_cast<Py_buffer*>(held);
  });
}

// The bytes of a C-contiguous `array`, which the buffer keeps alive.
Buffer HeldArray(const py::array& array) {
  Buffer buffer;
  buffer.data = static_cast<uint8_t*>(const_cast<void*>(array.data()));
  buffer.size = static_cast<uint64_t>(array.nbytes());
  buffer.owner = std::shared_ptr<void>(py::object(array).release().ptr(), [](void* held) {
    const py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(held));
  });
  return buffer;
}

MsgMeta MetaOf(const py::tuple& t, size_t first) {
  MsgMeta meta;
  meta.transaction_id = t[first].cast<uint64_t>();
  meta.start_time = t[first + 1].cast<uint64_t>();
  meta.end_time = t[first + 2].cast<uint64_t>();
  meta.flow_flags = t[first + 3].cast<uint32_t>();
  return meta;
}

std::shared_ptr<HostFlowMsg> MsgFromTuple(const py::tuple& t) {
  if (t.size() != 12) throw UdfError("a UDF message tuple has " + std::to_string(t.size()) + " fields, expected 12");
  const auto payload = static_cast<Payload>(t[0].cast<int32_t>());
  const auto dtype = static_cast<TensorDataType>(t[2].cast<int32_t>());
  const MsgMeta meta = MetaOf(t, 6);
  Buffer buffer;
  if (!t[4].is_none()) HoldBuffer(t[4], buffer);
  std::shared_ptr<HostFlowMsg> msg;
  if (payload == Payload::kTensor) {
    if (dfir::udf::ElementSize(dtype) == 0) {
      throw UdfError("data type " + std::to_string(static_cast<int32_t>(dtype)) + " cannot cross to a C++ UDF");
    }
    auto shape = t[3].cast<std::vector<int64_t>>();
    uint64_t expected = dfir::udf::ElementSize(dtype);
    for (const int64_t dim : shape) expected *= static_cast<uint64_t>(dim);
    if (buffer.size != expected) {
      throw UdfError("a tensor message holds " + std::to_string(buffer.size) + " bytes, its shape and type need " +
                     std::to_string(expected));
    }
    msg = HostFlowMsg::Tensor(std::move(shape), dtype, std::move(buffer), meta);
  } else if (payload == Payload::kRaw) {
    msg = HostFlowMsg::Raw(std::move(buffer), meta);
    const auto msg_type = static_cast<MsgType>(t[1].cast<uint16_t>());
    if (dfir::udf::IsUserMsgType(msg_type)) msg->SetMsgType(msg_type);
  } else {
    msg = HostFlowMsg::Empty(static_cast<MsgType>(t[1].cast<uint16_t>()), meta);
  }
  msg->SetRetCode(t[5].cast<int32_t>());
  msg->SetLabels(t[11].cast<uint32_t>(), t[10].cast<uint32_t>());
  return msg;
}

py::tuple TupleFromMsg(const std::shared_ptr<HostFlowMsg>& msg) {
  const MsgMeta& meta = msg->meta();
  py::object data = py::none();
  py::object shape = py::none();
  int32_t dtype = -1;
  if (msg->payload() != Payload::kEmpty) data = py::cast(UdfBuffer{msg});
  if (msg->tensor() != nullptr) {
    shape = py::cast(msg->tensor()->GetShape());
    dtype = static_cast<int32_t>(msg->tensor()->GetDataType());
  }
  return py::make_tuple(static_cast<int32_t>(msg->payload()), static_cast<uint16_t>(msg->GetMsgType()), dtype, shape,
                        data, msg->GetRetCode(), meta.transaction_id, meta.start_time, meta.end_time, meta.flow_flags,
                        msg->route_label(), msg->data_label());
}

template <typename T>
std::vector<T> ListOf(const py::handle& value) {
  return value.cast<std::vector<T>>();
}

std::vector<TensorDataType> DtypeList(const py::handle& value) {
  std::vector<TensorDataType> dtypes;
  for (const int32_t code : ListOf<int32_t>(value)) dtypes.push_back(static_cast<TensorDataType>(code));
  return dtypes;
}

// One init param from its plan type tag (dfir.core.udf_params) and value (a DType as its number).
HostAttrValue::Value AttrFromPlan(const std::string& name, const std::string& tag, const py::handle& value) {
  if (tag == "int") return value.cast<int64_t>();
  if (tag == "float") return value.cast<float>();
  if (tag == "bool") return value.cast<bool>();
  if (tag == "str") return value.cast<std::string>();
  if (tag == "dtype") return static_cast<TensorDataType>(value.cast<int32_t>());
  if (tag == "list_int") return ListOf<int64_t>(value);
  if (tag == "list_float") return ListOf<float>(value);
  if (tag == "list_bool") return ListOf<bool>(value);
  if (tag == "list_str") return ListOf<std::string>(value);
  if (tag == "list_dtype") return DtypeList(value);
  if (tag == "list_list_int") return value.cast<std::vector<std::vector<int64_t>>>();
  if (tag == "list_empty") return dfir::udf::EmptyList{};
  throw UdfError("init param '" + name + "' has type '" + tag + "', which a C++ UDF cannot read");
}

// Calls Python's `invoke(key, [(dtype, shape, array)], timeout[, transaction]) -> (ret,
// [(dtype, shape, array)], problem)` with the GIL held; `transaction()` (a TransactionMeta) is
// passed when given. Both are borrowed: the caller keeps them alive while the invoker runs (two
// pointers: making the invoker allocates nothing).
ModelInvoker InvokerOf(PyObject* invoke, const std::function<py::object()>* transaction = nullptr) {
  return [invoke, transaction](const std::string& key, const std::vector<std::shared_ptr<HostFlowMsg>>& inputs,
                               int32_t timeout, const MsgMeta& meta, std::vector<std::shared_ptr<HostFlowMsg>>& outputs,
                               std::string& problem) -> int32_t {
    const py::gil_scoped_acquire gil;
    try {
      py::list arrays;
      for (const auto& msg : inputs) {
        arrays.append(py::make_tuple(static_cast<int32_t>(msg->tensor()->GetDataType()), msg->tensor()->GetShape(),
                                     UdfBuffer{msg}));
      }
      const auto function = py::reinterpret_borrow<py::object>(invoke);
      const auto result =
          (transaction != nullptr ? function(key, arrays, timeout, (*transaction)()) : function(key, arrays, timeout))
              .cast<py::tuple>();
      const auto ret = result[0].cast<int32_t>();
      if (ret != FlowFunc::FLOW_FUNC_SUCCESS) {
        problem = result[2].cast<std::string>();
        return ret;
      }
      for (const auto& item : result[1]) {
        const auto tensor = item.cast<py::tuple>();
        Buffer buffer;
        HoldBuffer(tensor[2], buffer);
        outputs.push_back(HostFlowMsg::Tensor(tensor[1].cast<std::vector<int64_t>>(),
                                              static_cast<TensorDataType>(tensor[0].cast<int32_t>()),
                                              std::move(buffer), meta));
      }
      return ret;
    } catch (py::error_already_set& error) {
      problem = error.what();
      return FlowFunc::FLOW_FUNC_FAILED;
    } catch (const std::exception& error) {
      problem = error.what();
      return FlowFunc::FLOW_FUNC_FAILED;
    }
  };
}

std::shared_ptr<UdfInstance> CreateInstance(std::shared_ptr<UdfLibrary> library, const py::dict& facts,
                                            const py::list& params, const std::vector<std::string>& funcs) {
  dfir::udf::NodeFacts node;
  node.name = facts["name"].cast<std::string>();
  node.input_num = facts["input_num"].cast<size_t>();
  node.output_num = facts["output_num"].cast<size_t>();
  node.work_path = facts["work_path"].cast<std::string>();
  node.device_id = facts["device_id"].cast<int32_t>();
  node.instance_id = facts["instance_id"].cast<int32_t>();
  node.instance_num = facts["instance_num"].cast<int32_t>();
  std::map<std::string, std::shared_ptr<const HostAttrValue>> attrs;
  for (const auto& item : params) {
    const auto param = item.cast<py::tuple>();
    const auto name = param[0].cast<std::string>();
    attrs[name] = std::make_shared<const HostAttrValue>(AttrFromPlan(name, param[1].cast<std::string>(), param[2]));
  }
  auto meta_params = std::make_shared<HostMetaParams>(std::move(node), std::move(attrs));
  return std::make_shared<UdfInstance>(std::move(library), std::move(meta_params), funcs);
}

CallFacts CallOf(const MsgMeta& meta, const py::bytes& user_data, const py::object& exception) {
  CallFacts call;
  call.meta = meta;
  call.user_data = user_data.cast<std::string>();
  if (!exception.is_none()) {
    const auto raised = exception.cast<py::tuple>();
    call.has_exception = true;
    call.exception_code = raised[0].cast<int32_t>();
    call.exception_context = raised[1].cast<uint64_t>();
  }
  return call;
}

// (ret, [(index, output)], problems, (code, context) or None, transaction, last error logged),
// each output made by `make(msg)`.
template <typename MakeOutput>
py::tuple ResultTuple(const ProcResult& result, const MakeOutput& make, py::object transaction) {
  py::list outputs;
  for (const auto& output : result.outputs) outputs.append(py::make_tuple(output.index, make(output.msg)));
  py::object raised = py::none();
  if (result.raised) raised = py::make_tuple(result.raised_code, result.raised_context);
  return py::make_tuple(result.ret, outputs, result.problems, raised, std::move(transaction), result.last_error);
}

// -- runtime messages (dfir.core.messages) ----------------------------------------------------

// The Python types a plain call reads and builds, set once by configure_udf_messages.
struct MessageTypes {
  py::object message_type;  // Message(meta, kind, payload, ret_code, error, route_label, data_label, as_array)
  py::object meta_type;     // TransactionMeta(transaction_id, start_time, end_time, flow_flags, user_data)
  py::object tensor, raw, empty, object;          // the Kind members a C++ UDF takes
  py::object typed_object;  // typed_object(msg_type, bytes): what a raw message of a user type travels as
  py::object typed_raw;     // typed_raw(payload) -> (msg_type, bytes) or None: an object as a typed raw message
  std::map<int32_t, py::dtype> dtype_of_code;     // GE data type number -> numpy dtype
  std::vector<std::pair<py::object, int32_t>> code_of_dtype;  // numpy dtype (seen) -> GE number
};

MessageTypes& Messages() {
  static auto* types = new MessageTypes();  // never destroyed: outlives interpreter teardown order
  return *types;
}

// The attribute names read, interned once.
struct MessageNames {
  py::object meta = Intern("meta"), kind = Intern("kind"), payload = Intern("payload"), ret_code = Intern("ret_code"),
             route_label = Intern("route_label"), data_label = Intern("data_label"),
             transaction_id = Intern("transaction_id"), start_time = Intern("start_time"),
             end_time = Intern("end_time"), flow_flags = Intern("flow_flags"), user_data = Intern("user_data"),
             value = Intern("value"), error = Intern("error"), as_array = Intern("as_array");

  static py::object Intern(const char* name) {
    return py::reinterpret_steal<py::object>(PyUnicode_InternFromString(name));
  }
};

const MessageNames& Names() {
  static auto* names = new MessageNames();
  return *names;
}

py::object Attr(const py::handle& object, const py::object& name) { return dfir::bindings::Get(object, name); }

template <typename T>
T AttrOf(const py::handle& object, const py::object& name) {
  if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
    const py::object value = Attr(object, name);
    if (PyLong_CheckExact(value.ptr())) {  // the common case, without pybind11's general conversion
      const unsigned long long number = PyLong_AsUnsignedLongLong(value.ptr());
      if (PyErr_Occurred() != nullptr) throw py::error_already_set();
      if (number > std::numeric_limits<T>::max()) throw UdfError("a message field is out of range: " + std::to_string(number));
      return static_cast<T>(number);
    }
    return value.cast<T>();
  } else {
    return Attr(object, name).cast<T>();
  }
}

dfir::udf::RecordTypes& RecordTypesOf() {
  static auto* types = new dfir::udf::RecordTypes();
  return *types;
}

// `kinds`: the record kinds (positions in Kind) of tensor, raw and empty messages; `type_numbers`:
// numpy's type numbers of the data types in `dtypes` (GE data type number by numpy type number).
void ConfigureUdfMessages(py::object message_type, py::object meta_type, py::object tensor,
                          py::object raw, py::object empty, const py::dict& dtypes,
                          const std::tuple<uint8_t, uint8_t, uint8_t, uint8_t>& kinds,
                          const std::map<int32_t, int32_t>& type_numbers, py::object typed_object,
                          py::object typed_raw) {
  dfir::udf::RecordTypes& records = RecordTypesOf();
  std::tie(records.tensor, records.raw, records.empty, records.object) = kinds;
  for (const auto& [num, code] : type_numbers) records.dtype_of_num[num] = static_cast<TensorDataType>(code);
  for (const auto& [code, dtype] : dtypes) {
    records.num_of_dtype[static_cast<TensorDataType>(code.cast<int32_t>())] = py::reinterpret_borrow<py::dtype>(dtype).num();
  }
  MessageTypes& types = Messages();
  types.message_type = std::move(message_type);
  types.meta_type = std::move(meta_type);
  const MessageNames& name = Names();
  dfir::bindings::RegisterSlots(types.message_type, {&name.meta, &name.kind, &name.payload, &name.ret_code, &name.error,
                                                     &name.route_label, &name.data_label, &name.as_array});
  dfir::bindings::RegisterSlots(types.meta_type, {&name.transaction_id, &name.start_time, &name.end_time,
                                                  &name.flow_flags, &name.user_data});
  types.tensor = std::move(tensor);
  types.raw = std::move(raw);
  types.object = py::type::of(empty).attr("OBJECT");
  types.empty = std::move(empty);
  types.typed_object = std::move(typed_object);
  types.typed_raw = std::move(typed_raw);
  for (const auto& [code, dtype] : dtypes) {
    types.dtype_of_code[code.cast<int32_t>()] = py::reinterpret_borrow<py::dtype>(dtype);
    types.code_of_dtype.emplace_back(py::reinterpret_borrow<py::object>(dtype), code.cast<int32_t>());
  }
}

// GE's data type number of a numpy dtype, or -1: by identity first (numpy's dtypes are mostly
// singletons), then by equality (remembered).
int32_t CodeOfDtype(const py::dtype& dtype) {
  auto& known = Messages().code_of_dtype;
  for (const auto& [candidate, code] : known) {
    if (candidate.is(dtype)) return code;
  }
  for (const auto& [candidate, code] : known) {
    const int equal = PyObject_RichCompareBool(candidate.ptr(), dtype.ptr(), Py_EQ);
    if (equal < 0) throw py::error_already_set();
    if (equal == 1) {
      known.emplace_back(dtype, code);
      return code;
    }
  }
  return -1;
}

MsgMeta MsgMetaOf(const py::handle& meta) {
  const MessageNames& name = Names();
  MsgMeta fields;
  fields.transaction_id = AttrOf<uint64_t>(meta, name.transaction_id);
  fields.start_time = AttrOf<uint64_t>(meta, name.start_time);
  fields.end_time = AttrOf<uint64_t>(meta, name.end_time);
  fields.flow_flags = AttrOf<uint32_t>(meta, name.flow_flags);
  return fields;
}

// Input `position` of a plain call as a native message; UdfError for what a C++ UDF cannot take.
std::shared_ptr<HostFlowMsg> MsgFromMessage(size_t position, const py::handle& message, const MsgMeta& meta) {
  const MessageNames& name = Names();
  const MessageTypes& types = Messages();
  const py::object kind = Attr(message, name.kind);
  std::shared_ptr<HostFlowMsg> msg;
  if (kind.is(types.tensor) || kind.is(types.raw)) {
    py::object payload = Attr(message, name.payload);
    auto array = py::isinstance<py::array>(payload) &&
                         (py::reinterpret_borrow<py::array>(payload).flags() & py::array::c_style) != 0
                     ? py::reinterpret_borrow<py::array>(payload)
                     : py::array::ensure(payload, py::array::c_style);
    if (!array) throw py::error_already_set();
    Buffer buffer = HeldArray(array);
    if (kind.is(types.raw)) {
      msg = HostFlowMsg::Raw(std::move(buffer), meta);
    } else {
      const int32_t code = CodeOfDtype(array.dtype());
      if (code < 0 || dfir::udf::ElementSize(static_cast<TensorDataType>(code)) == 0) {
        throw UdfError("input " + std::to_string(position) + " is a " + py::str(array.dtype()).cast<std::string>() +
                       " tensor, which a C++ UDF cannot take");
      }
      std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
      msg = HostFlowMsg::Tensor(std::move(shape), static_cast<TensorDataType>(code), std::move(buffer), meta);
    }
  } else if (kind.is(types.empty)) {
    msg = HostFlowMsg::Empty(MsgType::MSG_TYPE_TENSOR_DATA, meta);
  } else if (py::object typed = kind.is(types.object) ? types.typed_raw(Attr(message, name.payload)) : py::none();
             !typed.is_none()) {
    // An object with a message type of its own: raw bytes of that type, as GE gives it.
    const auto pair = py::reinterpret_borrow<py::tuple>(typed);
    Buffer buffer;
    HoldBuffer(py::bytearray(pair[1].cast<std::string>()), buffer);
    msg = HostFlowMsg::Raw(std::move(buffer), meta);
    msg->SetMsgType(static_cast<MsgType>(pair[0].cast<uint16_t>()));
  } else {
    throw UdfError("input " + std::to_string(position) + " is a " + AttrOf<std::string>(kind, name.value) +
                   " message; a C++ UDF takes tensors, raw data and empty messages");
  }
  msg->SetRetCode(AttrOf<int32_t>(message, name.ret_code));
  msg->SetLabels(AttrOf<uint32_t>(message, name.data_label), AttrOf<uint32_t>(message, name.route_label));
  return msg;
}

// The base of an array over `msg`'s bytes: a capsule holding the message (lighter than a UdfBuffer,
// whose pybind11 instance is registered and unregistered once per output).
py::capsule OwnerOf(const std::shared_ptr<HostFlowMsg>& msg) {
  return py::capsule(new std::shared_ptr<HostFlowMsg>(msg),
                     [](void* held) { delete static_cast<std::shared_ptr<HostFlowMsg>*>(held); });
}

// A C-contiguous numpy array of type `type_number` and `shape` over `msg`'s bytes, which its base
// (OwnerOf) keeps alive.
py::object ArrayOver(const std::shared_ptr<HostFlowMsg>& msg, int type_number, const std::vector<int64_t>& shape) {
  if (shape.size() > NPY_MAXDIMS) {
    throw UdfError("the UDF set a tensor of " + std::to_string(shape.size()) + " dimensions; numpy holds at most " +
                   std::to_string(NPY_MAXDIMS));
  }
  npy_intp dims[NPY_MAXDIMS];
  std::copy(shape.begin(), shape.end(), dims);
  PyObject* array = PyArray_New(&PyArray_Type, static_cast<int>(shape.size()), dims, type_number, nullptr,
                                msg->buffer().data, 0, NPY_ARRAY_CARRAY, nullptr);
  if (array == nullptr) throw py::error_already_set();
  py::object owned = py::reinterpret_steal<py::object>(array);
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), OwnerOf(msg).release().ptr()) != 0) {
    throw py::error_already_set();
  }
  return owned;
}

// The Message of an output: of the call's transaction `transaction` (a TransactionMeta with the
// fields `fields`) unless the proc changed them; data viewed where the library wrote them. A
// non-zero return code is kept (runtime/worker/udf_project.py makes it the transaction's failure).
py::object MessageFromMsg(const std::shared_ptr<HostFlowMsg>& msg, const py::object& transaction,
                          const MsgMeta& fields) {
  const MessageTypes& types = Messages();
  const MsgMeta& meta = msg->meta();
  py::object meta_object = transaction;
  if (meta.transaction_id != fields.transaction_id || meta.start_time != fields.start_time ||
      meta.end_time != fields.end_time || meta.flow_flags != fields.flow_flags) {
    meta_object = types.meta_type(meta.transaction_id, meta.start_time, meta.end_time, meta.flow_flags,
                                  Attr(transaction, Names().user_data));
  }
  py::object kind = types.empty;
  py::object payload = py::none();
  const Buffer& buffer = msg->buffer();
  if (msg->tensor() != nullptr) {
    const auto code = static_cast<int32_t>(msg->tensor()->GetDataType());
    const auto dtype = types.dtype_of_code.find(code);
    if (dtype == types.dtype_of_code.end()) {
      throw UdfError("the UDF set a tensor of data type " + std::to_string(code) + ", which has no numpy type");
    }
    kind = types.tensor;
    payload = ArrayOver(msg, dtype->second.num(), msg->tensor()->GetShape());
  } else if (msg->payload() == Payload::kRaw && dfir::udf::IsUserMsgType(msg->GetMsgType())) {
    kind = types.object;
    payload = types.typed_object(static_cast<int32_t>(msg->GetMsgType()),
                                 py::bytes(reinterpret_cast<const char*>(buffer.data), buffer.size));
  } else if (msg->payload() == Payload::kRaw) {
    kind = types.raw;
    payload = ArrayOver(msg, NPY_UINT8, {static_cast<int64_t>(buffer.size)});
  }
  const MessageNames& name = Names();
  return dfir::bindings::NewRecordObject(types.message_type, {{&name.meta, std::move(meta_object)},
                                                               {&name.kind, std::move(kind)},
                                                               {&name.payload, std::move(payload)},
                                                               {&name.ret_code, py::int_(msg->GetRetCode())},
                                                               {&name.error, py::str("")},
                                                               {&name.route_label, py::int_(msg->route_label())},
                                                               {&name.data_label, py::int_(msg->data_label())},
                                                               {&name.as_array, py::bool_(false)}});
}

// The TransactionMeta of a call's transaction: `latest`'s fields and `user_data`.
py::object TransactionMetaOf(const MsgMeta& latest, const std::string& user_data) {
  return Messages().meta_type(latest.transaction_id, latest.start_time, latest.end_time, latest.flow_flags,
                              py::bytes(user_data));
}

// The GeError a message a C++ UDF cannot take is refused with (an exception object).
py::object RefusalOf(const std::exception& error) {
  static const auto* ge_error = new py::object(py::module_::import("dfir.core.errors").attr("GeError"));
  return (*ge_error)(py::str(error.what()));
}

// A stream-input call: `take(input, timeout_ms) -> (status, message tuple or None)` and
// `size(input) -> int` are Python's, called with the GIL held (borrowed, as `invoke`).
py::tuple ProcStream(UdfInstance& instance, const std::string& func, const std::vector<uint32_t>& ports, size_t input_num,
                     int32_t depth, const py::object& take, const py::object& size, const py::tuple& meta,
                     const py::bytes& user_data, const py::object& exception, const py::object& invoke) {
  dfir::udf::StreamInputs inputs;
  inputs.count = input_num;
  inputs.depth = depth;
  PyObject* take_fn = take.ptr();
  PyObject* size_fn = size.ptr();
  inputs.take = [take_fn](size_t input, int32_t timeout, std::shared_ptr<HostFlowMsg>& msg) -> int32_t {
    const py::gil_scoped_acquire gil;
    try {
      const auto got = py::reinterpret_borrow<py::object>(take_fn)(input, timeout).cast<py::tuple>();
      const auto status = got[0].cast<int32_t>();
      if (status == FlowFunc::FLOW_FUNC_SUCCESS) msg = MsgFromTuple(got[1].cast<py::tuple>());
      return status;
    } catch (py::error_already_set& error) {
      error.discard_as_unraisable("dfir C++ UDF stream input");
      return FlowFunc::FLOW_FUNC_FAILED;
    } catch (const std::exception&) {
      return FlowFunc::FLOW_FUNC_FAILED;
    }
  };
  inputs.size = [size_fn](size_t input) -> int32_t {
    const py::gil_scoped_acquire gil;
    try {
      return py::reinterpret_borrow<py::object>(size_fn)(input).cast<int32_t>();
    } catch (py::error_already_set& error) {
      error.discard_as_unraisable("dfir C++ UDF stream input");
      return 0;
    }
  };
  CallFacts call = CallOf(MetaOf(meta, 0), user_data, exception);
  ProcResult result;
  {
    const py::gil_scoped_release release;
    result = instance.ProcStream(func, ports, std::move(inputs), std::move(call), InvokerOf(invoke.ptr()));
  }
  return ResultTuple(result, TupleFromMsg, py::int_(result.meta.transaction_id));
}

// Python's log handler, held for the life of the process (records may come from any thread).
PyObject* g_log_handler = nullptr;

void SetLogHandler(const py::object& handler) {
  Py_XDECREF(g_log_handler);
  g_log_handler = handler.is_none() ? nullptr : handler.inc_ref().ptr();
  if (g_log_handler == nullptr) {
    dfir::udf::SetLogHandler(nullptr);
    return;
  }
  dfir::udf::SetLogHandler([](int32_t level, const dfir::udf::LogScope& scope, const std::string& text) {
    if (!Py_IsInitialized()) return;
    const py::gil_scoped_acquire gil;
    if (g_log_handler == nullptr) return;
    try {
      py::reinterpret_borrow<py::object>(g_log_handler)(level, scope.node, scope.func, scope.instance, text);
    } catch (py::error_already_set& error) {
      error.discard_as_unraisable("dfir C++ UDF log handler");
    }
  });
}

}  // namespace

namespace dfir::udf {

const RecordTypes& UdfRecordTypes() { return RecordTypesOf(); }

UdfCaller::UdfCaller(std::shared_ptr<UdfInstance> instance, std::string func, std::vector<uint32_t> ports,
                     py::dict exceptions, py::object invoke, py::object settle)
    : instance_(std::move(instance)),
      func_(std::move(func)),
      ports_(std::move(ports)),
      exceptions_(std::move(exceptions)),
      invoke_(std::move(invoke)),
      settle_(std::move(settle)) {}

ProcResult UdfCaller::Run(const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs, const MsgMeta& latest,
                          const std::string& user_data) {
  CallFacts call;
  call.meta = latest;
  call.user_data = user_data;
  PyObject* raised = exceptions_.empty() ? nullptr : PyDict_GetItemWithError(exceptions_.ptr(), py::int_(latest.transaction_id).ptr());
  if (raised == nullptr && PyErr_Occurred() != nullptr) throw py::error_already_set();
  if (raised != nullptr) {
    const auto code_and_context = py::reinterpret_borrow<py::tuple>(raised);
    call.has_exception = true;
    call.exception_code = code_and_context[0].cast<int32_t>();
    call.exception_context = code_and_context[1].cast<uint64_t>();
  }
  // The invoker runs only inside the proc below, while `latest` and `user_data` live.
  const std::function<py::object()> transaction = [&latest, &user_data] { return TransactionMetaOf(latest, user_data); };
  ModelInvoker invoker = InvokerOf(invoke_.ptr(), &transaction);
  const py::gil_scoped_release release;
  return instance_->Proc(func_, ports_, inputs, std::move(call), std::move(invoker));
}

bool UdfCaller::Clean(const ProcResult& result) {
  if (result.ret != FlowFunc::FLOW_FUNC_SUCCESS || !result.problems.empty() || result.raised) return false;
  for (const auto& output : result.outputs) {
    if (output.msg->GetRetCode() != 0) return false;
  }
  return true;
}

py::object UdfCaller::Settle(const ProcResult& result, const MsgMeta& latest, const std::string& user_data) {
  return SettleWith(result, TransactionMetaOf(latest, user_data), latest);
}

py::object UdfCaller::SettleWith(const ProcResult& result, const py::object& transaction, const MsgMeta& latest) {
  return settle_(ResultTuple(
      result, [&](const std::shared_ptr<HostFlowMsg>& msg) { return MessageFromMsg(msg, transaction, latest); },
      transaction));
}

py::object UdfCaller::CallMessages(const py::list& inputs) {
  if (!Messages().message_type) throw UdfError("the UDF message types are not configured");
  std::vector<std::shared_ptr<FlowFunc::FlowMsg>> messages;
  messages.reserve(inputs.size());
  py::object transaction;  // the latest input's TransactionMeta (a new empty one without inputs)
  MsgMeta latest;
  try {
    for (size_t j = 0; j < inputs.size(); ++j) {
      const py::handle message = inputs[j];
      py::object meta = Attr(message, Names().meta);
      const MsgMeta fields = MsgMetaOf(meta);
      messages.push_back(MsgFromMessage(j, message, fields));
      if (!transaction || fields.transaction_id >= latest.transaction_id) {
        latest = fields;
        transaction = std::move(meta);
      }
    }
  } catch (py::error_already_set& error) {
    return settle_(py::none(), error.value());
  } catch (const UdfError& error) {
    return settle_(py::none(), RefusalOf(error));
  }
  if (!transaction) transaction = Messages().meta_type();
  const ProcResult result = Run(messages, latest, AttrOf<std::string>(transaction, Names().user_data));
  if (!Clean(result)) return SettleWith(result, transaction, latest);
  py::list sets(result.outputs.size());
  for (size_t k = 0; k < result.outputs.size(); ++k) {
    const auto& output = result.outputs[k];
    py::list set(1);
    set[0] = py::make_tuple(ports_.at(output.index), MessageFromMsg(output.msg, transaction, latest));
    sets[k] = std::move(set);
  }
  return sets;
}

}  // namespace dfir::udf

void SetupUdfBindings(py::module_& m) {
  py::class_<UdfBuffer>(m, "UdfBuffer", py::buffer_protocol(),
                        "The bytes of a message a C++ UDF produced (1-D uint8, writable, not copied).")
      .def_buffer([](UdfBuffer& held) {
        const Buffer& buffer = held.msg->buffer();
        return py::buffer_info(buffer.data, 1, py::format_descriptor<uint8_t>::format(), 1,
                               {static_cast<py::ssize_t>(buffer.size)}, {1}, false);
      });

  py::class_<UdfLibrary, std::shared_ptr<UdfLibrary>>(m, "UdfLibrary", "A loaded C++ UDF library.")
      .def_property_readonly("name", &UdfLibrary::name)
      .def("funcs", &UdfLibrary::FuncNames, "The func names it registers, sorted.");

  m.def(
      "load_udf_library",
      [](const py::buffer& data, const std::string& name) {
        const py::buffer_info bytes = data.request();
        const py::gil_scoped_release release;
        return UdfLibrary::Load(static_cast<const uint8_t*>(bytes.ptr), static_cast<size_t>(bytes.size * bytes.itemsize),
                                name);
      },
      py::arg("data"), py::arg("name"), "Load a C++ UDF library from its bytes; GeError when it cannot be used.");

  py::class_<UdfInstance, std::shared_ptr<UdfInstance>>(m, "UdfInstance", "One node's objects of a C++ UDF library.")
      .def(py::init(&CreateInstance), py::arg("library"), py::arg("facts"), py::arg("params"), py::arg("funcs"))
      .def(
          "init",
          [](UdfInstance& instance) {
            std::string problem;
            int32_t ret = 0;
            {
              const py::gil_scoped_release release;
              ret = instance.Init(problem);
            }
            return py::make_tuple(ret, problem);
          },
          "Init every object: (ret, why it failed).")
      .def(
          "reset_flow_func_state",
          [](UdfInstance& instance) {
            std::string problem;
            int32_t ret = 0;
            {
              const py::gil_scoped_release release;
              ret = instance.ResetState(problem);
            }
            return py::make_tuple(ret, problem);
          },
          "ResetFlowFuncState of every object: (ret, why it failed); FLOW_FUNC_ERR_NOT_SUPPORT (564002) from a "
          "class that does not implement it.")
      .def("proc_stream", &ProcStream, py::arg("func"), py::arg("ports"), py::arg("input_num"), py::arg("depth"),
           py::arg("take"), py::arg("size"), py::arg("meta"), py::arg("user_data"), py::arg("exception"),
           py::arg("invoke"), "Run a stream-input func with the GIL released; returns as `proc`.");

  py::class_<dfir::udf::UdfCaller, std::shared_ptr<dfir::udf::UdfCaller>>(
      m, "UdfCaller", "A plain func of a node's C++ UDF objects as the runtime calls it (runtime/bindings/udf_caller.h).")
      .def(py::init<std::shared_ptr<UdfInstance>, std::string, std::vector<uint32_t>, py::dict, py::object,
                    py::object>(),
           py::arg("instance"), py::arg("func"), py::arg("ports"), py::arg("exceptions"), py::arg("invoke"),
           py::arg("settle"))
      .def("__call__", &dfir::udf::UdfCaller::CallMessages, py::arg("inputs"),
           "The output sets [[(port, Message)], ...] of a call on `inputs` (one Message per input); a call that "
           "does not succeed cleanly returns what `settle` makes of it.")
      .def_property_readonly("ports", &dfir::udf::UdfCaller::ports);

  m.def("configure_udf_messages", &ConfigureUdfMessages, py::arg("message_type"), py::arg("meta_type"),
        py::arg("tensor"), py::arg("raw"), py::arg("empty"), py::arg("dtypes"),
        py::arg("kinds"), py::arg("type_numbers"), py::arg("typed_object"), py::arg("typed_raw"),
        "Set the Python types a C++ UDF's Messages are read and built with, and how records name them; `dtypes` "
        "maps GE data type numbers to numpy dtypes, `type_numbers` numpy type numbers to GE data type numbers, "
        "`kinds` gives the record kinds of tensor, raw, empty and object messages; `typed_object(msg_type, bytes)` "
        "is what a raw message of a user type travels as, `typed_raw(payload)` the (msg_type, bytes) of an object "
        "that has a message type of its own, or None.");
  m.def("set_udf_log_handler", &SetLogHandler, py::arg("handler"),
        "handler(level, node, func, instance, text) receives C++ UDF log records (None: stderr).");
}
