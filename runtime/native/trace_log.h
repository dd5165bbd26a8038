// A model's trace log: one shared mapping, made by the driver before it forks the workers, into
// which every thread of every process of the model appends its slices (a node firing on one
// transaction: node, instance, transaction, begin and end on the log's clock, the bytes it took
// and put), and from which the driver drains them. Lanes of stamped records, a lane per thread:
// a writer claims an index in its lane, writes the record and stamps it last; the drainer takes
// the records whose stamps say they are whole, lane by lane, each lane in index order. A record a
// writer lapped before it was drained, or one a writer never finished (it died), is lost and
// counted. Plain C++: no Python headers.
//
//   auto log = TraceLog::Create(1 << 16, 1.0, "dfir-trace:m");
//   log->Append({node, instance, transaction, begin_ns, end_ns});   // any process, any thread
//   std::vector<TraceRecord> slices = log->Drain();                  // the driver
#ifndef DFIR_RUNTIME_NATIVE_TRACE_LOG_H_
#define DFIR_RUNTIME_NATIVE_TRACE_LOG_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shm.h"
#include "tick_clock.h"

namespace dfir::rt {

// The `node` of the driver's slices: a feed put, a fetch taken.
inline constexpr int32_t kFeedSlice = -1;
inline constexpr int32_t kFetchSlice = -2;

// A slice: a node instance's work on one transaction (or a feed or fetch of the driver), its times
// on the log's clock (TraceLog::Now: CLOCK_MONOTONIC's ns) and the body bytes of the messages it
// took and put (a message put on two channels counts twice: ByteMeter, channel_io.h).
struct TraceRecord {
  int32_t node = -1;
  int32_t instance = 0;
  uint64_t transaction = 0;  // 0: none
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

// Drained records, kept in chunks of a fixed size: appending never moves or copies the records
// already kept, and a chunk's pages are mapped when it is made (not a page fault per 4 KiB).
class TraceChunks {
 public:
  static constexpr size_t kChunkBytes = size_t{2} << 20;
  static constexpr size_t kChunkRecords = kChunkBytes / sizeof(TraceRecord);

  void Push(const TraceRecord& record) {
    if (chunks_.empty() || chunks_.back().count == kChunkRecords) chunks_.push_back(NewChunk());
    Chunk& last = chunks_.back();
    last.records[last.count++] = record;
  }
  size_t size() const;
  bool empty() const { return chunks_.empty(); }
  // Calls `copy(records, count)` for each chunk, in order.
  template <typename Copy>
  void ForEachChunk(Copy&& copy) const {
    for (const Chunk& chunk : chunks_) copy(chunk.records.get(), chunk.count);
  }
  std::vector<TraceRecord> Flat() const;

 private:
  struct Free {
    void operator()(TraceRecord* records) const;
  };
  struct Chunk {
    std::unique_ptr<TraceRecord[], Free> records;
    size_t count = 0;
  };
  static Chunk NewChunk();

  std::vector<Chunk> chunks_;
};

class TraceLog {
 public:
  // A log of `capacity` records (a power of two, at least 64: it is split into 64 lanes) that
  // keeps the slices of a `rate` share of the transactions (0 < rate <= 1; those without a
  // transaction always).
  static std::shared_ptr<TraceLog> Create(uint64_t capacity, double rate, const std::string& name);

  // Whether the slices of `transaction` are kept: the same answer in every process.
  bool Sampled(uint64_t transaction) const {
    // A Fibonacci hash spreads consecutive ids evenly over 64 bits.
    return transaction == 0 || sample_below_ == kEveryTransaction ||
           transaction * 0x9E3779B97F4A7C15ull < sample_below_;
  }
  // The log's clock, which every slice's times are read on: CLOCK_MONOTONIC's scale, read from
  // the time-stamp counter where it can be (tick_clock.h), recalibrated by each drain.
  int64_t Now() const { return clock_->Now(); }
  // Appends `record` when its transaction is sampled, to the calling thread's lane.
  void Append(const TraceRecord& record);
  // Appends `record` to `lane` (NewLane's): for a writer that keeps its lane, skipping the
  // thread's lookup. The caller checked Sampled.
  void Append(const TraceRecord& record, uint64_t lane);
  // A lane for a writer of its own (lanes are handed out in turn).
  uint64_t NewLane();
  // The records appended since the last drain that are whole, lane by lane in the order they
  // were claimed (one Drain at a time: a second waits). A record still being written waits for
  // the next drain, unless `final` (no writer is left) or it is far behind the newest: then it is
  // lost. Each drain recalibrates the log's clock.
  std::vector<TraceRecord> Drain(bool final = false);
  // Drain, appending to `out`.
  void DrainInto(bool final, TraceChunks* out);
  // Records lost so far: lapped before they were drained, or never finished.
  uint64_t lost() const;
  uint64_t capacity() const;

  // Drains every `period_ms` on a thread of this process into a buffer that TakeDrained empties,
  // until StopDraining (or destruction). The driver's: it takes no lock of the caller's (no GIL),
  // so it never stalls the threads that feed and fetch.
  void StartDraining(int64_t period_ms);
  // Stops the thread, draining one last time (`final`: every record, see Drain).
  void StopDraining(bool final);
  // The records drained so far by the thread and those it has not drained yet (lanes in no
  // particular order); the buffer is emptied.
  TraceChunks TakeDrained();
  ~TraceLog();

 private:
  static constexpr uint64_t kEveryTransaction = ~uint64_t{0};  // sample_below at rate 1
  struct Lane;
  struct Header;
  struct Slot;
  explicit TraceLog(std::shared_ptr<SharedMemory> memory);
  Header& header() const;
  Slot& slot(uint64_t lane, uint64_t index) const;
  uint64_t ThisThreadsLane();
  void DrainLane(uint64_t lane, bool final, TraceChunks* records);
  // Stops the draining thread, if it runs, and waits for it.
  void JoinDrainer();

  std::shared_ptr<SharedMemory> memory_;
  uint64_t sample_below_;  // the header's, read on every append
  TickClock* clock_;       // the header's
  std::mutex drained_mutex_;  // guards drained_ and stop_
  std::condition_variable stop_changed_;
  TraceChunks drained_;
  bool stop_ = false;
  std::thread drainer_;
  std::mutex drain_mutex_;  // one Drain at a time: the thread's, or a caller's
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_TRACE_LOG_H_
