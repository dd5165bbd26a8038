// The trace log (runtime/native/trace_log.h), bound as TraceLog. Use it through
// runtime/driver/tracing.py (the driver) and runtime/worker/executor.py (the workers).
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "runtime_bindings.h"
#include "trace_log.h"

namespace py = pybind11;

namespace dfir::bindings {

namespace {

static_assert(sizeof(rt::TraceRecord) == 32, "runtime/driver/tracing.py's TRACE_RECORD reads 32-byte records");

// The drained records, packed as they are (TraceRecord: i4 node, i4 instance, u8 transaction,
// i8 begin_ns, i8 end_ns, little-endian): no Python object per record.
py::bytes Packed(const std::vector<rt::TraceRecord>& records) {
  return py::bytes(reinterpret_cast<const char*>(records.data()), records.size() * sizeof(rt::TraceRecord));
}

py::bytes Drained(rt::TraceLog& log, bool final) {
  std::vector<rt::TraceRecord> records;
  {
    py::gil_scoped_release release;
    records = log.Drain(final);
  }
  return Packed(records);
}

py::bytes TakeDrained(rt::TraceLog& log) {
  std::vector<rt::TraceRecord> records;
  {
    py::gil_scoped_release release;
    log.TakeDrained(&records);
  }
  return Packed(records);
}

}  // namespace

void BindTraceLog(py::module_& m) {
  py::class_<rt::TraceLog, std::shared_ptr<rt::TraceLog>>(
      m, "TraceLog", "A model's trace log in shared memory, which every process of the model appends to.")
      .def(py::init(&rt::TraceLog::Create), py::arg("capacity"), py::arg("rate"), py::arg("name"))
      .def(
          "append",
          [](rt::TraceLog& log, int32_t node, int32_t instance, uint64_t transaction, int64_t begin_ns,
             int64_t end_ns) { log.Append({node, instance, transaction, begin_ns, end_ns}); },
          py::arg("node"), py::arg("instance"), py::arg("transaction"), py::arg("begin_ns"), py::arg("end_ns"),
          "A slice of node `node` instance `instance` on `transaction`, kept when it is sampled.")
      .def("sampled", &rt::TraceLog::Sampled, py::arg("transaction"))
      .def("drain", &Drained, py::arg("final") = false,
           "The slices appended since the last drain, packed: 32 bytes each (node i4, instance i4, "
           "transaction u8, begin_ns i8, end_ns i8); node -1 is a feed, -2 a fetch of the driver.")
      .def("start_draining", &rt::TraceLog::StartDraining, py::arg("period_ms"),
           "Drain every `period_ms` on a native thread of this process, into a buffer take_drained empties.")
      .def("stop_draining", &rt::TraceLog::StopDraining, py::arg("final"), py::call_guard<py::gil_scoped_release>(),
           "Stop that thread, draining one last time.")
      .def("take_drained", &TakeDrained,
           "What the thread drained so far and what it has not drained yet, packed as drain packs it.")
      .def_property_readonly("lost", &rt::TraceLog::lost)
      .def_property_readonly("capacity", &rt::TraceLog::capacity);
}

}  // namespace dfir::bindings
