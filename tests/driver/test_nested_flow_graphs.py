"""Nested FlowGraphs (`FlowGraphProcessPoint`): as a node and as a UDF's invoked closure, placed by
the deploy file's `invoke_list` (the seed's example with its nested file), replicated, cached,
and the errors of nesting."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.frontend.dataflow import names
from dfir.ge.error import GeError
from dfir.om.plan import ClosureRef, DataRef, NodeRef, Plan
from dfir.runtime.om import read_om
from dfir.om.schema import PartitionType
from dfir.tools.cli import main as cli
from project_helpers import add_graph

DATA = Path(__file__).resolve().parents[1] / "data" / "deploy"
WAIT_MS = 10000
PROJECT_CLASS = '''
import dfir.flow_func as ff

class {cls}:
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper()
    def Call(self, run_context, input_flow_msgs):
'''
CALLER = '''
        ret, outs = run_context.run_flow_model("invoked_flow_graph_name", input_flow_msgs, 5000)
        if ret != ff.FLOW_FUNC_SUCCESS:
            return ret
        if {closures} > 1:
            ret, outs = run_context.run_flow_model("invoked_flow_graph_name1", [outs[0], input_flow_msgs[0]], 5000)
            if ret != ff.FLOW_FUNC_SUCCESS:
                return ret
        run_context.set_output(0, outs[0])
        return ff.FLOW_FUNC_SUCCESS
'''


def udf(step):
    def fn(x):
        if x[0] < 0:
            raise ValueError(f"negative input {x.tolist()}")
        return step(x)
    return df.pyflow(fn)


add_one, times_ten, double = udf(lambda x: x + 1), udf(lambda x: x * 10), udf(lambda x: x * 2)


def int32(*values):
    return np.array(values, dtype=np.int32)


def plan_of(compiled) -> Plan:
    return Plan.from_json(bytes(read_om(compiled.om).models[0].partition(PartitionType.FLOW_MODEL).data))


def unit_devices(plan: Plan, node: int) -> tuple[str, ...]:
    """The devices of node `node`'s units, in instance order."""
    return tuple(unit.device for unit in plan.units_of(node))


def fetch_all(model, count: int) -> dict[int, list]:
    """`count` results by transaction id: the outputs' values, or (ret, message) for a failure."""
    results = {}
    for _ in range(count):
        outputs, info, ret = model.fetch_data(timeout=WAIT_MS)
        results[info.transaction_id] = [o.numpy().tolist() for o in outputs] if ret == 0 else (int(ret), ret.message)
    return results


def sub_graph(name="inner", first=add_one, second=double, aliases=(None, None)) -> df.FlowGraph:
    """x, y -> first(x) + ... : `first(x)` then `second`, and y passed through `first` too."""
    x = df.FlowData(name="x")
    a = first.fnode()(x)
    b = second.fnode()(a)
    for node, alias in zip((a.node, b.node), aliases):
        if alias is not None:
            node.set_alias(alias)
    return df.FlowGraph([b], name=name)


def graph_node(sub: df.FlowGraph, name: str, point: str) -> df.FlowNode:
    node = df.FlowNode(len(sub.inputs), len(sub.outputs), name=name)
    node.add_process_point(df.FlowGraphProcessPoint(sub, name=point))
    return node


# -- a FlowGraph as a node ----------------------------------------------------------------------

def test_a_flow_graph_node_runs_its_sub_graph_flattened_into_the_plan():
    sub = sub_graph()
    x = df.FlowData(name="a")
    top = times_ten.fnode()(graph_node(sub, "sub", "inner_pp")(x))
    graph = df.FlowGraph([top], name="outer")
    compiled = dfir.compile(graph)
    plan = plan_of(compiled)
    assert [node.name for node in plan.nodes] == ["sub/fn_fnode", "sub/fn_fnode_1", "fn_fnode_2"]
    assert [node.inputs for node in plan.nodes] == [(DataRef(0),), (NodeRef(0, 0),), (NodeRef(1, 0),)]
    assert plan.outputs == (NodeRef(2, 0),) and plan.closures == ()
    with dfir.load(compiled.om) as model:
        for value in (1, -5, 3):
            model.feed_data([int32(value, value)])
        results = fetch_all(model, 3)
    assert results[1] == [[40, 40]] and results[3] == [[80, 80]]
    assert results[2] == (564000, "UDF sub/fn_fnode.fn raised ValueError: negative input [-5, -5]"
                                  f"\n  at {Path(__file__).name}:{_line_of('negative input')} in fn")


