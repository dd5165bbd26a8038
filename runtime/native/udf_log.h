// Log records of C++ UDFs: each library's FLOW_FUNC_LOG_* calls reach HostLogSink, which adds the
// node, func and instance of the call running on this thread and hands the record to the handler
// the bindings install (Python logging); without one, records go to stderr.
#ifndef DFIR_RUNTIME_NATIVE_UDF_LOG_H_
#define DFIR_RUNTIME_NATIVE_UDF_LOG_H_

#include <cstdint>
#include <functional>
#include <string>

namespace dfir::udf {

struct LogScope {
  std::string node;
  std::string func;
  int32_t instance = 0;
  mutable std::string last_error;  // the text of the last error record logged in the scope
};

inline constexpr int32_t kLogError = 3;  // FLOW_FUNC_LOG_ERROR's level

using LogHandler = std::function<void(int32_t level, const LogScope& scope, const std::string& text)>;

void SetLogHandler(LogHandler handler);

// The sink every loaded library gets (FlowFunc::LogSink).
void HostLogSink(int32_t level, const char* text);

// Makes `scope` the current thread's log scope until destroyed.
class ScopedLogScope {
 public:
  explicit ScopedLogScope(const LogScope& scope);
  ~ScopedLogScope();
  ScopedLogScope(const ScopedLogScope&) = delete;
  ScopedLogScope& operator=(const ScopedLogScope&) = delete;

 private:
  const LogScope* previous_;
};

}  // namespace dfir::udf

#endif  // DFIR_RUNTIME_NATIVE_UDF_LOG_H_
