#include "channel_io.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "message_codec.h"
#include "ring.h"
#include "shm.h"

namespace dfir::rt {

thread_local ByteMeter* ByteMeter::current_ __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

LocalObjectBytes local_object_bytes = nullptr;

bool AllHaveRoom(const Region& region, const std::vector<ChannelRoom>& rooms) {
  for (const ChannelRoom& room : rooms) {
    if (!region.ring(room.channel).has_room_for(room.messages)) return false;
  }
  return true;
}

// Whether `channels` (one entry per message of a put) names no channel twice: the common put,
// checked without allocating while it is small.
bool Distinct(const std::vector<uint32_t>& channels, size_t small) {
  if (channels.size() > small) return false;
  for (size_t i = 1; i < channels.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (channels[i] == channels[j]) return false;
    }
  }
  return true;
}

// The room a put needs: each of its channels once, with the messages the put carries for it,
// at most the channel's capacity (a put of more can never be on the channel at once).
std::vector<ChannelRoom> RoomsOf(const Region& region, std::vector<uint32_t> channels) {
  std::sort(channels.begin(), channels.end());
  std::vector<ChannelRoom> rooms;
  for (size_t i = 0; i < channels.size();) {
    size_t end = i;
    while (end < channels.size() && channels[end] == channels[i]) ++end;
    const uint64_t capacity = region.ring(channels[i]).capacity();
    rooms.push_back(ChannelRoom{channels[i], static_cast<uint32_t>(std::min<uint64_t>(end - i, capacity))});
    i = end;
  }
  return rooms;
}

uint64_t ReadySets(const Region& region, const std::vector<uint32_t>& channels, uint64_t limit) {
  for (uint32_t channel : channels) limit = std::min(limit, region.ring(channel).Ready(limit));
  return limit;
}

// Drops the oldest message of OVERWRITE `channel` (if a consumer took it first, nothing),
// giving back what it holds: a record's body, a local object's reference.
void DropOldest(Region& region, uint32_t channel, LocalObjects& locals) {
  Ring ring = region.ring(channel);
  if (IsShared(region, channel)) {
    MessageRecord record;
    if (ring.TryDropOldest([&](const uint8_t* slot) { std::memcpy(&record, slot, sizeof record); })) {
      ReleaseBody(region, record);
    }
  } else {
    void* object = nullptr;
    if (ring.TryDropOldest([&](const uint8_t* slot) { std::memcpy(&object, slot, sizeof object); })) {
      locals.Release(object);
    }
  }
}

// How long a consumer waits for the message that replaces one a producer dropped between the
// consumer's count and its take (an OVERWRITE channel): the producer pushes right after.
constexpr auto kReplacementWait = std::chrono::seconds(1);

// Pops the oldest message of `channel` with `read`. A counted message of an OVERWRITE channel
// may have been dropped meanwhile: its replacement is taken instead, once pushed.
template <typename Read>
bool PopCounted(Ring& ring, Read&& read) {
  if (ring.TryPop(read)) return true;
  if (!ring.overwrites()) return false;
  const auto give_up = std::chrono::steady_clock::now() + kReplacementWait;
  while (std::chrono::steady_clock::now() < give_up) {
    if (ring.TryPop(read)) return true;
    sched_yield();
  }
  return false;
}

[[noreturn]] void LostMessage(uint32_t channel) {
  throw RuntimeError("channel " + std::to_string(channel) +
                     " lost a ready message: another consumer took it (a channel has one consumer)");
}

bool AllShared(const Region& region, const std::vector<uint32_t>& channels) {
  for (uint32_t channel : channels) {
    if (!IsShared(region, channel)) return false;
  }
  return true;
}

const MessageRecord* NextRecord(const Region& region, uint32_t channel) {
  return reinterpret_cast<const MessageRecord*>(region.ring(channel).Peek(0));
}

}  // namespace

bool IsShared(const Region& region, uint32_t channel) { return region.kind(channel) == ChannelKind::kShared; }

