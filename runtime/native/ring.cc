#include "ring.h"

#include <cstring>

#include <algorithm>

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

std::vector<uint64_t> Ring::Unpublished() const {
  std::vector<uint64_t> positions;
  const uint64_t tail = header_->tail.load(std::memory_order_acquire);
  for (uint64_t pos = header_->head.load(std::memory_order_acquire); pos < tail; ++pos) {
    if (Sequence(pos) != pos + 1) positions.push_back(pos);
  }
  return positions;
}

uint64_t Ring::PublishAt(const std::vector<uint64_t>& positions, const void* payload, size_t bytes) {
  uint64_t published = 0;
  for (uint64_t pos : positions) {
    if (pos < header_->head.load(std::memory_order_acquire) || Sequence(pos) == pos + 1) continue;
    std::memcpy(PayloadAt(pos), payload, std::min<size_t>(bytes, header_->stride - kSequenceBytes));
    SetSequence(pos, pos + 1);
    ++published;
  }
  return published;
}

uint64_t Ring::FreeUnreleased() {
  uint64_t freed = 0;
  const uint64_t head = header_->head.load(std::memory_order_acquire);
  for (uint64_t pos = head > header_->slots ? head - header_->slots : 0; pos < head; ++pos) {
    if (Sequence(pos) == pos + 1) {
      SetSequence(pos, pos + header_->slots);
      ++freed;
    }
  }
  return freed;
}

const uint8_t* Ring::Peek(uint64_t index) const {
  uint64_t pos = header_->head.load(std::memory_order_acquire) + index;
  if (Sequence(pos) != pos + 1) return nullptr;
  return PayloadAt(pos);
}

}  // namespace dfir::rt
