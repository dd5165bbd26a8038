// The C++ UDF API of dfir (GE's flow_func): include this one header, or the ones GE's samples
// include (flow_func/meta_flow_func.h, flow_func/meta_multi_func.h, flow_func/flow_func_log.h).
//
//   #include "flow_func/flow_func.h"
//   using namespace FlowFunc;
//   class Add : public MetaMultiFunc { ... int32_t AddProc1(context, inputs); ... };
//   FLOW_FUNC_REGISTRAR(Add).RegProcFunc("Add1", &Add::AddProc1);
//
// Build with CMake against dfir.frontend.flow_func.include_dir() (docs/udf.md). The headers
// compile as C++11 and up, with either _GLIBCXX_USE_CXX11_ABI.
#ifndef DFIR_FLOW_FUNC_FLOW_FUNC_H_
#define DFIR_FLOW_FUNC_FLOW_FUNC_H_

#include "balance_config.h"
#include "dflow_attr_value.h"
#include "flow_func_ascend_string.h"
#include "flow_func_defines.h"
#include "flow_func_log.h"
#include "flow_msg.h"
#include "flow_msg_queue.h"
#include "meta_context.h"
#include "meta_flow_func.h"
#include "meta_multi_func.h"
#include "meta_params.h"
#include "meta_run_context.h"
#include "out_options.h"
#include "tensor_data_type.h"

#endif  // DFIR_FLOW_FUNC_FLOW_FUNC_H_
