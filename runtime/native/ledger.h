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

 private:
  struct Entry {
    TransactionInfo info;
    bool settled;
  };
  void DropSettledFront();

  size_t capacity_;
  std::deque<Entry> entries_;
  std::unordered_map<uint64_t, size_t> open_by_id_;  // open entries per transaction id
  size_t open_count_ = 0;
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_LEDGER_H_
