// Transaction bookkeeping of the runtime: a transaction's metadata as its messages carry it,
// and the ledger of fed transactions whose results have not shown up yet (plain C++: no Python
// headers).
#ifndef DFIR_RUNTIME_NATIVE_LEDGER_H_
#define DFIR_RUNTIME_NATIVE_LEDGER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "message.h"

namespace dfir::rt {

// The metadata of one transaction, as its messages carry it.
struct TransactionInfo {
  uint64_t transaction_id = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;
  uint32_t flow_flags = 0;
  uint32_t user_data_size = 0;
  std::array<uint8_t, kUserDataBytes> user_data{};

  // Sets the user data to the `size` bytes at `bytes`; RuntimeError when more than
  // kUserDataBytes, which is all that travels with a message.
  void SetUserData(const void* bytes, size_t size);
};

// The transactions a driver has fed whose results have not shown up at any graph output yet:
// when a worker dies these are the ones that fail. Opened in feed order; settled by id (the
// oldest open entry with that id) when an output message of the transaction is seen.
// At most `capacity` entries stay open; beyond that the oldest are forgotten (a transaction
// whose outputs a UDF suppressed never settles).
// Opening and settling in feed order (the common case) allocate nothing once the ledger has
// grown to the transactions in flight: the entries live in a ring buffer, and a table of open
// counts per slot of ids (their low bits) tells most ids that are not open without a search.
//
//   TransactionLedger ledger(2);
//   ledger.Open(a); ledger.Open(b);  // open: a, b
//   ledger.Settle(a.transaction_id); // open: b
//   ledger.TakeOldest();             // -> b; open: none
class TransactionLedger {
 public:
  explicit TransactionLedger(size_t capacity);

  void Open(const TransactionInfo& info);
  // Settles the oldest open entry of `transaction_id`; false when none is open.
  bool Settle(uint64_t transaction_id);
  // Removes and returns the oldest open entry.
  std::optional<TransactionInfo> TakeOldest();
  size_t open() const { return open_count_; }
  // The open entries, oldest first.
  std::vector<TransactionInfo> OpenEntries() const;

  // Recovery (a worker that died, restarted): `transaction_id` failed with `ret_code`, a failure
  // message of that code stands in for its results on every graph output. Results of the
  // transaction that show up later are stale (IsStale) and dropped. The last kReplacedCapacity
  // replaced transactions are remembered.
  void Replace(uint64_t transaction_id, int32_t ret_code);
  // Whether a message of `transaction_id` with `ret_code` is a result of a replaced transaction
  // (not the failure standing in for it).
  bool IsStale(uint64_t transaction_id, int32_t ret_code) const {
    if (replaced_.empty()) return false;
    auto found = replaced_.find(transaction_id);
    return found != replaced_.end() && found->second != ret_code;
  }
  bool HasReplaced() const { return !replaced_.empty(); }
  bool IsReplaced(uint64_t transaction_id) const { return replaced_.count(transaction_id) != 0; }

 private:
  struct Entry {
    TransactionInfo info;
    bool settled;
  };
  static constexpr size_t kCountSlots = 4096;  // a power of two
  static constexpr size_t kReplacedCapacity = size_t{1} << 16;

  // Consecutive ids (as a driver numbers its feeds) take neighbouring slots: the counts of the
  // transactions in flight share a few cache lines.
  static size_t SlotOf(uint64_t transaction_id) { return static_cast<size_t>(transaction_id & (kCountSlots - 1)); }
  Entry& At(size_t i) { return entries_[(head_ + i) & (entries_.size() - 1)]; }
  void Push(const TransactionInfo& info);
  void DropSettledFront();

  size_t capacity_;
  std::vector<Entry> entries_;           // a ring buffer of stored_ entries from head_, oldest first
  size_t head_ = 0;
  size_t stored_ = 0;                    // open and settled entries not yet dropped
  std::vector<uint32_t> open_per_slot_;  // open entries per SlotOf(transaction id)
  size_t open_count_ = 0;
  std::unordered_map<uint64_t, int32_t> replaced_;  // transaction id -> the code of its failure
  std::deque<uint64_t> replaced_order_;             // oldest first, for forgetting
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_LEDGER_H_
