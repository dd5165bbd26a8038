#include "region.h"

#include <sched.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

namespace dfir::rt {
namespace {

constexpr uint64_t kRegionMagic = 0x4E4F494745524644;  // "DFREGION"
constexpr uint32_t kRegionVersion = 1;
constexpr uint64_t kLine = 64;
constexpr uint64_t kPage = 4096;

uint64_t AlignUp(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

size_t PayloadBytes(ChannelKind kind) {
  return kind == ChannelKind::kShared ? sizeof(MessageRecord) : sizeof(uintptr_t);
}

}  // namespace

struct Region::Header {
  uint64_t magic;
  uint32_t version;
  std::atomic<uint32_t> closing;
  uint32_t bells;
  uint32_t channels;
  uint32_t workers;
  uint32_t reserved;
  uint64_t bells_offset;    // one EventCount per 64-byte line
  uint64_t channels_offset; // one u64 ring offset per channel
  uint64_t workers_offset;
  uint64_t arena_header_offset;
};

std::shared_ptr<Region> Region::Create(const RegionLayout& layout, const std::string& name) {
  for (size_t i = 0; i < layout.channels.size(); ++i) {
    const ChannelSpec& spec = layout.channels[i];
    if (spec.capacity == 0) throw RuntimeError("channel " + std::to_string(i) + " has capacity 0; expected >= 1");
    if (spec.consumer_bell >= layout.bells) {
      throw RuntimeError("channel " + std::to_string(i) + " rings doorbell " + std::to_string(spec.consumer_bell) +
                         " but the region has " + std::to_string(layout.bells));
    }
  }
  uint64_t offset = AlignUp(sizeof(Header), kLine);
  const uint64_t bells_offset = offset;
  offset = AlignUp(offset + uint64_t{layout.bells} * kLine, kLine);
  const uint64_t channels_offset = offset;
  offset = AlignUp(offset + layout.channels.size() * sizeof(uint64_t), kLine);
  std::vector<uint64_t> ring_offsets;
  for (const ChannelSpec& spec : layout.channels) {
    ring_offsets.push_back(offset);
    offset = AlignUp(offset + Ring::Footprint(spec.capacity, PayloadBytes(spec.kind)), kLine);
  }
  const uint64_t workers_offset = offset;
  offset = AlignUp(offset + uint64_t{layout.workers} * sizeof(WorkerSlot), kLine);
  const uint64_t arena_header_offset = offset;
  const uint64_t arena_begin = AlignUp(offset + sizeof(ArenaHeader), kPage);
  const uint64_t arena_end = arena_begin + AlignUp(layout.arena_bytes, kPage);

  std::shared_ptr<SharedMemory> memory = SharedMemory::Create(name, arena_end);
  uint8_t* base = memory->base();
  auto* header = new (base) Header();
  header->magic = kRegionMagic;
  header->version = kRegionVersion;
  header->bells = layout.bells;
  header->channels = static_cast<uint32_t>(layout.channels.size());
  header->workers = layout.workers;
  header->bells_offset = bells_offset;
  header->channels_offset = channels_offset;
  header->workers_offset = workers_offset;
  header->arena_header_offset = arena_header_offset;
  for (uint32_t i = 0; i < layout.bells; ++i) new (base + bells_offset + i * kLine) EventCount();
  auto* table = reinterpret_cast<uint64_t*>(base + channels_offset);
  for (size_t i = 0; i < layout.channels.size(); ++i) {
    const ChannelSpec& spec = layout.channels[i];
    table[i] = ring_offsets[i];
    Ring::Create(base + ring_offsets[i], spec.capacity, PayloadBytes(spec.kind), spec.consumer_bell,
                 static_cast<uint32_t>(spec.kind));
  }
  for (uint32_t i = 0; i < layout.workers; ++i) new (base + workers_offset + i * sizeof(WorkerSlot)) WorkerSlot();
  Arena::Format(*memory, arena_header_offset, arena_begin, arena_end);
  return std::shared_ptr<Region>(new Region(std::move(memory), arena_header_offset));
}

Region::Region(std::shared_ptr<SharedMemory> memory, uint64_t arena_header_offset)
    : memory_(std::move(memory)), arena_(*memory_, arena_header_offset) {}

Region::Header& Region::header() const { return *reinterpret_cast<Header*>(memory_->base()); }

uint32_t Region::bell_count() const { return header().bells; }
uint32_t Region::channel_count() const { return header().channels; }
uint32_t Region::worker_count() const { return header().workers; }

EventCount& Region::bell(uint32_t index) const {
  if (index >= header().bells) {
    throw RuntimeError("doorbell " + std::to_string(index) + " is out of range; the region has " +
                       std::to_string(header().bells));
  }
  return *reinterpret_cast<EventCount*>(base() + header().bells_offset + index * kLine);
}

void Region::CheckChannel(uint32_t channel) const {
  if (channel >= header().channels) {
    throw RuntimeError("channel " + std::to_string(channel) + " is out of range; the region has " +
                       std::to_string(header().channels));
  }
}

Ring Region::ring(uint32_t channel) const {
  CheckChannel(channel);
  const auto* table = reinterpret_cast<const uint64_t*>(base() + header().channels_offset);
  return Ring(base() + table[channel]);
}

ChannelKind Region::kind(uint32_t channel) const { return static_cast<ChannelKind>(ring(channel).header().kind); }

WorkerSlot& Region::worker(uint32_t index) const {
  if (index >= header().workers) {
    throw RuntimeError("worker " + std::to_string(index) + " is out of range; the region has " +
                       std::to_string(header().workers));
  }
  return *reinterpret_cast<WorkerSlot*>(base() + header().workers_offset + index * sizeof(WorkerSlot));
}

void Region::SetLastWords(uint32_t index, const std::string& text) {
  WorkerSlot& slot = worker(index);
  size_t size = std::min<size_t>(text.size(), kLastWordsBytes - 1);
  std::memcpy(slot.last_words, text.data(), size);
  slot.last_words[size] = '\0';
}

std::string Region::LastWords(uint32_t index) const {
  const WorkerSlot& slot = worker(index);
  return std::string(slot.last_words, strnlen(slot.last_words, kLastWordsBytes));
}

bool Region::closing() const { return header().closing.load(std::memory_order_seq_cst) != 0; }

void Region::Close() {
  header().closing.store(1, std::memory_order_seq_cst);
  for (uint32_t i = 0; i < header().bells; ++i) NotifyAll(bell(i));
  for (uint32_t i = 0; i < header().channels; ++i) NotifyAll(ring(i).header().space);
  NotifyAll(arena_.freed());
}

template <typename Ready>
WaitStatus Region::WaitOn(EventCount& ec, Ready&& ready, const Deadline& deadline) {
  for (;;) {
    if (ready()) return WaitStatus::kReady;
    if (closing()) return WaitStatus::kClosed;
    // Let a producer waiting for this core run first: with more busy processes than cores, it
    // often makes the condition true within its time slice, and a sleep and a wake-up (about
    // 25 us in all) are saved; when nothing else is runnable this returns at once.
    sched_yield();
    if (ready()) return WaitStatus::kReady;
    uint32_t key = BeginWait(ec);
    if (ready()) {
      CancelWait(ec);
      return WaitStatus::kReady;
    }
    if (closing()) {
      CancelWait(ec);
      return WaitStatus::kClosed;
    }
    if (!Sleep(ec, key, deadline)) return ready() ? WaitStatus::kReady : WaitStatus::kTimeout;
  }
}

void Region::SetConsumerBell(const std::vector<uint32_t>& channels, uint32_t bell_index) {
  bell(bell_index);  // checks the index
  for (uint32_t channel : channels) ring(channel).header().consumer_bell = bell_index;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

WaitStatus Region::WaitForRoom(const std::vector<uint32_t>& channels, const Deadline& deadline) {
  for (;;) {
    const uint32_t* full = nullptr;
    for (const uint32_t& channel : channels) {
      if (!ring(channel).has_room()) {
        full = &channel;
        break;
      }
    }
    if (full == nullptr) return WaitStatus::kReady;
    Ring blocked = ring(*full);
    WaitStatus status = WaitOn(blocked.header().space, [&] { return blocked.has_room(); }, deadline);
    if (status != WaitStatus::kReady) return status;
  }
}

WaitStatus Region::WaitForRoomFor(const std::vector<ChannelRoom>& rooms, const Deadline& deadline) {
  for (;;) {
    const ChannelRoom* full = nullptr;
    for (const ChannelRoom& room : rooms) {
      if (!ring(room.channel).has_room_for(room.messages)) {
        full = &room;
        break;
      }
    }
    if (full == nullptr) return WaitStatus::kReady;
    Ring blocked = ring(full->channel);
    const uint32_t messages = full->messages;
    WaitStatus status = WaitOn(blocked.header().space, [&] { return blocked.has_room_for(messages); }, deadline);
    if (status != WaitStatus::kReady) return status;
  }
}

WaitStatus Region::WaitForMessages(const std::vector<uint32_t>& channels, uint32_t bell_index,
                                   const Deadline& deadline) {
  for (uint32_t channel : channels) CheckChannel(channel);
  auto all_hold_one = [&] {
    for (uint32_t channel : channels) {
      if (ring(channel).Ready(1) == 0) return false;
    }
    return true;
  };
  return WaitOn(bell(bell_index), all_hold_one, deadline);
}

WaitStatus Region::WaitForChange(const std::vector<uint32_t>& channels, uint32_t bell_index, int64_t stalled,
                                 const Deadline& deadline) {
  for (uint32_t channel : channels) CheckChannel(channel);
  auto changed = [&] {
    int64_t waiting = 0;
    for (uint32_t channel : channels) waiting += static_cast<int64_t>(ring(channel).Ready(UINT64_MAX));
    return waiting > 0 && waiting != stalled;
  };
  return WaitOn(bell(bell_index), changed, deadline);
}

WaitStatus Region::WaitForClose(uint32_t bell_index, const Deadline& deadline) {
  return WaitOn(bell(bell_index), [] { return false; }, deadline);
}

uint64_t Region::AllocateBlock(uint64_t size, const Deadline& deadline) {
  if (SizeClassOf(size) >= kSizeClasses || ClassCapacity(SizeClassOf(size)) + kBlockHeaderBytes > arena_.space()) {
    throw RuntimeError("a message body of " + std::to_string(size) + " bytes does not fit in the tensor arena of " +
                       std::to_string(arena_.space()) + " bytes");
  }
  uint64_t block = 0;
  auto allocated = [&] { return (block = arena_.TryAllocate(size)) != 0; };
  return WaitOn(arena_.freed(), allocated, deadline) == WaitStatus::kReady ? block : 0;
}

}  // namespace dfir::rt
