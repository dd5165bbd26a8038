// numpy's C API as the binding files use it: one table of its functions for the whole module
// (PY_ARRAY_UNIQUE_SYMBOL). runtime_bindings.cc defines the table (it defines
// DFIR_BINDINGS_DEFINE_NUMPY_API before including this) and imports it in
// SetupRuntimeBindings; every other file that includes this header uses that table.
#ifndef DFIR_RUNTIME_BINDINGS_NUMPY_API_H_
#define DFIR_RUNTIME_BINDINGS_NUMPY_API_H_

#include <pybind11/pybind11.h>

#ifndef DFIR_BINDINGS_DEFINE_NUMPY_API
#define NO_IMPORT_ARRAY
#endif
#define PY_ARRAY_UNIQUE_SYMBOL dfir_runtime_ARRAY_API
#include <numpy/arrayobject.h>

#endif  // DFIR_RUNTIME_BINDINGS_NUMPY_API_H_
