// The fixed-size record a shared-memory channel carries per message: the transaction's
// metadata, what the message holds, and where its bytes are. Plain C++: no Python headers.
//
// A message's body is its tensor data, its pickled object or its error text. Bodies of up to
// kInlineBytes travel inside the record; larger ones live in an arena block that the record
// holds one reference to (the consumer takes it over, so nothing is copied between processes).
#ifndef DFIR_RUNTIME_NATIVE_MESSAGE_H_
#define DFIR_RUNTIME_NATIVE_MESSAGE_H_

#include <cstdint>

namespace dfir::rt {

inline constexpr int kMaxDims = 8;
inline constexpr int kUserDataBytes = 64;
inline constexpr int kInlineBytes = 296;

// What the message holds: the position of its dfir.core.messages.Kind in that enum.
using MessageKind = uint8_t;

// Bits of MessageRecord::flags.
// A tensor a Python UDF returned as a numpy array (Message.as_array): GE carries such a value as
// a pickled object, so a UDF reading it and the driver's fetch() get the array, not a Tensor.
inline constexpr uint32_t kFlagArrayValue = 1u;
// A kUserType body a C++ UDF sent as raw data of its msg type (FlowMsg::SetMsgType): without a
// deserialize_func for the type it arrives as its bytes with their type (TypedBytes), not an error.
inline constexpr uint32_t kFlagTypedRaw = 2u;

// How the body is stored.
enum class BodyEncoding : uint8_t {
  kNone = 0,          // an empty message without error text
  kArray = 1,         // array data (a tensor, raw bytes): dtype_num, ndim and shape describe it
  kPickledArray = 2,  // a tensor that has no flat layout here (more than kMaxDims dims, ...)
  kPickle = 3,        // a Python object
  kText = 4,          // the error text of a failed message (UTF-8)
  kUserType = 5,      // a registered user type's serialized bytes; dtype_num holds its msg type
};

struct MessageRecord {
  uint64_t transaction_id;
  int64_t start_time;
  int64_t end_time;
  uint32_t flow_flags;
  uint32_t user_data_size;
  uint8_t user_data[kUserDataBytes];
  int32_t ret_code;
  MessageKind kind;
  BodyEncoding encoding;
  uint8_t ndim;
  uint8_t inline_body;  // 1: the body is in `inline_bytes`; 0: in `block`
  int32_t dtype_num;    // numpy's type number (both sides run the same numpy)
  uint32_t route_label;
  int64_t shape[kMaxDims];
  uint64_t block;        // region offset of the arena block holding the body (0: none)
  uint64_t body_offset;  // region offset of the body's first byte (when in a block)
  uint64_t body_size;
  uint32_t data_label;
  uint32_t flags;  // kFlag* bits
  uint8_t inline_bytes[kInlineBytes];
};
static_assert(sizeof(MessageRecord) == 504, "one record and its sequence number fill 512 bytes");

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_MESSAGE_H_
