"""Replication in the compiler: a node the deploy file puts on several devices becomes one df.node
per instance merged by df.gather (place phase); the plan records each instance as one of its
node's `units` (its device), the node its `dispatch`, `balance`, `align` and `invokes`
(docs/execution-plan.md)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.dialects.df import GatherOp
from dfir.dialects.df_attrs import DeviceAttr, InstanceAttr
from dfir.driver.job import make_context
from dfir.frontend.dataflow import names
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.lowering.plan import the_graph
from dfir.om.schema import PartitionType
from dfir.passes.align_inputs import AlignInputs
from dfir.passes.replicate_instances import ReplicateInstances
from dfir.runtime.om import read_om

RESOURCES = {"cluster": [{"cluster_nodes": [{"node_id": 0, "node_type": "x86", "ipaddr": "127.0.0.1",
                                              "item_list": [{"item_id": i} for i in range(4)]}]}]}
PLAN_DEFAULTS = {"instances": ["-1"], "dispatch": "round_robin", "balance": None, "align": None, "invokes": {}}


@df.pyflow
def inc(x):
    return x + 1


@df.pyflow
def add(x, y):
    return x + y


def write_json(path, document) -> str:
    path.write_text(json.dumps(document))
    return str(path)


def compile_with(graph: df.FlowGraph, tmp_path, placements: dict[str, str],
                 extra: dict[str, dict] | None = None) -> dfir.CompiledModel:
    """Compile `graph` with a deploy file placing each node of `placements` (name or alias ->
    device list) in an entry of its own; `extra` gives more keys of a node's entry."""
    deploy = {"batch_deploy_info": [{"flow_node_list": [name], "logic_device_list": devices,
                                     **(extra or {}).get(name, {})} for name, devices in placements.items()]}
    options = {"ge.experiment.data_flow_deploy_info_path": write_json(tmp_path / "deploy.json", deploy),
               "ge.resourceConfigPath": write_json(tmp_path / "resources.json", RESOURCES)}
    return dfir.compile(graph, options)


def plan_of(compiled) -> dict:
    return json.loads(bytes(read_om(compiled.om).models[0].partition(PartitionType.FLOW_MODEL).data))


def instances_of(plan: dict) -> list[list[str]]:
    """The devices of each plan node's units, in instance order."""
    devices: list[list[str]] = [[] for _ in plan["nodes"]]
    for unit in plan["units"]:
        devices[unit["node"]].append(unit["device"])
    return devices


def placements(plan: dict) -> list[dict]:
    """Each plan node's placement: its units' devices (`instances`) and deployment fields."""
    return [{**{key: node[key] for key in PLAN_DEFAULTS if key != "instances"}, "instances": devices}
            for node, devices in zip(plan["nodes"], instances_of(plan))]


def chain() -> df.FlowGraph:
    """x -> pre -> work -> post."""
    x = df.FlowData(name="x")
    pre, work, post = (inc.fnode().set_alias(alias) for alias in ("pre", "work", "post"))
    return df.FlowGraph([post(work(pre(x)))], name="chain")


def test_a_node_on_two_devices_is_one_plan_node_of_two_units(tmp_path):
    compiled = compile_with(chain(), tmp_path, {"pre": "-1", "work": "0:0:1,0:0:0", "post": "-1"})
    plan = plan_of(compiled)
    assert plan["format"] == 2
    assert [node["alias"] for node in plan["nodes"]] == ["pre", "work", "post"]
    assert plan["units"] == [{"node": 0, "instance": 0, "device": "-1"}, {"node": 1, "instance": 0, "device": "0:0:0"},
                             {"node": 1, "instance": 1, "device": "0:0:1"}, {"node": 2, "instance": 0, "device": "-1"}]
    assert placements(plan) == [PLAN_DEFAULTS, {**PLAN_DEFAULTS, "instances": ["0:0:0", "0:0:1"]}, PLAN_DEFAULTS]
    assert not any("instances" in node or "device" in node for node in plan["nodes"])
    assert [node["inputs"] for node in plan["nodes"]] == [[{"data": 0}], [{"node": 0, "port": 0}],
                                                          [{"node": 1, "port": 0}]]
    assert plan["outputs"] == [{"node": 2, "port": 0}] and plan["order"] == [0, 1, 2]
    report = str(compiled.report)
    assert ("place-nodes: placed 3 nodes as 4 instances (2 on host, 1 on 0:0:0, 1 on 0:0:1); "
            "3 by the deploy info") in report
    assert "replicate-instances: replicated 1 node into 2 instances" in report


