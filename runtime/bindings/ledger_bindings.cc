// Bindings of the transaction ledger (runtime/native/ledger.h): `TransactionLedger`, the fed
// transactions with no output seen yet, opened from a TransactionMeta or its fields.
#include "py_ledger.h"

#include <pybind11/pybind11.h>

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

void BindLedger(py::module_& m) {
  py::class_<PyLedger>(m, "TransactionLedger", "The fed transactions with no output seen yet.")
      .def(py::init<size_t>(), py::arg("capacity"))
      .def("open", &PyLedger::Open, py::arg("meta"))
      .def("open_fields", &PyLedger::OpenFields, py::arg("fields"),
           "As open, for a (transaction_id, start_time, end_time, flow_flags, user_data) tuple.")
      .def("settle", &PyLedger::Settle, py::arg("transaction_id"))
      .def("take_oldest", &PyLedger::TakeOldest)
      .def_property_readonly("open_count", &PyLedger::open);
}

}  // namespace dfir::bindings
