// The transaction ledger (runtime/native/ledger.h) as Python's TransactionLedger, declared for the
// files that hand it to the native core (the region's puts and takes, the driver's port);
// ledger_bindings.cc binds it.
#ifndef DFIR_RUNTIME_BINDINGS_PY_LEDGER_H_
#define DFIR_RUNTIME_BINDINGS_PY_LEDGER_H_

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "ledger.h"

namespace dfir::bindings {

class PyLedger {
 public:
  explicit PyLedger(size_t capacity) : ledger_(capacity) {}
  void Open(const pybind11::handle& meta);
  void OpenFields(const pybind11::tuple& fields);
  bool Settle(uint64_t transaction_id) { return ledger_.Settle(transaction_id); }
  pybind11::object TakeOldest();
  pybind11::list OpenTransactions() const;
  // Replaces (TransactionLedger::Replace) every open transaction not replaced yet but those in `keep`, each with
  // its code in `codes`, else `code`, in one step (no settle can come in between); their
  // (TransactionMeta, code) pairs, oldest first.
  pybind11::list ReplaceOpen(const std::unordered_set<uint64_t>& keep,
                             const std::unordered_map<uint64_t, int32_t>& codes, int32_t code);
  void Replace(uint64_t transaction_id, int32_t ret_code) { ledger_.Replace(transaction_id, ret_code); }
  bool IsStale(uint64_t transaction_id, int32_t ret_code) const { return ledger_.IsStale(transaction_id, ret_code); }
  // Settles the transaction of a result (ret `ret_code`) unless it is stale (IsStale): whether
  // the result stands, in one step that no Replace can come in between.
  bool SettleResult(uint64_t transaction_id, int32_t ret_code) {
    if (ledger_.IsStale(transaction_id, ret_code)) return false;
    ledger_.Settle(transaction_id);
    return true;
  }
  size_t open() const { return ledger_.open(); }
  rt::TransactionLedger& native() { return ledger_; }

 private:
  rt::TransactionLedger ledger_;
};

}  // namespace dfir::bindings

#endif  // DFIR_RUNTIME_BINDINGS_PY_LEDGER_H_