def _line_of(text: str) -> int:
    return next(i for i, line in enumerate(Path(__file__).read_text().splitlines(), 1) if text in line)


def test_sub_flow_graphs_nest_and_pass_inputs_through():
    inner = sub_graph("inner")
    middle_in = df.FlowData(name="m")
    middle = df.FlowGraph([graph_node(inner, "deep", "deep_pp")(middle_in), add_one.fnode()(middle_in)],
                          name="middle")
    x = df.FlowData(name="x")
    outputs = graph_node(middle, "mid", "middle_pp")(x)
    graph = df.FlowGraph(list(outputs), name="outer")
    compiled = dfir.compile(graph)
    assert [node.name for node in plan_of(compiled).nodes] == [
        "mid/deep/fn_fnode", "mid/deep/fn_fnode_1", "mid/fn_fnode_2"]
    assert "df.flow_graph_pp @deep_pp_pp graph @inner" in compiled.ir
    with dfir.load(compiled.om) as model:
        model.feed_data([int32(1, 2)])
        assert fetch_all(model, 1) == {1: [[4, 6], [2, 3]]}


def test_a_sub_flow_graph_node_inside_a_replicated_pipeline(tmp_path):
    deploy = tmp_path / "deploy.json"
    deploy.write_text(json.dumps({"batch_deploy_info": [
        {"flow_node_list": ["pre"], "logic_device_list": "0:0:0,0:0:1"},
        {"flow_node_list": ["sub"], "logic_device_list": "0:0:2",
         "invoke_list": [{"invoke_name": "inner_pp", "logic_device_list": "0:0:0,0:0:1"}]},
        {"flow_node_list": ["post"], "logic_device_list": "-1"}]}))
    x = df.FlowData(name="x")
    pre = add_one.fnode()(x)
    pre.node.set_alias("pre")
    post = times_ten.fnode()(graph_node(sub_graph(), "sub", "inner_pp")(pre))
    post.node.set_alias("post")
    graph = df.FlowGraph([post], {"ge.experiment.data_flow_deploy_info_path": str(deploy)}, name="replicated")
    compiled = dfir.compile(graph)
    plan = plan_of(compiled)
    assert [(node.name, unit_devices(plan, n)) for n, node in enumerate(plan.nodes)] == [
        ("fn_fnode", ("0:0:0", "0:0:1")), ("sub/fn_fnode_2", ("0:0:0", "0:0:1")),
        ("sub/fn_fnode_3", ("0:0:0", "0:0:1")), ("fn_fnode_1", ("-1",))]
    with dfir.load(compiled.om) as model:
        for value in range(6):
            model.feed_data([int32(value, 1)])
        results = fetch_all(model, 6)
    assert results == {t: [[((t - 1 + 2) * 2) * 10, 60]] for t in range(1, 7)}


# -- a FlowGraph as an invoked closure, and the seed's deploy example -----------------------------

def project_point(folder: Path, module: str, cls: str, proc: str, input_num: int) -> df.FuncProcessPoint:
    """A Python UDF project under `folder`: class `cls` whose func `Call` runs `proc` (its body)."""
    sources = folder / "ws" / "src_python"
    sources.mkdir(parents=True)
    (sources / f"{module}.py").write_text(PROJECT_CLASS.replace("{cls}", cls) + proc)
    config = folder / f"{module}.json"
    config.write_text(json.dumps({"func_list": [{"func_name": "Call"}], "input_num": input_num, "output_num": 1,
                                  "workspace": "./ws", "py_module": module, "py_class": cls}))
    return df.FuncProcessPoint(compile_config_path=str(config))


def caller_point(tmp_path: Path, sub: df.FlowGraph, ascend: bool) -> df.FuncProcessPoint:
    pp = project_point(tmp_path, "caller", "Caller", CALLER.replace("{closures}", "2" if ascend else "1"),
                       len(sub.inputs))
    pp.add_invoked_closure("invoked_flow_graph_name", df.FlowGraphProcessPoint(sub))
    if ascend:
        pp.add_invoked_closure("invoked_flow_graph_name1", df.GraphProcessPoint(df.Framework.ONNX, add_graph()))
    return pp


