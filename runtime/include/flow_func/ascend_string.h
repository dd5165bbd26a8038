// The former name of flow_func_ascend_string.h (kept as GE keeps it).
#ifndef DFIR_FLOW_FUNC_ASCEND_STRING_H_
#define DFIR_FLOW_FUNC_ASCEND_STRING_H_

#include "flow_func_ascend_string.h"

#endif  // DFIR_FLOW_FUNC_ASCEND_STRING_H_
