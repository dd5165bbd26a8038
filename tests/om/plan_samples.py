"""Real pipelines whose compiled plans the plan tests take apart: each `SAMPLES` entry compiles a
graph (in `folder`, where it writes any deploy, resource or project files) to `.om` bytes, and
lists feeds that run it."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.ge.graph import Graph


class Sample(NamedTuple):
    om: bytes
    feed: list[np.ndarray]


@df.pyflow
def inc(x):
    return x + 1


@df.pyflow
def add(x, y):
    return x + y


@df.pyflow(num_returns=2)
def split(x):
    return x - 1, x + 1


def pyflow_chain(folder: Path) -> Sample:
    """x, y -> add -> inc -> split: a chain of @pyflow nodes with two outputs."""
    x = df.FlowData(name="x")
    y = df.FlowData(name="y")
    low, high = split.fnode()(inc.fnode()(add.fnode()(x, y)))
    graph = df.FlowGraph([high, low], name="chain")
    return Sample(dfir.compile(graph).om, [np.int32([1, 2]), np.int32([10, 20])])


def mlp_graph() -> Graph:
    g = Graph("mlp")
    x = g.data(0, shape=[2, 4], dtype=dt.DT_FLOAT, name="x")
    w = g.const(np.arange(8, dtype=np.float32).reshape(4, 2), name="w")
    b = g.const(np.float32([1, -20]), name="b")
    g.set_outputs([g.reshape(g.relu(g.add(g.matmul(x, w), b), name="act"), [-1], name="flat")])
    return g


def ge_graph_node(folder: Path) -> Sample:
    """x -> inc -> a GE graph (consts, a planned arena, a view) as a node."""
    mlp = df.GraphProcessPoint(df.Framework.ONNX, mlp_graph()).fnode(1, 1, name="mlp_node")
    graph = df.FlowGraph([mlp(inc.fnode()(df.FlowData(name="x")))], name="ge")
    return Sample(dfir.compile(graph).om, [np.ones((2, 4), np.float32)])


def _write_json(path: Path, document) -> str:
    path.write_text(json.dumps(document))
    return str(path)


def replicated_aligned(folder: Path) -> Sample:
    """x -> scatter -> (left on 2 devices, right) -> pair (aligned), gather-free: replicas,
    route-label dispatch, alignment on the graph and on the pairing node."""
    x = df.FlowData(name="x")
    scatter = inc.fnode().set_alias("scatter")
    scatter.set_balance_scatter()
    left, right = inc.fnode().set_alias("left"), inc.fnode().set_alias("right")
    pair = add.fnode().set_alias("pair")
    head = scatter(x)
    graph = df.FlowGraph([pair(left(head), right(head))], name="aligned")
    graph.set_inputs_align_attrs(16, 60000, False)
    deploy = {"batch_deploy_info": [
        {"flow_node_list": ["scatter"], "logic_device_list": "-1"},
        {"flow_node_list": ["left"], "logic_device_list": "0:0:0~1"},
        {"flow_node_list": ["right"], "logic_device_list": "0:0:1"},
        {"flow_node_list": ["pair"], "logic_device_list": "0:0:0"}]}
    resources = {"cluster": [{"cluster_nodes": [{"node_id": 0, "node_type": "x86", "ipaddr": "127.0.0.1",
                                                 "item_list": [{"item_id": 0}, {"item_id": 1}]}]}]}
    options = {"ge.experiment.data_flow_deploy_info_path": _write_json(folder / "deploy.json", deploy),
               "ge.resourceConfigPath": _write_json(folder / "resources.json", resources)}
    return Sample(dfir.compile(graph, options).om, [np.int64([3])])


PROJECT_SOURCE = '''
import dfir.flow_func as ff


class Add:
    def __init__(self):
        self.scale = 0

    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        ret, self.scale = meta_params.get_attr_int("scale")
        return ret

    @ff.proc_wrapper()
    def Add1(self, run_context, input_flow_msgs):
        a, b = (msg.get_tensor().numpy() for msg in input_flow_msgs)
        ret, outs = run_context.run_flow_model("invoke_graph", input_flow_msgs, 1000)
        if ret != ff.FLOW_FUNC_SUCCESS:
            return ret
        total = outs[0].get_tensor().numpy() + a * 0 + b * 0 + self.scale
        out = run_context.alloc_tensor_msg(list(total.shape), outs[0].get_tensor().get_data_type())
        out.get_tensor().numpy()[...] = total
        return run_context.set_output(0, out)
'''


def closure_graph() -> Graph:
    g = Graph("add_graph")
    g.set_outputs([g.add(g.data(0, shape=[2], dtype=dt.DT_INT32, name="x"),
                         g.data(1, shape=[2], dtype=dt.DT_INT32, name="y"))])
    return g


def udf_project(folder: Path) -> Sample:
    """in0, in1 -> a Python UDF project with an init param and an invoked GE graph."""
    sources = folder / "add_ws" / "src_python"
    sources.mkdir(parents=True, exist_ok=True)
    (sources / "func_add.py").write_text(textwrap.dedent(PROJECT_SOURCE))
    config = {"func_list": [{"func_name": "Add1", "inputs_index": [0, 1], "outputs_index": [0]}],
              "input_num": 2, "output_num": 1, "workspace": "./add_ws", "target_bin": "libfunc_add.so",
              "py_module": "func_add", "py_class": "Add"}
    pp = df.FuncProcessPoint(compile_config_path=_write_json(folder / "add_func.json", config))
    pp.set_init_param("scale", 5)
    pp.set_init_param("mode", [1.5, 2.5])
    pp.add_invoked_closure("invoke_graph", df.GraphProcessPoint(df.Framework.ONNX, closure_graph()))
    node = df.FlowNode(input_num=2, output_num=1, name="add")
    node.add_process_point(pp)
    graph = df.FlowGraph([node(df.FlowData(name="in0"), df.FlowData(name="in1"))], name="project")
    return Sample(dfir.compile(graph).om, [np.int32([1, 2]), np.int32([3, 4])])


SAMPLES: dict[str, Callable[[Path], Sample]] = {
    "pyflow_chain": pyflow_chain, "ge_graph_node": ge_graph_node,
    "replicated_aligned": replicated_aligned, "udf_project": udf_project,
}
