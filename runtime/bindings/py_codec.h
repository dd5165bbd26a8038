// The Python side of the message codec (runtime/native/message_codec.h), shared by the binding
// files of the runtime core: a dfir.core.messages.Message (its slots read directly, no attribute
// lookups) becomes the header and body of a record — an object payload pickled, a tensor
// payload's numpy array viewed in place — and a record becomes a Message again, or a numpy array
// over its arena block, whose base (a capsule) owns the block reference. Also what the native
// core needs of Python while it works: the GIL released while it blocks, and references to the
// objects local channels carry. py_codec.cc binds `configure_codec` and `new_message`.
#ifndef DFIR_RUNTIME_BINDINGS_PY_CODEC_H_
#define DFIR_RUNTIME_BINDINGS_PY_CODEC_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blocking.h"
#include "channel_io.h"
#include "message_codec.h"
#include "numpy_api.h"
#include "region.h"

namespace dfir::bindings {

// -- the Python types of the codec ------------------------------------------------------------

// The Python types a record becomes, set once by dfir.runtime.channels (configure_codec).
struct PythonTypes {
  pybind11::object message_type;  // dfir.core.messages.Message
  pybind11::object meta_type;     // dfir.core.messages.TransactionMeta
  std::vector<pybind11::object> kinds;  // the members of dfir.core.messages.Kind, in order
  pybind11::object object_kind;         // Kind.OBJECT: its payload is pickled
  rt::MessageKind tensor_kind = 0;      // the position of Kind.TENSOR (the member named TENSOR)
  // Message fields the codec leaves at their default
  std::vector<std::pair<pybind11::object, pybind11::object>> other_fields;
  pybind11::object dumps;               // bytes of a Python object (cloudpickle)
  pybind11::object loads;
  // The user message types (dataflow's msg_type_register), the registry's own dicts: a class ->
  // (msg type, serialize_func), and a msg type -> deserialize_func (set_user_types).
  pybind11::object user_types;
  pybind11::object user_loaders;
  // What a Python UDF receives for a tensor message's array (dfir.core.tensor.udf_tensor: a
  // Tensor over it, or the array when its dtype has no GE data type) and the Tensor type, set by
  // set_udf_tensor; unset: the array itself.
  pybind11::object udf_tensor;
  pybind11::object tensor_type;
};

PythonTypes& Types();

// The attribute names the codec reads and writes, interned once.
struct Names {
  pybind11::object meta = Intern("meta"), kind = Intern("kind"), payload = Intern("payload"),
                   ret_code = Intern("ret_code"), error = Intern("error"), transaction_id = Intern("transaction_id"),
                   start_time = Intern("start_time"), end_time = Intern("end_time"),
                   flow_flags = Intern("flow_flags"), user_data = Intern("user_data"),
                   route_label = Intern("route_label"), data_label = Intern("data_label"),
                   as_array = Intern("as_array"), array = Intern("_array"), desc = Intern("_desc");

  static pybind11::object Intern(const char* name) {
    return pybind11::reinterpret_steal<pybind11::object>(PyUnicode_InternFromString(name));
  }
};

const Names& Name();

// A new dfir.core.messages.Message with these fields (the codec's other fields at their defaults),
// its slots set directly.
pybind11::object NewMessage(pybind11::object meta, pybind11::object kind, pybind11::object payload, int32_t ret_code,
                            pybind11::object error, uint32_t route_label, uint32_t data_label,
                            bool as_array = false);

// What a Python UDF receives for `payload`, a message's payload: for a tensor message that no
// UDF returned as an array (`as_tensor`: kind TENSOR, no rt::kFlagArrayValue) what
// Types().udf_tensor makes of its array (a Tensor; its description found once per dtype and
// shape, then shared natively), anything else as it is.
pybind11::object UdfArgument(pybind11::object payload, bool as_tensor);

// Whether a Python UDF receives a record's payload as a Tensor (see UdfArgument).
inline bool AsTensor(const rt::MessageRecord& record, rt::MessageKind tensor_kind) {
  return record.kind == tensor_kind && (record.flags & rt::kFlagArrayValue) == 0;
}

void CheckConfigured();

// -- what the native core needs of Python -----------------------------------------------------

// Releases the GIL while the native core blocks (one call's scope).
class GilRelease final : public rt::BlockingScope {
 public:
  void Enter() override { released_.emplace(); }
  void Leave() override { released_.reset(); }

