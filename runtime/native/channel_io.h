// Moving encoded messages through a region's channels (plain C++: no Python headers): puts that
// are all or nothing, and takes of whole sets — one message from each of several channels.
//
// A shared channel carries MessageRecords (message_codec.h). A local one carries one pointer
// per message to an object of the caller's (the Python bindings: a Message), kept alive by the
// reference LocalObjects takes when the channel takes the pointer; whoever takes the message
// out takes that reference over.
//
//   PendingPut put(region);
//   put.Add(0, record);                 // shared channel 0: an encoded record
//   put.AddLocal(3, object);            // local channel 3: the caller's object
//   put.Push(deadline, blocking, locals);   // both or neither
//
//   SetsReady ready = AwaitSets(region, {0, 1}, bell, 8, deadline, blocking);
//   TakeSets(region, {0, 1}, ready.sets, [&](size_t i, const Taken& message) { ... });
#ifndef DFIR_RUNTIME_NATIVE_CHANNEL_IO_H_
#define DFIR_RUNTIME_NATIVE_CHANNEL_IO_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "arrival_forecast.h"
#include "blocking.h"
#include "eventcount.h"
#include "inline_vector.h"
#include "ledger.h"
#include "message.h"
#include "region.h"

namespace dfir::rt {

// Whether `channel` carries records (shared) rather than pointers (local).
bool IsShared(const Region& region, uint32_t channel);

// Rings the doorbell of each channel's consumer, each doorbell once.
void RingConsumers(const Region& region, const std::vector<uint32_t>& channels);

// The references that local channels hold to the caller's objects.
class LocalObjects {
 public:
  virtual ~LocalObjects() = default;
  // A local channel took `object`.
  virtual void Retain(void* object) = 0;
  // A local channel dropped `object` untaken (DrainLocalChannels).
  virtual void Release(void* object) = 0;
};

// One put: messages bound for channels, pushed all or nothing. It owns the body references of
// its records until they are pushed, and gives back those of the records it never pushes.
class PendingPut {
 public:
  explicit PendingPut(Region& region) : region_(region) {}
  ~PendingPut() { Discard(); }
  PendingPut(const PendingPut&) = delete;
  PendingPut& operator=(const PendingPut&) = delete;

  // `record` (encoded; its body reference becomes the put's) for shared `channel`. A non-null
  // `key` names the message it encodes, for AddAgain.
  void Add(uint32_t channel, const MessageRecord& record, const void* key = nullptr);
  // The record added under `key` once more, for `channel`: one more reference to its body, no
  // copy. False when no record was added under `key`.
  bool AddAgain(uint32_t channel, const void* key);
  // `object` for local `channel` (the channel retains it when it takes it).
  void AddLocal(uint32_t channel, void* object);
  // Makes Push open `info` in `ledger` once every channel has room, before a consumer can see
  // any message of the put (whose outputs settle it).
  void OpenOnPush(TransactionLedger& ledger, const TransactionInfo& info);

  // Once: waits until every channel has room for all the messages the put carries for it
  // (inside the blocking scope), pushes the messages in the order they were added and rings each
  // consumer's doorbell once. kReady: every message is on its channel (at once when there are
  // none, opening nothing). kTimeout or kClosed: none is, and the bodies are given back.
  // Two cases cannot be all or nothing and go on in parts once the room is there: a channel that
  // fills again while the put is half done (another producer took the room), and a put of more
  // messages for one channel than its capacity (it waits for the channel to be empty, then
  // pushes as its consumer makes room). A deadline that passes meanwhile is a RuntimeError; a
  // region that closes meanwhile returns kClosed with the rest given back. Without `ring`, the
  // doorbells ring only before a wait for room (a full channel's consumer must wake to make
  // room); the caller rings them later (RingConsumers), e.g. once for a batch of puts to the
  // same channels.
  // An OVERWRITE channel (Ring::overwrites) never waits: a push that finds it full drops its
  // oldest message (counted in Ring::dropped; its body or object given back) and pushes.
  WaitStatus Push(const Deadline& deadline, BlockingScope& blocking, LocalObjects& locals, bool ring = true);

 private:
  static constexpr size_t kNoRecord = ~size_t{0};
  // A put carries a few messages: room for them in place saves allocating per put.
  static constexpr size_t kTypicalMessages = 4;
  static constexpr size_t kLinearKeys = 16;
  struct Outgoing {
    uint32_t channel;
    size_t record;  // index in records_, kNoRecord for a local channel's object
    void* object;
  };
  struct Keyed {
    const void* key;
    size_t record;  // index in records_
  };

  // kReady once `message` is on its channel; kClosed when the region closed first.
  WaitStatus PushOne(const Outgoing& message, const Deadline& deadline, BlockingScope& blocking, LocalObjects& locals);
  // Until every channel of `rooms` has room for its messages, ringing the consumers of
  // `channels` first when `ring_first`.
  WaitStatus WaitForRoom(const std::vector<uint32_t>& channels, const std::vector<ChannelRoom>& rooms,
                         const Deadline& deadline, BlockingScope& blocking, bool ring_first);
  // Gives back the bodies of the records not pushed yet; nothing is left to push.
  void Discard();
  // The channel of each outgoing message, in order.
  std::vector<uint32_t> Channels() const;
  // Whether every channel has room for the messages the put carries for it now.
  bool HasRoomNow() const;
  // Rings each outgoing channel's consumer, each doorbell once.
  void RingOutgoing() const;

