"""The seeds' `import dataflow as df`: the same names with the same semantics."""
from dfir.core.errors import DfAbortException, DfException
from dfir.core.data_type import (DT_BF16, DT_BOOL, DT_DOUBLE, DT_FLOAT, DT_FLOAT16, DT_INT8, DT_INT16,
                                 DT_INT32, DT_INT64, DT_STRING, DT_UINT8, DT_UINT16, DT_UINT32,
                                 DT_UINT64, DType)
from dfir.core.flow_info import FlowFlag, FlowInfo
from dfir.core.tensor import Tensor, TensorDesc, alloc_tensor
from dfir.frontend.dataflow.batching import CountBatch, TimeBatch
from dfir.frontend.dataflow.flow_graph import FlowGraph
from dfir.core.msg_types import msg_type_register
from dfir.frontend.dataflow.graph import FlowData, FlowNode, FlowOutput
from dfir.frontend.dataflow.process_points import (FlowGraphProcessPoint, Framework, FuncProcessPoint,
                                                   GraphProcessPoint)
from dfir.frontend.dataflow.npu_model import npu_model
from dfir.frontend.dataflow.pyflow import method, pyflow
from dfir.frontend.dataflow.session import finalize, init
from dfir.frontend.flow_func.running import get_running_device_id, get_running_instance_id, get_running_instance_num
from dfir.dataflow import utils

__all__ = ["CountBatch", "DT_BF16", "DT_BOOL", "DT_DOUBLE", "DT_FLOAT", "DT_FLOAT16", "DT_INT8", "DT_INT16",
           "DT_INT32", "DT_INT64", "DT_STRING", "DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_UINT64", "DType",
           "FlowData", "FlowFlag", "FlowGraph", "FlowGraphProcessPoint", "FlowInfo", "FlowNode", "FlowOutput", "Framework",
           "FuncProcessPoint", "GraphProcessPoint", "Tensor", "TensorDesc", "TimeBatch", "alloc_tensor", "finalize",
           "init", "method", "pyflow", "utils"]
__all__ += ["DfAbortException", "DfException", "msg_type_register"]
__all__ += ["get_running_device_id", "get_running_instance_id", "get_running_instance_num"]
__all__ += ["npu_model"]
