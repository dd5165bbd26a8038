// Aligner (runtime/native/aligner.h): groups a multi-input func's messages by (transaction id,
// data label), under the cache, timeout and dropout rules of docs/runtime.md, "Alignment".
#include "aligner.h"

#include <doctest/doctest.h>

#include <vector>

#include "shm.h"

using dfir::rt::AlignedGroup;
using dfir::rt::Aligner;
using dfir::rt::kNoHandle;
using dfir::rt::PushResult;
using dfir::rt::RuntimeError;

namespace {

using Handles = std::vector<uint64_t>;

void CheckGroup(const std::optional<AlignedGroup>& group, uint64_t transaction_id, uint32_t data_label,
                const Handles& handles) {
  REQUIRE(group.has_value());
  CHECK(group->key.transaction_id == transaction_id);
  CHECK(group->key.data_label == data_label);
  CHECK(group->handles == handles);
}

}  // namespace

TEST_SUITE("aligner") {

TEST_CASE("parameters: inputs >= 1, a cache >= 1, a timeout of -1 or > 0 ms") {
  CHECK_THROWS_WITH_AS(Aligner(0, 1, -1, false), "an aligner needs at least 1 input, got 0", RuntimeError);
  CHECK_THROWS_WITH_AS(Aligner(2, 0, -1, false), "an aligner needs a cache of at least 1 group, got 0", RuntimeError);
  CHECK_THROWS_WITH_AS(Aligner(2, 1, 0, false), "an aligner's timeout must be -1 (never) or > 0 ms, got 0",
                       RuntimeError);
  CHECK_THROWS_AS(Aligner(2, 1, -2, false), RuntimeError);
  Aligner aligner(3, 16, 100, true);
  CHECK(aligner.inputs() == 3);
  CHECK(aligner.max_groups() == 16);
  CHECK(aligner.timeout_ms() == 100);
  CHECK(aligner.dropout());
  CHECK_THROWS_WITH_AS(aligner.Push(3, 1, 0, 1, 0), "aligner input 3 is out of range; it has 3 inputs", RuntimeError);
  CHECK_THROWS_WITH_AS(aligner.Push(0, 1, 0, kNoHandle, 0), "an aligner handle must be non-zero", RuntimeError);
  CHECK(aligner.held() == 0);
}

TEST_CASE("a group completes once every input has a message of its key, handles in input order") {
  Aligner aligner(2, 256, -1, false);
  PushResult first = aligner.Push(1, 7, 0, 71, 0);  // input 1 first
  CHECK_FALSE(first.completed.has_value());
  CHECK_FALSE(first.evicted.has_value());
  CHECK(aligner.held() == 1);
  PushResult second = aligner.Push(0, 7, 0, 70, 1);
  CheckGroup(second.completed, 7, 0, {70, 71});
  CHECK_FALSE(second.evicted.has_value());
  CHECK(aligner.held() == 0);
}

TEST_CASE("keys are (transaction id, data label): other labels or ids do not pair") {
  Aligner aligner(2, 256, -1, false);
  CHECK_FALSE(aligner.Push(0, 7, 0, 1, 0).completed);
  CHECK_FALSE(aligner.Push(1, 7, 1, 2, 0).completed);  // same transaction, other label
  CHECK_FALSE(aligner.Push(1, 8, 0, 3, 0).completed);  // same label, other transaction
  CHECK(aligner.held() == 3);
  CheckGroup(aligner.Push(1, 7, 0, 4, 0).completed, 7, 0, {1, 4});
  CheckGroup(aligner.Push(0, 7, 1, 5, 0).completed, 7, 1, {5, 2});
  CheckGroup(aligner.Push(0, 8, 0, 6, 0).completed, 8, 0, {6, 3});
  CHECK(aligner.held() == 0);
}

TEST_CASE("messages arriving out of order across transactions pair by key, not by arrival") {
  Aligner aligner(3, 256, -1, false);
  for (uint64_t t = 1; t <= 5; ++t) CHECK_FALSE(aligner.Push(0, t, 0, 100 + t, 0).completed);
  for (uint64_t t = 5; t >= 1; --t) CHECK_FALSE(aligner.Push(2, t, 0, 300 + t, 0).completed);
  for (uint64_t t : {3, 1, 5, 2, 4}) {
    CheckGroup(aligner.Push(1, t, 0, 200 + t, 0).completed, t, 0, {100 + t, 200 + t, 300 + t});
  }
  CHECK(aligner.held() == 0);
}

TEST_CASE("a second message for a taken slot opens a further group of the key: pairs in arrival order") {
  Aligner aligner(2, 256, -1, false);
  CHECK_FALSE(aligner.Push(0, 7, 0, 1, 0).completed);
  CHECK_FALSE(aligner.Push(0, 7, 0, 2, 0).completed);  // the oldest group's slot 0 is taken
  CHECK(aligner.held() == 2);
  CheckGroup(aligner.Push(1, 7, 0, 3, 0).completed, 7, 0, {1, 3});
  CheckGroup(aligner.Push(1, 7, 0, 4, 0).completed, 7, 0, {2, 4});
  // Input 1 fed twice first: the same, the other way round.
  CHECK_FALSE(aligner.Push(1, 9, 0, 5, 0).completed);
  CHECK_FALSE(aligner.Push(1, 9, 0, 6, 0).completed);
  CheckGroup(aligner.Push(0, 9, 0, 7, 0).completed, 9, 0, {7, 5});
  CheckGroup(aligner.Push(0, 9, 0, 8, 0).completed, 9, 0, {8, 6});
  CHECK(aligner.held() == 0);
}

TEST_CASE("a message that needs a new group when the cache is full first pushes out the oldest group") {
  Aligner aligner(2, 2, -1, false);
  aligner.Push(0, 1, 0, 11, 0);
  aligner.Push(1, 2, 0, 22, 1);
  CHECK(aligner.held() == 2);
  PushResult overflow = aligner.Push(0, 3, 0, 31, 2);
  CheckGroup(overflow.evicted, 1, 0, {11, kNoHandle});
  CHECK_FALSE(overflow.completed.has_value());
  CHECK(aligner.held() == 2);
  // A message that joins a held group needs no new one: nothing is pushed out.
  PushResult joins = aligner.Push(0, 2, 0, 21, 3);
  CHECK_FALSE(joins.evicted.has_value());
  CheckGroup(joins.completed, 2, 0, {21, 22});
  CHECK(aligner.held() == 1);
  // The pushed-out transaction's late message opens a new group.
  PushResult late = aligner.Push(1, 1, 0, 12, 4);
  CHECK_FALSE(late.evicted.has_value());
  CHECK_FALSE(late.completed.has_value());
  CHECK(aligner.held() == 2);
}

TEST_CASE("a cache of one: a second message for the taken slot of its key pushes out the first group") {
  Aligner aligner(2, 1, -1, false);
  aligner.Push(0, 7, 0, 1, 0);
  PushResult again = aligner.Push(0, 7, 0, 2, 1);
  CheckGroup(again.evicted, 7, 0, {1, kNoHandle});
  CHECK_FALSE(again.completed.has_value());
  CheckGroup(aligner.Push(1, 7, 0, 3, 2).completed, 7, 0, {2, 3});
}

TEST_CASE("a single input never holds a group and never pushes one out") {
  Aligner aligner(1, 1, -1, false);
  for (uint64_t t = 1; t <= 3; ++t) {
    PushResult result = aligner.Push(0, t, 0, t, 0);
    CheckGroup(result.completed, t, 0, {t});
    CHECK_FALSE(result.evicted.has_value());
  }
  CHECK(aligner.held() == 0);
}

TEST_CASE("timeout: the oldest group's deadline, and every group that old removed, oldest first") {
  Aligner aligner(2, 256, 100, false);
  CHECK_FALSE(aligner.NextDeadline().has_value());
  aligner.Push(0, 1, 0, 11, 1000);
  aligner.Push(1, 2, 0, 22, 1040);
  aligner.Push(0, 3, 0, 31, 1090);
  CHECK(aligner.NextDeadline() == 1100);
  CHECK(aligner.Expire(1099).empty());
  std::vector<AlignedGroup> expired = aligner.Expire(1140);
  REQUIRE(expired.size() == 2);
  CHECK(expired[0].key.transaction_id == 1);
  CHECK(expired[0].handles == Handles{11, kNoHandle});
  CHECK(expired[1].key.transaction_id == 2);
  CHECK(expired[1].handles == Handles{kNoHandle, 22});
  CHECK(aligner.held() == 1);
  CHECK(aligner.NextDeadline() == 1190);
  // A group's age counts from its first message: a later one does not renew it.
  CHECK_FALSE(aligner.Push(0, 3, 0, 32, 1180).completed);  // opens a further group of key 3
  expired = aligner.Expire(1190);
  REQUIRE(expired.size() == 1);
  CHECK(expired[0].handles == Handles{31, kNoHandle});
  CHECK(aligner.NextDeadline() == 1280);
}

TEST_CASE("a completed group is gone before its deadline; without a timeout nothing expires") {
  Aligner timed(2, 256, 50, false);
  timed.Push(0, 1, 0, 1, 0);
  CHECK(timed.Push(1, 1, 0, 2, 10).completed.has_value());
  CHECK(timed.Expire(1000).empty());
  CHECK_FALSE(timed.NextDeadline().has_value());
  Aligner never(2, 256, -1, true);
  never.Push(0, 1, 0, 1, 0);
  CHECK_FALSE(never.NextDeadline().has_value());
  CHECK(never.Expire(int64_t{1} << 60).empty());
  CHECK(never.held() == 1);
}

TEST_CASE("Clear hands back every held group, oldest first") {
  Aligner aligner(3, 256, -1, false);
  aligner.Push(2, 5, 1, 52, 0);
  aligner.Push(0, 4, 0, 40, 0);
  aligner.Push(1, 5, 1, 51, 0);
  std::vector<AlignedGroup> held = aligner.Clear();
  REQUIRE(held.size() == 2);
  CHECK(held[0].key.transaction_id == 5);
  CHECK(held[0].key.data_label == 1);
  CHECK(held[0].handles == Handles{kNoHandle, 51, 52});
  CHECK(held[1].handles == Handles{40, kNoHandle, kNoHandle});
  CHECK(aligner.held() == 0);
  CHECK_FALSE(aligner.Push(0, 5, 1, 1, 0).completed.has_value());  // a fresh group after Clear
  CHECK(aligner.held() == 1);
}

TEST_CASE("many keys within the cache all pair, whatever the order") {
  Aligner aligner(2, 1000, -1, false);
  for (uint64_t t = 0; t < 1000; ++t) {
    REQUIRE_FALSE(aligner.Push(0, t / 4, static_cast<uint32_t>(t % 4), t + 1, 0).completed);
  }
  size_t completed = 0;
  for (uint64_t t = 1000; t-- > 0;) {
    PushResult result = aligner.Push(1, t / 4, static_cast<uint32_t>(t % 4), t + 5000, 0);
    REQUIRE(result.completed.has_value());
    REQUIRE(result.completed->handles == Handles{t + 1, t + 5000});
    REQUIRE_FALSE(result.evicted.has_value());
    ++completed;
  }
  CHECK(completed == 1000);
  CHECK(aligner.held() == 0);
}

TEST_CASE("discard removes every group of a transaction, whatever its label") {
  Aligner aligner(2, 8, -1, false);
  aligner.Push(0, 7, 0, 1, 0);
  aligner.Push(0, 7, 1, 2, 0);
  aligner.Push(0, 8, 0, 3, 0);
  std::vector<AlignedGroup> discarded = aligner.Discard(7);
  REQUIRE(discarded.size() == 2);
  CHECK(discarded[0].handles == Handles{1, kNoHandle});
  CHECK(discarded[1].handles == Handles{2, kNoHandle});
  CHECK(aligner.Discard(7).empty());
  PushResult result = aligner.Push(1, 8, 0, 4, 0);  // transaction 8's group is still there
  REQUIRE(result.completed.has_value());
  CHECK(result.completed->handles == Handles{3, 4});
}

}  // TEST_SUITE
