// A bounded multi-producer multi-consumer FIFO of fixed-size slots in caller-given memory
// (shared or private), after D. Vyukov's bounded queue: each slot carries a sequence number,
// so producers and consumers claim positions with one compare-and-swap and never lock.
// Plain C++: no Python headers.
#ifndef DFIR_RUNTIME_NATIVE_RING_H_
#define DFIR_RUNTIME_NATIVE_RING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "eventcount.h"

namespace dfir::rt {

// The control block; `slots` slots of `stride` bytes follow it (64-byte aligned). Positions
// only grow: `tail` counts pushes and `head` counts pops since creation. There is one slot more
// than the capacity: with a single slot a free and a full slot would carry the same sequence.
// A slot stores its sequence number less its index, so that zero-filled memory is an empty
// ring: creating one writes its header only, and a slot's page is first touched when used
// (a model with thousands of shared channels maps hundreds of MiB of rings).
struct RingHeader {
  uint32_t capacity = 0;       // messages the ring holds at most
  uint32_t slots = 0;          // capacity + 1
  uint32_t stride = 0;         // bytes per slot: an 8-byte sequence number, then the payload
  uint32_t consumer_bell = 0;  // which doorbell of the region this ring's consumer sleeps on
  uint32_t kind = 0;           // what the payload is; see region.h
  // Enqueue policy: 0 FIFO (a full ring blocks its producers), 1 OVERWRITE (a producer that
  // finds the ring full drops the oldest message instead; see channel_io.h).
  std::atomic<uint32_t> overwrite{0};
  std::atomic<uint64_t> dropped{0};  // messages an OVERWRITE ring dropped since creation
  alignas(64) std::atomic<uint64_t> tail{0};
  alignas(64) std::atomic<uint64_t> head{0};
  alignas(64) EventCount space;  // producers waiting for room sleep here
};

class Ring {
 public:
  static constexpr size_t kSequenceBytes = 8;

  // The bytes a ring of `capacity` messages of `payload` bytes needs, header included.
  static size_t Footprint(uint32_t capacity, size_t payload) {
    return sizeof(RingHeader) + (size_t{capacity} + 1) * Stride(payload);
  }
  static size_t Stride(size_t payload) { return (kSequenceBytes + payload + 15) / 16 * 16; }

  // Formats `memory` (Footprint bytes, zero-filled) as an empty ring.
  static Ring Create(void* memory, uint32_t capacity, size_t payload, uint32_t consumer_bell, uint32_t kind);
  // A view of a ring formatted by Create, possibly by another process.
  explicit Ring(void* memory) : header_(static_cast<RingHeader*>(memory)) {}

  RingHeader& header() const { return *header_; }
  uint32_t capacity() const { return header_->capacity; }
  // Whether a full ring drops its oldest message for a push (OVERWRITE) rather than refuse it.
  bool overwrites() const { return header_->overwrite.load(std::memory_order_relaxed) != 0; }
  void SetOverwrite(bool overwrite) { header_->overwrite.store(overwrite ? 1 : 0, std::memory_order_release); }
  uint64_t dropped() const { return header_->dropped.load(std::memory_order_acquire); }
  // Messages waiting, counting those a producer is still writing; exact when no push or pop
  // runs at the same time.
  uint64_t size() const {
    uint64_t head = header_->head.load(std::memory_order_acquire);
    uint64_t tail = header_->tail.load(std::memory_order_acquire);
    return tail > head ? tail - head : 0;
  }
  // How many messages, up to `limit`, can be popped now: the oldest ones whose producers have
  // finished writing them (exact for the ring's single consumer).
  uint64_t Ready(uint64_t limit) const {
    uint64_t head = header_->head.load(std::memory_order_acquire);
    uint64_t count = 0;
    while (count < limit && count < header_->capacity && Sequence(head + count) == head + count + 1) {
      ++count;
    }
    return count;
  }
  // True when the next push succeeds: the ring holds fewer than `capacity` messages and the slot
  // at the tail has been given back by its consumer (exact for the ring's single producer).
  // Always true for an OVERWRITE ring, whose pushes make room by dropping the oldest message.
  bool has_room() const {
    if (overwrites()) return true;
    uint64_t tail = header_->tail.load(std::memory_order_acquire);
    return tail - header_->head.load(std::memory_order_acquire) < header_->capacity && Sequence(tail) == tail;
  }
  // True when the next `messages` pushes succeed: the ring has room for that many more and the
  // slots from the tail on have all been given back by its consumer (exact for the ring's single
  // producer). False for more messages than the capacity. Always true for an OVERWRITE ring.
  bool has_room_for(uint64_t messages) const {
    if (overwrites()) return true;
    uint64_t tail = header_->tail.load(std::memory_order_acquire);
    uint64_t held = tail - header_->head.load(std::memory_order_acquire);
    if (held > header_->capacity || messages > header_->capacity - held) return false;
    for (uint64_t k = 0; k < messages; ++k) {
      if (Sequence(tail + k) != tail + k) return false;
    }
    return true;
  }
  uint64_t pops() const { return header_->head.load(std::memory_order_acquire); }

