// The trace log (runtime/native/trace_log.h), bound as TraceLog. Use it through
// runtime/driver/tracing.py (the driver) and runtime/worker/executor.py (the workers).
#include <pybind11/pybind11.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "channel_io.h"
#include "numpy_api.h"
#include "py_codec.h"
#include "runtime_bindings.h"
#include "trace_log.h"

namespace py = pybind11;

namespace dfir::bindings {

namespace {

static_assert(sizeof(rt::TraceRecord) == 48, "runtime/driver/tracing.py's TRACE_RECORD reads 48-byte records");

// The drained records, packed as they are (TraceRecord: i4 node, i4 instance, u8 transaction,
// i8 begin_ns, i8 end_ns, u8 bytes_in, u8 bytes_out, little-endian): no Python object per record.
py::bytes Packed(const rt::TraceChunks& records) {
  py::bytes packed(nullptr, records.size() * sizeof(rt::TraceRecord));
  char* to = PyBytes_AS_STRING(packed.ptr());
  records.ForEachChunk([&](const rt::TraceRecord* chunk, size_t count) {
    std::memcpy(to, chunk, count * sizeof(rt::TraceRecord));
    to += count * sizeof(rt::TraceRecord);
  });
  return packed;
}

py::bytes Drained(rt::TraceLog& log, bool final) {
  rt::TraceChunks records;
  {
    py::gil_scoped_release release;
    log.DrainInto(final, &records);
  }
  return Packed(records);
}

py::bytes TakeDrained(rt::TraceLog& log) {
  rt::TraceChunks records;
  {
    py::gil_scoped_release release;
    records = log.TakeDrained();
  }
  return Packed(records);
}

// The bytes a local channel's Message carries (the GIL is held wherever messages are taken
// or put): its payload's, an array's or a bytes object's; any other object is never encoded
// within one worker and counts 0.
uint64_t LocalMessageBytes(void* object) {
  PyObject* payload = PyObject_GetAttr(static_cast<PyObject*>(object), Name().payload.ptr());
  if (payload == nullptr) {
    PyErr_Clear();
    return 0;
  }
  uint64_t bytes = 0;
  if (PyArray_Check(payload)) {
    bytes = static_cast<uint64_t>(PyArray_NBYTES(reinterpret_cast<PyArrayObject*>(payload)));
  } else if (PyBytes_Check(payload)) {
    bytes = static_cast<uint64_t>(PyBytes_GET_SIZE(payload));
  }
  Py_DECREF(payload);
  return bytes;
}

// A ByteMeter for Python code: `with ByteMeter() as meter: ...`, then meter.bytes_in/bytes_out.
class PyByteMeter {
 public:
  PyByteMeter& Enter() {
    meter_.emplace();
    return *this;
  }
  void Exit(const py::args&) {
    bytes_in_ = meter_->bytes_in();
    bytes_out_ = meter_->bytes_out();
    meter_.reset();
  }
  uint64_t bytes_in() const { return meter_ ? meter_->bytes_in() : bytes_in_; }
  uint64_t bytes_out() const { return meter_ ? meter_->bytes_out() : bytes_out_; }

 private:
  std::optional<rt::ByteMeter> meter_;
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
};

}  // namespace

void BindTraceLog(py::module_& m) {
  rt::SetLocalObjectBytes(&LocalMessageBytes);
  py::class_<PyByteMeter>(m, "ByteMeter",
                          "Counts the body bytes of the messages this thread takes and puts inside a with block.")
      .def(py::init<>())
      .def("__enter__", &PyByteMeter::Enter, py::return_value_policy::reference)
      .def("__exit__", &PyByteMeter::Exit)
      .def_property_readonly("bytes_in", &PyByteMeter::bytes_in)
      .def_property_readonly("bytes_out", &PyByteMeter::bytes_out);
  m.def(
      "message_bytes", [](const py::handle& message) { return LocalMessageBytes(message.ptr()); }, py::arg("message"),
      "The body bytes a Message carries, as a trace counts them: its payload's, an array's or a bytes object's (0 for "
      "any other object).");
  py::class_<rt::TraceLog, std::shared_ptr<rt::TraceLog>>(
      m, "TraceLog", "A model's trace log in shared memory, which every process of the model appends to.")
      .def(py::init(&rt::TraceLog::Create), py::arg("capacity"), py::arg("rate"), py::arg("name"))
      .def(
          "append",
          [](rt::TraceLog& log, int32_t node, int32_t instance, uint64_t transaction, int64_t begin_ns,
             int64_t end_ns, uint64_t bytes_in, uint64_t bytes_out) {
            log.Append({node, instance, transaction, begin_ns, end_ns, bytes_in, bytes_out});
          },
          py::arg("node"), py::arg("instance"), py::arg("transaction"), py::arg("begin_ns"), py::arg("end_ns"),
          py::arg("bytes_in") = 0, py::arg("bytes_out") = 0,
          "A slice of node `node` instance `instance` on `transaction`, kept when it is sampled.")
      .def("sampled", &rt::TraceLog::Sampled, py::arg("transaction"))
      .def("now", &rt::TraceLog::Now, "The log's clock (ns on CLOCK_MONOTONIC's scale), which slices are timed on.")
      .def("drain", &Drained, py::arg("final") = false,
           "The slices appended since the last drain, packed: 48 bytes each (node i4, instance i4, "
           "transaction u8, begin_ns i8, end_ns i8, bytes_in u8, bytes_out u8); node -1 is a feed, -2 a "
           "fetch of the driver.")
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
