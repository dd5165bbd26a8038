// The private native module `dfir.runtime._native`: one Setup*Bindings call per binding file.
#include <pybind11/pybind11.h>

PYBIND11_MODULE(_native, m) {
  m.doc() = "dfir native runtime core";
}
