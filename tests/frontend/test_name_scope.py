"""GE's `dataflow.utils.name_scope`: names made in a scope are prefixed `scope/`, made unique per
namespace (nodes and their aliases apart from every other name), as GE's dataflow package names
them; `reset_name_scope` and `finalize` forget them."""
from __future__ import annotations

import inspect
import threading

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.core.errors import GeError
from dfir.dataflow.utils import name_scope as name_scope_module
from dfir.dataflow.utils.name_scope import name_scope, reset_name_scope
from dfir.frontend.dataflow.names import NameTakenError


@df.pyflow
def add(a, b):
    return a + b


@pytest.fixture(autouse=True)
def _fresh_names():
    df.finalize()
    yield
    df.finalize()


def test_the_module_is_reachable_as_in_ge():
    assert df.utils.name_scope is name_scope_module
    assert name_scope_module.__all__ == ["name_scope", "reset_name_scope"]


def test_names_in_a_scope_take_its_prefix_and_nest():
    with name_scope("stage") as scope:
        data = [df.FlowData(), df.FlowData(name="x")]
        node = add.fnode()
        pp = df.FuncProcessPoint(compile_config_path="read_at_compile.json", name="pp")
        with name_scope("inner") as inner:
            nested = df.FlowData()
        graph = df.FlowGraph([node(*data)])
    assert (scope, inner) == ("stage", "stage/inner")
    assert [d.name for d in data] == ["stage/FlowData", "stage/x"]
    assert (node.name, pp.name, nested.name, graph.name) == (
        "stage/add_fnode", "stage/pp", "stage/inner/FlowData", "stage/FlowGraph")
    assert df.FlowData().name == "FlowData"  # outside the scope again


def test_a_scope_taken_again_is_made_unique_and_so_are_its_names():
    with name_scope("stage") as first:
        a = df.FlowData()
    with name_scope("stage") as second:
        b = df.FlowData()
        c = df.FlowData()
    with name_scope(None, "stage") as third:  # default_name when name is None
        d = df.FlowData()
    assert (first, second, third) == ("stage", "stage_1", "stage_2")
    assert [x.name for x in (a, b, c, d)] == ["stage/FlowData", "stage_1/FlowData", "stage_1/FlowData_1",
                                              "stage_2/FlowData"]


def test_nodes_have_a_namespace_of_their_own():
    assert df.FlowData(name="x").name == "x"
    assert df.FlowNode(1, 1, name="x").name == "x"  # no clash with the FlowData
    assert df.FlowNode(1, 1, name="x").name == "x_1"
    assert df.FlowData(name="FlowNode").name == "FlowNode"
    assert df.FlowNode(1, 1).name == "FlowNode"


def test_a_scope_in_a_namespace_counts_only_there():
    with name_scope("s", namespace="mine") as a:
        pass
    with name_scope("s") as b:
        pass
    with name_scope("s", namespace="mine") as c:
        pass
    assert (a, b, c) == ("s", "s", "s_1")


def test_an_alias_set_in_a_scope_takes_its_prefix():
    with name_scope("stage"):
        node = add.fnode().set_alias("worker")
    assert node.alias == "stage/worker"
    assert add.fnode().set_alias("worker").alias == "worker"


def test_an_alias_taken_is_a_value_error_as_in_ge_and_says_where():
    add.fnode().set_alias("worker")
    first = inspect.currentframe().f_lineno - 1
    with pytest.raises(ValueError) as caught:
        add.fnode().set_alias("worker")
    here = inspect.currentframe().f_lineno - 1
    assert isinstance(caught.value, GeError) and isinstance(caught.value, NameTakenError)
    assert str(caught.value) == (f"test_name_scope.py:{here}: name:worker is already used, please modify. "
                                 f"It was taken at test_name_scope.py:{first}")


def test_a_scope_without_auto_name_is_refused_when_taken():
    with name_scope("fixed", auto_name=False):
        pass
    first = inspect.currentframe().f_lineno - 2
    with pytest.raises(NameTakenError) as caught:
        with name_scope("fixed", auto_name=False):
            pass
    here = inspect.currentframe().f_lineno - 2
    assert str(caught.value) == (f"test_name_scope.py:{here}: name:fixed is already used, please modify. "
                                 f"It was taken at test_name_scope.py:{first}")


@pytest.mark.parametrize("args, message", [
    ((None,), "name for name_scope must be a string."),
    ((3,), "name for name_scope must be a string."),
    (("s", None, 1), "namespace for name_scope must be a string."),
])
def test_bad_arguments_are_type_errors_with_ges_messages(args, message):
    with pytest.raises(TypeError) as caught:
        name_scope(*args)
    assert str(caught.value) == message


@pytest.mark.parametrize("forget", [reset_name_scope, df.finalize])
def test_reset_and_finalize_forget_names_and_scopes(forget):
    with name_scope("stage"):
        df.FlowData()
        forget()
        assert df.FlowData().name == "FlowData"  # the scope is forgotten too
    add.fnode().set_alias("worker")
    forget()
    assert df.FlowData().name == "FlowData"
    assert add.fnode().set_alias("worker").alias == "worker"


def test_each_thread_has_its_own_scopes():
    names = {}
    inside, leave = threading.Event(), threading.Event()

    def other():
        with name_scope("theirs"):
            inside.set()
            leave.wait(5)
            names["other"] = df.FlowData().name

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(5)
    with name_scope("mine"):
        names["main"] = df.FlowData().name
    leave.set()
    thread.join(5)
    assert names == {"main": "mine/FlowData", "other": "theirs/FlowData"}


def test_a_graph_built_in_a_scope_compiles_and_runs_with_its_names():
    with name_scope("stage"):
        x, y = df.FlowData(), df.FlowData()
        graph = df.FlowGraph([add.fnode()(x, y)])
    assert [d.name for d in graph.inputs] == ["stage/FlowData", "stage/FlowData_1"]
    compiled = dfir.compile(graph)
    assert 'df.node "stage/add_fnode"(%0, %1)' in compiled.ir
    model = dfir.load(compiled.om)
    try:
        assert model.feed_data({"stage/FlowData": np.ones(2, np.int32),
                                "stage/FlowData_1": np.ones(2, np.int32)}) == 0
        outputs, _, ret = model.fetch_data()
        assert ret == 0 and outputs[0].numpy().tolist() == [2, 2]
    finally:
        model.close()
