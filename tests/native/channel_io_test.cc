// Channel I/O (runtime/native/channel_io.h): all-or-nothing puts of records and local objects,
// takes of whole sets, and what a consumer reads off the next set.
#include "channel_io.h"

#include <doctest/doctest.h>

#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "helpers.h"

using dfir::rt::AwaitSets;
using dfir::rt::ChannelKind;
using dfir::rt::ChannelSpec;
using dfir::rt::Deadline;
using dfir::rt::MessageRecord;
using dfir::rt::PendingPut;
using dfir::rt::Region;
using dfir::rt::RegionLayout;
using dfir::rt::SetsReady;
using dfir::rt::Taken;
using dfir::rt::TakeSets;
using dfir::rt::TransactionLedger;
using dfir::rt::WaitStatus;
using dfir::testing::CountingScope;
using dfir::testing::Pattern;
using dfir::testing::RecordOf;

namespace {

// Counts the references local channels take and drop.
class CountingObjects : public dfir::rt::LocalObjects {
 public:
  void Retain(void* object) override { retained.insert(object); }
  void Release(void* object) override { released.insert(object); }
  std::multiset<void*> retained;
  std::multiset<void*> released;
};

// Shared channels 0 and 1 (doorbells 0 and 1), local channel 2 (doorbell 2), all of `capacity`.
std::shared_ptr<Region> MixedRegion(uint32_t capacity) {
  RegionLayout layout;
  layout.bells = 3;
  layout.channels = {ChannelSpec{ChannelKind::kShared, capacity, 0}, ChannelSpec{ChannelKind::kShared, capacity, 1},
                     ChannelSpec{ChannelKind::kLocal, capacity, 2}};
  layout.workers = 1;
  layout.arena_bytes = 1 << 20;
  return Region::Create(layout, "dfir-channel-io-test");
}

// Takes `sets` sets of `channels`, returning the transaction ids as taken (set by set) and
// giving the bodies back.
std::vector<uint64_t> TakeIds(Region& region, const std::vector<uint32_t>& channels, uint64_t sets) {
  std::vector<uint64_t> ids;
  TakeSets(region, channels, sets, [&](size_t, const Taken& message) {
    ids.push_back(message.record->transaction_id);
    dfir::rt::ReleaseBody(region, *message.record);
  });
  return ids;
}

// Puts one record of transaction `id` (a 10-byte body) on `channel`, which has room.
void PutOne(Region& region, dfir::rt::BodyWriter& writer, uint32_t channel, uint64_t id) {
  CountingScope scope;
  CountingObjects objects;
  PendingPut put(region);
  put.Add(channel, RecordOf(id, Pattern(10, 1), writer));
  REQUIRE(put.Push(Deadline::AfterMs(0), scope, objects) == WaitStatus::kReady);
}

}  // namespace

