#include "udf_log.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <utility>

namespace dfir::udf {

namespace {

std::mutex g_handler_mutex;
std::shared_ptr<LogHandler> g_handler;  // replaced whole, so a running call keeps its copy
thread_local const LogScope* t_scope = nullptr;

}  // namespace

void SetLogHandler(LogHandler handler) {
  auto installed = handler ? std::make_shared<LogHandler>(std::move(handler)) : nullptr;
  const std::lock_guard<std::mutex> lock(g_handler_mutex);
  g_handler = std::move(installed);
}

void HostLogSink(int32_t level, const char* text) {
  static const LogScope kNoScope;
  const LogScope& scope = t_scope != nullptr ? *t_scope : kNoScope;
  if (level == kLogError && t_scope != nullptr) t_scope->last_error = text == nullptr ? "" : text;
  std::shared_ptr<LogHandler> handler;
  {
    const std::lock_guard<std::mutex> lock(g_handler_mutex);
    handler = g_handler;
  }
  if (handler != nullptr) {
    (*handler)(level, scope, text == nullptr ? "" : text);
  } else {
    std::fprintf(stderr, "[%s#%d %s] %s\n", scope.node.c_str(), scope.instance, scope.func.c_str(),
                 text == nullptr ? "" : text);
  }
}

ScopedLogScope::ScopedLogScope(const LogScope& scope) : previous_(t_scope) { t_scope = &scope; }

ScopedLogScope::~ScopedLogScope() { t_scope = previous_; }

}  // namespace dfir::udf