 private:
  std::optional<pybind11::gil_scoped_release> released_;
};

// Local channels carry Python objects; a channel holds one reference to each.
class PythonReferences final : public rt::LocalObjects {
 public:
  void Retain(void* object) override { Py_INCREF(static_cast<PyObject*>(object)); }
  void Release(void* object) override { Py_XDECREF(static_cast<PyObject*>(object)); }
};

PythonReferences& References();

inline int StatusCode(rt::WaitStatus status) { return static_cast<int>(status); }

// -- arena blocks owned by Python objects ----------------------------------------------------

// The arena block of `region` that holds all of `array`'s bytes, or 0: the array (or the array
// it views) was allocated in the arena by the numpy allocator, or received from a channel.
uint64_t ArenaBlockOf(rt::Region& region, PyArrayObject* array);

// -- encoding: a Message into a record --------------------------------------------------------

// The fields of a TransactionMeta.
rt::TransactionInfo TransactionOf(const pybind11::handle& meta);

// The fields of a (transaction_id, start_time, end_time, flow_flags, user_data) tuple.
rt::TransactionInfo TransactionOfFields(const pybind11::tuple& fields);

// Whether a record can carry `array`'s bytes as they are (numeric, native byte order, at most
// rt::kMaxDims dimensions); other arrays travel pickled.
bool HasFlatLayout(PyArrayObject* array);

class Encoder {
 public:
  Encoder(std::shared_ptr<rt::Region> region, const rt::Deadline& deadline, rt::BlockingScope& blocking)
      : region_(std::move(region)), writer_(*region_, deadline, blocking) {}

  // Fills `record` from `message`; false when no arena room came before the deadline or the
  // region closed. A body that is not inline holds one block reference.
  bool Encode(const pybind11::handle& message, rt::MessageRecord& record);

  // Fills `record` as Encode fills it for a tensor message whose header `header` holds (see
  // rt::WriteHeader) and whose payload is `array`, a numpy array.
  bool EncodeArray(const rt::MessageRecord& header, const pybind11::object& array, rt::MessageRecord& record);

 private:
  bool EncodeTensor(const pybind11::object& payload, rt::MessageRecord& record);
  bool EncodeBytes(const pybind11::bytes& body, rt::BodyEncoding encoding, rt::MessageRecord& record);
  // An object of a registered user type: its serialize_func's bytes (kUserType).
  bool EncodeUserType(const pybind11::object& payload, const pybind11::handle& entry, rt::MessageRecord& record);

  std::shared_ptr<rt::Region> region_;
  rt::BodyWriter writer_;
};

// -- decoding: a record into a Message ---------------------------------------------------------

// A new TransactionMeta of these fields.
pybind11::object DecodeMeta(const rt::TransactionInfo& info);

// A record's transaction as (transaction_id, start_time, end_time, flow_flags, user_data).
pybind11::tuple FieldsOf(const rt::MessageRecord& record);

class Decoder {
 public:
  explicit Decoder(std::shared_ptr<rt::Region> region) : region_(std::move(region)) {}

  // What a message that left its channel stands for: the Message of a record (taking over its
  // block reference), or the object a local channel carried (taking over its reference).
  pybind11::object Take(const rt::Taken& message);

  // The Message a record stands for; takes over the record's block reference. Consecutive
  // records of one transaction (a set's inputs) share one TransactionMeta (it is immutable).
  pybind11::object Decode(const rt::MessageRecord& record);

  // A record's payload (None without one), its error text into `error`; takes over the record's
  // block reference.
  pybind11::object DecodeBody(const rt::MessageRecord& record, std::string& error);

  // The Message of `record`'s header with `meta` (a TransactionMeta), `payload` and `error`.
  static pybind11::object MessageOf(const rt::MessageRecord& record, pybind11::object meta, pybind11::object payload,
                                    const std::string& error);

  // The numpy array of an array body; takes over the record's block reference.
  pybind11::object DecodeArray(const rt::MessageRecord& record);

 private:
  pybind11::object BodyView(const rt::MessageRecord& record) const;
  // The object a kUserType body stands for (its msg type's deserialize_func of its bytes).
  pybind11::object DecodeUserType(const rt::MessageRecord& record);

  std::shared_ptr<rt::Region> region_;
  pybind11::object last_meta_;          // the TransactionMeta of the last record decoded
  rt::MessageRecord last_transaction_;  // its transaction fields (those before ret_code)
};

}  // namespace dfir::bindings

#endif  // DFIR_RUNTIME_BINDINGS_PY_CODEC_H_