  Region& region_;
  InlineVector<Outgoing, kTypicalMessages> outgoing_;
  InlineVector<MessageRecord, kTypicalMessages> records_;
  // Searched in order while a few, through `indexed_` beyond kLinearKeys.
  InlineVector<Keyed, kTypicalMessages> keyed_;
  std::unordered_map<const void*, size_t> indexed_;
  size_t pushed_ = 0;                              // outgoing_[0, pushed_) are on their channels
  bool ring_before_waiting_ = false;               // Push without `ring`
  TransactionLedger* ledger_ = nullptr;
  TransactionInfo opened_;
};

// How many sets (one message from each channel) can be taken.
struct SetsReady {
  WaitStatus status;
  uint64_t sets;  // up to the limit; 0 unless kReady
};

// The sets of `channels` that can be taken now, up to `limit`; when there are none, waits
// (inside the blocking scope, sleeping on `bell`, their consumer's doorbell) until there is
// one, the deadline passes or the region closes; as `forecast` says when one is given
// (arrival_forecast.h: polling a wait it expects to end soon, which a sleep would lengthen).
SetsReady AwaitSets(Region& region, const std::vector<uint32_t>& channels, uint32_t bell, uint64_t limit,
                    const Deadline& deadline, BlockingScope& blocking, ArrivalForecast* forecast = nullptr);

// One message as it leaves its channel: a shared channel's record, whose body reference the
// taker takes over, or a local channel's object, whose reference the taker takes over.
struct Taken {
  const MessageRecord* record;  // nullptr for a local channel
  void* object;                 // nullptr for a shared channel
};

// How many bytes a local channel's object carries (the bindings' answer for their messages).
using LocalObjectBytes = uint64_t (*)(void* object);
// Sets what MessageBytes and ByteMeter ask of a local object (none set: it carries 0 bytes).
void SetLocalObjectBytes(LocalObjectBytes bytes);
// The body bytes a message carries: a record's body_size, or a local object's (LocalBytes).
uint64_t MessageBytes(const Taken& message);
uint64_t LocalBytes(void* object);

// Counts the body bytes of the messages the calling thread takes (TakeSets) and adds to puts
// (once per channel) while it lives: a traced call's bytes in and out. The innermost of nested
// meters counts. Without one, counting costs a thread-local load per message.
class ByteMeter {
 public:
  ByteMeter() : outer_(current_) { current_ = this; }
  ~ByteMeter() { current_ = outer_; }
  ByteMeter(const ByteMeter&) = delete;
  ByteMeter& operator=(const ByteMeter&) = delete;

  uint64_t bytes_in() const { return bytes_in_; }
  uint64_t bytes_out() const { return bytes_out_; }
  static void CountIn(const Taken& message) {
    if (current_ != nullptr) current_->bytes_in_ += MessageBytes(message);
  }
  static void CountOut(uint64_t bytes) {
    if (current_ != nullptr) current_->bytes_out_ += bytes;
  }
  static void CountOutLocal(void* object) {
    if (current_ != nullptr) current_->bytes_out_ += LocalBytes(object);
  }

 private:
  // initial-exec: read at a fixed offset from the thread pointer, where the extension's default
  // model would call __tls_get_addr on every put and take, metered or not.
  static thread_local ByteMeter* current_ __attribute__((tls_model("initial-exec")));
  ByteMeter* outer_;
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
};

// Takes `sets` sets that AwaitSets counted (the caller is the channels' one consumer): hands
// each message to `take` with the index of its channel, set by set in channel order, then wakes
// the channels' producers. RuntimeError when a counted message is gone (another consumer); on an
// OVERWRITE channel a producer may drop a counted message, and the newer one that replaces it is
// taken instead.
void TakeSets(Region& region, const std::vector<uint32_t>& channels, uint64_t sets,
              FunctionRef<void(size_t, const Taken&)> take);

// Whether every channel is shared and the next set is plain tensors (IsPlainTensor) of one
// transaction. Only for the channels' consumer, once a set is ready.
bool NextSetIsPlainTensors(const Region& region, const std::vector<uint32_t>& channels, MessageKind tensor_kind);

// Settles in `ledger` the transaction of the next set's first message, when every channel is
// shared (a local channel's objects are opaque here). Once a set is ready.
void SettleNextSet(const Region& region, const std::vector<uint32_t>& channels, TransactionLedger& ledger);

// Takes and gives back, from the head of each shared channel, the messages of transactions
// `ledger` replaced by recovery (TransactionLedger::IsStale), up to the first that is not; how
// many it dropped. Only for the channels' consumer.
uint64_t DropStaleHeads(Region& region, const std::vector<uint32_t>& channels, const TransactionLedger& ledger);

// Takes and gives back every message that waits in a shared channel; how many. For when the
// channel's consumer is gone (a dead worker's, before its replacement starts).
uint64_t DrainShared(Region& region, uint32_t channel);

// The transaction ids of the messages waiting in a shared channel, oldest first (for its
// consumer); RuntimeError for a local channel.
std::vector<uint64_t> WaitingTransactions(const Region& region, uint32_t channel);

// Empties every local channel of this process's region, releasing what they carry.
void DrainLocalChannels(Region& region, LocalObjects& locals);

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_CHANNEL_IO_H_