def test_run_flow_model_feeds_a_sub_flow_graph_and_fetches_its_results_by_transaction(tmp_path, capsys):
    node = df.FlowNode(1, 1, name="caller")
    node.add_process_point(caller_point(tmp_path, sub_graph(), ascend=False))
    graph = df.FlowGraph([node(df.FlowData(name="x"))], name="outer")
    compiled = dfir.compile(graph)
    plan = plan_of(compiled)
    assert [n.name for n in plan.nodes] == ["caller", "caller/invoked_flow_graph_name/fn_fnode",
                                            "caller/invoked_flow_graph_name/fn_fnode_1"]
    assert plan.nodes[1].inputs == (ClosureRef(0, 0),)
    assert [c.to_json() for c in plan.closures] == [
        {"node": 0, "key": "invoked_flow_graph_name", "inputs": 1, "outputs": [{"node": 2, "port": 0}]}]
    om_path = tmp_path / "caller.om"
    om_path.write_bytes(compiled.om)
    assert cli(["inspect", str(om_path)]) == 0
    shown = capsys.readouterr().out
    assert 'node 1 "caller/invoked_flow_graph_name/fn_fnode" pp=py_udf device="-1" inputs=[closure:0.0]' in shown
    assert 'closure 0 "invoked_flow_graph_name" node=0 inputs=1 outputs=[node:2.0]' in shown
    with dfir.load(compiled.om) as model:
        for value in (1, -2, 5):
            model.feed_data([int32(value, value)])
        results = fetch_all(model, 3)
    assert results[1] == [[4, 4]] and results[3] == [[12, 12]]
    assert results[2] == (564000, (
        "UDF caller.Call returned FLOW_FUNC_FAILED (564000); run_flow_model('invoked_flow_graph_name'): "
        "sub-FlowGraph 'invoked_flow_graph_name' failed: UDF caller/invoked_flow_graph_name/fn_fnode.fn raised "
        f"ValueError: negative input [-2, -2]\n  at {Path(__file__).name}:{_line_of('negative input')} in fn"))


def seed_graph(tmp_path: Path, deploy: Path) -> df.FlowGraph:
    """The seed's deploy example as a graph: flowNode1..8 in a chain; flowNode4 a UDF invoking
    the sub-FlowGraph `invoked_flow_graph_name` (subNode1, subNode2) and the AscendGraph
    `invoked_flow_graph_name1` (an add)."""
    x = df.FlowData(name="x")
    sub = sub_graph("invoked_flow_graph", times_ten, add_one, aliases=("subNode1", "subNode2"))
    value = x
    for k in range(1, 9):
        if k == 4:
            node = df.FlowNode(1, 1, name="flowNode4")
            node.add_process_point(caller_point(tmp_path, sub, ascend=True))
            value = node(value)
        else:
            value = add_one.fnode()(value)
            value.node.set_alias(f"flowNode{k}")
    return df.FlowGraph([value], {"ge.experiment.data_flow_deploy_info_path": str(deploy),
                                  "ge.resourceConfigPath": str(DATA / "numa_config.json")}, name="seed")


def test_the_seed_deploy_example_places_the_invoked_sub_flow_graph_by_its_nested_file(tmp_path):
    example = json.loads((DATA / "seed_example.json").read_text())
    example["batch_deploy_info"][2]["logic_device_list"] = "0:0:0:0"  # the parent of a sub-FlowGraph: one instance
    deploy = tmp_path / "data_flow_deploy_info.json"
    deploy.write_text(json.dumps(example))
    shutil.copy(DATA / "data_flow_invoke_flow_graph_deploy_info.json", tmp_path)
    compiled = dfir.compile(seed_graph(tmp_path, deploy))
    plan = plan_of(compiled)
    placed = {node.alias or node.name: unit_devices(plan, n) for n, node in enumerate(plan.nodes)}
    assert placed["flowNode4"] == ("0:0:0:0",)
    assert placed["subNode1"] == ("0:0:3:1", "0:0:2:1") and placed["subNode2"] == ("-1",)
    assert placed["flowNode5"] == ("0:0:2:0", "0:0:2:1", "0:0:3:0", "0:0:3:1")
    assert plan_of(compiled).nodes[3].invokes == {"invoked_flow_graph_name1": ("0:0:0:0",)}
    with dfir.load(compiled.om) as model:
        for value in range(4):
            model.feed_data([int32(value, 2 * value)])
        results = fetch_all(model, 4)

    def expected(v):
        a = v + 3                  # flowNode1..3
        return (a * 10 + 1) + a + 4  # the sub-FlowGraph, the AscendGraph's add, flowNode5..8
    assert results == {t: [[expected(t - 1), expected(2 * (t - 1))]] for t in range(1, 5)}