def test_the_place_phase_leaves_instances_and_a_gather_in_the_ir(tmp_path):
    deploy = {"batch_deploy_info": [{"flow_node_list": ["pre", "post"], "logic_device_list": "-1"},
                                    {"flow_node_list": ["work"], "logic_device_list": "0:0:0~1"}]}
    options = {"ge.experiment.data_flow_deploy_info_path": write_json(tmp_path / "deploy.json", deploy)}
    graph = the_graph(dfir.compile(chain(), options, stop_after="place").module)
    pre, *work, post = graph.node_ops
    assert [n.attributes.get("alias").data for n in graph.node_ops] == ["pre", "work", "work", "post"]
    assert [(n.attributes["device"], n.attributes["instance"], n.attributes["dispatch"].data)
            for n in work] == [
        (DeviceAttr([0, 0, 0]), InstanceAttr(0, 2), "round_robin"),
        (DeviceAttr([0, 0, 1]), InstanceAttr(1, 2), "round_robin")]
    assert all(n.inputs[0] == pre.outputs[0] for n in work)
    gather = post.inputs[0].owner
    assert isinstance(gather, GatherOp) and list(gather.inputs) == [n.outputs[0] for n in work]
    assert "instance" not in pre.attributes and "instance" not in post.attributes


def test_a_node_after_a_balance_scatter_dispatches_by_route_label(tmp_path):
    x = df.FlowData(name="x")
    scatter, work, gather = (inc.fnode().set_alias(alias) for alias in ("scatter", "work", "gather"))
    scatter.set_balance_scatter()
    gather.set_balance_gather()
    graph = df.FlowGraph([gather(work(scatter(x)))])
    plan = plan_of(compile_with(graph, tmp_path, {"scatter": "-1", "work": "0:0:0~1", "gather": "-1"}))
    assert placements(plan) == [
        {**PLAN_DEFAULTS, "balance": "scatter"},
        {**PLAN_DEFAULTS, "instances": ["0:0:0", "0:0:1"], "dispatch": "route_label"},
        {**PLAN_DEFAULTS, "balance": "gather"}]


def test_alignment_goes_to_every_node_that_pairs_inputs(tmp_path):
    x = df.FlowData(name="x")
    left, right = inc.fnode().set_alias("left"), inc.fnode().set_alias("right")
    pair = add.fnode().set_alias("pair")
    graph = df.FlowGraph([pair(left(x), right(x))], name="aligned")
    graph.set_inputs_align_attrs(256, 60000, True)
    compiled = compile_with(graph, tmp_path, {"left": "0:0:0~1", "right": "0:0:2", "pair": "0:0:2~3"})
    plan = plan_of(compiled)
    align = {"cache": 256, "timeout": 60000, "dropout": True}
    assert plan["align"] == align
    assert [(node["alias"], devices, node["align"]) for node, devices in zip(plan["nodes"], instances_of(plan))] == [
        ("left", ["0:0:0", "0:0:1"], None), ("right", ["0:0:2"], None), ("pair", ["0:0:2", "0:0:3"], align)]
    assert plan["nodes"][2]["inputs"] == [{"node": 0, "port": 0}, {"node": 1, "port": 0}]
    assert "align-inputs: aligned 1 node" in str(compiled.report)


def test_alignment_with_a_cache_of_zero_is_off():
    graph = df.FlowGraph([add.fnode()(inc.fnode()(x := df.FlowData(name="x")), x)])
    graph.set_inputs_align_attrs(0, -1)
    compiled = dfir.compile(graph)
    assert [node["align"] for node in plan_of(compiled)["nodes"]] == [None, None]
    assert "align-inputs: input alignment is off (cache 0)" in str(compiled.report)
    assert "align-inputs: no graph sets input alignment" in str(dfir.compile(chain()).report)


def _summary(compiler_pass, text: str) -> str:
    from xdsl.parser import Parser
    module = Parser(make_context(), text).parse_module()
    compiler_pass.apply(make_context(), module)
    module.verify()
    return compiler_pass.summary(module)


ALIGNED_IR = """
df.func_pp @add_pp [#df.func<"add"(0, 1) -> (0)>] {kind = "py_func"}
df.func_pp @stream_pp [#df.func<"merge"(0, 1) -> (0), stream_input>] {kind = "py_func"}
df.graph @g attributes {align = #df.align<cache = 4, timeout = -1>} {
  %x = df.data "x" index 0
  %a = df.node "a"(%x, %x) pp @add_pp {devices = [#df.device<0:0:0>, #df.device<0:0:1>]} : 2 -> 1
  %b = df.node "b"(%a, %x) pp @add_pp : 2 -> 1
  %s = df.node "s"(%a, %b) pp @stream_pp : 2 -> 1
  df.output %s
}
"""


