#include "aligner.h"

#include <iterator>

#include <algorithm>
#include <string>

#include "shm.h"

namespace dfir::rt {

Aligner::Aligner(uint32_t inputs, uint32_t max_groups, int64_t timeout_ms, bool dropout)
    : inputs_(inputs), max_groups_(max_groups), timeout_ms_(timeout_ms), dropout_(dropout) {
  if (inputs == 0) throw RuntimeError("an aligner needs at least 1 input, got 0");
  if (max_groups == 0) throw RuntimeError("an aligner needs a cache of at least 1 group, got 0");
  if (timeout_ms == 0 || timeout_ms < -1) {
    throw RuntimeError("an aligner's timeout must be -1 (never) or > 0 ms, got " + std::to_string(timeout_ms));
  }
}

PushResult Aligner::Push(uint32_t input, uint64_t transaction_id, uint32_t data_label, uint64_t handle,
                         int64_t now_ms) {
  if (input >= inputs_) {
    throw RuntimeError("aligner input " + std::to_string(input) + " is out of range; it has " +
                       std::to_string(inputs_) + " inputs");
  }
  if (handle == kNoHandle) throw RuntimeError("an aligner handle must be non-zero");
  PushResult result;
  const AlignKey key{transaction_id, data_label};
  auto group = FindOpenSlot(key, input);
  if (group == groups_.end()) {
    if (inputs_ > 1 && groups_.size() >= max_groups_) result.evicted = Remove(groups_.begin());
    group = groups_.insert(groups_.end(), Group{key, now_ms, 0, std::vector<uint64_t>(inputs_, kNoHandle)});
    by_key_[key].push_back(group);
  }
  group->handles[input] = handle;
  if (++group->filled == inputs_) result.completed = Remove(group);
  return result;
}

std::vector<AlignedGroup> Aligner::Discard(uint64_t transaction_id) {
  std::vector<AlignedGroup> discarded;
  for (auto group = groups_.begin(); group != groups_.end();) {
    auto next = std::next(group);
    if (group->key.transaction_id == transaction_id) discarded.push_back(Remove(group));
    group = next;
  }
  return discarded;
}

std::vector<AlignedGroup> Aligner::Expire(int64_t now_ms) {
  std::vector<AlignedGroup> expired;
  if (timeout_ms_ < 0) return expired;
  while (!groups_.empty() && groups_.front().created_ms + timeout_ms_ <= now_ms) {
    expired.push_back(Remove(groups_.begin()));
  }
  return expired;
}

std::optional<int64_t> Aligner::NextDeadline() const {
  if (timeout_ms_ < 0 || groups_.empty()) return std::nullopt;
  return groups_.front().created_ms + timeout_ms_;
}

std::vector<AlignedGroup> Aligner::Clear() {
  std::vector<AlignedGroup> held;
  while (!groups_.empty()) held.push_back(Remove(groups_.begin()));
  return held;
}

Aligner::GroupList::iterator Aligner::FindOpenSlot(const AlignKey& key, uint32_t input) {
  auto found = by_key_.find(key);
  if (found == by_key_.end()) return groups_.end();
  for (GroupList::iterator group : found->second) {
    if (group->handles[input] == kNoHandle) return group;
  }
  return groups_.end();
}

AlignedGroup Aligner::Remove(GroupList::iterator group) {
  auto found = by_key_.find(group->key);
  std::vector<GroupList::iterator>& same_key = found->second;
  same_key.erase(std::find(same_key.begin(), same_key.end(), group));
  if (same_key.empty()) by_key_.erase(found);
  AlignedGroup removed{group->key, std::move(group->handles)};
  groups_.erase(group);
  return removed;
}

}  // namespace dfir::rt
