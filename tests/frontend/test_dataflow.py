"""The dataflow frontend: names, wiring, @pyflow, options, and the IR the import phase builds."""
import inspect
import logging
import re
from typing import Tuple

import pytest

import dfir
import dfir.dataflow as df
from dfir.frontend import options
from dfir.ge.error import GeError


@df.pyflow
def add(a, b):
    return a + b


@df.pyflow(num_returns=2)
def split(x):
    return x, x


@df.pyflow
class Pair:
    def __init__(self, bias=0):
        self.bias = bias

    @df.method()
    def first(self, a):
        return a + self.bias

    @df.method(num_returns=2)
    def second(self, b, c):
        return b, c


def ir_of(graph, phase="place"):
    return dfir.compile(graph, stop_after=phase).ir


def test_default_names_follow_ge():
    assert [df.FlowData().name for _ in range(3)] == ["FlowData", "FlowData_1", "FlowData_2"]
    assert add.fnode().name == "add_fnode"
    assert add.fnode().name == "add_fnode_1"


def test_inputs_are_sorted_by_name_and_located():
    b, a = df.FlowData(name="b"), df.FlowData(name="a")
    graph = df.FlowGraph([add.fnode()(b, a)])
    assert [d.name for d in graph.inputs] == ["a", "b"]
    text = ir_of(graph)
    assert re.search(r'df.data "a" index 0 \{loc = "test_dataflow.py:\d+"\}', text)
    assert re.search(r'df.data "b" index 1', text)


def test_function_node_ir():
    x, y = df.FlowData(), df.FlowData()
    graph = df.FlowGraph([add.fnode()(x, y)], name="g")
    text = ir_of(graph)
    assert re.search(r'df.func_pp @add_pp \[#df.func<"add"\(0, 1\) -> \(0\)>\] '
                     r'\{kind = "py_func", fingerprint = "sha256:[0-9a-f]{64}"\} payload "', text)
    assert re.search(r'%2 = df.node "add_fnode"\(%0, %1\) pp @add_pp \{loc = "test_dataflow.py:\d+", '
                     r'device = #df.device<host>\} : 2 -> 1', text)
    assert "df.output %2" in text


def test_class_methods_concatenate_ports_in_dir_order():
    x, y, z = df.FlowData(), df.FlowData(), df.FlowData()
    node = Pair.fnode(3)
    first = node.first(x)
    second = node.second(y, z)
    assert (first.index, [o.index for o in second]) == (0, [1, 2])
    text = ir_of(df.FlowGraph([first, *second]))
    assert ('[#df.func<"first"(0) -> (0)>, #df.func<"second"(1, 2) -> (1, 2)>]' in text)
    assert re.search(r'df.node "Pair_fnode"\(%0, %1, %2\) pp @Pair_pp .* : 3 -> 3', text)


def test_multiple_outputs_and_annotation():
    @df.pyflow
    def two(x) -> Tuple[int, int]:
        return x, x
    outs = two.fnode()(df.FlowData())
    assert len(outs) == 2
    assert len(split.fnode()(df.FlowData())) == 2


def test_graph_output_order_is_kept():
    x = df.FlowData()
    a, b = split.fnode()(x)
    text = ir_of(df.FlowGraph([b, a]))
    plan_outputs = re.search(r"df.output (.*)", text).group(1)
    assert plan_outputs == "%2, %1"


@pytest.mark.parametrize("build, message", [
    (lambda: add.fnode()(df.FlowData()),
     r"node add_fnode \(test_dataflow.py:\d+\) has input_num=2 but was called with 1 inputs"),
    (lambda: add.fnode()(df.FlowData(), 3),
     r"node add_fnode \(.*\): input 1 must be a FlowData or FlowOutput, got int"),
    (lambda: df.FlowData(data_cls=int), r"FlowData data_cls must be Tensor"),
    (lambda: df.FlowData(schema=[1, 2]), r"FlowData schema must be a TensorDesc, got list"),
    (lambda: df.FlowNode(-1, 1), r"FlowNode input_num must be a non-negative int, got -1"),
    (lambda: df.FlowGraph(["x"]), r"FlowGraph outputs must be a list of FlowOutput"),
    (lambda: df.FuncProcessPoint(), r"FuncProcessPoint FuncProcessPoint: give compile_config_path or py_func"),
    (lambda: add(1, 2), r"add is a @pyflow UDF: build a node with add.fnode\(\)"),
    (lambda: Pair(), r"Pair is a @pyflow UDF class: build a node with Pair.fnode\(...\)"),
    (lambda: df.pyflow(bogus=1)(lambda a: a), r"@pyflow .*<lambda>: option 'bogus' is not supported; supported: \['num_returns', "),
    (lambda: df.pyflow(stream_input="List")(lambda a: a), r"stream_input must be 'Queue', got 'List'"),
    (lambda: df.pyflow(num_returns=0)(lambda a: a), r"num_returns must be an int greater than 0, got 0"),
    (lambda: df.pyflow(env_hook_func=len)(lambda a: a),
     r"@pyflow .*<lambda>: env_hook_func must be a function taking no arguments, got <built-in function len>"),
    (lambda: df.pyflow(visible_device_enable="yes")(lambda a: a),
     r"@pyflow .*<lambda>: visible_device_enable must be True or False, got 'yes'"),
    (lambda: df.method(3), r"@method takes keyword options only"),
    (lambda: df.pyflow(type("Empty", (), {})).fnode(), r"@pyflow class Empty has no @method"),
    (lambda: Pair.fnode().second(df.FlowData()), r"method second takes 2 inputs, got 1"),
])
def test_frontend_errors(build, message):
    with pytest.raises(GeError, match=message):
        build()


