"""`dfir compile script.py` (and `dfir view`, `dfir deploy template`) find a graph built inside
`main()`: the script runs as __main__ up to its first feed, and that feed's graph is taken."""
from __future__ import annotations

import sys
import textwrap

import pytest

import dfir.dataflow as df
from dfir.core.errors import GeError
from dfir.frontend.dataflow import session
from dfir.frontend.dataflow.flow_graph import FlowGraph
from dfir.frontend.ge.graph import Graph
from dfir.tools.cli import main
from dfir.tools.inspect_om import inspect_om
from dfir.tools.scripts import find_graph, has_main_block, no_graph_message, script_globals

TYPES = (FlowGraph, Graph)
HOW = ("expose one: assign it to a module-level name (graph = df.FlowGraph([...])), or build it in main() "
       "(or any function) called under `if __name__ == \"__main__\":` and feed it there (it is taken at its "
       "first feed)")

MAIN_SCRIPT = """\
import sys
import numpy as np
import dfir.dataflow as df


@df.pyflow
def add(a, b):
    return a + b


def build(name):
    x, y = df.FlowData(name="x"), df.FlowData(name="y")
    return df.FlowGraph([add.fnode()(x, y)], name=name), x, y


def main():
    df.init({"ge.runFlag": "1"})
    print("argv", sys.argv[1:])
    helper, _, _ = build("helper")
    graph, x, y = build("adder")
    graph.set_inputs_align_attrs(4, 100)
    try:
        graph.feed_data({x: np.ones(2, np.int32), y: np.ones(2, np.int32)})
    except Exception:
        print("an Exception handler caught the first feed")
    raise RuntimeError("the script went on after its first feed")


if __name__ == "__main__":
    main()
"""


def _script(tmp_path, text: str, name: str = "script.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


@pytest.fixture(autouse=True)
def _fresh_session():
    session.finalize()
    yield
    session.finalize()


def test_the_graph_main_feeds_first_is_taken_before_that_feed_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["dfir", "compile", "script.py", "-o", "x.om"])
    graph = find_graph(script_globals(_script(tmp_path, MAIN_SCRIPT)), None, TYPES)
    assert isinstance(graph, FlowGraph) and graph.name == "adder"
    assert graph.align == (4, 100, False)          # the settings made before the first feed
    assert graph._compiled is None and graph._model is None  # the feed did not run
    assert session.global_options() == {"ge.runFlag": "1"}   # main()'s init holds for the compile
    assert capsys.readouterr().out == "argv []\n"  # the script saw only its own name in sys.argv
    assert sys.argv == ["dfir", "compile", "script.py", "-o", "x.om"]
    assert "__init__" in FlowGraph.__dict__ and FlowGraph.feed_data.__name__ == "feed_data"
    assert FlowGraph.feed_data is FlowGraph.__dict__["feed_data"]


def test_a_graph_main_builds_is_chosen_by_name(tmp_path):
    graph = find_graph(script_globals(_script(tmp_path, MAIN_SCRIPT)), "helper", TYPES)
    assert graph.name == "helper"
    with pytest.raises(GeError) as caught:
        find_graph(script_globals(_script(tmp_path, MAIN_SCRIPT)), "other", TYPES)
    assert caught.value.error_message == ("the script builds no FlowGraph or Graph named 'other' when run as "
                                          "__main__; it builds adder, helper")


def test_the_only_graph_a_script_builds_without_feeding_is_taken(tmp_path):
    script = _script(tmp_path, """\
        import dfir.dataflow as df

        @df.pyflow
        def inc(x):
            return x + 1

        def main():
            df.FlowGraph([inc.fnode()(df.FlowData())], name="unfed")

        if "__main__" == __name__:
            main()
        """)
    assert find_graph(script_globals(script), None, TYPES).name == "unfed"