TEST_SUITE("channel_io") {

TEST_CASE("a put lands on every channel, in order, and rings each consumer") {
  auto region = MixedRegion(4);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  CHECK(dfir::rt::IsShared(*region, 0));
  CHECK_FALSE(dfir::rt::IsShared(*region, 2));
  int object = 0;
  std::thread consumer([&] {
    CHECK(region->WaitForMessages({0, 1}, 1, Deadline::AfterMs(20000)) == WaitStatus::kReady);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  {
    PendingPut put(*region);
    put.Add(0, RecordOf(1, Pattern(1000, 1), writer));
    put.Add(1, RecordOf(1, Pattern(10, 2), writer));
    put.Add(0, RecordOf(2, Pattern(10, 3), writer));
    put.AddLocal(2, &object);
    CHECK(put.Push(Deadline::AfterMs(1000), scope, objects) == WaitStatus::kReady);
  }
  consumer.join();
  CHECK(scope.entered == 1);  // the copy into a block; no wait for room
  CHECK(objects.retained.count(&object) == 1);
  CHECK(dfir::rt::WaitingTransactions(*region, 0) == std::vector<uint64_t>{1, 2});
  CHECK(dfir::rt::WaitingTransactions(*region, 1) == std::vector<uint64_t>{1});
  CHECK_THROWS_WITH_AS(dfir::rt::WaitingTransactions(*region, 2), "channel 2 is local", dfir::rt::RuntimeError);
  CHECK(region->arena().Stats().live_blocks == 1);  // the pushed record holds its body
  std::vector<void*> taken_objects;
  TakeSets(*region, {0, 1, 2}, 1, [&](size_t i, const Taken& message) {
    if (i == 2) {
      CHECK(message.record == nullptr);
      taken_objects.push_back(message.object);
    } else {
      REQUIRE(message.record != nullptr);
      CHECK(dfir::rt::BodyOf(*region, *message.record)[5] == Pattern(1000, i == 0 ? 1 : 2)[5]);
      dfir::rt::ReleaseBody(*region, *message.record);
    }
  });
  CHECK(taken_objects == std::vector<void*>{&object});
  CHECK(region->arena().Stats().live_blocks == 0);
  CHECK(objects.released.empty());  // the taker took the local reference over
}

TEST_CASE("all or nothing: one full channel and nothing is put, the bodies are given back") {
  auto region = MixedRegion(1);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  TransactionLedger ledger(16);
  PutOne(*region, writer, 1, 1);  // channel 1 now full
  PendingPut put(*region);
  put.Add(0, RecordOf(2, Pattern(5000, 1), writer));
  put.Add(1, RecordOf(2, Pattern(5000, 2), writer));
  put.OpenOnPush(ledger, dfir::testing::Transaction(2));
  CHECK(region->arena().Stats().live_blocks == 2);
  scope = CountingScope();
  CHECK(put.Push(Deadline::AfterMs(20), scope, objects) == WaitStatus::kTimeout);
  CHECK(scope.entered == 1);  // the wait for room
  CHECK(region->ring(0).size() == 0);
  CHECK(region->ring(1).size() == 1);
  CHECK(region->arena().Stats().live_blocks == 0);
  CHECK(ledger.open() == 0);  // a put that did not happen opens nothing
}

// A put of several messages for one channel waits for room for all of them: consumers never see
// half of it, and a deadline that passes first puts nothing.
TEST_CASE("all or nothing also for several messages to one channel") {
  auto region = MixedRegion(2);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  PutOne(*region, writer, 0, 1);  // room for one more
  PendingPut put(*region);
  put.Add(0, RecordOf(2, Pattern(10, 1), writer));
  put.Add(0, RecordOf(3, Pattern(10, 1), writer));
  WaitStatus status = WaitStatus::kReady;
  CHECK_NOTHROW(status = put.Push(Deadline::AfterMs(20), scope, objects));
  CHECK(status == WaitStatus::kTimeout);
  CHECK(dfir::rt::WaitingTransactions(*region, 0) == std::vector<uint64_t>{1});
  CHECK(region->arena().Stats().live_blocks == 0);  // the bodies given back (10 bytes: inline)
}

TEST_CASE("several messages to one channel: the put waits until there is room for all, then puts them together") {
  auto region = MixedRegion(3);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  PutOne(*region, writer, 0, 1);
  PutOne(*region, writer, 0, 2);  // room for one more; the put needs two on channel 0, one on 1
  std::thread consumer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(dfir::rt::WaitingTransactions(*region, 0) == std::vector<uint64_t>{1, 2});  // nothing of the put yet
    CHECK(TakeIds(*region, {0}, 1) == std::vector<uint64_t>{1});
  });
  PendingPut put(*region);
  put.Add(0, RecordOf(3, Pattern(10, 1), writer));
  put.Add(1, RecordOf(3, Pattern(10, 1), writer));
  put.Add(0, RecordOf(4, Pattern(10, 1), writer));
  CHECK(put.Push(Deadline::AfterMs(20000), scope, objects) == WaitStatus::kReady);
  consumer.join();
  CHECK(dfir::rt::WaitingTransactions(*region, 0) == std::vector<uint64_t>{2, 3, 4});
  CHECK(dfir::rt::WaitingTransactions(*region, 1) == std::vector<uint64_t>{3});
}

TEST_CASE("several messages to one channel: a closing region puts none of them") {
  auto region = MixedRegion(2);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  PutOne(*region, writer, 1, 1);  // room for one more
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    region->Close();
  });
  PendingPut put(*region);
  put.Add(1, RecordOf(2, Pattern(5000, 1), writer));
  put.Add(1, RecordOf(3, Pattern(5000, 2), writer));
  WaitStatus status = WaitStatus::kReady;
  CHECK_NOTHROW(status = put.Push(Deadline::Forever(), scope, objects));
  closer.join();
  CHECK(status == WaitStatus::kClosed);
  CHECK(dfir::rt::WaitingTransactions(*region, 1) == std::vector<uint64_t>{1});
  CHECK(region->arena().Stats().live_blocks == 0);  // the put's bodies given back (the waiting one is inline)
}

