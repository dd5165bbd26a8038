"""The options and files that say how a model survives faults reach its plan: `dfir.runtime.recover`
(the plan's `recover`) and the timeout of UDF calls (`udf_timeouts`), from the option
`dfir.runtime.udf_timeout_ms`, a deploy info entry and a UDF project's compile config, the most
specific winning."""
from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.core.errors import GeError
from dfir.dialects.df import NodeOp
from dfir.driver.job import make_context
from dfir.frontend.dataflow import names
from dfir.frontend.deploy import load_deploy_info
from dfir.frontend.options import validate_options
from dfir.ge.graph import Graph
from dfir.om.plan import Plan
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om

RECOVER = "dfir.runtime.recover"
TIMEOUT = "dfir.runtime.udf_timeout_ms"
DEPLOY = "ge.experiment.data_flow_deploy_info_path"


@df.pyflow
def inc(x):
    return x + 1


@df.pyflow
def double(x):
    return x * 2


def plan_of(om: bytes) -> Plan:
    model = read_om(om).models[0]
    return Plan.from_json(bytes(next(p.data for p in model.partitions if p.type == PartitionType.FLOW_MODEL)))


def chain(options: dict | None = None) -> df.FlowGraph:
    """x -> inc ("first", alias "head") -> double ("second") -> a GE graph ("scale")."""
    names.reset()
    first = inc.fnode(name="first")
    first.set_alias("head")
    second = double.fnode(name="second")
    g = Graph("scale")
    g.set_outputs([g.mul(g.data(0, shape=[2], dtype=dt.DT_INT32, name="x"),
                         g.const(np.int32([3, 3]), name="three"))])
    scale = df.GraphProcessPoint(df.Framework.ONNX, g).fnode(1, 1, name="scale")
    return df.FlowGraph([scale(second(first(df.FlowData(name="x"))))], options or {}, name="chain")


def write_json(path: Path, document) -> str:
    path.write_text(json.dumps(document))
    return str(path)


def deploy_file(tmp_path: Path, *entries: dict) -> str:
    return write_json(tmp_path / "deploy.json", {"batch_deploy_info": [
        {"logic_device_list": "-1", **entry} for entry in entries]})


# -- the options ----------------------------------------------------------------------------------

@pytest.mark.parametrize("key, value, problem", [
    (RECOVER, "retry", "expected one of ['restart', 'off']"),
    (RECOVER, "", "expected one of ['restart', 'off']"),
    (TIMEOUT, "0", "expected a timeout in [1, 86400000] (milliseconds)"),
    (TIMEOUT, "86400001", "expected a timeout in [1, 86400000] (milliseconds)"),
    (TIMEOUT, "5s", "expected a timeout in [1, 86400000] (milliseconds)"),
    (TIMEOUT, "-5", "expected a timeout in [1, 86400000] (milliseconds)"),
    (TIMEOUT, "", "expected a timeout in [1, 86400000] (milliseconds)"),
    (TIMEOUT, "١٠", "expected a timeout in [1, 86400000] (milliseconds)"),
])
def test_a_malformed_value_is_refused_saying_what_is_expected(key, value, problem):
    with pytest.raises(GeError) as caught:
        validate_options({key: value}, "dfir.compile")
    assert caught.value.error_message == f"option {key} has malformed value {value!r}: {problem}"
    assert caught.value.context == {"option": key}


@pytest.mark.parametrize("options", [{RECOVER: "restart"}, {RECOVER: "off"}, {TIMEOUT: "1"},
                                     {TIMEOUT: "86400000"}, {TIMEOUT: "250", RECOVER: "off"}])
def test_well_formed_values_are_accepted(options):
    assert validate_options(options, "dfir.compile") == options


def test_a_misspelled_key_is_refused_naming_the_closest():
    with pytest.raises(GeError) as caught:
        validate_options({"dfir.runtime.udf_timeout": "10"}, "dfir.compile")
    assert caught.value.error_message.startswith(
        "unknown option dfir.runtime.udf_timeout (did you mean dfir.runtime.udf_timeout_ms?); known options: ")


