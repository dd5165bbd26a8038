// TraceLog (runtime/native/trace_log.h): lanes of stamped records that processes append to and
// one drainer takes, lapped lanes keeping their newest records, sampling by transaction, and the
// draining thread.
#include "trace_log.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

using dfir::rt::RuntimeError;
using dfir::rt::TraceLog;
using dfir::rt::TraceRecord;

namespace {

std::vector<uint64_t> Transactions(const std::vector<TraceRecord>& records) {
  std::vector<uint64_t> ids;
  for (const TraceRecord& record : records) ids.push_back(record.transaction);
  return ids;
}

}  // namespace

TEST_SUITE("trace_log") {

TEST_CASE("a record appended in a child process is drained whole by the parent, once") {
  auto log = TraceLog::Create(1024, 1.0, "trace-test");
  const pid_t child = fork();
  if (child == 0) {
    for (uint64_t t = 1; t <= 10; ++t) {
      log->Append({3, 1, t, static_cast<int64_t>(t), static_cast<int64_t>(t + 5), 100 * t, t << 40});
    }
    _exit(0);
  }
  waitpid(child, nullptr, 0);
  const std::vector<TraceRecord> records = log->Drain();
  CHECK(Transactions(records) == std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  CHECK(records[4].node == 3);
  CHECK(records[4].instance == 1);
  CHECK(records[4].end_ns - records[4].begin_ns == 5);
  CHECK(records[4].bytes_in == 500);
  CHECK(records[4].bytes_out == uint64_t{5} << 40);
  CHECK(log->Drain().empty());
  CHECK(log->lost() == 0);
}

TEST_CASE("a lapped lane keeps its newest records and counts the others lost") {
  auto log = TraceLog::Create(64 * 4, 1.0, "trace-test");
  const uint64_t lane = log->NewLane();
  for (uint64_t t = 1; t <= 10; ++t) log->Append({0, 0, t, 0, 1}, lane);
  CHECK(Transactions(log->Drain()) == std::vector<uint64_t>{7, 8, 9, 10});
  CHECK(log->lost() == 6);
}

TEST_CASE("a rate keeps the transactions it samples and every record of no transaction") {
  auto log = TraceLog::Create(1 << 16, 0.25, "trace-test");
  int sampled = 0;
  for (uint64_t t = 1; t <= 4000; ++t) sampled += log->Sampled(t);
  CHECK(sampled > 850);
  CHECK(sampled < 1150);
  CHECK(log->Sampled(0));
  for (uint64_t t = 0; t <= 4000; ++t) log->Append({0, 0, t, 0, 1});
  CHECK(log->Drain().size() == static_cast<size_t>(sampled + 1));
}

TEST_CASE("the draining thread takes what is appended and leaves nothing when stopped") {
  auto log = TraceLog::Create(1 << 16, 1.0, "trace-test");  // 1,024 records a lane: none lapped
  log->StartDraining(1);
  for (uint64_t t = 1; t <= 500; ++t) log->Append({0, 0, t, 0, 1});
  std::vector<TraceRecord> taken = log->TakeDrained().Flat();
  for (uint64_t t = 501; t <= 600; ++t) log->Append({0, 0, t, 0, 1});
  log->StopDraining(true);
  const std::vector<TraceRecord> rest = log->TakeDrained().Flat();
  taken.insert(taken.end(), rest.begin(), rest.end());
  std::vector<uint64_t> ids = Transactions(taken);
  std::sort(ids.begin(), ids.end());
  CHECK(ids.size() == 600);
  CHECK(ids.front() == 1);
  CHECK(ids.back() == 600);
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
}

TEST_CASE("a log refuses a capacity it cannot split into lanes and a rate outside (0, 1]") {
  CHECK_THROWS_WITH_AS(TraceLog::Create(96, 1.0, "t"), "a trace log holds a power of two of records, at least 64, not 96",
                       RuntimeError);
  CHECK_THROWS_WITH_AS(TraceLog::Create(64, 1.5, "t"), "a trace log's sampling rate is in (0, 1]", RuntimeError);
}

}

TEST_CASE("drained records fill fixed chunks in order and come back whole") {
  dfir::rt::TraceChunks chunks;
  CHECK(chunks.empty());
  const uint64_t count = dfir::rt::TraceChunks::kChunkRecords * 2 + 5;
  for (uint64_t t = 1; t <= count; ++t) chunks.Push({0, 0, t, 0, 1});
  size_t pieces = 0;
  chunks.ForEachChunk([&](const TraceRecord*, size_t) { ++pieces; });
  CHECK(pieces == 3);
  CHECK(chunks.size() == count);
  const std::vector<uint64_t> ids = Transactions(chunks.Flat());
  CHECK(ids.size() == count);
  CHECK(ids.front() == 1);
  CHECK(ids.back() == count);
  CHECK(std::is_sorted(ids.begin(), ids.end()));
}

TEST_CASE("the log's clock reads CLOCK_MONOTONIC's time, in this process and a child, across recalibrations") {
  auto log = TraceLog::Create(1024, 1.0, "trace-test");
  auto close_to_monotonic = [&] {
    const int64_t before = dfir::rt::MonotonicNs();
    const int64_t now = log->Now();
    const int64_t after = dfir::rt::MonotonicNs();
    return now >= before - 20'000 && now <= after + 20'000;  // within the calibration's error
  };
  CHECK(close_to_monotonic());
  const pid_t child = fork();
  if (child == 0) _exit(close_to_monotonic() ? 0 : 1);
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    log->Drain();  // recalibrates
    CHECK(close_to_monotonic());
  }
}

TEST_CASE("a slice whose clock went back across a recalibration is kept with no negative length") {
  auto log = TraceLog::Create(1024, 1.0, "trace-test");
  log->Append({0, 0, 1, 500, 499});
  const std::vector<TraceRecord> records = log->Drain();
  REQUIRE(records.size() == 1);
  CHECK(records[0].begin_ns == 500);
  CHECK(records[0].end_ns == 500);
}
