// The record side of the message codec (runtime/native/message_codec.h): headers, inline and
// arena bodies of every encoding, and the references those bodies hold.
#include "message_codec.h"

#include <doctest/doctest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "helpers.h"

using dfir::rt::ArrayLayout;
using dfir::rt::BlockReference;
using dfir::rt::BodyEncoding;
using dfir::rt::BodyOf;
using dfir::rt::BodyWriter;
using dfir::rt::Deadline;
using dfir::rt::kBlockHeaderBytes;
using dfir::rt::kInlineBytes;
using dfir::rt::MessageRecord;
using dfir::rt::ReleaseBody;
using dfir::rt::RetainBody;
using dfir::rt::TransactionInfo;
using dfir::testing::CountingScope;
using dfir::testing::MakeRegion;
using dfir::testing::Pattern;

namespace {

constexpr dfir::rt::MessageKind kTensorKind = 1;

TransactionInfo FullTransaction() {
  TransactionInfo info;
  info.transaction_id = 0x123456789ABCull;
  info.start_time = -5;
  info.end_time = 1700000000000;
  info.flow_flags = 0x3;
  info.SetUserData("user data!", 10);
  return info;
}

// Pushes `record` through shared channel 0 of `region` and takes it out again.
MessageRecord RoundTrip(dfir::rt::Region& region, const MessageRecord& record) {
  dfir::rt::Ring ring = region.ring(0);
  REQUIRE(ring.TryPush([&](uint8_t* slot) { std::memcpy(slot, &record, sizeof record); }));
  MessageRecord taken;
  std::memset(&taken, 0xEE, sizeof taken);
  REQUIRE(ring.TryPop([&](const uint8_t* slot) { std::memcpy(&taken, slot, sizeof taken); }));
  return taken;
}

std::vector<uint8_t> BodyBytes(const dfir::rt::Region& region, const MessageRecord& record) {
  const uint8_t* body = BodyOf(region, record);
  return std::vector<uint8_t>(body, body + record.body_size);
}

}  // namespace

