#include "dispatch.h"

#include "shm.h"

namespace dfir::rt {

InstanceDispatcher::InstanceDispatcher(uint32_t instances, DispatchRule rule) : instances_(instances), rule_(rule) {
  if (instances == 0) throw RuntimeError("a dispatcher needs at least 1 instance, got 0");
}

}  // namespace dfir::rt
