// The constants of the UDF API: status codes (GE's values), data types, message types, flags.
#ifndef DFIR_FLOW_FUNC_FLOW_FUNC_DEFINES_H_
#define DFIR_FLOW_FUNC_FLOW_FUNC_DEFINES_H_

#include <cstdint>

namespace FlowFunc {

// Bumped whenever a class of this API changes layout; the runtime refuses a library built
// against another version (it exports DfirFlowFuncAbiVersion()).
constexpr int32_t kFlowFuncAbiVersion = 2;  // 2: stream-input procs (FlowMsgQueue)

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

// GE's DataType numbering (the same values as dfir.core.data_type).
enum class TensorDataType : int32_t {
  DT_FLOAT = 0,
  DT_FLOAT16 = 1,
  DT_INT8 = 2,
  DT_INT32 = 3,
  DT_UINT8 = 4,
  DT_INT16 = 6,
  DT_UINT16 = 7,
  DT_UINT32 = 8,
  DT_INT64 = 9,
  DT_UINT64 = 10,
  DT_DOUBLE = 11,
  DT_BOOL = 12,
  DT_STRING = 13,
  DT_BF16 = 27,
};

enum class MsgType : uint16_t {
  MSG_TYPE_TENSOR_DATA = 0,
  MSG_TYPE_RAW_MSG = 1,
  MSG_TYPE_USER_DEFINE_START = 1024,
  MSG_TYPE_PICKLED_MSG = 65535,
};

enum class AffinityPolicy : int32_t {
  NO_AFFINITY = 0,
  ROW_AFFINITY = 1,
  COL_AFFINITY = 2,
};

// Levels of FLOW_FUNC_LOG_* records, as the runtime's log sink receives them.
enum class LogLevel : int32_t {
  kDebug = 0,
  kInfo = 1,
  kWarn = 2,
  kError = 3,
  kEvent = 4,
};

// How the runtime receives a UDF library's log records (one formatted line each).
using LogSink = void (*)(int32_t level, const char* text);

// FlowMsg::GetFlowFlags() bits.
constexpr uint32_t FLOW_FLAG_EOS = 1U << 0;
constexpr uint32_t FLOW_FLAG_SEG = 1U << 1;

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_FLOW_FUNC_DEFINES_H_
