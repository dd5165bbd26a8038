// The status codes of the UDF API (GE's values) and the visibility macro of its classes.
#ifndef DFIR_FLOW_FUNC_FLOW_FUNC_DEFINES_H_
#define DFIR_FLOW_FUNC_FLOW_FUNC_DEFINES_H_

#include <cstdint>

#define FLOW_FUNC_VISIBILITY __attribute__((visibility("default")))

namespace FlowFunc {

// Bumped whenever a class of this API changes layout; the runtime refuses a library built
// against another version (it exports DfirFlowFuncAbiVersion()).
constexpr int32_t kFlowFuncAbiVersion = 3;  // 3: GE's full API (OutOptions, AscendString, MetaFlowFunc)

constexpr int32_t FLOW_FUNC_SUCCESS = 0;
constexpr int32_t FLOW_FUNC_ERR_PARAM_INVALID = 164000;
constexpr int32_t FLOW_FUNC_ERR_ATTR_NOT_EXITS = 164001;
constexpr int32_t FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH = 164002;
constexpr int32_t FLOW_FUNC_ERR_DATA_ALIGN_FAILED = 364000;
constexpr int32_t FLOW_FUNC_FAILED = 564000;
constexpr int32_t FLOW_FUNC_ERR_TIME_OUT_ERROR = 564001;
constexpr int32_t FLOW_FUNC_ERR_NOT_SUPPORT = 564002;
constexpr int32_t FLOW_FUNC_STATUS_REDEPLOYING = 564003;
constexpr int32_t FLOW_FUNC_STATUS_EXIT = 564004;
constexpr int32_t FLOW_FUNC_ERR_DRV_ERROR = 564100;
constexpr int32_t FLOW_FUNC_ERR_MEM_BUF_ERROR = 564101;
constexpr int32_t FLOW_FUNC_ERR_QUEUE_ERROR = 564102;
constexpr int32_t FLOW_FUNC_ERR_EVENT_ERROR = 564103;
constexpr int32_t FLOW_FUNC_ERR_USER_DEFINE_START = 9900000;
constexpr int32_t FLOW_FUNC_ERR_USER_DEFINE_END = 9999999;

// Levels of log records, as the runtime's log sink receives them.
enum class LogLevel : int32_t {
  kDebug = 0,
  kInfo = 1,
  kWarn = 2,
  kError = 3,
  kEvent = 4,
};

// How the runtime receives a UDF library's log records (one formatted line each).
using LogSink = void (*)(int32_t level, const char* text);

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_FLOW_FUNC_DEFINES_H_
