#include "ring.h"

#include <new>

namespace dfir::rt {

Ring Ring::Create(void* memory, uint32_t capacity, size_t payload, uint32_t consumer_bell, uint32_t kind) {
  auto* header = new (memory) RingHeader();
  header->capacity = capacity;
  header->slots = capacity + 1;
  header->stride = static_cast<uint32_t>(Stride(payload));
  header->consumer_bell = consumer_bell;
  header->kind = kind;
  return Ring(memory);  // zero-filled slots: each free for its first push
}

void Ring::Clear() {
  for (uint64_t pos = 0; pos < header_->slots; ++pos) SequenceAt(pos).store(0, std::memory_order_relaxed);
  header_->head.store(0, std::memory_order_relaxed);
  header_->tail.store(0, std::memory_order_release);
}

const uint8_t* Ring::Peek(uint64_t index) const {
  uint64_t pos = header_->head.load(std::memory_order_acquire) + index;
  if (Sequence(pos) != pos + 1) return nullptr;
  return PayloadAt(pos);
}

}  // namespace dfir::rt
