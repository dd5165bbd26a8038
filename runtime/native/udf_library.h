// A C++ UDF library loaded from bytes (an .om's SO_BINS partition): written to a memfd (or a
// private temporary file, unlinked at once) and dlopen'ed with RTLD_LOCAL through /proc/self/fd.
// A library stays loaded for the life of the process (objects its code created may outlive any
// one model), and so does its descriptor; the host loads each distinct library once.
#ifndef DFIR_RUNTIME_NATIVE_UDF_LIBRARY_H_
#define DFIR_RUNTIME_NATIVE_UDF_LIBRARY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_func_registry.h"

namespace dfir::udf {

class UdfLibrary {
 public:
  // Loads `size` bytes as library `name` (e.g. "libadd.so"); UdfError naming it when the bytes
  // are no loadable library, it registers no funcs (REGISTER_FLOW_FUNC, FLOW_FUNC_REGISTRAR), it
  // was built against another flow_func ABI, or it registers a func name twice.
  static std::shared_ptr<UdfLibrary> Load(const uint8_t* data, size_t size, const std::string& name);

  const std::string& name() const { return name_; }
  const FlowFunc::FuncRegistry& registry() const { return *registry_; }
  // The func names it registers, sorted.
  std::vector<std::string> FuncNames() const;

 private:
  UdfLibrary(std::string name, const FlowFunc::FuncRegistry* registry) : name_(std::move(name)), registry_(registry) {}

  std::string name_;
  const FlowFunc::FuncRegistry* registry_;
};

}  // namespace dfir::udf

#endif  // DFIR_RUNTIME_NATIVE_UDF_LIBRARY_H_