// A put to thousands of channels of one firing pool rings its one doorbell once.
void RingConsumers(const Region& region, const std::vector<uint32_t>& channels) {
  if (channels.size() == 1) {
    NotifyAll(region.bell(region.ring(channels[0]).header().consumer_bell));
    return;
  }
  std::vector<uint32_t> bells;
  bells.reserve(channels.size());
  for (uint32_t channel : channels) bells.push_back(region.ring(channel).header().consumer_bell);
  std::sort(bells.begin(), bells.end());
  bells.erase(std::unique(bells.begin(), bells.end()), bells.end());
  for (uint32_t bell : bells) NotifyAll(region.bell(bell));
}

// -- putting ----------------------------------------------------------------------------------

void SetLocalObjectBytes(LocalObjectBytes bytes) { local_object_bytes = bytes; }

uint64_t LocalBytes(void* object) { return local_object_bytes != nullptr ? local_object_bytes(object) : 0; }

uint64_t MessageBytes(const Taken& message) {
  return message.record != nullptr ? message.record->body_size : LocalBytes(message.object);
}

void PendingPut::Add(uint32_t channel, const MessageRecord& record, const void* key) {
  ByteMeter::CountOut(record.body_size);
  records_.push_back(record);
  outgoing_.push_back(Outgoing{channel, records_.size() - 1, nullptr});
  if (key == nullptr) return;
  keyed_.push_back(Keyed{key, records_.size() - 1});
  if (keyed_.size() > kLinearKeys) {
    if (indexed_.empty()) {
      for (const Keyed& keyed : keyed_) indexed_.emplace(keyed.key, keyed.record);
    }
    indexed_.emplace(key, records_.size() - 1);
  }
}

bool PendingPut::AddAgain(uint32_t channel, const void* key) {
  size_t record = kNoRecord;
  if (!indexed_.empty()) {
    const auto found = indexed_.find(key);
    if (found != indexed_.end()) record = found->second;
  } else {
    const auto found = std::find_if(keyed_.begin(), keyed_.end(), [key](const Keyed& entry) { return entry.key == key; });
    if (found != keyed_.end()) record = found->record;
  }
  if (record == kNoRecord) return false;
  ByteMeter::CountOut(records_[record].body_size);
  records_.push_back(records_[record]);
  RetainBody(region_, records_.back());
  outgoing_.push_back(Outgoing{channel, records_.size() - 1, nullptr});
  return true;
}

void PendingPut::AddLocal(uint32_t channel, void* object) {
  ByteMeter::CountOutLocal(object);
  outgoing_.push_back(Outgoing{channel, kNoRecord, object});
}

void PendingPut::OpenOnPush(TransactionLedger& ledger, const TransactionInfo& info) {
  ledger_ = &ledger;
  opened_ = info;
}

WaitStatus PendingPut::Push(const Deadline& deadline, BlockingScope& blocking, LocalObjects& locals, bool ring) {
  if (outgoing_.empty()) return WaitStatus::kReady;
  ring_before_waiting_ = !ring;
  if (!HasRoomNow()) {
    // Room for every message at once: one per channel in the common put, else as many as the
    // put carries for each channel. Only a wait enters the blocking scope: entering costs a switch.
    const std::vector<uint32_t> channels = Channels();
    std::vector<ChannelRoom> rooms;
    if (Distinct(channels, kLinearKeys)) {
      rooms.reserve(channels.size());
      for (uint32_t channel : channels) rooms.push_back(ChannelRoom{channel, 1});
    } else {
      rooms = RoomsOf(region_, channels);
    }
    WaitStatus status = WaitForRoom(channels, rooms, deadline, blocking, ring_before_waiting_);
    if (status != WaitStatus::kReady) {
      Discard();
      return status;
    }
  }
  if (ledger_ != nullptr) ledger_->Open(opened_);
  for (const Outgoing& message : outgoing_) {
    WaitStatus status = PushOne(message, deadline, blocking, locals);
    if (status != WaitStatus::kReady) {  // the region closed while the put was half done
      Discard();
      if (ring) RingOutgoing();
      return status;
    }
    ++pushed_;
  }
  if (ring) RingOutgoing();
  return WaitStatus::kReady;
}