TEST_CASE("a put of more messages for one channel than it holds goes in parts as its consumer makes room") {
  auto region = MixedRegion(2);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  std::vector<uint64_t> taken;
  std::thread consumer([&] {
    CountingScope consumer_scope;
    while (taken.size() < 5) {
      SetsReady ready = AwaitSets(*region, {0}, 0, 8, Deadline::AfterMs(20000), consumer_scope);
      REQUIRE(ready.status == WaitStatus::kReady);
      for (uint64_t id : TakeIds(*region, {0}, ready.sets)) taken.push_back(id);
    }
  });
  PendingPut put(*region);
  for (uint64_t id = 1; id <= 5; ++id) put.Add(0, RecordOf(id, Pattern(10, 1), writer));
  CHECK(put.Push(Deadline::AfterMs(20000), scope, objects) == WaitStatus::kReady);
  consumer.join();
  CHECK(taken == std::vector<uint64_t>{1, 2, 3, 4, 5});
}

TEST_CASE("a put waits for room its consumer makes, then opens its transaction before anyone sees it") {
  auto region = MixedRegion(1);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  TransactionLedger ledger(16);
  PutOne(*region, writer, 0, 1);
  std::thread consumer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(TakeIds(*region, {0}, 1) == std::vector<uint64_t>{1});  // wakes the producer
  });
  PendingPut put(*region);
  put.Add(0, RecordOf(2, Pattern(10, 1), writer));
  put.OpenOnPush(ledger, dfir::testing::Transaction(2));
  CHECK(put.Push(Deadline::AfterMs(20000), scope, objects) == WaitStatus::kReady);
  consumer.join();
  CHECK(ledger.open() == 1);
  CHECK(dfir::rt::WaitingTransactions(*region, 0) == std::vector<uint64_t>{2});
  dfir::rt::SettleNextSet(*region, {0}, ledger);
  CHECK(ledger.open() == 0);
  TakeIds(*region, {0}, 1);
}

TEST_CASE("AddAgain: the same record for one more channel, one more reference to its body") {
  auto region = MixedRegion(4);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  PendingPut put(*region);
  int keys[20];
  put.Add(0, RecordOf(7, Pattern(3000, 9), writer), &keys[0]);
  CHECK(put.AddAgain(1, &keys[0]));
  CHECK_FALSE(put.AddAgain(1, &keys[1]));
  CHECK(region->arena().Stats().live_blocks == 1);
  REQUIRE(put.Push(Deadline::AfterMs(0), scope, objects) == WaitStatus::kReady);
  std::vector<uint64_t> blocks;
  TakeSets(*region, {0, 1}, 1, [&](size_t, const Taken& message) { blocks.push_back(message.record->block); });
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0] == blocks[1]);
  CHECK(region->arena().References(blocks[0]) == 2);
  region->arena().Release(blocks[0]);
  region->arena().Release(blocks[0]);
  CHECK(region->arena().Stats().live_blocks == 0);
  // Past 16 keys the records are found through an index.
  PendingPut many(*region);
  for (int k = 0; k < 20; ++k) many.Add(0, RecordOf(100 + k, Pattern(5, 1), writer), &keys[k]);
  CHECK(many.AddAgain(1, &keys[3]));
  CHECK(many.AddAgain(1, &keys[19]));
  int stranger = 0;
  CHECK_FALSE(many.AddAgain(1, &stranger));
}