# -- the plan -------------------------------------------------------------------------------------

def test_without_the_options_the_plan_restarts_and_has_no_timeouts():
    plan = plan_of(dfir.compile(chain()).om)
    assert (plan.recover, dict(plan.udf_timeouts)) == ("restart", {})
    assert [plan.udf_timeout_ms(n) for n in range(3)] == [None, None, None]
    assert {"recover", "udf_timeouts"}.isdisjoint(plan.to_json())


def test_the_options_reach_every_udf_node_but_not_a_ge_graph_node():
    plan = plan_of(dfir.compile(chain(), {RECOVER: "off", TIMEOUT: "1500"}).om)
    assert [node.name for node in plan.nodes] == ["first", "second", "scale"]
    assert plan.recover == "off"
    assert dict(plan.udf_timeouts) == {"first": 1500, "second": 1500}
    assert [plan.udf_timeout_ms(n) for n in range(3)] == [1500, 1500, None]


def test_the_graphs_own_options_reach_the_plan_and_the_compiles_override_them():
    graph = chain({TIMEOUT: "700", RECOVER: "off"})
    plan = plan_of(dfir.compile(graph).om)
    assert (plan.recover, dict(plan.udf_timeouts)) == ("off", {"first": 700, "second": 700})
    plan = plan_of(dfir.compile(graph, {TIMEOUT: "900", RECOVER: "restart"}).om)
    assert (plan.recover, dict(plan.udf_timeouts)) == ("restart", {"first": 900, "second": 900})


def test_the_plan_writes_the_fields_only_when_set_and_reads_them_back():
    plan = plan_of(dfir.compile(chain(), {RECOVER: "off", TIMEOUT: "20"}).om)
    document = plan.to_json()
    assert (document["recover"], document["udf_timeouts"]) == ("off", {"first": 20, "second": 20})
    assert Plan.from_json(plan.to_bytes()) == plan
    assert Plan.of(document) == plan
    restarting = replace(plan, recover="restart", udf_timeouts={})
    assert {"recover", "udf_timeouts"}.isdisjoint(restarting.to_json())
    assert Plan.from_json(restarting.to_bytes()) == restarting


@pytest.mark.parametrize("change, message", [
    ({"udf_timeouts": {"third": 5}}, 'plan.udf_timeouts.third: no node is named "third"; the nodes are '
                                     '["first","scale","second"]'),
    ({"udf_timeouts": {"scale": 5}}, 'plan.udf_timeouts.scale: node "scale" runs a GE graph; only a UDF node '
                                     'has a timeout'),
    ({"udf_timeouts": {"first": 86_400_001}}, "plan.udf_timeouts.first: 86400001 is out of range [1, 86400000]"),
    ({"recover": "later"}, 'plan.recover: "later" is not one of "restart", "off"'),
])
def test_a_plan_naming_no_udf_node_or_out_of_range_is_refused(change, message):
    plan = plan_of(dfir.compile(chain()).om)
    with pytest.raises(GeError) as caught:
        replace(plan, **change).check()
    assert caught.value.error_message == message
    with pytest.raises(GeError) as caught:
        Plan.from_json({**plan.to_json(), **change})
    assert caught.value.error_message == message


# -- the deploy info ------------------------------------------------------------------------------

def test_a_deploy_entry_times_the_udf_nodes_it_places_over_the_option(tmp_path):
    deploy = deploy_file(tmp_path, {"flow_node_list": ["first", "scale"], "udf_timeout_ms": 40},
                         {"flow_node_list": ["second"]})
    plan = plan_of(dfir.compile(chain({DEPLOY: deploy})).om)
    assert dict(plan.udf_timeouts) == {"first": 40}
    plan = plan_of(dfir.compile(chain({DEPLOY: deploy}), {TIMEOUT: "3000"}).om)
    assert dict(plan.udf_timeouts) == {"first": 40, "second": 3000}


