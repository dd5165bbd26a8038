#include "message_codec.h"

#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

#include "arena.h"
#include "shm.h"

namespace dfir::rt {

void WriteHeader(const TransactionInfo& info, MessageKind kind, int32_t ret_code, uint32_t route_label,
                 uint32_t data_label, MessageRecord& record) {
  std::memset(&record, 0, offsetof(MessageRecord, inline_bytes));
  record.transaction_id = info.transaction_id;
  record.start_time = info.start_time;
  record.end_time = info.end_time;
  record.flow_flags = info.flow_flags;
  record.user_data_size = info.user_data_size;
  std::memcpy(record.user_data, info.user_data.data(), info.user_data_size);
  record.ret_code = ret_code;
  record.kind = kind;
  record.route_label = route_label;
  record.data_label = data_label;
}

TransactionInfo TransactionOf(const MessageRecord& record) {
  TransactionInfo info;
  info.transaction_id = record.transaction_id;
  info.start_time = record.start_time;
  info.end_time = record.end_time;
  info.flow_flags = record.flow_flags;
  info.user_data_size = record.user_data_size;
  std::memcpy(info.user_data.data(), record.user_data, record.user_data_size);
  return info;
}

bool SameTransaction(const MessageRecord& a, const MessageRecord& b) {
  return a.transaction_id == b.transaction_id && a.start_time == b.start_time && a.end_time == b.end_time &&
         a.flow_flags == b.flow_flags && a.user_data_size == b.user_data_size &&
         std::memcmp(a.user_data, b.user_data, a.user_data_size) == 0;
}

bool IsPlainTensor(const MessageRecord& record, MessageKind tensor_kind) {
  return record.ret_code == 0 && record.kind == tensor_kind && record.encoding == BodyEncoding::kArray;
}

bool BodyWriter::Write(BodyEncoding encoding, const void* data, uint64_t size, uint64_t shared_block,
                       MessageRecord& record) {
  record.encoding = encoding;
  record.body_size = size;
  if (size <= kInlineBytes) {
    record.inline_body = 1;
    std::memcpy(record.inline_bytes, data, size);
    return true;
  }
  if (shared_block != 0) {  // zero copy: the consumer reads the producer's buffer
    region_.arena().Retain(shared_block);
    record.block = shared_block;
    record.body_offset = static_cast<uint64_t>(static_cast<const uint8_t*>(data) - region_.base());
    return true;
  }
  Blocking blocking(blocking_);
  uint64_t block = region_.AllocateBlock(size, deadline_);
  if (block == 0) return false;
  std::memcpy(region_.arena().Data(block), data, size);
  record.block = block;
  record.body_offset = block + kBlockHeaderBytes;
  return true;
}

bool BodyWriter::WriteArray(const ArrayLayout& layout, const void* data, uint64_t size, uint64_t shared_block,
                            MessageRecord& record) {
  if (layout.ndim < 0 || layout.ndim > kMaxDims) {
    throw RuntimeError("an array body has at most " + std::to_string(kMaxDims) + " dimensions, got " +
                       std::to_string(layout.ndim));
  }
  record.dtype_num = layout.dtype_num;
  record.ndim = static_cast<uint8_t>(layout.ndim);
  for (int d = 0; d < layout.ndim; ++d) record.shape[d] = layout.shape[d];
  return Write(BodyEncoding::kArray, data, size, shared_block, record);
}

const uint8_t* BodyOf(const Region& region, const MessageRecord& record) {
  return record.inline_body != 0 ? record.inline_bytes : region.base() + record.body_offset;
}

void RetainBody(Region& region, const MessageRecord& record) {
  if (record.inline_body == 0 && record.block != 0) region.arena().Retain(record.block);
}

void ReleaseBody(Region& region, const MessageRecord& record) {
  if (record.inline_body == 0 && record.block != 0) region.arena().Release(record.block);
}

BlockReference::BlockReference(std::shared_ptr<Region> region, uint64_t block)
    : region_(std::move(region)), block_(block), epoch_(ForkEpoch()) {}

BlockReference::~BlockReference() {
  if (epoch_ == ForkEpoch()) region_->arena().Release(block_);
}

}  // namespace dfir::rt