TEST_CASE("a put never pushed gives its bodies back when destroyed") {
  auto region = MixedRegion(4);
  CountingScope scope;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  {
    PendingPut put(*region);
    put.Add(0, RecordOf(1, Pattern(4000, 1), writer), &scope);
    put.AddAgain(1, &scope);
    CHECK(region->arena().Stats().live_blocks == 1);
  }
  CHECK(region->arena().Stats().live_blocks == 0);
}

TEST_CASE("a put without ringing leaves its consumer's doorbell for RingConsumers") {
  auto region = MixedRegion(4);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  dfir::rt::EventCount& bell = region->bell(0);
  uint32_t key = dfir::rt::BeginWait(bell);  // a consumer announced itself
  PendingPut put(*region);
  put.Add(0, RecordOf(1, Pattern(5, 1), writer));
  REQUIRE(put.Push(Deadline::AfterMs(0), scope, objects, /*ring=*/false) == WaitStatus::kReady);
  CHECK(bell.epoch.load() == key);
  dfir::rt::RingConsumers(*region, {0, 0});
  CHECK(bell.epoch.load() == key + 1);  // once, however often the channel is named
  dfir::rt::CancelWait(bell);
  TakeIds(*region, {0}, 1);
}

TEST_CASE("an empty put is ready at once and opens nothing") {
  auto region = MixedRegion(1);
  CountingScope scope;
  CountingObjects objects;
  TransactionLedger ledger(4);
  PendingPut put(*region);
  put.OpenOnPush(ledger, dfir::testing::Transaction(1));
  CHECK(put.Push(Deadline::AfterMs(0), scope, objects) == WaitStatus::kReady);
  CHECK(ledger.open() == 0);
}

TEST_CASE("AwaitSets counts whole sets up to a limit, and waits for one") {
  auto region = MixedRegion(8);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  SetsReady none = AwaitSets(*region, {0, 1}, 0, 8, Deadline::AfterMs(10), scope);
  CHECK(none.status == WaitStatus::kTimeout);
  CHECK(none.sets == 0);
  CHECK(scope.entered == 1);
  for (uint64_t id = 1; id <= 3; ++id) {
    PendingPut put(*region);
    put.Add(0, RecordOf(id, Pattern(5, 1), writer));
    if (id != 3) put.Add(1, RecordOf(id, Pattern(5, 2), writer));
    REQUIRE(put.Push(Deadline::AfterMs(0), scope, objects) == WaitStatus::kReady);
  }
  CHECK(AwaitSets(*region, {0, 1}, 0, 8, Deadline::AfterMs(0), scope).sets == 2);
  CHECK(AwaitSets(*region, {0, 1}, 0, 1, Deadline::AfterMs(0), scope).sets == 1);
  CHECK(AwaitSets(*region, {0}, 0, 8, Deadline::AfterMs(0), scope).sets == 3);
  CHECK(TakeIds(*region, {0, 1}, 2) == std::vector<uint64_t>{1, 1, 2, 2});
  std::thread producer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    PendingPut put(*region);
    put.Add(1, RecordOf(3, Pattern(5, 2), writer));
    put.Push(Deadline::AfterMs(1000), scope, objects);
  });
  SetsReady one = AwaitSets(*region, {0, 1}, 1, 8, Deadline::AfterMs(20000), scope);
  producer.join();
  CHECK(one.status == WaitStatus::kReady);
  CHECK(one.sets == 1);
  CHECK(TakeIds(*region, {0, 1}, 1) == std::vector<uint64_t>{3, 3});
  region->Close();
  CHECK(AwaitSets(*region, {0, 1}, 1, 8, Deadline::Forever(), scope).status == WaitStatus::kClosed);
}