def test_a_deploy_entry_may_name_a_node_by_its_alias(tmp_path):
    deploy = deploy_file(tmp_path, {"flow_node_list": ["head"], "udf_timeout_ms": 60},
                         {"flow_node_list": ["second", "scale"], "udf_timeout_ms": 61})
    plan = plan_of(dfir.compile(chain({DEPLOY: deploy})).om)
    assert dict(plan.udf_timeouts) == {"first": 60, "second": 61}


@pytest.mark.parametrize("value, problem", [
    (0, "expected a timeout in [1, 86400000] (milliseconds), got 0"),
    (86_400_001, "expected a timeout in [1, 86400000] (milliseconds), got 86400001"),
    ("40", 'expected an integer, got a string "40"'),
    (True, "expected an integer, got a boolean true"),
])
def test_a_bad_deploy_timeout_is_refused_naming_the_file_and_key(tmp_path, value, problem):
    deploy = deploy_file(tmp_path, {"flow_node_list": ["first"], "udf_timeout_ms": value})
    with pytest.raises(GeError) as caught:
        load_deploy_info(deploy)
    assert str(caught.value) == f"file={deploy}; $.batch_deploy_info[0].udf_timeout_ms: {problem}"


def test_a_single_node_entry_takes_no_timeout(tmp_path):
    deploy = write_json(tmp_path / "deploy.json", {"deploy_info": [
        {"flow_node_name": "first", "logic_device_id": "-1", "udf_timeout_ms": 5}]})
    with pytest.raises(GeError) as caught:
        load_deploy_info(deploy)
    assert str(caught.value) == (f"file={deploy}; $.deploy_info[0]: unknown key 'udf_timeout_ms'; expected one of "
                                 "flow_node_name, logic_device_id")


def sub_flow_graph_chain(deploy: str) -> df.FlowGraph:
    """x -> "sub", a node running a sub-FlowGraph of two UDF nodes ("a", "b") -> "after"."""
    names.reset()
    a, b = inc.fnode(name="a"), double.fnode(name="b")
    inner = df.FlowGraph([b(a(df.FlowData(name="y")))], name="inner")
    sub = df.FlowNode(1, 1, name="sub")
    sub.add_process_point(df.FlowGraphProcessPoint(inner, name="inner_pp"))
    after = inc.fnode(name="after")
    return df.FlowGraph([after(sub(df.FlowData(name="x")))], {DEPLOY: deploy}, name="outer")


def test_the_nodes_of_a_sub_flow_graph_take_the_timeout_of_the_node_running_it(tmp_path):
    graph = sub_flow_graph_chain(deploy_file(tmp_path, {"flow_node_list": ["sub"], "udf_timeout_ms": 70},
                                             {"flow_node_list": ["after"]}))
    plan = plan_of(dfir.compile(graph).om)
    assert dict(plan.udf_timeouts) == {"sub/a": 70, "sub/b": 70}


def test_a_nested_deploy_file_times_its_nodes_over_the_parents_entry(tmp_path):
    write_json(tmp_path / "inner.json", {"batch_deploy_info": [
        {"flow_node_list": ["a"], "logic_device_list": "-1", "udf_timeout_ms": 11},
        {"flow_node_list": ["b"], "logic_device_list": "-1"}]})
    graph = sub_flow_graph_chain(deploy_file(
        tmp_path, {"flow_node_list": ["sub"], "udf_timeout_ms": 70,
                   "invoke_list": [{"invoke_name": "inner_pp", "deploy_info_file": "inner.json"}]},
        {"flow_node_list": ["after"], "udf_timeout_ms": 90}))
    plan = plan_of(dfir.compile(graph).om)
    assert dict(plan.udf_timeouts) == {"sub/a": 11, "sub/b": 70, "after": 90}


