"""Helpers shared by the UDF-project tests (Python and C++ projects build the same graphs)."""
from pathlib import Path

import numpy as np

import dfir.data_type as dt
import dfir.dataflow as df
from dfir.ge.graph import Graph


def project_graph(config: Path, input_num: int, output_num: int, params: dict | None = None,
                  closures: dict | None = None, name: str = "add") -> df.FlowGraph:
    inputs = [df.FlowData(name=f"in{i}") for i in range(input_num)]
    pp = df.FuncProcessPoint(compile_config_path=str(config))
    for key, value in (params or {}).items():
        pp.set_init_param(key, value)
    for key, graph in (closures or {}).items():
        pp.add_invoked_closure(key, df.GraphProcessPoint(df.Framework.ONNX, graph))
    node = df.FlowNode(input_num=input_num, output_num=output_num, name=name)
    node.add_process_point(pp)
    outputs = node(*inputs)
    return df.FlowGraph(list(outputs) if isinstance(outputs, tuple) else [outputs], name="g")


def int32(*values):
    return np.array(values, dtype=np.int32)


def add_graph() -> Graph:
    g = Graph("add_graph")
    x = g.data(0, shape=[2], dtype=dt.DT_INT32, name="x")
    y = g.data(1, shape=[2], dtype=dt.DT_INT32, name="y")
    g.set_outputs([g.add(x, y)])
    return g


def catching(graph: df.FlowGraph) -> df.FlowGraph:
    """`graph` with exception catch on (and the input alignment GE requires with it)."""
    graph.set_inputs_align_attrs(8, 1000)
    graph.set_exception_catch(True)
    return graph


def assert_raise_stops_a_graph_that_does_not_catch(model, code: int, udf: str, context: int) -> None:
    """The first transaction of `model` fails with the raised `code`, aborting the model (GE's UDF
    process exits when it raises an exception its graph does not catch)."""
    outputs, info, got = model.fetch_data(timeout=5000)
    assert (outputs, info.transaction_id, got, got.message) == (
        [], 1, code, f"the model was aborted by UDF {udf}, which raised exception {code} (user context id "
                     f"{context}) in a graph that does not catch exceptions: call FlowGraph.set_exception_catch(True)")
