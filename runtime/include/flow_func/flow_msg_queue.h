// FlowMsgQueue: one input of a stream-input proc func (`stream_input: true` in the compile
// config), read message by message:
//
//   int32_t Proc(const std::shared_ptr<MetaRunContext>& context,
//                const std::vector<std::shared_ptr<FlowMsgQueue>>& queues) {
//     std::shared_ptr<FlowMsg> msg;
//     if (queues[0]->Dequeue(msg, 1000) != FLOW_FUNC_SUCCESS) return FLOW_FUNC_FAILED;
//     ...
//   }
#ifndef DFIR_FLOW_FUNC_FLOW_MSG_QUEUE_H_
#define DFIR_FLOW_FUNC_FLOW_MSG_QUEUE_H_

#include <cstdint>
#include <memory>

#include "flow_func_defines.h"
#include "flow_msg.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY FlowMsgQueue {
 public:
  FlowMsgQueue() = default;
  virtual ~FlowMsgQueue() = default;
  // The next message of the input into `flowMsg`: FLOW_FUNC_SUCCESS, FLOW_FUNC_ERR_TIME_OUT_ERROR
  // when none came within `timeout` ms (-1: wait for one), FLOW_FUNC_STATUS_EXIT once the model closes.
  virtual int32_t Dequeue(std::shared_ptr<FlowMsg>& flowMsg, int32_t timeout = -1) = 0;
  // How many messages the input's channel holds at most.
  virtual int32_t Depth() const = 0;
  // How many messages wait in it now.
  virtual int32_t Size() const = 0;
};

}  // namespace FlowFunc

#endif  // DFIR_FLOW_FUNC_FLOW_MSG_QUEUE_H_
