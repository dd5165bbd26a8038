// A region: one shared mapping that holds everything the processes of one loaded model share —
// doorbells (one per consumer thread), channels (rings of messages), one status slot per
// worker process, and the tensor arena. The driver creates it before forking the workers,
// which inherit the mapping. Plain C++: no Python headers.
//
// Waiting: every channel names the doorbell of its one consumer thread; a producer rings it
// after each push, which costs a system call only while that consumer sleeps. A consumer takes
// everything that waits before it sleeps again, so a busy pipeline runs without wake-ups.
// Closing the region wakes every waiter, and every wait returns kClosed from then on.
#ifndef DFIR_RUNTIME_NATIVE_REGION_H_
#define DFIR_RUNTIME_NATIVE_REGION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arena.h"
#include "eventcount.h"
#include "message.h"
#include "ring.h"
#include "shm.h"

namespace dfir::rt {

// A shared channel carries MessageRecords between processes; a local one carries one pointer
// per message between threads of the one process that uses it.
enum class ChannelKind : uint32_t { kShared = 1, kLocal = 2 };

struct ChannelSpec {
  ChannelKind kind = ChannelKind::kShared;
  uint32_t capacity = 0;
  uint32_t consumer_bell = 0;
};

struct RegionLayout {
  uint32_t bells = 0;
  std::vector<ChannelSpec> channels;
  uint32_t workers = 0;
  uint64_t arena_bytes = 0;
};

inline constexpr int kLastWordsBytes = 240;

// What a worker process tells the driver about itself; the driver reads it when the worker dies.
struct WorkerSlot {
  std::atomic<int32_t> pid{0};
  std::atomic<int32_t> running_node{-1};  // the plan node whose code runs now, -1 when none
  char last_words[kLastWordsBytes] = {};  // why the worker is about to exit (NUL-terminated)
  // 1 + the transaction of a call that ran past its time limit (call_watch.h), 0: none.
  std::atomic<uint64_t> timed_out_transaction{0};
};

enum class WaitStatus { kReady = 0, kTimeout = 1, kClosed = 2 };

// Room for `messages` messages on `channel`.
struct ChannelRoom {
  uint32_t channel;
  uint32_t messages;
};

class Region {
 public:
  // Maps and formats a new region; `name` labels the mapping in /proc/<pid>/maps.
  static std::shared_ptr<Region> Create(const RegionLayout& layout, const std::string& name);

  uint32_t bell_count() const;
  uint32_t channel_count() const;
  uint32_t worker_count() const;
  EventCount& bell(uint32_t index) const;
  Ring ring(uint32_t channel) const;
  ChannelKind kind(uint32_t channel) const;
  WorkerSlot& worker(uint32_t index) const;
  // Why worker `index` is about to exit, as the driver reads it once the worker is gone: `text`,
  // cut to kLastWordsBytes - 1 bytes.
  void SetLastWords(uint32_t index, const std::string& text);
  std::string LastWords(uint32_t index) const;
  Arena& arena() { return arena_; }
  uint8_t* base() const { return memory_->base(); }
  const SharedMemory& memory() const { return *memory_; }

  bool closing() const;
  // Marks the region closing and wakes every waiter, in every process.
  void Close();
  // Unmaps the region in this process (a forked child that does not use it).
  void Detach() { memory_->Detach(); }

  // Makes `bell` the doorbell of every channel in `channels`: their producers ring it from the
  // next push on. For a consumer thread that takes over the channels of others before any
  // message flows (a worker's firing pool).
  void SetConsumerBell(const std::vector<uint32_t>& channels, uint32_t bell);
  // Until every channel in `channels` has room.
  WaitStatus WaitForRoom(const std::vector<uint32_t>& channels, const Deadline& deadline);
  // Until every channel of `rooms` has room for its messages at once.
  WaitStatus WaitForRoomFor(const std::vector<ChannelRoom>& rooms, const Deadline& deadline);
  // Until every channel in `channels` holds a message; their consumer sleeps on `bell`.
  WaitStatus WaitForMessages(const std::vector<uint32_t>& channels, uint32_t bell, const Deadline& deadline);
  // Until the channels hold `n` messages in all with n > 0 and n != `stalled` (-1: any n > 0).
  WaitStatus WaitForChange(const std::vector<uint32_t>& channels, uint32_t bell, int64_t stalled,
                           const Deadline& deadline);
  // Until the region closes (kClosed) or the deadline passes (kTimeout).
  WaitStatus WaitForClose(uint32_t bell, const Deadline& deadline);
  // A block of at least `size` bytes, waiting for room while the arena is full; 0 on timeout or
  // closing. A request larger than the whole arena fails at once (RuntimeError).
  uint64_t AllocateBlock(uint64_t size, const Deadline& deadline);

 private:
  Region(std::shared_ptr<SharedMemory> memory, uint64_t arena_header_offset);
  struct Header;
  Header& header() const;
  void CheckChannel(uint32_t channel) const;
  template <typename Ready>
  WaitStatus WaitOn(EventCount& ec, Ready&& ready, const Deadline& deadline);

  std::shared_ptr<SharedMemory> memory_;
  Arena arena_;
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_REGION_H_
