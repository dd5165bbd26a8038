"""`dfir view`: the scene it reads from IR, .om files and scripts, the page and SVG it writes, and
each of its errors. (The page in a browser: test_view_browser.py.)"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region

from dfir.dialects import df
from dfir.ge.error import GeError
from dfir.lowering.om_writer import write_bundle, write_om
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om
from dfir.tools.cli import main as cli
from dfir.tools.scripts import no_graph_message
from dfir.tools.view import view
from dfir.tools.view.layout import diagram_svg
from dfir.tools.view.scene import scene_of
from dfir.tools.view.sources import parse_ir

ROOT = Path(__file__).resolve().parents[2]
PLACED = ROOT / "lit_tests" / "tools" / "Inputs" / "view.mlir"
EXAMPLE = ROOT / "examples" / "seed_align.py"
SVG = "{http://www.w3.org/2000/svg}"
ADDER = """
import dfir.dataflow as df

@df.pyflow
def add(a, b):
    return a + b

x, y = df.FlowData(name="x"), df.FlowData(name="y")
graph = df.FlowGraph([add.fnode()(x, y)], name="adder")
"""


def scene_data(page: Path) -> dict:
    text = page.read_text()
    return json.loads(re.search(r'<script type="application/json" id="dfir-scene">(.*?)</script>', text, re.S)[1])


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture(autouse=True)
def reference_backend(monkeypatch):
    """GE graphs run on the reference kernels: no IREE compile, the same IR from every input."""
    monkeypatch.setenv("DFIR_GE_BACKEND", "reference")


def test_the_scene_of_a_placed_pipeline():
    scene = scene_of(parse_ir(PLACED.read_text(), "view.mlir"), "view.mlir")
    flow, sub, mlp = scene.diagrams
    assert [(d.id, d.title, d.kind) for d in scene.diagrams] == [
        ("d0", "df.graph @balanced", "flow"), ("d1", "df.graph @sub", "flow"), ("d2", "ge.graph @mlp", "ge")]
    assert [(b.label, b.kind, b.cluster, b.expands) for b in flow.boxes] == [
        ("input", "data", None, ()),
        ("scatter_fnode\nbalance scatter", "node", "host", ()),
        ("mlp_node #0/2", "graph", "device 0:0:0", ("d2",)),
        ("mlp_node #1/2", "graph", "device 0:0:1", ("d2",)),
        ("gather 2", "gather", None, ()),
        ("gather_fnode\nbalance gather", "node", "host", ()),
        ("post", "graph", "host", ("d1",)),
        ("output", "output", None, ())]
    assert [(e.tail, e.head, e.label) for e in flow.edges] == [
        ("d0_n0", "d0_n1", "input"),
        ("d0_n1", "d0_n2", "scatter_fnode:0 (route label)"), ("d0_n1", "d0_n3", "scatter_fnode:0 (route label)"),
        ("d0_n2", "d0_n4", "mlp_node:0"), ("d0_n3", "d0_n4", "mlp_node:0"),
        ("d0_n4", "d0_n5", "mlp_node:0"), ("d0_n5", "d0_n6", "gather_fnode:0"), ("d0_n6", "d0_n7", "post:0")]
    assert [(c.label, c.parent) for c in flow.clusters.values()] == [
        ("host", None), ("server 0:0", None), ("device 0:0:0", "server 0:0"), ("device 0:0:1", "server 0:0")]
    replica = flow.boxes[3]
    assert (replica.loc, replica.attrs["instance"], replica.attrs["dispatch"]) == \
        ("pipeline.py:35", "#df.instance<1 of 2>", "route_label")
    assert replica.attrs["pp.graph"] == "@mlp" and "loc" not in replica.attrs
    assert [b.label for b in sub.boxes] == ["sx", "inc_fnode", "output"]
    assert [b.label for b in mlp.boxes] == [
        "ge.data\n!ge.tensor<[2, 4], f32>", "ge.const\n!ge.tensor<[4, 4], f32>",
        "ge.matmul\n!ge.tensor<[2, 4], f32>", "ge.add\n!ge.tensor<[2, 4], f32>",
        "ge.relu\n!ge.tensor<[2, 4], f32>", "ge.output"]
    assert [b.kind for b in mlp.boxes] == ["data", "op", "op", "op", "op", "output"]
    const, matmul, output = mlp.boxes[1], mlp.boxes[2], mlp.boxes[5]
    assert const.attrs["value"] == "dense tensor<4x4xf32> (values not shown)"
    assert (matmul.attrs["slots"], matmul.attrs["name"]) == ("[#ge.slot<0, 64>]", "matmul_0")
    assert output.attrs["max_bytes"] == "array<i64: 32>"
    assert mlp.attrs == {"backend": "reference", "arena_bytes": "64 : i64", "arena_lower_bound": "64 : i64"}
    assert [e.label for e in mlp.edges][:2] == ["!ge.tensor<[2, 4], f32>", "!ge.tensor<[4, 4], f32>"]


def test_a_udf_expands_to_the_graphs_it_invokes():
    module = parse_ir("""
        df.func_pp @caller_pp [#df.func<"call"(0) -> (0)>] {kind = "py_func"} {
          df.invoked_closure "mlp_key" @mlp_pp
          df.invoked_closure "sub_key" @sub_pp
        }
        df.graph_pp @mlp_pp graph @mlp {framework = "ge"}
        df.flow_graph_pp @sub_pp graph @sub
        ge.graph @mlp {
          %x = ge.data 0 "x" : !ge.tensor<[2], f32>
          ge.output %x : !ge.tensor<[2], f32>
        }
        df.func_pp @id_pp [#df.func<"id"(0) -> (0)>] {kind = "py_func"}
        df.graph @sub {
          %0 = df.data "y" index 0
          %1 = df.node "inner"(%0) pp @id_pp : 1 -> 1
          df.output %1
        }
        df.graph @main {
          %0 = df.data "x" index 0
          %1 = df.node "caller"(%0) pp @caller_pp : 1 -> 1
          df.output %1
        }
    """, "closures.mlir")
    main, sub, mlp = scene_of(module, "closures.mlir").diagrams
    assert (main.title, sub.title, mlp.title) == ("df.graph @main", "df.graph @sub", "ge.graph @mlp")
    caller = main.boxes[1]
    assert (caller.label, caller.kind, caller.expands) == ("caller\ninvokes mlp_key, sub_key", "node", ("d2", "d1"))
    assert (caller.attrs["pp.invokes mlp_key"], caller.attrs["pp.invokes sub_key"]) == ("@mlp", "@sub")


def test_the_script_its_om_and_its_ir_give_one_page(tmp_path, capsys, monkeypatch):
    """The same drawing, source lines included: they are looked up beside the input and, for an
    .om or IR kept apart from its script, in the working directory."""
    om, ir = tmp_path / "align.om", tmp_path / "align.mlir"
    assert cli(["compile", str(EXAMPLE), "-o", str(om)]) == 0
    monkeypatch.chdir(EXAMPLE.parent)
    pages = {}
    for source in (EXAMPLE, om):
        pages[source.suffix] = tmp_path / f"from{source.suffix}.html"
        assert cli(["view", str(source), "-o", str(pages[source.suffix])]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == [f"wrote {pages['.py']}: 2 graphs",
                                                          f"wrote {pages['.om']}: 2 graphs"]
    from_script, from_om = scene_data(pages[".py"]), scene_data(pages[".om"])
    assert from_script["title"] == "seed_align.py" and from_om["title"] == "align.om"
    assert from_script["diagrams"] == from_om["diagrams"]
    ir.write_text(_ir_text_of(om))
    assert view(str(ir), str(tmp_path / "ir.html")) == 2
    assert scene_data(tmp_path / "ir.html")["diagrams"] == from_om["diagrams"]
    page = pages[".om"].read_text()
    assert "<svg" in page and not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    model_c = next(b for b in from_om["diagrams"]["d0"]["boxes"].values() if b["label"].startswith("model_c"))
    assert model_c["source"] == "dag = df.FlowGraph([model_c.fnode()(a, b)], " \
                                "{\"ge.experiment.data_flow_deploy_info_path\": DEPLOY_INFO},"


def _ir_text_of(om: Path) -> str:
    return bytes(read_om(str(om)).models[0].partition(PartitionType.IR_TEXT).data).decode()


def test_viewing_an_om_runs_no_udf_code(tmp_path):
    """The UDF's module writes a marker file when imported: loading the .om would import it
    (the payload pickles the function by reference), viewing it must not."""
    write(tmp_path / "noisy.py", """
        import pathlib
        pathlib.Path(__file__).with_name("imported").write_text("yes")

        def double(x):
            return x * 2
    """)
    write(tmp_path / "build.py", """
        import dfir.dataflow as df
        import noisy

        x = df.FlowData(name="x")
        graph = df.FlowGraph([df.pyflow(noisy.double).fnode()(x)], name="noisy")
    """)
    run = lambda *args: subprocess.run([sys.executable, "-m", "dfir.tools.cli", *args], cwd=tmp_path,
                                       capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path),
                                                                            "PATH": "/usr/bin:/bin"})
    assert run("compile", "build.py", "-o", "noisy.om").returncode == 0
    (tmp_path / "imported").unlink()
    result = run("view", "noisy.om", "-o", "noisy.html")
    assert (result.returncode, result.stdout) == (0, "wrote noisy.html: 1 graph\n")
    assert not (tmp_path / "imported").exists()
    payload = next(b for b in scene_data(tmp_path / "noisy.html")["diagrams"]["d0"]["boxes"].values()
                   if b["kind"] == "node")["attrs"]["pp.payload"]
    assert re.fullmatch(r"\d+ bytes of base64 \(not loaded\)", payload)


def test_a_ge_graph_script_draws_its_ops(tmp_path):
    """A GE graph compiles inside a one-node FlowGraph: the page draws both, the node expanding to
    the ops; the SVG draws the top-level FlowGraph."""
    script = write(tmp_path / "net.py", """
        import dfir.data_type as dt
        from dfir.ge.graph import Graph

        net = Graph("net")
        x = net.data(0, shape=[-1, 3], dtype=dt.DT_FLOAT, name="x")
        net.set_outputs([net.relu(x)])
    """)
    assert view(str(script), str(tmp_path / "net.html")) == 2
    flow, ops = scene_data(tmp_path / "net.html")["diagrams"].values()
    assert [b["label"] for b in flow["boxes"].values()] == ["x", "net", "output"]
    assert flow["boxes"]["d0_n1"]["expands"] == ["d1"] and flow["clusters"] == ["host"]
    assert [b["label"] for b in ops["boxes"].values()] == [
        "ge.data\n!ge.tensor<[-1, 3], f32>", "ge.relu\n!ge.tensor<[-1, 3], f32>", "ge.output"]
    assert ops["boxes"]["d1_n1"]["loc"] == "net.py:7"
    assert ops["boxes"]["d1_n1"]["source"] == "net.set_outputs([net.relu(x)])"
    assert view(str(script), str(tmp_path / "net.svg"), "svg") == 1
    texts = [t.text for t in ET.parse(tmp_path / "net.svg").iter(f"{SVG}text")]
    assert sorted(texts) == ["host", "net", "net:0", "output", "x", "x"]


def test_a_bundle_page_holds_each_model(tmp_path):
    script = write(tmp_path / "adder.py", ADDER)
    single = tmp_path / "adder.om"
    assert cli(["compile", str(script), "-o", str(single)]) == 0
    bundle = tmp_path / "bundle.om"
    bundle.write_bytes(write_bundle([single.read_bytes()] * 2, ["first", "second"]))
    assert view(str(bundle), str(tmp_path / "bundle.html")) == 2
    diagrams = scene_data(tmp_path / "bundle.html")["diagrams"]
    assert {key: d["title"] for key, d in diagrams.items()} == {"m0d0": "df.graph @adder", "m1d0": "df.graph @adder"}
    with pytest.raises(GeError, match=rf"^dfir view --format svg draws one graph; '{re.escape(str(bundle))}' "
                                      r"holds 2 models \(the html page shows them all\)$"):
        view(str(bundle), str(tmp_path / "bundle.svg"), "svg")


@settings(max_examples=20, deadline=None)
@given(names=st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Z")) | st.sampled_from('"\\<>&'),
                              min_size=1, max_size=12), min_size=1, max_size=3, unique=True))
def test_any_data_name_is_drawn_as_written(names):
    """Quotes, backslashes, `<...>` and other characters dot or SVG would read reach the drawing as text."""
    datas = [df.DataOp(name, index) for index, name in enumerate(names)]
    body = Region(Block([*datas, df.OutputOp([data.result for data in datas])]))
    diagram = scene_of(ModuleOp([df.GraphOp("names", body)]), "names").diagrams[0]
    svg = ET.fromstring(diagram_svg(diagram))
    texts = [t.text or "" for t in svg.iter(f"{SVG}text")]
    assert all(texts.count(name) == 2 for name in names), texts  # its box and its edge label


# -- errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, message", [
    ("none.om", "model '{path}' does not exist"),
    ("none.mlir", "IR '{path}' does not exist"),
    ("none.py", "script '{path}' does not exist"),
    ("graph.txt", "dfir view reads a model (.om), IR (.mlir) or script (.py), got '{path}'"),
])
def test_a_missing_or_unknown_input_is_an_error(tmp_path, capsys, name, message):
    path = tmp_path / name
    assert cli(["view", str(path), "-o", str(tmp_path / "out.html")]) == 1
    assert capsys.readouterr().err == f"error: {message.format(path=path)}\n"
    assert not (tmp_path / "out.html").exists()


def test_an_unknown_format_is_an_error(capsys, tmp_path):
    assert cli(["view", str(PLACED), "-o", str(tmp_path / "g.png"), "--format", "png"]) == 1
    assert capsys.readouterr().err == "error: dfir view: unknown format 'png', expected one of ['html', 'svg']\n"


def test_a_script_without_a_graph_is_an_error(tmp_path):
    script = write(tmp_path / "empty.py", "value = 1\n")
    with pytest.raises(GeError) as caught:
        view(str(script), str(tmp_path / "g.html"))
    assert caught.value.error_message == no_graph_message("FlowGraph or Graph", ran_main=False)
    two = write(tmp_path / "two.py", ADDER + "other = graph\n")
    with pytest.raises(GeError, match=r"^the script defines 2 graphs \(graph, other\); choose one with --graph NAME$"):
        view(str(two), str(tmp_path / "g.html"))
    assert view(str(two), str(tmp_path / "g.html"), graph_name="other") == 1


def test_ir_that_does_not_parse_or_verify_is_an_error(tmp_path):
    bad = write(tmp_path / "bad.mlir", "df.graph @g {\n  %0 = df.nonsense\n}\n")
    with pytest.raises(GeError, match=r"(?s)^bad.mlir is not dfir IR: bad.mlir:3:1\n.*Operation df.nonsense is not registered"):
        view(str(bad), str(tmp_path / "g.html"))
    unverified = write(tmp_path / "unverified.mlir", """
        df.graph @g {
          %0 = df.data "x" index 0
          %1 = df.node "n"(%0) pp @missing_pp : 1 -> 1
          df.output %1
        }
    """)
    with pytest.raises(GeError, match=r'^unverified.mlir does not verify: node "n": process point @missing_pp '
                                      r"does not exist$"):
        view(str(unverified), str(tmp_path / "g.html"))


def test_a_module_without_graphs_is_an_error(tmp_path):
    empty = write(tmp_path / "empty.mlir", "builtin.module {}\n")
    with pytest.raises(GeError, match=r"^empty.mlir: the module holds no df.graph or ge.graph to draw$"):
        view(str(empty), str(tmp_path / "g.html"))


def test_an_om_without_ir_is_an_error(tmp_path):
    bare = tmp_path / "bare.om"
    bare.write_bytes(write_om([[(PartitionType.UDF_PAYLOAD, b"\0")]], name="bare"))
    with pytest.raises(GeError, match=r"^bare.om: model 0 has no IR_TEXT partition to draw$"):
        view(str(bare), str(tmp_path / "g.html"))
    corrupt = tmp_path / "corrupt.om"
    corrupt.write_bytes(bare.read_bytes()[:100])
    with pytest.raises(GeError):
        view(str(corrupt), str(tmp_path / "g.html"))


def test_without_graphviz_dot_the_error_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GeError, match=r"^dfir view lays graphs out with Graphviz's dot, which is not installed "
                                      r"\(Debian: apt-get install graphviz\)$"):
        view(str(PLACED), str(tmp_path / "g.svg"), "svg")


def test_a_failing_dot_is_an_error_quoting_it(tmp_path, monkeypatch):
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'Error: layout failed' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GeError, match=r"^Graphviz's dot failed on df.graph @balanced \(exit status 3\): "
                                      r"Error: layout failed$"):
        view(str(PLACED), str(tmp_path / "g.svg"), "svg")
