// FlowFuncLogger and the FLOW_FUNC_LOG_* macros: printf-style UDF logging. Records go to the
// runtime (Python logging, logger "dfir.frontend.flow_func", with the node and instance of the
// call; its level decides what is kept), or to stderr outside a runtime.
//
//   FLOW_FUNC_LOG_INFO("got %d inputs", n);          // debug log, level INFO
//   FLOW_FUNC_RUN_LOG_ERROR("cannot open %s", path);  // run log, level ERROR
#ifndef DFIR_FLOW_FUNC_FLOW_FUNC_LOG_H_
#define DFIR_FLOW_FUNC_FLOW_FUNC_LOG_H_

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

#include "flow_func_defines.h"

namespace FlowFunc {

enum class FLOW_FUNC_VISIBILITY FlowFuncLogType { DEBUG_LOG = 0, RUN_LOG = 1 };
enum class FLOW_FUNC_VISIBILITY FlowFuncLogLevel { DEBUG = 0, INFO = 1, WARN = 2, ERROR = 3 };

class FLOW_FUNC_VISIBILITY FlowFuncLogger {
 public:
  // The logger of `type`: both hand their records to the runtime's log.
  __attribute__((visibility("hidden"))) static inline FlowFuncLogger& GetLogger(FlowFuncLogType type);
  // "[tid:<thread id>]", the calling thread's header for a record's text.
  __attribute__((visibility("hidden"))) static inline const char* GetLogExtHeader();

  FlowFuncLogger() = default;
  virtual ~FlowFuncLogger() = default;

  virtual bool IsLogEnable(FlowFuncLogLevel level) = 0;
  virtual void Error(const char* fmt, ...) __attribute__((format(printf, 2, 3))) = 0;
  virtual void Warn(const char* fmt, ...) __attribute__((format(printf, 2, 3))) = 0;
  virtual void Info(const char* fmt, ...) __attribute__((format(printf, 2, 3))) = 0;
  virtual void Debug(const char* fmt, ...) __attribute__((format(printf, 2, 3))) = 0;
};

namespace detail {

// The runtime's sink for this library, set through DfirFlowFuncSetHost when it is loaded.
__attribute__((visibility("hidden"))) inline LogSink& LogSinkSlot() {
  static LogSink sink = nullptr;
  return sink;
}

__attribute__((visibility("hidden"))) inline void SendLog(LogLevel level, const char* format, va_list args) {
  va_list measure;
  va_copy(measure, args);
  const int length = std::vsnprintf(nullptr, 0, format, measure);
  va_end(measure);
  std::string text(length > 0 ? static_cast<size_t>(length) : 0U, '\0');
  if (length > 0) std::vsnprintf(&text[0], text.size() + 1, format, args);
  const LogSink sink = LogSinkSlot();
  if (sink != nullptr) {
    sink(static_cast<int32_t>(level), text.c_str());
  } else {
    std::fprintf(stderr, "[flow_func] %s\n", text.c_str());
  }
}

__attribute__((visibility("hidden"), format(printf, 2, 3))) inline void Log(LogLevel level, const char* format, ...) {
  va_list args;
  va_start(args, format);
  SendLog(level, format, args);
  va_end(args);
}

// Every level is handed on: the runtime's log level filters.
class __attribute__((visibility("hidden"))) SinkLogger final : public FlowFuncLogger {
 public:
  bool IsLogEnable(FlowFuncLogLevel level) override {
    (void)level;
    return true;
  }
  void Error(const char* fmt, ...) override {
    va_list args;
    va_start(args, fmt);
    SendLog(LogLevel::kError, fmt, args);
    va_end(args);
  }
  void Warn(const char* fmt, ...) override {
    va_list args;
    va_start(args, fmt);
    SendLog(LogLevel::kWarn, fmt, args);
    va_end(args);
  }
  void Info(const char* fmt, ...) override {
    va_list args;
    va_start(args, fmt);
    SendLog(LogLevel::kInfo, fmt, args);
    va_end(args);
  }
  void Debug(const char* fmt, ...) override {
    va_list args;
    va_start(args, fmt);
    SendLog(LogLevel::kDebug, fmt, args);
    va_end(args);
  }
};

}  // namespace detail

inline FlowFuncLogger& FlowFuncLogger::GetLogger(FlowFuncLogType type) {
  static detail::SinkLogger debug_logger;
  static detail::SinkLogger run_logger;
  return type == FlowFuncLogType::RUN_LOG ? run_logger : debug_logger;
}

inline const char* FlowFuncLogger::GetLogExtHeader() {
  static thread_local char header[32] = {};
  if (header[0] == '\0') {
    std::snprintf(header, sizeof header, "[tid:%ld]", static_cast<long>(::syscall(SYS_gettid)));
  }
  return header;
}

}  // namespace FlowFunc

