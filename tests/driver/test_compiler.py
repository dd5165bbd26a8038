"""`dfir.compile` honours what the graph says: a FlowGraph's own options and `df.init`'s, which
the call's options override (the most specific setting wins)."""
import json
import subprocess
import sys

import pytest

import dfir
import dfir.dataflow as df
from dfir.ge.error import GeError


@df.pyflow
def inc(x):
    return x + 1


def deploy_options(folder, devices: str, node: str = "stage") -> dict[str, str]:
    deploy, resources = folder / f"deploy-{node}-{devices}.json", folder / "resources.json"
    deploy.write_text(json.dumps({"batch_deploy_info": [{"flow_node_list": [node], "logic_device_list": devices}]}))
    resources.write_text(json.dumps({"cluster": [{"cluster_nodes": [{
        "node_id": 0, "node_type": "x86", "ipaddr": "127.0.0.1", "item_list": [{"item_id": 0}, {"item_id": 1}]}]}]}))
    return {"ge.experiment.data_flow_deploy_info_path": str(deploy), "ge.resourceConfigPath": str(resources)}


def graph(options=None, node: str = "stage"):
    return df.FlowGraph([inc.fnode(name=node)(df.FlowData(name="x"))], options)


def placement(compiled) -> str:
    return next(line for line in compiled.report if line.startswith("place-nodes:"))


def test_the_graph_options_place_the_nodes(tmp_path):
    compiled = dfir.compile(graph(deploy_options(tmp_path, "0:0:0~1")))
    assert placement(compiled) == ("place-nodes: placed 1 nodes as 2 instances (1 on 0:0:0, 1 on 0:0:1); "
                                   "1 by the deploy info")


def test_the_call_options_override_the_graph_options(tmp_path):
    compiled = dfir.compile(graph(deploy_options(tmp_path, "0:0:0~1")), deploy_options(tmp_path, "0:0:1"))
    assert placement(compiled) == "place-nodes: placed 1 nodes (1 on 0:0:1); 1 by the deploy info"


def test_init_options_apply_under_the_graph_options(tmp_path):
    df.init(deploy_options(tmp_path, "0:0:1"))
    try:
        from_init, from_graph = graph(), graph(deploy_options(tmp_path, "0:0:0", "other"), "other")
        assert placement(dfir.compile(from_init)) == "place-nodes: placed 1 nodes (1 on 0:0:1); 1 by the deploy info"
        overridden = dfir.compile(from_graph)
        assert placement(overridden) == "place-nodes: placed 1 nodes (1 on 0:0:0); 1 by the deploy info"
    finally:
        df.finalize()


def test_a_missing_deploy_file_in_the_graph_options_is_an_error(tmp_path):
    missing = str(tmp_path / "missing.json")
    with pytest.raises(GeError) as error:
        dfir.compile(graph({"ge.experiment.data_flow_deploy_info_path": missing}))
    assert str(error.value) == (f"dfir.compile failed; file={missing}; cannot read the deploy info: "
                                "No such file or directory")


def test_the_graph_options_turn_the_cache_on(tmp_path):
    options = {"ge.graph_compiler_cache_dir": str(tmp_path), "ge.graph_key": "k"}
    compiled = graph(options)
    cold, warm = dfir.compile(compiled), dfir.compile(compiled)
    assert any(line.startswith("cache: graph key k: miss; stored") for line in cold.report), cold.report
    assert warm.report[0].startswith("cache: graph key k: hit"), warm.report
    assert warm.om == cold.om


REPRODUCIBLE_SCRIPT = '''
import sys
import dfir, dfir.dataflow as df

@df.pyflow
class Scale:
    def __init__(self, k):
        self.k = k

    @df.method()
    def run(self, x):
        return x * self.k

@df.pyflow
def inc(x):
    return x + 1

graph = df.FlowGraph([inc.fnode()(Scale.fnode(3)(df.FlowData(name="x")))])
dfir.compile(graph).save(sys.argv[1])
'''


def test_one_script_gives_one_om_from_any_process_and_directory(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    script = folder / "pipeline.py"
    script.write_text(REPRODUCIBLE_SCRIPT)
    runs = [("pipeline.py", folder), (str(script), tmp_path), (str(script), folder)]
    written = []
    for k, (path, cwd) in enumerate(runs):
        out = tmp_path / f"out{k}"
        subprocess.run([sys.executable, path, str(out)], cwd=cwd, check=True)
        written.append((tmp_path / f"out{k}.om").read_bytes())
    assert written[0] == written[1] == written[2]
    assert str(tmp_path).encode() not in written[0]
    assert b"pipeline.py:" in written[0]  # node locations name the script by its name
