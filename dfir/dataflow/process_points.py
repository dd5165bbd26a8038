"""Process points: what a FlowNode runs — a UDF (FuncProcessPoint) or a GE graph (GraphProcessPoint)."""
from __future__ import annotations

from enum import Enum, auto
from typing import Any

from dfir.dataflow import names
from dfir.data_type import DType
from dfir.ge.error import GeError



class Framework(Enum):
    TENSORFLOW = auto()
    ONNX = auto()
    MINDSPORE = auto()


_INIT_PARAM_TYPES = (str, int, float, bool, DType)


class FuncProcessPoint:
    """A UDF. Built by `@pyflow` (with a `UdfPayload`) or from a UDF project's compile config."""

    def __init__(self, compile_config_path: str | None = None, name: str | None = None,
                 py_func: Any = None, workspace_dir: str | None = None):
        self.compile_config_path = compile_config_path
        self.workspace_dir = workspace_dir
        self.name = names.unique_name(name, "FuncProcessPoint")
        self.init_params: dict[str, Any] = {}
        self.invoked_closures: dict[str, Any] = {}
        self.udf = None  # a pyflow.UdfSpec when built by @pyflow
        if py_func is not None:
            from dfir.dataflow.pyflow import udf_spec_of
            self.udf = udf_spec_of(py_func)
        elif compile_config_path is None:
            raise GeError(f"FuncProcessPoint {self.name}: give compile_config_path or py_func")

    def set_init_param(self, attr_name: str, attr_value) -> None:
        values = attr_value if isinstance(attr_value, list) else [attr_value]
        flat = [v for item in values for v in (item if isinstance(item, list) else [item])]
        if not all(isinstance(v, _INIT_PARAM_TYPES) for v in flat):
            raise GeError(f"FuncProcessPoint {self.name}: init param {attr_name} has unsupported "
                          f"value {attr_value!r} (expected str/int/float/bool/DType or lists of them)")
        self.init_params[attr_name] = attr_value

    def add_invoked_closure(self, graph_key: str, pp) -> None:
        if not isinstance(pp, GraphProcessPoint):
            raise GeError(f"FuncProcessPoint {self.name}: invoked closure {graph_key} must be a "
                          f"GraphProcessPoint, got {type(pp).__name__}")
        if graph_key in self.invoked_closures:
            raise GeError(f"FuncProcessPoint {self.name}: invoked closure {graph_key} is added twice")
        self.invoked_closures[graph_key] = pp


class GraphProcessPoint:
    """A GE graph: a `dfir.ge.graph.Graph` built in Python (graph files come with ONNX import)."""

    def __init__(self, framework: Framework, graph_file, load_params: dict[str, str] | None = None,
                 compile_config_path: str = "", name: str | None = None):
        from dfir.ge.graph import Graph
        if not isinstance(framework, Framework):
            raise GeError(f"GraphProcessPoint framework must be a Framework, got {framework!r}")
        if not isinstance(graph_file, Graph):
            raise GeError(f"GraphProcessPoint: loading {framework.name} graph file {graph_file!r} is "
                          "not supported yet; pass a dfir.ge.graph.Graph")
        self.framework = framework
        self.graph = graph_file
        self.load_params = dict(load_params or {})
        self.compile_config_path = compile_config_path
        self.name = names.unique_name(name, "GraphProcessPoint")

    def fnode(self, input_num: int, output_num: int, name: str | None = None):
        from dfir.dataflow.graph import FlowNode
        node = FlowNode(input_num, output_num, name)
        node.add_process_point(self)
        return node