# -- the compile config of a UDF project ----------------------------------------------------------

PROJECT_SOURCE = '''
import dfir.flow_func as ff


class Add:
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper()
    def Add1(self, run_context, input_flow_msgs):
        a, b = (msg.get_tensor().numpy() for msg in input_flow_msgs)
        out = run_context.alloc_tensor_msg(list(a.shape), input_flow_msgs[0].get_tensor().get_data_type())
        out.get_tensor().numpy()[...] = a + b
        return run_context.set_output(0, out)
'''


def project_config(folder: Path, **extra) -> str:
    sources = folder / "add_ws" / "src_python"
    sources.mkdir(parents=True, exist_ok=True)
    (sources / "func_add.py").write_text(textwrap.dedent(PROJECT_SOURCE))
    return write_json(folder / "add_func.json", {
        "func_list": [{"func_name": "Add1"}], "input_num": 2, "output_num": 1, "workspace": "./add_ws",
        "py_module": "func_add", "py_class": "Add", **extra})


def project_chain(config: str, options: dict | None = None) -> df.FlowGraph:
    """in0, in1 -> "add" (the UDF project) -> inc ("after")."""
    names.reset()
    pp = df.FuncProcessPoint(compile_config_path=config)
    node = df.FlowNode(input_num=2, output_num=1, name="add")
    node.add_process_point(pp)
    after = inc.fnode(name="after")
    return df.FlowGraph([after(node(df.FlowData(name="in0"), df.FlowData(name="in1")))], options or {},
                        name="project")


def test_a_compile_config_times_its_node_over_the_deploy_entry_and_the_option(tmp_path):
    config = project_config(tmp_path, udf_timeout_ms=25)
    deploy = deploy_file(tmp_path, {"flow_node_list": ["add", "after"], "udf_timeout_ms": 50})
    plan = plan_of(dfir.compile(project_chain(config, {DEPLOY: deploy}), {TIMEOUT: "100"}).om)
    assert dict(plan.udf_timeouts) == {"add": 25, "after": 50}
    plan = plan_of(dfir.compile(project_chain(config), {TIMEOUT: "100"}).om)
    assert dict(plan.udf_timeouts) == {"add": 25, "after": 100}
    plan = plan_of(dfir.compile(project_chain(project_config(tmp_path))).om)
    assert dict(plan.udf_timeouts) == {}


def test_a_timed_project_runs(tmp_path):
    om = dfir.compile(project_chain(project_config(tmp_path, udf_timeout_ms=60_000))).om
    with dfir.load(om) as model:
        assert model.feed_data([np.int32([1, 2]), np.int32([3, 4])], timeout=10_000) == 0
        outputs, _, ret = model.fetch_data(timeout=10_000)
    assert (ret, [np.asarray(o).tolist() for o in outputs]) == (0, [[5, 7]])


# -- the compile cache ----------------------------------------------------------------------------