TEST_SUITE("message_codec") {

TEST_CASE("a record is 504 bytes: with its sequence number it fills a 512-byte slot") {
  CHECK(sizeof(MessageRecord) == 504);
  CHECK(dfir::rt::Ring::Stride(sizeof(MessageRecord)) == 512);
}

TEST_CASE("WriteHeader sets the header, clears the body fields and leaves the inline bytes") {
  MessageRecord record;
  std::memset(&record, 0xAB, sizeof record);
  dfir::rt::WriteHeader(FullTransaction(), 4, -7, 3, 9, record);
  CHECK(record.transaction_id == 0x123456789ABCull);
  CHECK(record.start_time == -5);
  CHECK(record.end_time == 1700000000000);
  CHECK(record.flow_flags == 3);
  CHECK(record.user_data_size == 10);
  CHECK(std::memcmp(record.user_data, "user data!", 10) == 0);
  CHECK(record.kind == 4);
  CHECK(record.ret_code == -7);
  CHECK(record.route_label == 3);
  CHECK(record.data_label == 9);
  CHECK(record.encoding == BodyEncoding::kNone);
  CHECK(record.inline_body == 0);
  CHECK(record.ndim == 0);
  CHECK(record.block == 0);
  CHECK(record.body_size == 0);
  CHECK(record.body_offset == 0);
  CHECK(record.inline_bytes[0] == 0xAB);
  CHECK(record.inline_bytes[kInlineBytes - 1] == 0xAB);
}

TEST_CASE("TransactionOf reads back what WriteHeader wrote; SameTransaction compares every field") {
  MessageRecord a;
  dfir::rt::WriteHeader(FullTransaction(), 1, 0, 0, 0, a);
  TransactionInfo info = dfir::rt::TransactionOf(a);
  CHECK(info.transaction_id == 0x123456789ABCull);
  CHECK(info.start_time == -5);
  CHECK(info.end_time == 1700000000000);
  CHECK(info.flow_flags == 3);
  CHECK(info.user_data_size == 10);
  CHECK(std::memcmp(info.user_data.data(), "user data!", 10) == 0);
  MessageRecord b;
  dfir::rt::WriteHeader(info, 2, 5, 1, 1, b);  // kind, code and labels are not the transaction
  CHECK(dfir::rt::SameTransaction(a, b));
  b.user_data[12] = 1;  // past the user data's size: not compared
  CHECK(dfir::rt::SameTransaction(a, b));
  auto differs = [&](auto change) {
    MessageRecord c = a;
    change(c);
    return !dfir::rt::SameTransaction(a, c);
  };
  CHECK(differs([](MessageRecord& c) { c.transaction_id += 1; }));
  CHECK(differs([](MessageRecord& c) { c.start_time += 1; }));
  CHECK(differs([](MessageRecord& c) { c.end_time += 1; }));
  CHECK(differs([](MessageRecord& c) { c.flow_flags ^= 4; }));
  CHECK(differs([](MessageRecord& c) { c.user_data_size -= 1; }));
  CHECK(differs([](MessageRecord& c) { c.user_data[9] ^= 1; }));
}

TEST_CASE("IsPlainTensor: the tensor kind, an array body, no return code") {
  auto region = MakeRegion(1, 4);
  CountingScope scope;
  BodyWriter writer(*region, Deadline::AfterMs(0), scope);
  ArrayLayout layout;
  layout.dtype_num = 11;
  layout.ndim = 1;
  layout.shape[0] = 2;
  float data[2] = {1.0f, 2.0f};
  MessageRecord record;
  dfir::rt::WriteHeader(FullTransaction(), kTensorKind, 0, 0, 0, record);
  REQUIRE(writer.WriteArray(layout, data, sizeof data, 0, record));
  CHECK(dfir::rt::IsPlainTensor(record, kTensorKind));
  CHECK_FALSE(dfir::rt::IsPlainTensor(record, kTensorKind + 1));
  record.ret_code = 164000;
  CHECK_FALSE(dfir::rt::IsPlainTensor(record, kTensorKind));
  record.ret_code = 0;
  record.encoding = BodyEncoding::kPickledArray;
  CHECK_FALSE(dfir::rt::IsPlainTensor(record, kTensorKind));
}

TEST_CASE("an empty message has no body") {
  auto region = MakeRegion(1, 4);
  MessageRecord record;
  dfir::rt::WriteHeader(FullTransaction(), 3, 0, 0, 0, record);
  MessageRecord taken = RoundTrip(*region, record);
  CHECK(taken.encoding == BodyEncoding::kNone);
  CHECK(taken.body_size == 0);
  CHECK(taken.block == 0);
  ReleaseBody(*region, taken);  // nothing to give back
  CHECK(region->arena().Stats().live_blocks == 0);
}

TEST_CASE("bodies of up to INLINE_BYTES travel in the record, larger ones in an arena block") {
  auto region = MakeRegion(1, 4);
  CountingScope scope;
  BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  for (BodyEncoding encoding : {BodyEncoding::kArray, BodyEncoding::kPickledArray, BodyEncoding::kPickle,
                                BodyEncoding::kText}) {
    CAPTURE(static_cast<int>(encoding));
    for (size_t size : {size_t{0}, size_t{1}, size_t{kInlineBytes}, size_t{kInlineBytes + 1}, size_t{100000}}) {
      CAPTURE(size);
      std::vector<uint8_t> body = Pattern(size, static_cast<uint8_t>(size));
      MessageRecord record;
      dfir::rt::WriteHeader(FullTransaction(), 2, 0, 0, 5, record);
      REQUIRE(writer.Write(encoding, body.data(), body.size(), 0, record));
      MessageRecord taken = RoundTrip(*region, record);
      CHECK(taken.encoding == encoding);
      CHECK(taken.body_size == size);
      CHECK(taken.data_label == 5);
      CHECK(dfir::rt::SameTransaction(taken, record));
      CHECK(BodyBytes(*region, taken) == body);
      if (size <= kInlineBytes) {
        CHECK(taken.inline_body == 1);
        CHECK(taken.block == 0);
        CHECK(region->arena().Stats().live_blocks == 0);
      } else {
        CHECK(taken.inline_body == 0);
        REQUIRE(taken.block != 0);
        CHECK(taken.body_offset == taken.block + kBlockHeaderBytes);
        CHECK(region->arena().References(taken.block) == 1);
        CHECK(region->arena().Capacity(taken.block) >= size);
      }
      ReleaseBody(*region, taken);
      CHECK(region->arena().Stats().live_blocks == 0);
    }
  }
  CHECK(scope.entered == 8);  // each of the 8 copies into a block bracketed once
  CHECK(scope.left == 8);
}

TEST_CASE("array bodies carry their dtype and shape; more than 8 dimensions is a RuntimeError") {
  auto region = MakeRegion(1, 4);
  CountingScope scope;
  BodyWriter writer(*region, Deadline::AfterMs(1000), scope);
  ArrayLayout layout;
  layout.dtype_num = 7;
  layout.ndim = 8;
  for (int d = 0; d < 8; ++d) layout.shape[d] = d == 7 ? 1000 : 1;
  std::vector<uint8_t> data = Pattern(8000, 1);
  MessageRecord record;
  dfir::rt::WriteHeader(FullTransaction(), kTensorKind, 0, 0, 0, record);
  REQUIRE(writer.WriteArray(layout, data.data(), data.size(), 0, record));
  MessageRecord taken = RoundTrip(*region, record);
  CHECK(taken.encoding == BodyEncoding::kArray);
  CHECK(taken.dtype_num == 7);
  CHECK(taken.ndim == 8);
  CHECK(taken.shape[7] == 1000);
  CHECK(BodyBytes(*region, taken) == data);
  ReleaseBody(*region, taken);
  ArrayLayout scalar;
  scalar.dtype_num = 12;
  double value = 2.5;
  REQUIRE(writer.WriteArray(scalar, &value, sizeof value, 0, record));
  CHECK(record.ndim == 0);
  CHECK(record.inline_body == 1);
  ArrayLayout wide;
  wide.ndim = 9;
  CHECK_THROWS_WITH_AS(writer.WriteArray(wide, data.data(), 8, 0, record),
                       "an array body has at most 8 dimensions, got 9", dfir::rt::RuntimeError);
  CHECK(region->arena().Stats().live_blocks == 0);
}

TEST_CASE("a body already in an arena block is shared, not copied: one more reference") {
  auto region = MakeRegion(1, 4);
  CountingScope scope;
  BodyWriter writer(*region, Deadline::AfterMs(0), scope);
  uint64_t block = region->arena().TryAllocate(4096);
  uint8_t* data = region->arena().Data(block);
  std::memset(data, 0x33, 4096);
  MessageRecord record;
  dfir::rt::WriteHeader(FullTransaction(), 2, 0, 0, 0, record);
  REQUIRE(writer.Write(BodyEncoding::kPickle, data + 64, 1000, block, record));  // a view into the block
  CHECK(scope.entered == 0);  // no wait, no copy
  CHECK(record.block == block);
  CHECK(record.body_offset == static_cast<uint64_t>(data + 64 - region->base()));
  CHECK(BodyOf(*region, record) == data + 64);
  CHECK(region->arena().References(block) == 2);
  CHECK(region->arena().Stats().live_blocks == 1);
  // Fan-out: one more record, one more reference.
  RetainBody(*region, record);
  CHECK(region->arena().References(block) == 3);
  ReleaseBody(*region, record);
  ReleaseBody(*region, record);
  region->arena().Release(block);  // the producer's own reference
  CHECK(region->arena().Stats().live_blocks == 0);
}

TEST_CASE("RetainBody and ReleaseBody leave inline bodies alone") {
  auto region = MakeRegion(1, 4);
  CountingScope scope;
  BodyWriter writer(*region, Deadline::AfterMs(0), scope);
  MessageRecord record = dfir::testing::RecordOf(1, Pattern(10, 0), writer);
  uint64_t block = region->arena().TryAllocate(100);
  record.block = block;  // stale: an inline body holds no block
  RetainBody(*region, record);
  ReleaseBody(*region, record);
  CHECK(region->arena().References(block) == 1);
}

TEST_CASE("no arena room before the deadline, or a closed region: false, and no reference held") {
  auto region = MakeRegion(1, 4, 8192);
  uint64_t hog = region->arena().TryAllocate(5000);
  REQUIRE(hog != 0);
  CountingScope scope;
  BodyWriter writer(*region, Deadline::AfterMs(20), scope);
  std::vector<uint8_t> body = Pattern(5000, 3);
  MessageRecord record;
  dfir::rt::WriteHeader(FullTransaction(), 2, 0, 0, 0, record);
  CHECK_FALSE(writer.Write(BodyEncoding::kPickle, body.data(), body.size(), 0, record));
  CHECK(record.block == 0);
  CHECK(scope.entered == 1);
  CHECK(scope.left == 1);
  CHECK(region->arena().Stats().live_blocks == 1);
  // A release from another thread lets a waiting writer through.
  BodyWriter patient(*region, Deadline::AfterMs(20000), scope);
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    region->arena().Release(hog);
  });
  CHECK(patient.Write(BodyEncoding::kPickle, body.data(), body.size(), 0, record));
  releaser.join();
  CHECK(BodyBytes(*region, record) == body);
  ReleaseBody(*region, record);
  region->Close();
  BodyWriter closed(*region, Deadline::Forever(), scope);
  region->arena().TryAllocate(5000);
  CHECK_FALSE(closed.Write(BodyEncoding::kPickle, body.data(), body.size(), 0, record));
  CHECK(closed.Write(BodyEncoding::kPickle, body.data(), 10, 0, record));  // inline: needs no room
}

