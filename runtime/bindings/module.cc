// The private native module `dfir.runtime._native`: one Setup*Bindings call per binding file,
// and the one place where native errors become Python exceptions.
#include <pybind11/pybind11.h>

#include <exception>
#include <string>

#include "om_reader.h"
#include "shm.h"
#include "udf_error.h"

namespace py = pybind11;

void SetupOmBindings(py::module_& m);
void SetupRuntimeBindings(py::module_& m);
void SetupUdfBindings(py::module_& m);
void SetupAlignBindings(py::module_& m);

namespace {

// dfir.core.errors.GeError, imported once and kept for the life of the interpreter.
PyObject* GeErrorType() {
  PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> storage;
  return storage.call_once_and_store_result([] { return py::module_::import("dfir.core.errors").attr("GeError"); })
      .get_stored()
      .ptr();
}

void SetGeError(const std::exception& native) {
  py::object message = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
      native.what(), static_cast<Py_ssize_t>(std::char_traits<char>::length(native.what())), "replace"));
  PyErr_SetObject(GeErrorType(), message.ptr());
}

void TranslateNativeErrors(std::exception_ptr error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const dfir::om::OmError& native) {
    SetGeError(native);
  } catch (const dfir::rt::RuntimeError& native) {
    SetGeError(native);
  } catch (const dfir::udf::UdfError& native) {
    SetGeError(native);
  }
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "dfir native runtime core";
  py::register_exception_translator(&TranslateNativeErrors);
  SetupOmBindings(m);
  SetupRuntimeBindings(m);
  SetupUdfBindings(m);
  SetupAlignBindings(m);
}
