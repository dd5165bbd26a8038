#include "ledger.h"

#include <cstring>
#include <string>

#include "shm.h"

namespace dfir::rt {

void TransactionInfo::SetUserData(const void* bytes, size_t size) {
  if (size > static_cast<size_t>(kUserDataBytes)) {
    throw RuntimeError("transaction user data has " + std::to_string(size) + " bytes; at most " +
                       std::to_string(kUserDataBytes) + " travel with a message");
  }
  user_data_size = static_cast<uint32_t>(size);
  std::memcpy(user_data.data(), bytes, size);
}

namespace {
constexpr size_t kFirstEntries = 16;  // a power of two
}  // namespace

TransactionLedger::TransactionLedger(size_t capacity)
    : capacity_(capacity), entries_(kFirstEntries), open_per_slot_(kCountSlots, 0) {
  if (capacity == 0) throw RuntimeError("a transaction ledger needs a capacity of at least 1, got 0");
}

void TransactionLedger::Open(const TransactionInfo& info) {
  while (open_count_ >= capacity_) TakeOldest();
  Push(info);
  ++open_per_slot_[SlotOf(info.transaction_id)];
  ++open_count_;
}

void TransactionLedger::Push(const TransactionInfo& info) {
  if (stored_ == entries_.size()) {  // full: twice the room, the entries unwrapped in order
    std::vector<Entry> grown(2 * entries_.size());
    for (size_t i = 0; i < stored_; ++i) grown[i] = At(i);
    entries_ = std::move(grown);
    head_ = 0;
  }
  At(stored_) = Entry{info, false};
  ++stored_;
}

bool TransactionLedger::Settle(uint64_t transaction_id) {
  uint32_t& open_in_slot = open_per_slot_[SlotOf(transaction_id)];
  if (open_in_slot == 0) return false;
  for (size_t i = 0; i < stored_; ++i) {
    Entry& entry = At(i);
    if (!entry.settled && entry.info.transaction_id == transaction_id) {
      entry.settled = true;
      --open_in_slot;
      --open_count_;
      DropSettledFront();
      return true;
    }
  }
  return false;  // another open id shares the slot
}

std::optional<TransactionInfo> TransactionLedger::TakeOldest() {
  DropSettledFront();
  if (stored_ == 0) return std::nullopt;
  TransactionInfo oldest = At(0).info;
  head_ = (head_ + 1) & (entries_.size() - 1);
  --stored_;
  --open_per_slot_[SlotOf(oldest.transaction_id)];
  --open_count_;
  DropSettledFront();
  return oldest;
}

std::vector<TransactionInfo> TransactionLedger::OpenEntries() const {
  std::vector<TransactionInfo> open;
  open.reserve(open_count_);
  for (size_t i = 0; i < stored_; ++i) {
    const Entry& entry = entries_[(head_ + i) & (entries_.size() - 1)];
    if (!entry.settled) open.push_back(entry.info);
  }
  return open;
}

void TransactionLedger::Replace(uint64_t transaction_id, int32_t ret_code) {
  if (replaced_.emplace(transaction_id, ret_code).second) {
    replaced_order_.push_back(transaction_id);
  } else {
    replaced_[transaction_id] = ret_code;
  }
  while (replaced_order_.size() > kReplacedCapacity) {
    replaced_.erase(replaced_order_.front());
    replaced_order_.pop_front();
  }
}

void TransactionLedger::DropSettledFront() {
  while (stored_ != 0 && At(0).settled) {
    head_ = (head_ + 1) & (entries_.size() - 1);
    --stored_;
  }
}

}  // namespace dfir::rt
