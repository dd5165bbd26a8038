// The error of the C++ UDF host: a library that cannot be loaded or used, a missing func.
#ifndef DFIR_RUNTIME_NATIVE_UDF_ERROR_H_
#define DFIR_RUNTIME_NATIVE_UDF_ERROR_H_

#include <stdexcept>

namespace dfir::udf {

// The message names the library, node or func and what was expected; the bindings turn it into
// dfir.core.errors.GeError.
class UdfError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dfir::udf

#endif  // DFIR_RUNTIME_NATIVE_UDF_ERROR_H_
