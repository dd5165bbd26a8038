// The transaction ledger (runtime/native/ledger.h) as Python's TransactionLedger, declared for the
// files that hand it to the native core (the region's puts and takes, the driver's port);
// ledger_bindings.cc binds it.
#ifndef DFIR_RUNTIME_BINDINGS_PY_LEDGER_H_
#define DFIR_RUNTIME_BINDINGS_PY_LEDGER_H_

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>

#include "ledger.h"

namespace dfir::bindings {

class PyLedger {
 public:
  explicit PyLedger(size_t capacity) : ledger_(capacity) {}
  void Open(const pybind11::handle& meta);
  void OpenFields(const pybind11::tuple& fields);
  bool Settle(uint64_t transaction_id) { return ledger_.Settle(transaction_id); }
  pybind11::object TakeOldest();
  size_t open() const { return ledger_.open(); }
  rt::TransactionLedger& native() { return ledger_; }

 private:
  rt::TransactionLedger ledger_;
};

}  // namespace dfir::bindings

#endif  // DFIR_RUNTIME_BINDINGS_PY_LEDGER_H_
