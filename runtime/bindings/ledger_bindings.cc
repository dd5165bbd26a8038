// Bindings of the transaction ledger (runtime/native/ledger.h): `TransactionLedger`, the fed
// transactions with no output seen yet, opened from a TransactionMeta or its fields.
#include "py_ledger.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "py_codec.h"
#include "runtime_bindings.h"

namespace py = pybind11;

namespace dfir::bindings {

void PyLedger::Open(const py::handle& meta) { ledger_.Open(TransactionOf(meta)); }

void PyLedger::OpenFields(const py::tuple& fields) { ledger_.Open(TransactionOfFields(fields)); }

py::object PyLedger::TakeOldest() {
  CheckConfigured();
  std::optional<rt::TransactionInfo> oldest = ledger_.TakeOldest();
  return oldest ? DecodeMeta(*oldest) : py::none();
}

py::list PyLedger::OpenTransactions() const {
  CheckConfigured();
  py::list open;
  for (const rt::TransactionInfo& info : ledger_.OpenEntries()) open.append(DecodeMeta(info));
  return open;
}

py::list PyLedger::ReplaceOpen(const std::unordered_set<uint64_t>& keep,
                               const std::unordered_map<uint64_t, int32_t>& codes, int32_t code) {
  CheckConfigured();
  py::list replaced;
  for (const rt::TransactionInfo& info : ledger_.OpenEntries()) {
    // One replaced already (an earlier death) has its failure on the way: not a second one.
    if (keep.count(info.transaction_id) != 0 || ledger_.IsReplaced(info.transaction_id)) continue;
    auto special = codes.find(info.transaction_id);
    const int32_t its_code = special == codes.end() ? code : special->second;
    ledger_.Replace(info.transaction_id, its_code);
    replaced.append(py::make_tuple(DecodeMeta(info), its_code));
  }
  return replaced;
}

void BindLedger(py::module_& m) {
  py::class_<PyLedger>(m, "TransactionLedger", "The fed transactions with no output seen yet.")
      .def(py::init<size_t>(), py::arg("capacity"))
      .def("open", &PyLedger::Open, py::arg("meta"))
      .def("open_fields", &PyLedger::OpenFields, py::arg("fields"),
           "As open, for a (transaction_id, start_time, end_time, flow_flags, user_data) tuple.")
      .def("settle", &PyLedger::Settle, py::arg("transaction_id"))
      .def("take_oldest", &PyLedger::TakeOldest)
      .def("open_transactions", &PyLedger::OpenTransactions, "The open transactions' metas, oldest first.")
      .def("replace", &PyLedger::Replace, py::arg("transaction_id"), py::arg("ret_code"),
           "Marks the transaction as failed with ret_code by recovery: its later results are stale.")
      .def("replace_open", &PyLedger::ReplaceOpen, py::arg("keep"), py::arg("codes"), py::arg("code"),
           "Replaces every open transaction not replaced yet and not in keep (code: codes[id], else code); [(meta, code)].")
      .def("settle_result", &PyLedger::SettleResult, py::arg("transaction_id"), py::arg("ret_code"),
           "Settles the transaction of a result unless it is stale; whether the result stands.")
      .def("is_stale", &PyLedger::IsStale, py::arg("transaction_id"), py::arg("ret_code"))
      .def_property_readonly("open_count", &PyLedger::open);
}

}  // namespace dfir::bindings