def test_each_timeout_source_is_part_of_the_compile_cache_key(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    options = {"ge.graph_compiler_cache_dir": str(cache), "ge.graph_key": "timeouts"}
    config = project_config(tmp_path, udf_timeout_ms=25)
    deploy = deploy_file(tmp_path, {"flow_node_list": ["add", "after"], "udf_timeout_ms": 50})

    def timeouts(extra: dict | None = None) -> dict:
        graph = project_chain(config, {DEPLOY: deploy})
        return dict(plan_of(dfir.compile(graph, {**options, **(extra or {})}).om).udf_timeouts)

    assert timeouts() == {"add": 25, "after": 50}
    assert timeouts({RECOVER: "off"}) == {"add": 25, "after": 50}
    Path(config).write_text(json.dumps({**json.loads(Path(config).read_text()), "udf_timeout_ms": 26}))
    assert timeouts() == {"add": 26, "after": 50}
    Path(deploy).write_text(json.dumps({"batch_deploy_info": [
        {"flow_node_list": ["add", "after"], "logic_device_list": "-1", "udf_timeout_ms": 51}]}))
    assert timeouts() == {"add": 26, "after": 51}
    Path(config).write_text(json.dumps({key: value for key, value in json.loads(Path(config).read_text()).items()
                                        if key != "udf_timeout_ms"}))
    assert timeouts({TIMEOUT: "7"}) == {"add": 51, "after": 51}
    compiled = dfir.compile(project_chain(config, {DEPLOY: deploy}), {**options, RECOVER: "off"})
    assert plan_of(compiled.om).recover == "off"
    assert plan_of(dfir.compile(project_chain(config, {DEPLOY: deploy}), options).om).recover == "restart"


# -- the IR ---------------------------------------------------------------------------------------

def test_place_nodes_writes_the_deploy_timeout_on_each_instance_of_a_udf_node(tmp_path):
    resources = write_json(tmp_path / "resources.json", {"cluster": [{"cluster_nodes": [
        {"node_id": 0, "node_type": "x86", "ipaddr": "127.0.0.1", "item_list": [{"item_id": 0}, {"item_id": 1}]}]}]})
    deploy = write_json(tmp_path / "deploy.json", {"batch_deploy_info": [
        {"flow_node_list": ["first", "scale"], "logic_device_list": "0:0:0~1", "udf_timeout_ms": 40},
        {"flow_node_list": ["second"], "logic_device_list": "-1"}]})
    module = dfir.compile(chain({DEPLOY: deploy, "ge.resourceConfigPath": resources}), stop_after="place").module
    timeouts = [(node.node_name.data, None if node.udf_timeout_ms is None else node.udf_timeout_ms.value.data)
                for node in module.walk() if isinstance(node, NodeOp)]
    assert sorted(timeouts) == [("first", 40), ("first", 40), ("scale", None), ("scale", None), ("second", None)]


NODE_IR = '''builtin.module {{
  df.func_pp @p [#df.func<"f"(0) -> (0)>] {{kind = "py_func"}} payload "AA=="
  df.graph @g {{
    %0 = df.data "x" index 0
    %1 = df.node "n"(%0) pp @p {{udf_timeout_ms = {ms} : i64}} : 1 -> 1
    df.output %1
  }}
}}'''
PROJECT_IR = '''builtin.module {{
  df.func_pp @p [#df.func<"Add1"(0) -> (0)>] {{kind = "py_project", compile_config = "add.json",
      project = {{py_class = "Add", py_module = "func_add", udf_timeout_ms = {ms}}}}} payload "AA=="
}}'''


@pytest.mark.parametrize("ir, ms, message", [
    (NODE_IR, "0", 'node "n": udf_timeout_ms 0: expected a timeout in [1, 86400000] (milliseconds)'),
    (PROJECT_IR, '"0"', 'df.func_pp @p: project.udf_timeout_ms "0": expected a timeout in [1, 86400000] '
                        '(milliseconds), as a string'),
    (PROJECT_IR, '"5s"', 'df.func_pp @p: project.udf_timeout_ms "5s": expected a timeout in [1, 86400000] '
                         '(milliseconds), as a string'),
    (PROJECT_IR, "5 : i64", "df.func_pp @p: project.udf_timeout_ms 5 : i64: expected a timeout in [1, 86400000] "
                            "(milliseconds), as a string"),
])
def test_the_verifier_refuses_a_timeout_out_of_range(ir, ms, message):
    module = Parser(make_context(), ir.format(ms=ms)).parse_module()
    with pytest.raises(VerifyException) as caught:
        module.verify()
    assert message in str(caught.value)


@pytest.mark.parametrize("ir, ms", [(NODE_IR, "86400000"), (PROJECT_IR, '"1"')])
def test_the_verifier_takes_a_timeout_in_range(ir, ms):
    Parser(make_context(), ir.format(ms=ms)).parse_module().verify()
