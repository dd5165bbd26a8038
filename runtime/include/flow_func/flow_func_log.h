// FLOW_FUNC_LOG_*: printf-style UDF logging. Records go to the runtime (Python logging, logger
// "dfir.frontend.flow_func", with the node and instance of the call), or to stderr outside a runtime.
#ifndef DFIR_FLOW_FUNC_FLOW_FUNC_LOG_H_
#define DFIR_FLOW_FUNC_FLOW_FUNC_LOG_H_

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

#include "flow_func/flow_func_defines.h"

namespace FlowFunc {
namespace detail {

// The runtime's sink for this library, set through DfirFlowFuncSetLogSink when it is loaded.
__attribute__((visibility("hidden"))) inline LogSink& LogSinkSlot() {
  static LogSink sink = nullptr;
  return sink;
}

__attribute__((visibility("hidden"), format(printf, 2, 3))) inline void Log(LogLevel level, const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list measure;
  va_copy(measure, args);
  const int length = std::vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  std::string text(length > 0 ? static_cast<size_t>(length) : 0U, '\0');
  if (length > 0) std::vsnprintf(&text[0], text.size() + 1, format, args);
  va_end(args);
  const LogSink sink = LogSinkSlot();
  if (sink != nullptr) {
    sink(static_cast<int32_t>(level), text.c_str());
  } else {
    std::fprintf(stderr, "[flow_func] %s\n", text.c_str());
  }
}

}  // namespace detail
}  // namespace FlowFunc

#define FLOW_FUNC_LOG_DEBUG(fmt, ...) \
  ::FlowFunc::detail::Log(::FlowFunc::LogLevel::kDebug, "%s: " fmt, __func__, ##__VA_ARGS__)
#define FLOW_FUNC_LOG_INFO(fmt, ...) \
  ::FlowFunc::detail::Log(::FlowFunc::LogLevel::kInfo, "%s: " fmt, __func__, ##__VA_ARGS__)
#define FLOW_FUNC_LOG_WARN(fmt, ...) \
  ::FlowFunc::detail::Log(::FlowFunc::LogLevel::kWarn, "%s: " fmt, __func__, ##__VA_ARGS__)
#define FLOW_FUNC_LOG_ERROR(fmt, ...) \
  ::FlowFunc::detail::Log(::FlowFunc::LogLevel::kError, "%s: " fmt, __func__, ##__VA_ARGS__)
#define FLOW_FUNC_LOG_EVENT(fmt, ...) \
  ::FlowFunc::detail::Log(::FlowFunc::LogLevel::kEvent, "%s: " fmt, __func__, ##__VA_ARGS__)
#define FLOW_FUNC_RUN_LOG_INFO(fmt, ...) FLOW_FUNC_LOG_INFO(fmt, ##__VA_ARGS__)
#define FLOW_FUNC_RUN_LOG_ERROR(fmt, ...) FLOW_FUNC_LOG_ERROR(fmt, ##__VA_ARGS__)

#endif  // DFIR_FLOW_FUNC_FLOW_FUNC_LOG_H_