TEST_CASE("a BlockReference gives its reference back, only in the process that took it") {
  auto region = MakeRegion(1, 4);
  uint64_t block = region->arena().TryAllocate(1000);
  region->arena().Retain(block);
  region->arena().Retain(block);
  { BlockReference held(region, block); }
  CHECK(region->arena().References(block) == 2);
  auto reference = std::make_unique<BlockReference>(region, block);
  CHECK(reference->block() == block);
  pid_t child = dfir::testing::StartChild([&] {
    reference.reset();  // a forked child inherits the holder, not the share
    return region->arena().References(block) == 2 ? 0 : 1;
  });
  CHECK(dfir::testing::WaitChild(child) == 0);
  CHECK(region->arena().References(block) == 2);
  reference.reset();
  CHECK(region->arena().References(block) == 1);
}

TEST_CASE("records written in a child process carry their arena bodies to the parent") {
  auto region = MakeRegion(1, 8, 4 << 20);
  constexpr uint64_t kMessages = 200;
  pid_t child = dfir::testing::StartChild([&] {
    CountingScope scope;
    BodyWriter writer(*region, Deadline::AfterMs(20000), scope);
    dfir::rt::Ring ring = region->ring(0);
    for (uint64_t i = 0; i < kMessages; ++i) {
      MessageRecord record = dfir::testing::RecordOf(i, Pattern(100 + i * 97, static_cast<uint8_t>(i)), writer);
      while (!ring.TryPush([&](uint8_t* slot) { std::memcpy(slot, &record, sizeof record); })) {
        if (region->WaitForRoom({0}, Deadline::AfterMs(20000)) != dfir::rt::WaitStatus::kReady) return 1;
      }
      dfir::rt::NotifyAll(region->bell(0));
    }
    return 0;
  });
  bool bodies_match = true;
  for (uint64_t i = 0; i < kMessages; ++i) {
    REQUIRE(region->WaitForMessages({0}, 0, Deadline::AfterMs(20000)) == dfir::rt::WaitStatus::kReady);
    MessageRecord record;
    REQUIRE(region->ring(0).TryPop([&](const uint8_t* slot) { std::memcpy(&record, slot, sizeof record); }));
    region->ring(0).NotifySpace();
    bodies_match = bodies_match && record.transaction_id == i &&
                   BodyBytes(*region, record) == Pattern(100 + i * 97, static_cast<uint8_t>(i));
    ReleaseBody(*region, record);
  }
  CHECK(dfir::testing::WaitChild(child) == 0);
  CHECK(bodies_match);
  CHECK(region->arena().Stats().live_blocks == 0);
}

}  // TEST_SUITE