std::vector<uint32_t> PendingPut::Channels() const {
  std::vector<uint32_t> channels;
  channels.reserve(outgoing_.size());
  for (const Outgoing& message : outgoing_) channels.push_back(message.channel);
  return channels;
}

bool PendingPut::HasRoomNow() const {
  // The common put names each channel once, and few of them: checked without allocating.
  bool distinct = outgoing_.size() <= kLinearKeys;
  for (size_t i = 1; distinct && i < outgoing_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (outgoing_[i].channel == outgoing_[j].channel) distinct = false;
    }
  }
  if (!distinct) return AllHaveRoom(region_, RoomsOf(region_, Channels()));
  for (const Outgoing& message : outgoing_) {
    if (!region_.ring(message.channel).has_room()) return false;
  }
  return true;
}

void PendingPut::RingOutgoing() const {
  if (outgoing_.size() == 1) {
    NotifyAll(region_.bell(region_.ring(outgoing_[0].channel).header().consumer_bell));
    return;
  }
  RingConsumers(region_, Channels());
}

WaitStatus PendingPut::WaitForRoom(const std::vector<uint32_t>& channels, const std::vector<ChannelRoom>& rooms,
                                   const Deadline& deadline, BlockingScope& blocking, bool ring_first) {
  // A consumer whose doorbell a put without `ring` did not ring may sleep on a full channel.
  if (ring_first) RingConsumers(region_, channels);
  Blocking waiting(blocking);
  return region_.WaitForRoomFor(rooms, deadline);
}

WaitStatus PendingPut::PushOne(const Outgoing& message, const Deadline& deadline, BlockingScope& blocking,
                               LocalObjects& locals) {
  Ring ring = region_.ring(message.channel);
  for (;;) {
    bool pushed = message.record != kNoRecord
                      ? ring.TryPush([&](uint8_t* slot) {
                          std::memcpy(slot, &records_[message.record], sizeof(MessageRecord));
                        })
                      : ring.TryPush([&](uint8_t* slot) {
                          locals.Retain(message.object);
                          std::memcpy(slot, &message.object, sizeof message.object);
                        });
    if (pushed) return WaitStatus::kReady;
    if (ring.overwrites()) {  // OVERWRITE: the oldest message makes room, and is counted
      DropOldest(region_, message.channel, locals);
      continue;
    }
    // Another producer took the room this put waited for, or the put carries more messages for
    // this channel than it holds; wait again (no FIFO message is dropped).
    // The messages pushed so far are not rung yet: the consumer must wake to make room.
    WaitStatus status = WaitForRoom({message.channel}, {ChannelRoom{message.channel, 1}}, deadline, blocking, true);
    if (status == WaitStatus::kClosed) return status;
    if (status != WaitStatus::kReady) {
      throw RuntimeError("channel " + std::to_string(message.channel) + " stayed full while a put was half done");
    }
  }
}

void PendingPut::Discard() {
  for (; pushed_ < outgoing_.size(); ++pushed_) {
    const Outgoing& message = outgoing_[pushed_];
    if (message.record != kNoRecord) ReleaseBody(region_, records_[message.record]);
  }
}

// -- taking -----------------------------------------------------------------------------------

SetsReady AwaitSets(Region& region, const std::vector<uint32_t>& channels, uint32_t bell, uint64_t limit,
                    const Deadline& deadline, BlockingScope& blocking, ArrivalForecast* forecast) {
  uint64_t ready = ReadySets(region, channels, limit);
  if (ready != 0) return SetsReady{WaitStatus::kReady, ready};
  WaitStatus status;
  {
    Blocking waiting(blocking);
    status = forecast != nullptr ? forecast->Await(region, channels, bell, deadline)
                                 : region.WaitForMessages(channels, bell, deadline);
  }
  if (status != WaitStatus::kReady) return SetsReady{status, 0};
  return SetsReady{WaitStatus::kReady, ReadySets(region, channels, limit)};
}