def test_annotation_and_num_returns_must_agree():
    def three(x) -> Tuple[int, int, int]:
        return x, x, x
    with pytest.raises(GeError, match=r"the return annotation gives 3 outputs but num_returns is 2"):
        df.pyflow(num_returns=2)(three)


def test_node_cannot_feed_itself():
    node = df.FlowNode(1, 1)
    with pytest.raises(GeError, match=r"node FlowNode \(.*\): input 0 is an output of the node itself"):
        node(df.FlowOutput(node, 0))


def test_node_settings_errors():
    node = df.FlowNode(1, 1)
    node.set_balance_scatter()
    with pytest.raises(GeError, match="mutually exclusive"):
        node.set_balance_gather()
    with pytest.raises(GeError, match=r"attribute k must be a bool, str or int, got float"):
        node.set_attr("k", 1.5)
    with pytest.raises(GeError, match=r"map_input node_input_index 3 is outside \[0, 1\)"):
        node.map_input(3, None, 0)
    pp = df.FuncProcessPoint(py_func=add)
    node.add_process_point(pp)
    with pytest.raises(GeError, match="a node runs exactly one process point"):
        node.add_process_point(pp)
    with pytest.raises(GeError, match="add_process_point expects a FuncProcessPoint, GraphProcessPoint or FlowGraphProcessPoint"):
        df.FlowNode(1, 1).add_process_point("pp")


def test_alignment_ranges():
    graph = df.FlowGraph([add.fnode()(df.FlowData(), df.FlowData())])
    with pytest.raises(GeError, match=r"align_max_cache_num=1025 is out of range \[0, 1024\]"):
        graph.set_inputs_align_attrs(1025, 100)
    with pytest.raises(GeError, match=r"align_timeout=0 must be -1 or in \(0, 600000\] ms"):
        graph.set_inputs_align_attrs(16, 0)
    graph.set_inputs_align_attrs(256, 60000, True)
    assert "align = #df.align<cache = 256, timeout = 60000, dropout>" in ir_of(graph)


def test_unconnected_input_is_reported_at_compile():
    node = Pair.fnode()
    out = node.first(df.FlowData())
    with pytest.raises(GeError, match=r"node Pair_fnode \(test_dataflow.py:\d+\): input 1 is not connected"):
        dfir.compile(df.FlowGraph([out]))


def test_node_without_process_point():
    node = df.FlowNode(1, 1, name="bare")
    with pytest.raises(GeError, match=r"node bare \(.*\) has no process point"):
        dfir.compile(df.FlowGraph([node(df.FlowData())]))


def test_explicit_names_are_made_unique_as_in_ge():
    assert df.FlowNode(1, 1, name="n").name == "n"
    assert df.FlowNode(1, 1, name="n").name == "n_1"
    assert [df.FlowData(name="same").name for _ in range(2)] == ["same", "same_1"]


@pytest.mark.parametrize("options, message", [
    ({"ge.bogus": "1"}, r"option=ge.bogus; unknown option ge.bogus"),
    ({"ge.runFlag": 0}, r"option ge.runFlag has a int value 0, expected str"),
    ({"ge.runFlag": "2"}, r"option ge.runFlag has malformed value '2': expected one of \['0', '1'\]"),
    ({"ge.graph_key": "bad key!"}, r"option ge.graph_key has malformed value 'bad key!'"),
    ({1: "x"}, r"option key 1 is a int, expected str"),
])
def test_option_errors(options, message):
    graph = df.FlowGraph([add.fnode()(df.FlowData(), df.FlowData())])
    with pytest.raises(GeError, match=message):
        dfir.compile(graph, options)
    with pytest.raises(GeError, match=message):
        df.FlowGraph([add.fnode()(df.FlowData(), df.FlowData())], options)


