// TransactionLedger and TransactionInfo (runtime/native/ledger.h): fed transactions whose
// results have not shown up, oldest first.
#include "ledger.h"

#include <doctest/doctest.h>

#include <vector>

#include "helpers.h"
#include "shm.h"

using dfir::rt::RuntimeError;
using dfir::rt::TransactionInfo;
using dfir::rt::TransactionLedger;
using dfir::testing::Transaction;

namespace {

std::vector<uint64_t> Drain(TransactionLedger& ledger) {
  std::vector<uint64_t> ids;
  while (auto oldest = ledger.TakeOldest()) ids.push_back(oldest->transaction_id);
  return ids;
}

}  // namespace

TEST_SUITE("ledger") {

TEST_CASE("user data: up to 64 bytes travel, more is a RuntimeError") {
  TransactionInfo info;
  std::vector<uint8_t> bytes(64, 0x42);
  info.SetUserData(bytes.data(), bytes.size());
  CHECK(info.user_data_size == 64);
  CHECK(info.user_data[63] == 0x42);
  info.SetUserData("ab", 2);
  CHECK(info.user_data_size == 2);
  CHECK(info.user_data[0] == 'a');
  std::vector<uint8_t> too_many(65);
  CHECK_THROWS_WITH_AS(info.SetUserData(too_many.data(), too_many.size()),
                       "transaction user data has 65 bytes; at most 64 travel with a message", RuntimeError);
  CHECK(info.user_data_size == 2);
}

TEST_CASE("a ledger needs a capacity") {
  CHECK_THROWS_WITH_AS(TransactionLedger(0), "a transaction ledger needs a capacity of at least 1, got 0",
                       RuntimeError);
}

TEST_CASE("open in feed order, take oldest first with every field kept") {
  TransactionLedger ledger(8);
  CHECK(ledger.open() == 0);
  CHECK_FALSE(ledger.TakeOldest().has_value());
  TransactionInfo first = Transaction(5);
  first.flow_flags = 3;
  first.SetUserData("xyz", 3);
  ledger.Open(first);
  ledger.Open(Transaction(2));
  ledger.Open(Transaction(9));
  CHECK(ledger.open() == 3);
  auto oldest = ledger.TakeOldest();
  REQUIRE(oldest.has_value());
  CHECK(oldest->transaction_id == 5);
  CHECK(oldest->start_time == 50);
  CHECK(oldest->end_time == 55);
  CHECK(oldest->flow_flags == 3);
  CHECK(oldest->user_data_size == 3);
  CHECK(oldest->user_data[2] == 'z');
  CHECK(Drain(ledger) == std::vector<uint64_t>{2, 9});
  CHECK(ledger.open() == 0);
}

TEST_CASE("settle removes the oldest open entry of an id, wherever it is") {
  TransactionLedger ledger(8);
  for (uint64_t id : {1, 2, 3, 4}) ledger.Open(Transaction(id));
  CHECK(ledger.Settle(3));
  CHECK(ledger.open() == 3);
  CHECK(ledger.Settle(1));
  CHECK_FALSE(ledger.Settle(1));  // settled already
  CHECK_FALSE(ledger.Settle(42));  // never opened
  CHECK(ledger.open() == 2);
  CHECK(Drain(ledger) == std::vector<uint64_t>{2, 4});
}

TEST_CASE("an id opened twice settles one entry at a time, oldest first") {
  TransactionLedger ledger(8);
  TransactionInfo early = Transaction(7);
  early.start_time = 1;
  TransactionInfo late = Transaction(7);
  late.start_time = 2;
  ledger.Open(early);
  ledger.Open(Transaction(8));
  ledger.Open(late);
  CHECK(ledger.Settle(7));
  CHECK(ledger.open() == 2);
  auto oldest = ledger.TakeOldest();
  REQUIRE(oldest.has_value());
  CHECK(oldest->transaction_id == 8);
  oldest = ledger.TakeOldest();
  REQUIRE(oldest.has_value());
  CHECK(oldest->transaction_id == 7);
  CHECK(oldest->start_time == 2);  // the early one was settled
  CHECK_FALSE(ledger.Settle(7));
}

TEST_CASE("beyond its capacity the ledger forgets the oldest open entries") {
  TransactionLedger ledger(3);
  for (uint64_t id = 1; id <= 5; ++id) ledger.Open(Transaction(id));
  CHECK(ledger.open() == 3);
  CHECK_FALSE(ledger.Settle(1));
  CHECK_FALSE(ledger.Settle(2));
  CHECK(Drain(ledger) == std::vector<uint64_t>{3, 4, 5});
}

TEST_CASE("settled entries do not count against the capacity") {
  TransactionLedger ledger(2);
  ledger.Open(Transaction(1));
  ledger.Open(Transaction(2));
  CHECK(ledger.Settle(2));
  ledger.Open(Transaction(3));  // 1 and 3 open: nothing forgotten
  CHECK(ledger.open() == 2);
  CHECK(Drain(ledger) == std::vector<uint64_t>{1, 3});
}

TEST_CASE("many transactions settled out of order leave exactly the unsettled ones, in order") {
  TransactionLedger ledger(10000);
  for (uint64_t id = 0; id < 5000; ++id) ledger.Open(Transaction(id));
  for (uint64_t id = 4999; id < 5000; id -= 1) {
    if (id % 3 != 0) REQUIRE(ledger.Settle(id));
  }
  std::vector<uint64_t> expected;
  for (uint64_t id = 0; id < 5000; id += 3) expected.push_back(id);
  CHECK(ledger.open() == expected.size());
  CHECK(Drain(ledger) == expected);
}

TEST_CASE("a ledger that wraps around and grows keeps its entries in feed order") {
  TransactionLedger ledger(1000);
  uint64_t next = 0;
  for (int round = 0; round < 50; ++round) {  // the oldest settle as newer open: the front moves on
    ledger.Open(Transaction(next++));
    ledger.Open(Transaction(next++));
    REQUIRE(ledger.Settle(next - 2));
  }
  CHECK(ledger.open() == 50);
  for (int more = 0; more < 100; ++more) ledger.Open(Transaction(next++));  // grows while wrapped
  CHECK(ledger.open() == 150);
  std::vector<uint64_t> expected;
  for (uint64_t id = 1; id < 100; id += 2) expected.push_back(id);
  for (uint64_t id = 100; id < 200; ++id) expected.push_back(id);
  CHECK(Drain(ledger) == expected);
}

TEST_CASE("ids that were never opened do not settle, among many open ones") {
  TransactionLedger ledger(20000);
  for (uint64_t id = 1; id < 20000; id += 2) ledger.Open(Transaction(id));
  for (uint64_t id = 0; id < 20000; id += 2) REQUIRE_FALSE(ledger.Settle(id));  // some share a count slot
  CHECK(ledger.open() == 10000);
  for (uint64_t id = 1; id < 20000; id += 2) REQUIRE(ledger.Settle(id));
  CHECK(ledger.open() == 0);
  CHECK_FALSE(ledger.TakeOldest().has_value());
}

TEST_CASE("open entries are listed oldest first, settled ones left out") {
  TransactionLedger ledger(8);
  for (uint64_t id : {5, 6, 7}) ledger.Open(Transaction(id));
  ledger.Settle(6);
  std::vector<uint64_t> ids;
  for (const TransactionInfo& info : ledger.OpenEntries()) ids.push_back(info.transaction_id);
  CHECK(ids == std::vector<uint64_t>{5, 7});
}

TEST_CASE("a replaced transaction's results are stale, the failure standing in for it is not") {
  TransactionLedger ledger(8);
  CHECK_FALSE(ledger.HasReplaced());
  CHECK_FALSE(ledger.IsStale(3, 0));
  ledger.Replace(3, 545000);
  CHECK(ledger.HasReplaced());
  CHECK(ledger.IsStale(3, 0));          // its result
  CHECK(ledger.IsStale(3, 564000));     // its error from a UDF
  CHECK_FALSE(ledger.IsStale(3, 545000));  // its failure
  CHECK_FALSE(ledger.IsStale(4, 0));    // another transaction
  ledger.Replace(3, 564001);            // replaced again: the newer code stands
  CHECK(ledger.IsStale(3, 545000));
  CHECK_FALSE(ledger.IsStale(3, 564001));
}

}  // TEST_SUITE