void TakeSets(Region& region, const std::vector<uint32_t>& channels, uint64_t sets,
              FunctionRef<void(size_t, const Taken&)> take) {
  struct WakeProducers {
    const Region& region;
    const std::vector<uint32_t>& channels;
    ~WakeProducers() {
      for (uint32_t channel : channels) region.ring(channel).NotifySpace();
    }
  } wake{region, channels};
  MessageRecord record;
  for (uint64_t n = 0; n < sets; ++n) {
    for (size_t i = 0; i < channels.size(); ++i) {
      Ring ring = region.ring(channels[i]);
      if (IsShared(region, channels[i])) {
        if (!PopCounted(ring, [&](const uint8_t* slot) { std::memcpy(&record, slot, sizeof record); })) {
          LostMessage(channels[i]);
        }
        ByteMeter::CountIn(Taken{&record, nullptr});
        take(i, Taken{&record, nullptr});
      } else {
        void* object = nullptr;
        if (!PopCounted(ring, [&](const uint8_t* slot) { std::memcpy(&object, slot, sizeof object); })) {
          LostMessage(channels[i]);
        }
        ByteMeter::CountIn(Taken{nullptr, object});
        take(i, Taken{nullptr, object});
      }
    }
  }
}

bool NextSetIsPlainTensors(const Region& region, const std::vector<uint32_t>& channels, MessageKind tensor_kind) {
  if (!AllShared(region, channels)) return false;
  const MessageRecord* first = nullptr;
  for (uint32_t channel : channels) {
    const MessageRecord* record = NextRecord(region, channel);
    if (record == nullptr || !IsPlainTensor(*record, tensor_kind)) return false;
    if (first == nullptr) {
      first = record;
    } else if (!SameTransaction(*record, *first)) {
      return false;
    }
  }
  return true;
}

void SettleNextSet(const Region& region, const std::vector<uint32_t>& channels, TransactionLedger& ledger) {
  if (channels.empty() || !AllShared(region, channels)) return;
  const MessageRecord* first = NextRecord(region, channels[0]);
  if (first != nullptr) ledger.Settle(first->transaction_id);
}

uint64_t DropStaleHeads(Region& region, const std::vector<uint32_t>& channels, const TransactionLedger& ledger) {
  if (!ledger.HasReplaced()) return 0;
  uint64_t dropped = 0;
  for (uint32_t channel : channels) {
    if (!IsShared(region, channel)) continue;
    for (const MessageRecord* head = NextRecord(region, channel);
         head != nullptr && ledger.IsStale(head->transaction_id, head->ret_code);
         head = NextRecord(region, channel)) {
      TakeSets(region, {channel}, 1, [&](size_t, const Taken& message) { ReleaseBody(region, *message.record); });
      ++dropped;
    }
  }
  return dropped;
}

uint64_t DrainShared(Region& region, uint32_t channel) {
  if (!IsShared(region, channel)) throw RuntimeError("channel " + std::to_string(channel) + " is local");
  uint64_t drained = 0;
  while (NextRecord(region, channel) != nullptr) {
    TakeSets(region, {channel}, 1, [&](size_t, const Taken& message) { ReleaseBody(region, *message.record); });
    ++drained;
  }
  return drained;
}

std::vector<uint64_t> WaitingTransactions(const Region& region, uint32_t channel) {
  Ring ring = region.ring(channel);
  if (!IsShared(region, channel)) throw RuntimeError("channel " + std::to_string(channel) + " is local");
  std::vector<uint64_t> ids;
  for (uint64_t i = 0; i < ring.size(); ++i) {
    const uint8_t* payload = ring.Peek(i);
    if (payload == nullptr) break;
    ids.push_back(reinterpret_cast<const MessageRecord*>(payload)->transaction_id);
  }
  return ids;
}

void DrainLocalChannels(Region& region, LocalObjects& locals) {
  for (uint32_t channel = 0; channel < region.channel_count(); ++channel) {
    if (IsShared(region, channel)) continue;
    Ring ring = region.ring(channel);
    void* object = nullptr;
    while (ring.TryPop([&](const uint8_t* slot) { std::memcpy(&object, slot, sizeof object); })) {
      locals.Release(object);
    }
  }
}

}  // namespace dfir::rt