TEST_CASE("AwaitSets with a forecast waits as it forecasts: its waits are learnt") {
  auto region = MixedRegion(8);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  dfir::rt::ArrivalForecast forecast;
  CHECK(AwaitSets(*region, {0}, 0, 8, Deadline::AfterMs(0), scope, &forecast).status == WaitStatus::kTimeout);
  for (uint64_t id = 1; id <= dfir::rt::ArrivalForecast::kMinSamples; ++id) {
    std::thread producer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      PendingPut put(*region);
      put.Add(0, RecordOf(id, Pattern(5, 1), writer));
      put.Push(Deadline::AfterMs(1000), scope, objects);  // rings the consumer
    });
    SetsReady one = AwaitSets(*region, {0}, 0, 8, Deadline::AfterMs(20000), scope, &forecast);
    producer.join();
    REQUIRE(one.sets == 1);
    CHECK(TakeIds(*region, {0}, 1) == std::vector<uint64_t>{id});
  }
  CHECK(forecast.Quartiles()[0] >= 4'000'000);  // ns: each wait lasted about 5 ms
  CHECK(forecast.Quartiles()[1] < 1'000'000'000);
}

TEST_CASE("taking a message that is not there is a RuntimeError") {
  auto region = MixedRegion(4);
  CHECK_THROWS_WITH_AS(TakeIds(*region, {1}, 1),
                       "channel 1 lost a ready message: another consumer took it (a channel has one consumer)",
                       dfir::rt::RuntimeError);
}

TEST_CASE("NextSetIsPlainTensors and SettleNextSet read the next set in place") {
  auto region = MixedRegion(4);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  constexpr dfir::rt::MessageKind kTensor = 1;
  auto tensor = [&](uint64_t id) {
    MessageRecord record;
    dfir::rt::WriteHeader(dfir::testing::Transaction(id), kTensor, 0, 0, 0, record);
    dfir::rt::ArrayLayout layout;
    layout.dtype_num = 5;
    layout.ndim = 1;
    layout.shape[0] = 1;
    int32_t value = static_cast<int32_t>(id);
    REQUIRE(writer.WriteArray(layout, &value, sizeof value, 0, record));
    return record;
  };
  PendingPut put(*region);
  put.Add(0, tensor(1));
  put.Add(1, tensor(1));
  put.Add(0, tensor(2));
  put.Add(1, tensor(3));
  REQUIRE(put.Push(Deadline::AfterMs(0), scope, objects) == WaitStatus::kReady);
  CHECK(dfir::rt::NextSetIsPlainTensors(*region, {0, 1}, kTensor));
  CHECK_FALSE(dfir::rt::NextSetIsPlainTensors(*region, {0, 1}, kTensor + 1));
  CHECK_FALSE(dfir::rt::NextSetIsPlainTensors(*region, {0, 2}, kTensor));  // a local channel
  TransactionLedger ledger(8);
  ledger.Open(dfir::testing::Transaction(1));
  ledger.Open(dfir::testing::Transaction(2));
  dfir::rt::SettleNextSet(*region, {0, 1}, ledger);
  CHECK(ledger.open() == 1);
  CHECK(ledger.TakeOldest()->transaction_id == 2);
  TakeIds(*region, {0, 1}, 1);
  CHECK_FALSE(dfir::rt::NextSetIsPlainTensors(*region, {0, 1}, kTensor));  // transactions 2 and 3
  TakeIds(*region, {0, 1}, 1);
  CHECK_FALSE(dfir::rt::NextSetIsPlainTensors(*region, {0, 1}, kTensor));  // nothing waits
}

TEST_CASE("DrainLocalChannels releases what local channels still hold") {
  auto region = MixedRegion(4);
  CountingScope scope;
  CountingObjects objects;
  int a = 0;
  int b = 0;
  PendingPut put(*region);
  put.AddLocal(2, &a);
  put.AddLocal(2, &b);
  REQUIRE(put.Push(Deadline::AfterMs(0), scope, objects) == WaitStatus::kReady);
  CHECK(objects.retained.size() == 2);
  dfir::rt::DrainLocalChannels(*region, objects);
  CHECK(objects.released == std::multiset<void*>{&a, &b});
  CHECK(region->ring(2).size() == 0);
}

