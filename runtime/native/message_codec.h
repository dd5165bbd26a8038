// The record side of the message codec: a message's transaction, labels and body as the
// MessageRecord of a shared channel carries them, and the arena references those bodies hold
// (plain C++: no Python headers). What a message is at either end — a dfir.core.messages.Message,
// a numpy array, a pickled object — is the bindings' part (runtime/bindings/runtime_bindings.cc).
//
// Encoding fills a record's header, then its body:
//
//   MessageRecord record;
//   WriteHeader(info, kind, ret_code, route_label, data_label, record);
//   BodyWriter writer(region, deadline, blocking);
//   if (!writer.WriteArray(layout, data, size, /*shared_block=*/0, record)) ...  // no room in time
//
// A record whose body lies in the arena holds one reference to its block. Whoever ends up with
// the record (the consumer of its channel) takes the reference over: it gives it back with
// ReleaseBody once it has read the body, or hands it to a BlockReference that lives as long as
// whatever reads the block in place.
#ifndef DFIR_RUNTIME_NATIVE_MESSAGE_CODEC_H_
#define DFIR_RUNTIME_NATIVE_MESSAGE_CODEC_H_

#include <cstdint>
#include <memory>

#include "blocking.h"
#include "eventcount.h"
#include "ledger.h"
#include "message.h"
#include "region.h"

namespace dfir::rt {

// Sets every field of `record` up to the body to these values; the body fields are zero (no
// body, kNone). The inline bytes are left as they are.
void WriteHeader(const TransactionInfo& info, MessageKind kind, int32_t ret_code, uint32_t route_label,
                 uint32_t data_label, MessageRecord& record);
// The transaction fields of `record`.
TransactionInfo TransactionOf(const MessageRecord& record);
// Whether two records carry the same transaction fields.
bool SameTransaction(const MessageRecord& a, const MessageRecord& b);
// Whether `record` is a plain tensor: kind `tensor_kind`, an array body, no return code.
bool IsPlainTensor(const MessageRecord& record, MessageKind tensor_kind);

// What an array body is: numpy's type number and the dimensions (at most kMaxDims).
struct ArrayLayout {
  int32_t dtype_num = 0;
  int ndim = 0;
  int64_t shape[kMaxDims] = {};
};

// Writes the bodies of records bound for one region, waiting for arena room until a deadline.
class BodyWriter {
 public:
  BodyWriter(Region& region, const Deadline& deadline, BlockingScope& blocking)
      : region_(region), deadline_(deadline), blocking_(blocking) {}

  // Makes the `size` bytes at `data`, stored as `encoding`, `record`'s body: inside the record
  // when they fit (kInlineBytes), else in an arena block — `shared_block` itself when non-zero (a
  // block the caller knows holds these bytes: it gains a reference and nothing is copied), else
  // a new block they are copied to, waiting for room (inside the blocking scope). False when no
  // room came before the deadline or the region closed: the record then holds no reference.
  bool Write(BodyEncoding encoding, const void* data, uint64_t size, uint64_t shared_block, MessageRecord& record);
  // As Write, for an array body (kArray) of `layout`.
  bool WriteArray(const ArrayLayout& layout, const void* data, uint64_t size, uint64_t shared_block,
                  MessageRecord& record);

 private:
  Region& region_;
  Deadline deadline_;
  BlockingScope& blocking_;
};

// The first byte of `record`'s body.
const uint8_t* BodyOf(const Region& region, const MessageRecord& record);
// One more reference to the block of `record`'s body, for one more copy of the record.
void RetainBody(Region& region, const MessageRecord& record);
// Gives back the reference a record holds to the block of its body (none for an inline body).
void ReleaseBody(Region& region, const MessageRecord& record);

// A reference to an arena block, held by what was made of a body in place (the Python bindings:
// the base of a numpy array over the block's bytes). Destroying it gives the reference back, in
// the process that took it only: a forked child inherits the holder, not the share.
class BlockReference {
 public:
  // Takes over one reference to `block` (a received record's).
  BlockReference(std::shared_ptr<Region> region, uint64_t block);
  ~BlockReference();
  BlockReference(const BlockReference&) = delete;
  BlockReference& operator=(const BlockReference&) = delete;

  const Region& region() const { return *region_; }
  uint64_t block() const { return block_; }

 private:
  std::shared_ptr<Region> region_;
  uint64_t block_;
  uint64_t epoch_;
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_MESSAGE_CODEC_H_
