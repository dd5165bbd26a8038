// Input alignment of a multi-input func (plain C++: no Python headers).
//
// Messages arrive on the func's inputs in any order; the aligner groups them by
// (transaction_id, data_label) and hands out a group once every input has contributed one
// message. Callers own the messages: the aligner keeps opaque non-zero handles.
//
//   Aligner aligner(2, 256, 60000, false);
//   aligner.Push(0, 7, 0, h1, now);  // -> nothing complete yet
//   aligner.Push(1, 7, 0, h2, now);  // -> completed {7, 0, {h1, h2}}
//
// At most `max_groups` incomplete groups are held: a message that needs a new group when that
// many exist first evicts the oldest group. A group older than `timeout_ms` (-1: never) is
// removed by `Expire`. Evicted and expired groups are reported with the handles they hold
// (kNoHandle for the inputs that never arrived), so the caller can drop or fail them
// (`dropout` records the caller's policy). A second message for an input whose slot in the
// oldest group of its key is taken opens a further group of the same key.
#ifndef DFIR_RUNTIME_NATIVE_ALIGNER_H_
#define DFIR_RUNTIME_NATIVE_ALIGNER_H_

#include <cstdint>
#include <list>
#include <optional>
#include <unordered_map>
#include <vector>

namespace dfir::rt {

inline constexpr uint64_t kNoHandle = 0;

struct AlignKey {
  uint64_t transaction_id;
  uint32_t data_label;
  bool operator==(const AlignKey& other) const {
    return transaction_id == other.transaction_id && data_label == other.data_label;
  }
};

// A group as the aligner reports it: its key and one handle per input, in input order.
struct AlignedGroup {
  AlignKey key;
  std::vector<uint64_t> handles;  // kNoHandle where the input's message never arrived
};

// What one Push produced: at most one completed group, at most one evicted group.
struct PushResult {
  std::optional<AlignedGroup> completed;
  std::optional<AlignedGroup> evicted;
};

class Aligner {
 public:
  // RuntimeError unless inputs >= 1, max_groups >= 1 and timeout_ms is -1 or > 0.
  Aligner(uint32_t inputs, uint32_t max_groups, int64_t timeout_ms, bool dropout);

  // Adds the message `handle` (non-zero) of `input` at time `now_ms` (a monotonic clock).
  PushResult Push(uint32_t input, uint64_t transaction_id, uint32_t data_label, uint64_t handle, int64_t now_ms);
  // Removes and returns the groups whose age reached the timeout at `now_ms`, oldest first.
  std::vector<AlignedGroup> Expire(int64_t now_ms);
  // When the oldest held group expires; nullopt without a timeout or without groups.
  std::optional<int64_t> NextDeadline() const;
  // Removes and returns every held group (the caller releases their handles).
  std::vector<AlignedGroup> Clear();
  // Removes and returns the held groups of `transaction_id` (any data label), oldest first.
  std::vector<AlignedGroup> Discard(uint64_t transaction_id);

  uint32_t inputs() const { return inputs_; }
  uint32_t max_groups() const { return max_groups_; }
  int64_t timeout_ms() const { return timeout_ms_; }
  bool dropout() const { return dropout_; }
  size_t held() const { return groups_.size(); }

 private:
  struct Group {
    AlignKey key;
    int64_t created_ms;
    uint32_t filled;
    std::vector<uint64_t> handles;
  };
  using GroupList = std::list<Group>;
  struct KeyHash {
    size_t operator()(const AlignKey& key) const {
      return std::hash<uint64_t>()(key.transaction_id * 0x9E3779B97F4A7C15ULL ^ key.data_label);
    }
  };

  // The oldest group of `key` whose slot for `input` is free; groups_.end() when none.
  GroupList::iterator FindOpenSlot(const AlignKey& key, uint32_t input);
  // Unlinks `group` from groups_ and by_key_ and returns it as reported.
  AlignedGroup Remove(GroupList::iterator group);

  uint32_t inputs_;
  uint32_t max_groups_;
  int64_t timeout_ms_;
  bool dropout_;
  GroupList groups_;  // oldest first
  std::unordered_map<AlignKey, std::vector<GroupList::iterator>, KeyHash> by_key_;  // oldest first
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_ALIGNER_H_
