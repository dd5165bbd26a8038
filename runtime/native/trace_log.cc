#include "trace_log.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <new>
#include <utility>

namespace dfir::rt {

// The log is kLanes rings of capacity / kLanes records. A thread appends to one lane, the same
// for its life (picked on its first append), so threads of different processes seldom share a
// lane's counter or its records' cache lines: an append costs a few nanoseconds beyond its two
// clock reads, where one ring for all cost three times that under two writers.
namespace {

constexpr uint64_t kLanes = 64;
// A record still unstamped this far behind its lane's newest claim is taken as never to be finished.
constexpr uint64_t kGiveUpBehind = 64;

}  // namespace

struct TraceLog::Lane {
  alignas(64) std::atomic<uint64_t> next{0};  // the next index a writer claims
  uint64_t drained = 0;                         // the next index the drainer reads (its own)
};

struct TraceLog::Header {
  uint64_t capacity;                 // records in all
  uint64_t lane_capacity;            // records per lane, a power of two
  uint64_t sample_below;             // a transaction is kept when its spread id is below this
  std::atomic<uint64_t> lanes_taken{0};
  std::atomic<uint64_t> lost{0};
  TickClock clock;
  Lane lanes[kLanes];
};

// A record and its stamp: 1 + the index it was written for in its lane, stored last. A slot per
// cache line: an append writes one line, not two.
struct alignas(64) TraceLog::Slot {
  std::atomic<uint64_t> stamp{0};
  TraceRecord record;
};

std::shared_ptr<TraceLog> TraceLog::Create(uint64_t capacity, double rate, const std::string& name) {
  if (capacity < kLanes || (capacity & (capacity - 1)) != 0) {
    throw RuntimeError("a trace log holds a power of two of records, at least " + std::to_string(kLanes) +
                       ", not " + std::to_string(capacity));
  }
  if (!(rate > 0.0 && rate <= 1.0)) throw RuntimeError("a trace log's sampling rate is in (0, 1]");
  auto memory = SharedMemory::Create(name, sizeof(Header) + capacity * sizeof(Slot));
  auto* header = new (memory->base()) Header();
  header->capacity = capacity;
  header->lane_capacity = capacity / kLanes;
  header->sample_below = rate >= 1.0 ? kEveryTransaction : static_cast<uint64_t>(std::ldexp(rate, 64));
  header->clock.Start();
  return std::shared_ptr<TraceLog>(new TraceLog(std::move(memory)));
}

TraceLog::TraceLog(std::shared_ptr<SharedMemory> memory)
    : memory_(std::move(memory)), sample_below_(header().sample_below), clock_(&header().clock) {}

TraceLog::Header& TraceLog::header() const { return *reinterpret_cast<Header*>(memory_->base()); }

TraceLog::Slot& TraceLog::slot(uint64_t lane, uint64_t index) const {
  auto* slots = reinterpret_cast<Slot*>(memory_->base() + sizeof(Header));
  const uint64_t per_lane = header().lane_capacity;
  return slots[lane * per_lane + (index & (per_lane - 1))];
}

uint64_t TraceLog::ThisThreadsLane() {
  // One lane per thread and log; a forked child starts with its parent's choice, which is fine:
  // a lane takes several writers, they only cost each other time.
  thread_local const TraceLog* chosen_for = nullptr;
  thread_local uint64_t lane = 0;
  if (chosen_for != this) {
    chosen_for = this;
    lane = NewLane();
  }
  return lane;
}

uint64_t TraceLog::NewLane() { return header().lanes_taken.fetch_add(1, std::memory_order_relaxed) % kLanes; }

void TraceLog::Append(const TraceRecord& record) {
  if (Sampled(record.transaction)) Append(record, ThisThreadsLane());
}

void TraceLog::Append(const TraceRecord& record, uint64_t lane) {
  const uint64_t index = header().lanes[lane].next.fetch_add(1, std::memory_order_relaxed);
  Slot& target = slot(lane, index);
  target.stamp.store(0, std::memory_order_relaxed);  // torn while it is rewritten
  std::atomic_thread_fence(std::memory_order_release);
  target.record = record;
  // A recalibration between a slice's two readings may move the clock back by its error.
  target.record.end_ns = std::max(record.end_ns, record.begin_ns);
  target.stamp.store(index + 1, std::memory_order_release);
}

void TraceChunks::Free::operator()(TraceRecord* records) const { munmap(records, kChunkBytes); }

TraceChunks::Chunk TraceChunks::NewChunk() {
  // Populated at once: one call maps every page, where filling it would fault once per page.
  void* memory = mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (memory == MAP_FAILED) throw std::bad_alloc();
  return Chunk{std::unique_ptr<TraceRecord[], Free>(static_cast<TraceRecord*>(memory)), 0};
}

size_t TraceChunks::size() const {
  size_t records = 0;
  for (const Chunk& chunk : chunks_) records += chunk.count;
  return records;
}

std::vector<TraceRecord> TraceChunks::Flat() const {
  std::vector<TraceRecord> records;
  records.reserve(size());
  ForEachChunk([&](const TraceRecord* chunk, size_t count) { records.insert(records.end(), chunk, chunk + count); });
  return records;
}

std::vector<TraceRecord> TraceLog::Drain(bool final) {
  TraceChunks records;
  DrainInto(final, &records);
  return records.Flat();
}

void TraceLog::DrainInto(bool final, TraceChunks* out) {
  std::lock_guard<std::mutex> draining(drain_mutex_);
  header().clock.Recalibrate();  // the drainer owns the clock
  for (uint64_t lane = 0; lane < kLanes; ++lane) DrainLane(lane, final, out);
}

void TraceLog::DrainLane(uint64_t lane, bool final, TraceChunks* records) {
  Header& head = header();
  Lane& from = head.lanes[lane];
  const uint64_t claimed = from.next.load(std::memory_order_acquire);
  uint64_t index = from.drained;
  if (claimed - index > head.lane_capacity) {  // lapped: the oldest were overwritten
    head.lost.fetch_add(claimed - head.lane_capacity - index, std::memory_order_relaxed);
    index = claimed - head.lane_capacity;
  }
  for (; index < claimed; ++index) {
    Slot& source = slot(lane, index);
    const uint64_t stamp = source.stamp.load(std::memory_order_acquire);
    if (stamp != index + 1) {
      if (stamp < index + 1 && !final && claimed - index < kGiveUpBehind) break;  // being written: next drain
      head.lost.fetch_add(1, std::memory_order_relaxed);  // overwritten, or its writer died
      continue;
    }
    TraceRecord record = source.record;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (source.stamp.load(std::memory_order_relaxed) != index + 1) {  // rewritten while copied
      head.lost.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    records->Push(record);
  }
  from.drained = index;
}

void TraceLog::StartDraining(int64_t period_ms) {
  drainer_ = std::thread([this, period_ms] {
    std::unique_lock<std::mutex> lock(drained_mutex_);
    while (!stop_changed_.wait_for(lock, std::chrono::milliseconds(period_ms), [this] { return stop_; })) {
      DrainInto(false, &drained_);  // under the lock: only a TakeDrained waits for it
    }
  });
}

void TraceLog::StopDraining(bool final) {
  JoinDrainer();
  std::lock_guard<std::mutex> lock(drained_mutex_);
  DrainInto(final, &drained_);
}

void TraceLog::JoinDrainer() {
  if (!drainer_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(drained_mutex_);
    stop_ = true;
  }
  stop_changed_.notify_all();
  drainer_.join();
}

TraceChunks TraceLog::TakeDrained() {
  std::lock_guard<std::mutex> lock(drained_mutex_);
  DrainInto(false, &drained_);  // what the thread has not drained yet
  return std::exchange(drained_, TraceChunks());
}

TraceLog::~TraceLog() { JoinDrainer(); }

uint64_t TraceLog::lost() const { return header().lost.load(std::memory_order_relaxed); }

uint64_t TraceLog::capacity() const { return header().capacity; }

}  // namespace dfir::rt
