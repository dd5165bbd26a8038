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

TransactionLedger::TransactionLedger(size_t capacity) : capacity_(capacity) {
  if (capacity == 0) throw RuntimeError("a transaction ledger needs a capacity of at least 1, got 0");
}

void TransactionLedger::Open(const TransactionInfo& info) {
  while (open_count_ >= capacity_) TakeOldest();
  entries_.push_back(Entry{info, false});
  ++open_by_id_[info.transaction_id];
  ++open_count_;
}

bool TransactionLedger::Settle(uint64_t transaction_id) {
  auto found = open_by_id_.find(transaction_id);
  if (found == open_by_id_.end()) return false;
  for (Entry& entry : entries_) {
    if (!entry.settled && entry.info.transaction_id == transaction_id) {
      entry.settled = true;
      break;
    }
  }
  if (--found->second == 0) open_by_id_.erase(found);
  --open_count_;
  DropSettledFront();
  return true;
}

std::optional<TransactionInfo> TransactionLedger::TakeOldest() {
  DropSettledFront();
  if (entries_.empty()) return std::nullopt;
  Entry oldest = entries_.front();
  entries_.pop_front();
  auto found = open_by_id_.find(oldest.info.transaction_id);
  if (--found->second == 0) open_by_id_.erase(found);
  --open_count_;
  DropSettledFront();
  return oldest.info;
}

void TransactionLedger::DropSettledFront() {
  while (!entries_.empty() && entries_.front().settled) entries_.pop_front();
}

}  // namespace dfir::rt