def test_the_summaries_count_logical_nodes():
    from xdsl.parser import Parser
    module = Parser(make_context(), ALIGNED_IR).parse_module()
    ReplicateInstances().apply(make_context(), module)
    assert ReplicateInstances().summary(module) == "replicated 1 node into 2 instances"
    AlignInputs().apply(make_context(), module)
    module.verify()
    assert AlignInputs().summary(module) == "aligned 2 nodes; 1 stream-input node skipped"
    assert ReplicateInstances().summary(Parser(make_context(), ALIGNED_IR).parse_module()) == \
        "no node has several devices"


def invoking_graph() -> df.FlowGraph:
    """x -> caller (alias "caller"), whose UDF may invoke GE graph "relu" by key "called"."""
    graph = Graph("relu")
    graph.set_outputs([graph.relu(graph.data(0, shape=[2], dtype=dt.DT_FLOAT, name="x"))])
    caller = df.FuncProcessPoint(py_func=inc, name="caller_pp")
    caller.add_invoked_closure("called", df.GraphProcessPoint(df.Framework.ONNX, graph, name="called"))
    node = df.FlowNode(1, 1, name="caller")
    node.add_process_point(caller)
    return df.FlowGraph([node(df.FlowData(name="x"))])


def test_invoke_devices_are_recorded(tmp_path):
    invokes = {"caller": {"invoke_list": [{"invoke_name": "called", "logic_device_list": "0:0:2~3"}]}}
    plan = plan_of(compile_with(invoking_graph(), tmp_path, {"caller": "0:0:0~1"}, invokes))
    assert placements(plan) == [{**PLAN_DEFAULTS, "instances": ["0:0:0", "0:0:1"],
                                 "invokes": {"called": ["0:0:2", "0:0:3"]}}]


def test_an_invoke_of_no_closure_is_refused(tmp_path):
    invokes = {"caller": {"invoke_list": [{"invoke_name": "calld", "logic_device_list": "0:0:1"}]}}
    with pytest.raises(GeError) as error:
        compile_with(invoking_graph(), tmp_path, {"caller": "0:0:0"}, invokes)
    assert str(error.value) == (
        f"dfir.compile failed; file={tmp_path / 'deploy.json'}; $.batch_deploy_info[0].invoke_list[0]"
        ".invoke_name: node 'caller' has no invoked closure 'calld'; its closures are ['called']")


def test_an_invoke_placed_by_a_deploy_file_is_refused(tmp_path):
    sub = {"deploy_info": [{"flow_node_name": "inner", "logic_device_id": "0:0:1"}]}
    write_json(tmp_path / "sub.json", sub)
    invokes = {"caller": {"invoke_list": [{"invoke_name": "called", "deploy_info_file": "sub.json"}]}}
    with pytest.raises(GeError) as error:
        compile_with(invoking_graph(), tmp_path, {"caller": "0:0:0"}, invokes)
    assert str(error.value) == (
        f"dfir.compile failed; file={tmp_path / 'deploy.json'}; $.batch_deploy_info[0].invoke_list[0]"
        ".deploy_info_file: invoke 'called' runs an AscendGraph; a deploy_info_file places a "
        "sub-FlowGraph: give logic_device_list")


def test_an_invoked_ge_graph_needs_one_device_per_instance(tmp_path):
    invokes = {"caller": {"invoke_list": [{"invoke_name": "called", "logic_device_list": "0:0:1"}]}}
    with pytest.raises(GeError) as error:
        compile_with(invoking_graph(), tmp_path, {"caller": "0:0:0,0:0:1"}, invokes)
    assert str(error.value) == (
        f"dfir.compile failed; file={tmp_path / 'deploy.json'}; $.batch_deploy_info[0].invoke_list[0]"
        ".logic_device_list: invoke 'called' runs an AscendGraph and lists 1 device but its parent has "
        "2 instances ('0:0:0,0:0:1'); give one device per parent instance")


def test_a_replicated_graph_compiles_to_the_same_bytes_twice(tmp_path):
    placements = {"pre": "-1", "work": "0:0:0~3", "post": "0:0:1,0:0:2"}
    names.reset()
    first = compile_with(chain(), tmp_path, placements).om
    names.reset()
    assert compile_with(chain(), tmp_path, placements).om == first


def test_a_replicated_node_runs(tmp_path):
    """Whatever instance a message reaches, it is computed once and comes out once."""
    compiled = compile_with(chain(), tmp_path, {"pre": "-1", "work": "0:0:0~1", "post": "-1"})
    with dfir.load(compiled.om) as model:
        for value in range(4):
            model.feed_data({"x": np.array([value])})
        results = sorted(int(model.fetch_data(timeout=5000)[0][0].numpy()[0]) for _ in range(4))
    assert results == [3, 4, 5, 6]