def test_several_graphs_built_and_none_fed_need_a_name(tmp_path):
    script = _script(tmp_path, """\
        import dfir.dataflow as df

        @df.pyflow
        def inc(x):
            return x + 1

        if __name__ == "__main__":
            for name in ("a", "b"):
                df.FlowGraph([inc.fnode()(df.FlowData())], name=name)
        """)
    with pytest.raises(GeError) as caught:
        find_graph(script_globals(script), None, TYPES)
    assert caught.value.error_message == ("the script builds 2 graphs when run as __main__ (a, b) and feeds none; "
                                          "choose one with --graph NAME")
    assert find_graph(script_globals(script), "b", TYPES).name == "b"


def test_a_global_graph_is_taken_without_running_main(tmp_path, capsys):
    script = _script(tmp_path, """\
        import dfir.dataflow as df

        @df.pyflow
        def inc(x):
            return x + 1

        graph = df.FlowGraph([inc.fnode()(df.FlowData())], name="global")

        if __name__ == "__main__":
            print("main ran")
        """)
    assert find_graph(script_globals(script), None, TYPES).name == "global"
    assert capsys.readouterr().out == ""


def test_a_script_without_a_main_block_is_told_how_to_expose_its_graph(tmp_path):
    script = _script(tmp_path, "x = 1\n")
    assert not has_main_block(script)
    with pytest.raises(GeError) as caught:
        find_graph(script_globals(script), None, TYPES)
    assert caught.value.error_message == no_graph_message("FlowGraph or Graph", ran_main=False)
    assert caught.value.error_message == (
        "the script defines no FlowGraph or Graph among its globals and has no "
        "`if __name__ == \"__main__\":` block that builds one; " + HOW)


def test_a_main_that_builds_nothing_is_told_how_to_expose_its_graph(tmp_path):
    script = _script(tmp_path, """\
        def main():
            pass

        if __name__ == "__main__":
            main()
        """)
    assert has_main_block(script)
    with pytest.raises(GeError) as caught:
        find_graph(script_globals(script), None, (FlowGraph,))
    assert caught.value.error_message == (
        "the script defines no FlowGraph among its globals and builds none when run as __main__; " + HOW)


def test_a_main_that_exits_with_an_error_before_building_says_so(tmp_path):
    script = _script(tmp_path, """\
        import sys

        if __name__ == "__main__":
            sys.exit(3)
        """)
    with pytest.raises(GeError) as caught:
        find_graph(script_globals(script), None, TYPES)
    assert caught.value.error_message == "the script exited with status 3 before it built a graph"


def test_a_plain_namespace_keeps_the_globals_only_rules():
    with pytest.raises(GeError) as caught:
        find_graph({"x": 1}, None, TYPES)
    assert caught.value.error_message == "the script defines no FlowGraph or Graph among its globals"


def test_a_module_level_df_init_is_not_doubled_by_the_main_run(tmp_path, caplog):
    script = _script(tmp_path, """\
        import dfir.dataflow as df
        df.init({"ge.runFlag": "1"})

        @df.pyflow
        def inc(x):
            return x + 1

        def main():
            df.FlowGraph([inc.fnode()(df.FlowData())], name="g")

        if __name__ == "__main__":
            main()
        """)
    assert find_graph(script_globals(script), None, TYPES).name == "g"
    assert [r.getMessage() for r in caplog.records if "already initialized" in r.getMessage()] == []
    assert df.FlowData().name == "FlowData_1"  # names continue from the main run's, as on its own


def test_dfir_compile_writes_the_graph_main_feeds(tmp_path, capsys):
    model = tmp_path / "adder.om"
    assert main(["compile", _script(tmp_path, MAIN_SCRIPT), "-o", str(model)]) == 0
    assert capsys.readouterr().out == f"argv []\nwrote {model}\n"
    report = inspect_om(model)
    assert 'plan "adder" format=2\n' in report
    assert '    align {"cache":4,"dropout":false,"timeout":100}\n' in report
