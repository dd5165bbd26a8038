// FLOW_FUNC_REGISTRAR lives in meta_multi_func.h (as in GE); this header stays for code that
// includes it by this name.
#ifndef DFIR_FLOW_FUNC_FLOW_FUNC_REGISTRAR_H_
#define DFIR_FLOW_FUNC_FLOW_FUNC_REGISTRAR_H_

#include "meta_multi_func.h"

#endif  // DFIR_FLOW_FUNC_FLOW_FUNC_REGISTRAR_H_