TEST_CASE("a producer process puts sets under backpressure; the consumer takes them whole, in order") {
  auto region = MixedRegion(4);
  constexpr uint64_t kSets = 300;
  pid_t child = dfir::testing::StartChild([&] {
    CountingScope scope;
    CountingObjects objects;
    dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(20000), scope);
    for (uint64_t id = 0; id < kSets; ++id) {
      PendingPut put(*region);
      put.Add(0, RecordOf(id, Pattern(200 + id * 13, static_cast<uint8_t>(id)), writer));
      put.Add(1, RecordOf(id, Pattern(5, static_cast<uint8_t>(id)), writer));
      if (put.Push(Deadline::AfterMs(20000), scope, objects) != WaitStatus::kReady) return 1;
    }
    return 0;
  });
  CountingScope scope;
  uint64_t taken = 0;
  bool whole = true;
  while (taken < kSets) {
    SetsReady ready = AwaitSets(*region, {0, 1}, 0, 8, Deadline::AfterMs(20000), scope);
    REQUIRE(ready.status == WaitStatus::kReady);
    TakeSets(*region, {0, 1}, ready.sets, [&](size_t i, const Taken& message) {
      const uint64_t id = taken;
      const std::vector<uint8_t> expected = Pattern(i == 0 ? 200 + id * 13 : 5, static_cast<uint8_t>(id));
      const uint8_t* body = dfir::rt::BodyOf(*region, *message.record);
      whole = whole && message.record->transaction_id == id && message.record->body_size == expected.size() &&
              std::memcmp(body, expected.data(), expected.size()) == 0;
      dfir::rt::ReleaseBody(*region, *message.record);
      if (i == 1) ++taken;
    });
  }
  CHECK(dfir::testing::WaitChild(child) == 0);
  CHECK(whole);
  CHECK(region->arena().Stats().live_blocks == 0);
}

TEST_CASE("a put to a full OVERWRITE channel drops its oldest message, gives back what it held, and never waits") {
  auto region = MixedRegion(2);
  region->ring(0).SetOverwrite(true);
  region->ring(2).SetOverwrite(true);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  int locals[5] = {};
  for (uint64_t id = 1; id <= 5; ++id) {
    PendingPut put(*region);
    put.Add(0, RecordOf(id, Pattern(5000, 1), writer));  // a body in an arena block
    put.AddLocal(2, &locals[id - 1]);
    scope = CountingScope();
    REQUIRE(put.Push(Deadline::AfterMs(0), scope, objects) == WaitStatus::kReady);
    CHECK(scope.entered == 0);  // no wait for room
  }
  CHECK(region->ring(0).dropped() == 3);
  CHECK(region->ring(2).dropped() == 3);
  CHECK(dfir::rt::WaitingTransactions(*region, 0) == std::vector<uint64_t>{4, 5});
  CHECK(region->arena().Stats().live_blocks == 2);  // the dropped bodies were given back
  CHECK(objects.released == std::multiset<void*>{&locals[0], &locals[1], &locals[2]});
  CHECK(TakeIds(*region, {0}, 2) == std::vector<uint64_t>{4, 5});
  CHECK(region->arena().Stats().live_blocks == 0);
}

TEST_CASE("a consumer takes the message that replaced one a producer dropped after the count") {
  auto region = MixedRegion(1);
  region->ring(0).SetOverwrite(true);
  CountingScope scope;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  PutOne(*region, writer, 0, 1);
  SetsReady ready = AwaitSets(*region, {0}, 0, 1, Deadline::AfterMs(0), scope);
  REQUIRE(ready.sets == 1);
  // A producer drops message 1 (counted above) and pushes message 2 a little later.
  MessageRecord dropped;
  REQUIRE(region->ring(0).TryDropOldest([&](const uint8_t* slot) { std::memcpy(&dropped, slot, sizeof dropped); }));
  dfir::rt::ReleaseBody(*region, dropped);
  std::thread producer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    PutOne(*region, writer, 0, 2);
  });
  CHECK(TakeIds(*region, {0}, 1) == std::vector<uint64_t>{2});
  producer.join();
  CHECK(region->ring(0).dropped() == 1);
  CHECK(region->arena().Stats().live_blocks == 0);
}

