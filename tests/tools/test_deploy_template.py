"""`dfir deploy template`: a deploy info file that places every node of a script's FlowGraph and
loads as it is written."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import dfir.dataflow as df
from dfir.frontend.deploy import load_deploy_info
from dfir.ge.error import GeError
from dfir.tools.cli import main
from dfir.tools.deploy_template import deploy_template, flow_node_names
from dfir.tools.scripts import no_graph_message

SCRIPT = textwrap.dedent("""
    import dfir.dataflow as df

    @df.pyflow
    def double(x):
        return x * 2

    @df.pyflow
    def add(x, y):
        return x + y

    x = df.FlowData(name="x")
    doubled = double.fnode()(x)
    pipeline = df.FlowGraph([add.fnode()(double.fnode()(doubled), doubled)])
""")


@df.pyflow
def zeta(x):
    return x + 1


@df.pyflow
def beta(x):
    return x + 2


@df.pyflow
def mu(x):
    return x + 3


def test_the_template_lists_every_node_once_in_name_order():
    x = df.FlowData(name="x")
    shared = beta.fnode()(x)
    graph = df.FlowGraph([zeta.fnode()(shared), mu.fnode()(shared)])
    names = ["beta_fnode", "mu_fnode", "zeta_fnode"]
    assert flow_node_names(graph) == names
    assert deploy_template(graph, "0:0:0~1") == {
        "keep_logic_device_order": False,
        "batch_deploy_info": [{"flow_node_list": [name], "logic_device_list": "0:0:0~1"} for name in names]}


def test_a_bad_device_list_is_refused():
    graph = df.FlowGraph([zeta.fnode()(df.FlowData(name="x"))])
    with pytest.raises(GeError) as error:
        deploy_template(graph, "0:0:2~1")
    assert str(error.value) == ("the template's device list: '0:0:2~1': the range 2~1 runs backwards; "
                                "its start must not be greater than its end")


def test_the_command_writes_a_file_that_loads(tmp_path):
    (tmp_path / "pipeline.py").write_text(SCRIPT)
    # Run outside the checkout so the installed package is imported, not the source folder.
    result = subprocess.run([sys.executable, "-m", "dfir.tools.cli", "deploy", "template", "pipeline.py",
                             "-o", "deploy.json"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "wrote deploy.json: 3 nodes on 0:0:0:0\n"
    written = json.loads((tmp_path / "deploy.json").read_text())
    assert written == {"keep_logic_device_order": False, "batch_deploy_info": [
        {"flow_node_list": [name], "logic_device_list": "0:0:0:0"}
        for name in ("add_fnode", "double_fnode", "double_fnode_1")]}
    info = load_deploy_info(str(tmp_path / "deploy.json"))
    assert sorted(info.placements) == ["add_fnode", "double_fnode", "double_fnode_1"]


def test_the_command_takes_a_graph_and_a_device(tmp_path, capsys):
    script = tmp_path / "two.py"
    script.write_text(SCRIPT + "other = df.FlowGraph([double.fnode()(x)])\n")
    output = tmp_path / "deploy.json"
    assert main(["deploy", "template", str(script), "-o", str(output), "--graph", "other",
                 "--device", "0:0:-1"]) == 0
    assert capsys.readouterr().out == f"wrote {output}: 1 node on 0:0:-1\n"
    assert json.loads(output.read_text())["batch_deploy_info"] == [
        {"flow_node_list": ["double_fnode_2"], "logic_device_list": "0:0:-1"}]


@pytest.mark.parametrize("script, args, message", [
    ("x = 1\n", [], no_graph_message("FlowGraph", ran_main=False)),
    (SCRIPT, ["--graph", "x"], "the script has no FlowGraph named 'x'; it defines pipeline"),
    (SCRIPT + "again = pipeline\n", [], "the script defines 2 graphs (again, pipeline); choose one with --graph NAME"),
    (SCRIPT, ["--device", "0:0"], "the template's device list: '0:0' is not a device list (it ends early); "
                                  "expected comma-separated ids cluster:server:device[:numa], each part a number "
                                  "or a range a~b, the device -1 for a server's host CPU, or -1 alone for the host"),
])
def test_command_errors_say_what_is_wrong(tmp_path, capsys, script, args, message):
    (tmp_path / "s.py").write_text(script)
    output = tmp_path / "deploy.json"
    assert main(["deploy", "template", str(tmp_path / "s.py"), "-o", str(output), *args]) == 1
    assert capsys.readouterr().err == f"error: {message}\n"
    assert not output.exists()


def test_a_ge_graph_is_not_a_flow_graph(tmp_path, capsys):
    (tmp_path / "g.py").write_text("from dfir.ge.graph import Graph\ng = Graph('g')\n")
    assert main(["deploy", "template", str(tmp_path / "g.py"), "-o", str(tmp_path / "d.json")]) == 1
    assert capsys.readouterr().err == f"error: {no_graph_message('FlowGraph', ran_main=False)}\n"


def test_generate_deploy_template_writes_ge_s_file_that_loads(tmp_path, capsys):
    # GE's df.utils.generate_deploy_template: nodes from the last output back, aliases used, 0:0:0:0.
    x = df.FlowData(name="x")
    first = zeta.fnode()(x)
    first.node.set_alias("first_alias")
    second = zeta.fnode()(first)
    graph = df.FlowGraph([second, first])
    path = tmp_path / "deploy.json"
    df.utils.generate_deploy_template(graph, str(path))
    assert json.loads(path.read_text()) == {"batch_deploy_info": [
        {"flow_node_list": ["first_alias"], "logic_device_list": "0:0:0:0"},
        {"flow_node_list": [second.node.name], "logic_device_list": "0:0:0:0"}]}
    assert path.read_text().startswith('{\n    "batch_deploy_info": [')
    assert capsys.readouterr().out == f"generate deploy template success, file: {path}\n"
    assert set(load_deploy_info(str(path)).placements) == {"first_alias", second.node.name}


def test_generate_deploy_template_names_a_path_it_cannot_write(tmp_path):
    graph = df.FlowGraph([zeta.fnode()(df.FlowData(name="x"))])
    with pytest.raises(GeError, match=r"^generate_deploy_template: cannot write '.*/none/d.json': No such file"):
        df.utils.generate_deploy_template(graph, str(tmp_path / "none" / "d.json"))
