// Bindings of the runtime core: regions and their channels (runtime/native/region.h,
// channel_io.h), the transaction ledger (ledger.h), numpy's arena allocator (arena_allocator.h),
// the set loop's steps and the driver's port, one file per area (runtime_bindings.h lists them).
// Use them through dfir.runtime.channels, not directly. This file imports numpy's C API for the whole module,
// binds each area, and binds exit_when_process_ends (runtime/native/watch.h).
#define DFIR_BINDINGS_DEFINE_NUMPY_API
#include "numpy_api.h"

#include <pybind11/pybind11.h>

#include <sys/types.h>

#include "runtime_bindings.h"
#include "watch.h"

namespace py = pybind11;
namespace rt = dfir::rt;

void SetupRuntimeBindings(py::module_& m) {
  if (_import_array() < 0) throw py::error_already_set();
  dfir::bindings::BindCodec(m);
  m.def(
      "exit_when_process_ends", [](int pid, int exit_code) { rt::ExitWhenProcessEnds(static_cast<pid_t>(pid), exit_code); },
      py::arg("pid"), py::arg("exit_code"));
  dfir::bindings::BindArena(m);
  // The ledger before the region: Region's signatures name its type.
  dfir::bindings::BindLedger(m);
  dfir::bindings::BindRegion(m);
  dfir::bindings::BindTraceLog(m);  // before the steps: SetStep.trace names its type
  dfir::bindings::BindSetSteps(m);
  dfir::bindings::BindDriverPort(m);
}
