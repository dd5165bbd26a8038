// The C++ UDF API of dfir (the seeds' flow_func): include this one header.
//
//   #include "flow_func/flow_func.h"
//   using namespace FlowFunc;
//   class Add : public MetaMultiFunc { ... int32_t AddProc1(context, inputs); ... };
//   FLOW_FUNC_REGISTRAR(Add).RegProcFunc("Add1", &Add::AddProc1);
//
// Build with CMake against dfir.frontend.flow_func.include_dir() (docs/udf.md).
#ifndef DFIR_FLOW_FUNC_FLOW_FUNC_H_
#define DFIR_FLOW_FUNC_FLOW_FUNC_H_

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/flow_func_registrar.h"
#include "flow_func/flow_msg.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/meta_multi_func.h"
#include "flow_func/meta_params.h"
#include "flow_func/meta_run_context.h"

#endif  // DFIR_FLOW_FUNC_FLOW_FUNC_H_
