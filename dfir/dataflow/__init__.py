"""The dataflow frontend: the seeds' `import dataflow as df`, same names and semantics."""
from dfir.core.data_type import (DT_BF16, DT_BOOL, DT_DOUBLE, DT_FLOAT, DT_FLOAT16, DT_INT8,  # noqa: F401
                            DT_INT16, DT_INT32, DT_INT64, DT_STRING, DT_UINT8, DT_UINT16, DT_UINT32,
                            DT_UINT64, DType)
from dfir.frontend.dataflow.graph import FlowData, FlowGraph, FlowNode, FlowOutput  # noqa: F401
from dfir.frontend.dataflow.process_points import Framework, FuncProcessPoint, GraphProcessPoint  # noqa: F401
from dfir.frontend.dataflow.pyflow import method, pyflow  # noqa: F401
from dfir.frontend.dataflow.session import finalize, init  # noqa: F401
from dfir.core.flow_info import FlowFlag, FlowInfo  # noqa: F401
from dfir.core.tensor import Tensor, TensorDesc, alloc_tensor  # noqa: F401
