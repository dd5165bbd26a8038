// A C++ UDF library that registers one func name twice, which the runtime refuses.
#include "flow_func/flow_func.h"

using namespace FlowFunc;

class First : public MetaMultiFunc {
 public:
  int32_t Proc(const std::shared_ptr<MetaRunContext>&, const std::vector<std::shared_ptr<FlowMsg>>&) { return 0; }
};

class Second : public MetaMultiFunc {
 public:
  int32_t Proc(const std::shared_ptr<MetaRunContext>&, const std::vector<std::shared_ptr<FlowMsg>>&) { return 0; }
};

FLOW_FUNC_REGISTRAR(First).RegProcFunc("Same", &First::Proc);
FLOW_FUNC_REGISTRAR(Second).RegProcFunc("Same", &Second::Proc);