def test_the_seed_deploy_example_as_written_refuses_a_multi_instance_parent(tmp_path):
    path = DATA / "seed_example.json"
    with pytest.raises(GeError) as error:
        dfir.compile(seed_graph(tmp_path, path))
    assert f"file={path}; $.batch_deploy_info[2].invoke_list[0].invoke_name: invoke 'invoked_flow_graph_name' " \
           "runs a sub-FlowGraph, so its parent cannot be multi-instance, but the parent's logic_device_list " \
           "'0:0:0:0,0:0:1:0' has 2 devices" in str(error.value)


def test_a_multi_instance_parent_without_an_invoke_entry_is_refused_naming_the_rule(tmp_path):
    deploy = tmp_path / "deploy.json"
    deploy.write_text(json.dumps({"batch_deploy_info": [
        {"flow_node_list": ["sub"], "logic_device_list": "0:0:0,0:0:1"}]}))
    node = graph_node(sub_graph(), "sub", "inner_pp")
    graph = df.FlowGraph([node(df.FlowData(name="x"))], {"ge.experiment.data_flow_deploy_info_path": str(deploy)})
    with pytest.raises(GeError) as error:
        dfir.compile(graph)
    assert f'file={deploy}; $.batch_deploy_info[0].flow_node_list[0]: node "sub" ({node.loc}) runs ' \
           "sub-FlowGraph @inner, so it cannot be multi-instance, but it has 2 instances" in str(error.value)


# -- errors of nesting ----------------------------------------------------------------------------

def test_a_cycle_of_nested_flow_graphs_is_refused_naming_it():
    node_a, node_b = df.FlowNode(1, 1, name="na"), df.FlowNode(1, 1, name="nb")
    graph_a = df.FlowGraph([node_a(df.FlowData(name="x"))], name="A")
    graph_b = df.FlowGraph([node_b(df.FlowData(name="y"))], name="B")
    node_b.add_process_point(df.FlowGraphProcessPoint(graph_a))
    node_a.add_process_point(df.FlowGraphProcessPoint(graph_b))
    with pytest.raises(GeError, match="FlowGraph A runs itself through sub-FlowGraphs: A -> B -> A$"):
        dfir.compile(graph_a, stop_after="import")


def test_a_flow_graph_running_itself_is_refused():
    node = df.FlowNode(1, 1, name="n")
    graph = df.FlowGraph([node(df.FlowData(name="x"))], name="A")
    node.add_process_point(df.FlowGraphProcessPoint(graph))
    with pytest.raises(GeError, match="FlowGraph A runs itself through sub-FlowGraphs: A -> A$"):
        dfir.compile(graph, stop_after="import")


def test_a_sub_flow_graph_node_must_have_the_graph_s_ports():
    node = graph_node(sub_graph(), "sub", "inner_pp")
    bad = df.FlowNode(2, 1, name="bad")
    bad.add_process_point(node.process_points[0])
    graph = df.FlowGraph([bad(df.FlowData(name="p"), df.FlowData(name="q"))])
    with pytest.raises(GeError) as error:
        dfir.compile(graph, stop_after="import")
    assert str(error.value).endswith(f"node bad ({bad.loc}) has 2 inputs and 1 outputs but sub-FlowGraph "
                                     "inner has 1 inputs and 1 outputs")


def test_a_flow_graph_process_point_runs_in_one_place():
    pp = df.FlowGraphProcessPoint(sub_graph(), name="once")
    first, second = df.FlowNode(1, 1, name="first"), df.FlowNode(1, 1, name="second")
    first.add_process_point(pp)
    second.add_process_point(pp)
    graph = df.FlowGraph([second(first(df.FlowData(name="x")))])
    with pytest.raises(GeError) as error:
        dfir.compile(graph, stop_after="import")
    assert str(error.value).endswith("FlowGraphProcessPoint once is used by node first and by node second; a "
                                     "sub-FlowGraph runs in one place: give each use its own FlowGraphProcessPoint")


@pytest.mark.parametrize("args, message", [
    (("graph",), "FlowGraphProcessPoint flow_graph must be a FlowGraph, got str"),
    ((None, "cfg.json"), "FlowGraphProcessPoint: compile_config_path 'cfg.json' is not supported; a "
                         "sub-FlowGraph compiles with its own graph options"),
])
def test_flow_graph_process_point_checks_its_arguments(args, message):
    if args[0] is None:
        args = (sub_graph(), *args[1:])
    with pytest.raises(GeError, match=f"^{message}$"):
        df.FlowGraphProcessPoint(*args)