TEST_CASE("a put holds its first few messages in place and more once they overflow, AddAgain across the edge") {
  auto region = MixedRegion(4);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  int keys[4];
  PendingPut put(*region);
  put.Add(0, RecordOf(1, Pattern(3000, 1), writer), &keys[0]);
  put.Add(1, RecordOf(2, Pattern(3000, 2), writer), &keys[1]);
  put.Add(0, RecordOf(3, Pattern(3000, 3), writer), &keys[2]);
  put.Add(1, RecordOf(4, Pattern(3000, 4), writer), &keys[3]);
  REQUIRE(put.AddAgain(0, &keys[0]));  // the fifth record, copied from the first as the put grows
  REQUIRE(put.Push(Deadline::AfterMs(0), scope, objects) == WaitStatus::kReady);
  CHECK(TakeIds(*region, {0}, 3) == std::vector<uint64_t>{1, 3, 1});
  CHECK(TakeIds(*region, {1}, 2) == std::vector<uint64_t>{2, 4});
  CHECK(region->arena().Stats().live_blocks == 0);
}

TEST_CASE("InlineVector keeps its values in order across growing, and FunctionRef calls what it refers to") {
  dfir::rt::InlineVector<uint64_t, 2> values;
  CHECK(values.empty());
  for (uint64_t v = 0; v < 4; ++v) values.push_back(v * 10);  // in place, then grown once
  values.push_back(values[0]);  // a value of its own, as it grows again
  values.push_back(40);
  CHECK(std::vector<uint64_t>(values.begin(), values.end()) == std::vector<uint64_t>{0, 10, 20, 30, 0, 40});
  CHECK(values.back() == 40);
  int calls = 0;
  auto count = [&calls](int by) { calls += by; };
  dfir::rt::FunctionRef<void(int)> call(count);
  call(2);
  call(3);
  CHECK(calls == 5);
}

}  // TEST_SUITE

TEST_CASE("a byte meter counts the bodies its thread adds to puts and takes, the innermost meter only") {
  auto region = MixedRegion(4);
  CountingScope scope;
  CountingObjects objects;
  dfir::rt::BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  int object = 0;
  dfir::rt::SetLocalObjectBytes([](void*) -> uint64_t { return 7; });
  dfir::rt::ByteMeter outer;
  {
    dfir::rt::ByteMeter meter;
    PendingPut put(*region);
    put.Add(0, RecordOf(1, Pattern(1000, 1), writer), &object);
    CHECK(put.AddAgain(1, &object));  // the same body on a second channel counts again
    put.AddLocal(2, &object);
    CHECK(put.Push(Deadline::AfterMs(1000), scope, objects) == WaitStatus::kReady);
    CHECK(meter.bytes_out() == 2007);
    CHECK(meter.bytes_in() == 0);
  }
  {
    dfir::rt::ByteMeter meter;
    TakeSets(*region, {0, 1, 2}, 1, [&](size_t i, const Taken& message) {
      CHECK(dfir::rt::MessageBytes(message) == (i == 2 ? 7 : 1000));
      if (message.record != nullptr) dfir::rt::ReleaseBody(*region, *message.record);
    });
    CHECK(meter.bytes_in() == 2007);
    CHECK(meter.bytes_out() == 0);
  }
  dfir::rt::SetLocalObjectBytes(nullptr);
  CHECK(dfir::rt::MessageBytes(Taken{nullptr, &object}) == 0);
  CHECK(outer.bytes_in() == 0);  // the inner meters counted it all
  CHECK(outer.bytes_out() == 0);
}
