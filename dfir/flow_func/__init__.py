"""The UDF authoring API (GE's `dataflow.flow_func`): what a UDF project's class uses.

`init_wrapper` / `proc_wrapper` decorate its methods (`proc_wrapper("i0,i1,o0")`: GE's I/O spec,
recorded by `FlowFuncRegister`); `MetaParams` (GE's `PyMetaParams`) describes the node and its
init params, `MetaRunContext` allocates messages, emits outputs and runs invoked models,
`FlowMsg` is a message (`Tensor` its tensor), `FlowMsgQueue` a stream input, `logger` the UDF
log, `BalanceConfig` routes outputs of balance-scatter nodes, and the `FLOW_FUNC_*` codes, the
`MSG_TYPE_*` message types and the `FLOW_FLAG_*` flags are GE's. `include_dir()` is where the C++ headers of the same API are. docs/udf.md is the guide.
"""
from dfir.frontend.flow_func.balance import AffinityPolicy, BalanceConfig  # noqa: F401
from dfir.frontend.flow_func.include import include_dir  # noqa: F401
from dfir.frontend.flow_func.logger import (DEBUG, DEBUG_LOG, ERROR, INFO, RUN_LOG, WARN, FlowFuncLogger,  # noqa: F401
                                            FlowFuncLogLevel, FlowFuncLogType, logger)
from dfir.frontend.flow_func.meta_params import MetaParams, PyMetaParams  # noqa: F401
from dfir.frontend.flow_func.msg import (FLOW_FLAG_EOS, FLOW_FLAG_SEG, MSG_TYPE_PICKLED_MSG,  # noqa: F401
                                         MSG_TYPE_RAW_MSG, MSG_TYPE_TENSOR_DATA, MSG_TYPE_TORCH_TENSOR_MSG,
                                         MSG_TYPE_USER_DEFINE_START, FlowMsg, MsgType)
from dfir.frontend.flow_func.queue import FlowMsgQueue  # noqa: F401
from dfir.frontend.flow_func.run_context import MAX_USER_DATA_SIZE, MetaRunContext  # noqa: F401
from dfir.frontend.flow_func.status import *  # noqa: F401,F403
from dfir.frontend.flow_func.tensor import Tensor  # noqa: F401
from dfir.frontend.flow_func.wrappers import (FlowFuncInfos, FlowFuncRegister, init_wrapper,  # noqa: F401
                                              proc_wrapper)