  // Claims the next free slot, lets `fill(payload)` write it and publishes it; false when full.
  template <typename Fill>
  bool TryPush(Fill&& fill) {
    uint64_t pos = header_->tail.load(std::memory_order_relaxed);
    for (;;) {
      if (pos - header_->head.load(std::memory_order_acquire) >= header_->capacity) return false;
      int64_t lag = static_cast<int64_t>(Sequence(pos) - pos);
      if (lag == 0) {
        if (header_->tail.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          fill(PayloadAt(pos));
          SetSequence(pos, pos + 1);
          return true;
        }
      } else if (lag < 0) {
        return false;
      } else {
        pos = header_->tail.load(std::memory_order_relaxed);
      }
    }
  }

  // Claims the oldest message, lets `read(payload)` take it and frees the slot; false when empty.
  template <typename Read>
  bool TryPop(Read&& read) {
    uint64_t pos = header_->head.load(std::memory_order_relaxed);
    for (;;) {
      int64_t lag = static_cast<int64_t>(Sequence(pos) - (pos + 1));
      if (lag == 0) {
        if (header_->head.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          read(PayloadAt(pos));
          SetSequence(pos, pos + header_->slots);
          return true;
        }
      } else if (lag < 0) {
        return false;
      } else {
        pos = header_->head.load(std::memory_order_relaxed);
      }
    }
  }

  // Claims the oldest message for dropping (OVERWRITE): like TryPop, and counts it in `dropped`.
  template <typename Read>
  bool TryDropOldest(Read&& read) {
    if (!TryPop(std::forward<Read>(read))) return false;
    header_->dropped.fetch_add(1, std::memory_order_acq_rel);
    return true;
  }

  // The payload of the `index`-th waiting message (0: the oldest), or nullptr. Only for the
  // ring's single consumer, which alone can remove messages.
  const uint8_t* Peek(uint64_t index) const;

  // Empties a ring that no process uses now (the local channels of a worker that died: what
  // they held were pointers into its memory), as Create left it.
  void Clear();

  // Repairs after a process died in the middle of a push or a pop (the caller makes sure that
  // no live process is inside one of these positions):
  // the positions in [head, tail) claimed by a push and not published (yet);
  std::vector<uint64_t> Unpublished() const;
  // publishes `payload` (`bytes`, at most the slot's) at each of `positions` that is still
  // unpublished; how many;
  uint64_t PublishAt(const std::vector<uint64_t>& positions, const void* payload, size_t bytes);
  // frees the slots of positions the consumer claimed but never freed (its pop died halfway),
  // which would stop the producers once they come round to them; how many.
  uint64_t FreeUnreleased();

  // Wakes producers blocked on a full ring; consumers call it once per batch of pops, so a
  // producer that keeps the ring full is woken once per batch rather than once per message.
  void NotifySpace() { NotifyAll(header_->space); }

 private:
  // The sequence number of the slot of position `pos` (see RingHeader).
  uint64_t Sequence(uint64_t pos) const {
    return SequenceAt(pos).load(std::memory_order_acquire) + pos % header_->slots;
  }
  void SetSequence(uint64_t pos, uint64_t sequence) const {
    SequenceAt(pos).store(sequence - pos % header_->slots, std::memory_order_release);
  }
  std::atomic<uint64_t>& SequenceAt(uint64_t pos) const {
    return *reinterpret_cast<std::atomic<uint64_t>*>(SlotAt(pos));
  }
  uint8_t* PayloadAt(uint64_t pos) const { return SlotAt(pos) + kSequenceBytes; }
  uint8_t* SlotAt(uint64_t pos) const {
    return reinterpret_cast<uint8_t*>(header_ + 1) + (pos % header_->slots) * header_->stride;
  }

  RingHeader* header_;
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_RING_H_
