"""The UDF authoring API (`dataflow.flow_func` in the seeds): what a UDF project's class uses.

`init_wrapper` / `proc_wrapper` decorate its methods; `MetaParams` describes the node and its
init params, `MetaRunContext` allocates messages, emits outputs and runs invoked models,
`FlowMsg` is a message (`Tensor` its tensor), `FlowMsgQueue` a stream input, `logger` the UDF
log, `BalanceConfig` routes outputs of balance-scatter nodes, and the `FLOW_FUNC_*` codes are
GE's. `include_dir()` is where the C++ headers of the same API are. docs/udf.md is the guide.
"""
from dfir.frontend.flow_func.balance import AffinityPolicy, BalanceConfig  # noqa: F401
from dfir.frontend.flow_func.include import include_dir  # noqa: F401
from dfir.frontend.flow_func.logger import FlowFuncLogger, logger  # noqa: F401
from dfir.frontend.flow_func.meta_params import MetaParams  # noqa: F401
from dfir.frontend.flow_func.msg import FlowMsg, MsgType  # noqa: F401
from dfir.frontend.flow_func.queue import FlowMsgQueue  # noqa: F401
from dfir.frontend.flow_func.run_context import MetaRunContext  # noqa: F401
from dfir.frontend.flow_func.status import *  # noqa: F401,F403
from dfir.frontend.flow_func.tensor import Tensor  # noqa: F401
from dfir.frontend.flow_func.wrappers import init_wrapper, proc_wrapper  # noqa: F401
