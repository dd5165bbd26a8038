// The areas of the runtime core's bindings, one file each, which SetupRuntimeBindings
// (runtime_bindings.cc) binds into the module:
//
//   py_codec.cc         the message codec's Python side: configure_codec, new_message,
//                       INLINE_BYTES, MAX_DIMS (py_codec.h: the codec, the GIL release, the
//                       references local channels hold, arena blocks owned by Python objects)
//   arena_bindings.cc   numpy's arena allocator (NEP 49) and aligned_zeros
//   ledger_bindings.cc  TransactionLedger (py_ledger.h)
//   region_bindings.cc  Region and FiringGroups (py_region.h)
//   set_steps.cc        the set loop and its steps: SetStep, LeanStep, UdfStep, OutputsStep,
//                       MessageStep (set_steps.h)
//   driver_port.cc      DriverPort
//   trace_bindings.cc   TraceLog, the model's trace (runtime/native/trace_log.h)
#ifndef DFIR_RUNTIME_BINDINGS_RUNTIME_BINDINGS_H_
#define DFIR_RUNTIME_BINDINGS_RUNTIME_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace dfir::bindings {

void BindCodec(pybind11::module_& m);
void BindArena(pybind11::module_& m);
void BindLedger(pybind11::module_& m);
void BindRegion(pybind11::module_& m);
void BindSetSteps(pybind11::module_& m);
void BindDriverPort(pybind11::module_& m);
void BindTraceLog(pybind11::module_& m);

}  // namespace dfir::bindings

#endif  // DFIR_RUNTIME_BINDINGS_RUNTIME_BINDINGS_H_
