"""The UDF authoring API (`dataflow.flow_func` in the seeds)."""
from dfir.flow_func.status import *  # noqa: F401,F403
from dfir.flow_func.queue import FlowMsgQueue  # noqa: F401