def test_an_invoked_closure_is_a_graph_or_flow_graph_process_point():
    pp = df.FuncProcessPoint(py_func=add_one)
    with pytest.raises(GeError, match="invoked closure k must be a GraphProcessPoint or FlowGraphProcessPoint, "
                                      "got FuncProcessPoint$"):
        pp.add_invoked_closure("k", df.FuncProcessPoint(py_func=add_one))


# -- the compile cache --------------------------------------------------------------------------

def test_changing_one_node_of_a_sub_flow_graph_recompiles_only_that_node(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    options = {"ge.graph_compiler_cache_dir": str(cache), "ge.graph_key": "nested"}

    def build(step):
        names.reset()
        sub = sub_graph(second=udf(step))
        node = graph_node(sub, "sub", "inner_pp")
        return df.FlowGraph([times_ten.fnode()(node(df.FlowData(name="x")))], name="outer")

    dfir.compile(build(lambda x: x * 2), options)
    changed = dfir.compile(build(lambda x: x * 3), options)
    statuses = dict(line.split()[1:3] for line in changed.report if line.startswith("cache: @"))
    assert statuses == {"@fn_pp": "hit", "@fn_1_pp": "miss", "@fn_2_pp": "hit"}
    with dfir.load(changed.om) as model:
        model.feed_data([int32(1, 2)])
        assert fetch_all(model, 1) == {1: [[60, 90]]}


VARIANTS = '''
        value = int(input_flow_msgs[0].get_tensor().numpy()[0])
        msgs = input_flow_msgs * 2 if value < 0 else input_flow_msgs
        ret, outs = run_context.run_flow_model("k", msgs, 1 if value == 0 else 5000)
        if ret != ff.FLOW_FUNC_SUCCESS:
            return ret
        return run_context.set_output(0, outs[0])
'''


def slow_when_zero(x):
    if x[0] == 0:
        __import__("time").sleep(0.5)
    return x + 100


def test_run_flow_model_times_out_drops_the_late_result_and_checks_its_inputs(tmp_path):
    pp = project_point(tmp_path, "variants", "Variants", VARIANTS, 1)
    pp.add_invoked_closure("k", df.FlowGraphProcessPoint(
        df.FlowGraph([df.pyflow(slow_when_zero).fnode()(df.FlowData(name="v"))], name="slow")))
    node = df.FlowNode(1, 1, name="caller")
    node.add_process_point(pp)
    with dfir.load(dfir.compile(df.FlowGraph([node(df.FlowData(name="x"))])).om) as model:
        for value in (0, 3, -1):
            model.feed_data([int32(value)])
        results = fetch_all(model, 3)
    assert results == {
        1: (564001, "UDF caller.Call returned FLOW_FUNC_ERR_TIME_OUT_ERROR (564001); run_flow_model('k'): "
                    "sub-FlowGraph 'k' gave no result within the timeout of 1 ms"),
        2: [[103]],
        3: (164000, "UDF caller.Call returned FLOW_FUNC_ERR_PARAM_INVALID (164000); run_flow_model('k'): "
                    "sub-FlowGraph 'k' takes 1 inputs, got 2")}


def test_an_invoked_closure_may_be_named_by_each_keyword_ge_documents():
    for keyword, pp in (("graph_pp", df.GraphProcessPoint(df.Framework.ONNX, add_graph())),
                        ("flow_graph_pp", df.FlowGraphProcessPoint(sub_graph())), ("pp", df.FlowGraphProcessPoint(sub_graph()))):
        func = df.FuncProcessPoint(py_func=add_one)
        func.add_invoked_closure("k", **{keyword: pp})
        assert func.invoked_closures == {"k": pp}


@pytest.mark.parametrize("given", [{}, {"graph_pp": "a", "pp": "b"}])
def test_an_invoked_closure_is_exactly_one_process_point(given):
    pp = df.FuncProcessPoint(py_func=add_one)
    with pytest.raises(GeError, match=rf"^FuncProcessPoint {pp.name}: add_invoked_closure\('k'\) takes one process "
                                      rf"point \(graph_pp, flow_graph_pp or pp\), got {len(given)}$"):
        pp.add_invoked_closure("k", **given)