// A record's text is "<function>: <message>"; the runtime adds the node, func and instance.
#define DFIR_FLOW_FUNC_LOG_AT(log_type, level, method, fmt, ...)                                           \
  do {                                                                                                     \
    ::FlowFunc::FlowFuncLogger& dfir_logger = ::FlowFunc::FlowFuncLogger::GetLogger(log_type);             \
    if (dfir_logger.IsLogEnable(level)) dfir_logger.method("%s: " fmt, __FUNCTION__, ##__VA_ARGS__);       \
  } while (0)

#define FLOW_FUNC_LOG_DEBUG(fmt, ...)                                                                         \
  DFIR_FLOW_FUNC_LOG_AT(::FlowFunc::FlowFuncLogType::DEBUG_LOG, ::FlowFunc::FlowFuncLogLevel::DEBUG, Debug, fmt, \
                        ##__VA_ARGS__)
#define FLOW_FUNC_LOG_INFO(fmt, ...)                                                                        \
  DFIR_FLOW_FUNC_LOG_AT(::FlowFunc::FlowFuncLogType::DEBUG_LOG, ::FlowFunc::FlowFuncLogLevel::INFO, Info, fmt, \
                        ##__VA_ARGS__)
#define FLOW_FUNC_LOG_WARN(fmt, ...)                                                                        \
  DFIR_FLOW_FUNC_LOG_AT(::FlowFunc::FlowFuncLogType::DEBUG_LOG, ::FlowFunc::FlowFuncLogLevel::WARN, Warn, fmt, \
                        ##__VA_ARGS__)
#define FLOW_FUNC_LOG_ERROR(fmt, ...)                                                                         \
  DFIR_FLOW_FUNC_LOG_AT(::FlowFunc::FlowFuncLogType::DEBUG_LOG, ::FlowFunc::FlowFuncLogLevel::ERROR, Error, fmt, \
                        ##__VA_ARGS__)
#define FLOW_FUNC_RUN_LOG_INFO(fmt, ...)                                                                  \
  DFIR_FLOW_FUNC_LOG_AT(::FlowFunc::FlowFuncLogType::RUN_LOG, ::FlowFunc::FlowFuncLogLevel::INFO, Info, fmt, \
                        ##__VA_ARGS__)
#define FLOW_FUNC_RUN_LOG_ERROR(fmt, ...)                                                                   \
  DFIR_FLOW_FUNC_LOG_AT(::FlowFunc::FlowFuncLogType::RUN_LOG, ::FlowFunc::FlowFuncLogLevel::ERROR, Error, fmt, \
                        ##__VA_ARGS__)
// dfir's event level (not in GE's API): a notable step, logged at INFO by the runtime.
#define FLOW_FUNC_LOG_EVENT(fmt, ...) \
  ::FlowFunc::detail::Log(::FlowFunc::LogLevel::kEvent, "%s: " fmt, __FUNCTION__, ##__VA_ARGS__)

#endif  // DFIR_FLOW_FUNC_FLOW_FUNC_LOG_H_
