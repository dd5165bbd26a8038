// The former name of dflow_attr_value.h (kept as GE keeps it).
#ifndef DFIR_FLOW_FUNC_ATTR_VALUE_H_
#define DFIR_FLOW_FUNC_ATTR_VALUE_H_

#include "dflow_attr_value.h"

#endif  // DFIR_FLOW_FUNC_ATTR_VALUE_H_
