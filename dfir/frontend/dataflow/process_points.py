"""Process points: what a FlowNode runs — a UDF (FuncProcessPoint), a GE graph
(GraphProcessPoint) or a FlowGraph (FlowGraphProcessPoint, a sub-FlowGraph)."""
from __future__ import annotations

import os
from enum import Enum, auto
from typing import Any

from dfir.core.errors import GeError
from dfir.core.udf_params import typed_param
from dfir.frontend.dataflow import names
from dfir.frontend.dataflow.flow_graph import FlowGraph
from dfir.frontend.dataflow.graph import FlowNode, ProcessPoint
from dfir.frontend.source import user_location
from dfir.frontend.dataflow.udf_spec import udf_spec_of
from dfir.frontend.ge.graph import Graph
from dfir.frontend.ge.tensorflow_import import refuse_mindspore, tensorflow_graph
from dfir.frontend.udf.workspace import create_class_workspace


class Framework(Enum):
    TENSORFLOW = auto()
    ONNX = auto()
    MINDSPORE = auto()

class FuncProcessPoint(ProcessPoint):
    """A UDF: built by `@pyflow` (with a `UdfPayload`), from a UDF project's compile config, or,
    as in GE, from a class whose procs carry I/O specs (`py_func=Class`, whose workspace with its
    compile config `dfir.frontend.udf.workspace` writes into `workspace_dir`, default
    `./<Class>_ws`)."""

    def __init__(self, compile_config_path: str | None = None, name: str | None = None,
                 py_func: Any = None, workspace_dir: str | None = None):
        self.compile_config_path = compile_config_path
        self.workspace_dir = workspace_dir
        self.name = names.unique_name(name, "FuncProcessPoint", user_location())
        self.init_params: dict[str, Any] = {}  # name -> dfir.core.udf_params.InitParam
        self.invoked_closures: dict[str, Any] = {}
        self.udf = None  # a UdfSpec when built by @pyflow
        if _is_project_class(py_func):
            self.compile_config_path = str(create_class_workspace(py_func, workspace_dir))
        elif py_func is not None:
            self.udf = udf_spec_of(py_func)
        elif compile_config_path is None:
            raise GeError(f"FuncProcessPoint {self.name}: give compile_config_path or py_func")

    def set_init_param(self, attr_name: str, attr_value) -> None:
        """Give the UDF an init param, read back by `MetaParams.get_attr_*` with its type kept.

        Values: str, int, float, bool or DType, a list of one of those, or a list of lists of int
        (`dfir.core.udf_params`); anything else is a GeError naming the param.
        """
        where = f"FuncProcessPoint {self.name}"
        if not isinstance(attr_name, str) or not attr_name:
            raise GeError(f"{where}: init param name must be a non-empty str, got {attr_name!r}")
        self.init_params[attr_name] = typed_param(attr_name, attr_value, where)

    def add_invoked_closure(self, graph_key: str, graph_pp=None, flow_graph_pp=None, *, pp=None) -> None:
        """Let the UDF run a GE graph (`graph_pp`) or a sub-FlowGraph (`flow_graph_pp`) with
        `run_flow_model(graph_key, ...)`; GE documents both keywords, `pp` takes either. Exactly one
        is given (positionally, the second argument)."""
        given = [p for p in (graph_pp, flow_graph_pp, pp) if p is not None]
        if len(given) != 1:
            raise GeError(f"FuncProcessPoint {self.name}: add_invoked_closure({graph_key!r}) takes one process "
                          f"point (graph_pp, flow_graph_pp or pp), got {len(given)}")
        pp = given[0]
        if not isinstance(pp, GraphProcessPoint | FlowGraphProcessPoint):
            raise GeError(f"FuncProcessPoint {self.name}: invoked closure {graph_key} must be a "
                          f"GraphProcessPoint or FlowGraphProcessPoint, got {type(pp).__name__}")
        if graph_key in self.invoked_closures:
            raise GeError(f"FuncProcessPoint {self.name}: invoked closure {graph_key} is added twice")
        self.invoked_closures[graph_key] = pp


def _is_project_class(py_func: Any) -> bool:
    """Whether `py_func` is a plain UDF class (GE's `py_func=Class`), not a `@pyflow` one."""
    return isinstance(py_func, type) and not callable(getattr(py_func, "udf_spec", None)) \
        and not hasattr(py_func, "_df_class")


class GraphProcessPoint(ProcessPoint):
    """A GE graph: an ONNX model file (`Framework.ONNX`, imported by `dfir.frontend.ge.onnx`), a frozen
    TensorFlow graph (`Framework.TENSORFLOW`, converted by `dfir.frontend.ge.tensorflow_import`) or a
    `dfir.frontend.ge.graph.Graph` built in Python (any framework)."""

    def __init__(self, framework: Framework, graph_file, load_params: dict[str, str] | None = None,
                 compile_config_path: str = "", name: str | None = None):
        if not isinstance(framework, Framework):
            raise GeError(f"GraphProcessPoint framework must be a Framework, got {framework!r}")
        if isinstance(graph_file, (str, os.PathLike)):
            if framework is Framework.MINDSPORE:
                raise refuse_mindspore(os.fspath(graph_file))
            if framework is Framework.TENSORFLOW:
                graph_file = tensorflow_graph(graph_file, load_params or {})
            else:
                graph_file = Graph.from_onnx(graph_file)
        elif not isinstance(graph_file, Graph):
            raise GeError(f"GraphProcessPoint graph_file must be a path to an ONNX file or a "
                          f"dfir.ge.graph.Graph, got {type(graph_file).__name__}")
        self.framework = framework
        self.graph = graph_file
        self.load_params = dict(load_params or {})
        self.compile_config_path = compile_config_path
        self.name = names.unique_name(name, "GraphProcessPoint", user_location())

    def fnode(self, input_num: int, output_num: int, name: str | None = None):
        node = FlowNode(input_num, output_num, name)
        node.add_process_point(self)
        return node


class FlowGraphProcessPoint(ProcessPoint):
    """A FlowGraph run as a process point: a node's (its inputs are the graph's FlowData in feed
    order, its outputs the graph's outputs) or an invoked closure's (`run_flow_model` feeds the
    FlowData and fetches the outputs)."""

    def __init__(self, flow_graph, compile_config_path: str = "", name: str | None = None):
        if not isinstance(flow_graph, FlowGraph):
            raise GeError(f"FlowGraphProcessPoint flow_graph must be a FlowGraph, got "
                          f"{type(flow_graph).__name__}")
        if compile_config_path:
            raise GeError(f"FlowGraphProcessPoint: compile_config_path '{compile_config_path}' is not "
                          "supported; a sub-FlowGraph compiles with its own graph options")
        self.flow_graph = flow_graph
        self.compile_config_path = compile_config_path
        self.name = names.unique_name(name, "FlowGraphProcessPoint", user_location())