def test_compile_rejects_other_objects():
    with pytest.raises(GeError, match="dfir.compile failed; dfir.compile expects a FlowGraph or a GE Graph, got str"):
        dfir.compile("graph")


def test_unknown_phase():
    graph = df.FlowGraph([add.fnode()(df.FlowData(), df.FlowData())])
    with pytest.raises(GeError, match=r"unknown phase 'bogus', expected one of \['import', 'fingerprint', "
                                      r"'schedule', 'shapes', 'plan', 'codegen', 'place', 'lower'\]"):
        dfir.compile(graph, stop_after="bogus")


def test_stop_after_import_has_no_device_and_no_om():
    graph = df.FlowGraph([add.fnode()(df.FlowData(), df.FlowData())])
    compiled = dfir.compile(graph, stop_after="import")
    assert compiled.om is None and "#df.device" not in compiled.ir
    with pytest.raises(GeError, match="has no .om"):
        compiled.save("x")


def test_report_names_each_pass():
    graph = df.FlowGraph([add.fnode()(df.FlowData(), df.FlowData())])
    assert str(dfir.compile(graph, stop_after="place").report).splitlines()[-7:] == [
        "infer-shape-ranges: no ge graphs", "plan-output-size: no ge graphs", "plan-memory: no ge graphs",
        "convert-ge-to-linalg: no ge graphs",
        "place-nodes: placed 1 nodes (1 on host)", "replicate-instances: no node has several devices",
        "align-inputs: no graph sets input alignment"]


def test_an_alias_taken_in_the_session_is_refused_where_it_is_set_again():
    first = add.fnode().set_alias("flowNode1")
    line = inspect.currentframe().f_lineno - 1
    with pytest.raises(GeError) as error:
        add.fnode().set_alias("flowNode1")
    here = inspect.currentframe().f_lineno - 1
    assert str(error.value) == (f"test_dataflow.py:{here}: name:flowNode1 is already used, "
                                f"please modify. It was taken at test_dataflow.py:{line}")
    assert first.alias == "flowNode1"


def test_an_alias_may_not_take_a_node_name_but_may_repeat_its_own():
    taken = add.fnode(name="stage")
    assert taken.set_alias("stage").alias == "stage"
    with pytest.raises(GeError, match=r"name:stage is already used, please modify\. It was taken at "
                                      r"test_dataflow.py:\d+"):
        add.fnode().set_alias("stage")


def test_finalize_frees_the_aliases():
    add.fnode().set_alias("again")
    df.finalize()
    assert add.fnode().set_alias("again").alias == "again"


def test_a_function_fnode_takes_a_name_and_nothing_else():
    assert add.fnode(name="n1").name == "n1"
    with pytest.raises(GeError, match=r"^add.fnode\(\) takes only name=, got bogus$"):
        add.fnode(name="n2", bogus=3)
    with pytest.raises(GeError, match=r"^add.fnode\(\) takes only name=, got 1$"):
        add.fnode(1)


@pytest.mark.parametrize("key, value", [
    ("ge.exec.deviceId", "0"), ("ge.exec.logicalDeviceId", "[0:0]"),
    ("ge.exec.logicalDeviceClusterDeployMode", "SINGLE"), ("ge.graphRunMode", "1"),
    ("ge.socVersion", "Ascend910B"), ("ge.exec.precision_mode", "force_fp16"), ("input_format", "ND"),
    ("log_level", "3")])
def test_an_option_without_effect_is_reported_once(key, value, caplog, monkeypatch):
    monkeypatch.setattr(options, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="dfir.options"):
        df.FlowGraph([add.fnode()(df.FlowData(), df.FlowData())], {key: value})
        dfir.compile(df.FlowGraph([add.fnode()(df.FlowData(), df.FlowData())]), {key: value})
    assert caplog.messages == [f"option {key} is accepted but has no effect in this version of dfir"]


def test_pyflow_resources_are_reported_once(caplog, monkeypatch):
    monkeypatch.setattr(options, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="dfir.options"):
        for _ in range(2):
            df.pyflow(resources={"cpu": 1})(lambda a: a)
    assert caplog.messages == ["@pyflow(resources=...) is accepted but has no effect in this version of dfir"]
