"""Placement: the deploy info and resource config options put every node on logical devices, each
device runs in its own worker process, and a deploy info that does not fit the graph is a GeError
naming the file and the JSON path. (The loaders' own rules: tests/frontend/test_deploy.py.)"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.ge.error import GeError

WAIT_MS = 5000
RESOURCES = {"cluster": [{"cluster_nodes": [{"node_id": 0, "node_type": "x86", "ipaddr": "127.0.0.1",
                                              "item_list": [{"item_id": 0}, {"item_id": 1}]}]}]}
DEPLOY = {"batch_deploy_info": [{"flow_node_list": ["middle"], "logic_device_list": "0:0:0"},
                                {"flow_node_list": ["stage_a_fnode"], "logic_device_list": "-1"}],
          "deploy_info": [{"flow_node_name": "stage_c_fnode", "logic_device_id": "0:0:1"}]}


@df.pyflow
def stage_a(x):
    return np.append(x, os.getpid())


@df.pyflow
def stage_b(x):
    return np.append(x, os.getpid())


@df.pyflow
def stage_c(x):
    return np.append(x, os.getpid())


def three_stages(options=None) -> df.FlowGraph:
    """stage_a -> stage_b (alias "middle") -> stage_c; each appends its process id."""
    x = df.FlowData(name="x")
    middle = stage_b.fnode().set_alias("middle")
    return df.FlowGraph([stage_c.fnode()(middle(stage_a.fnode()(x)))], options)


def write_json(path, document) -> str:
    path.write_text(json.dumps(document))
    return str(path)


def deploy_options(tmp_path, deploy=DEPLOY) -> dict[str, str]:
    return {"ge.experiment.data_flow_deploy_info_path": write_json(tmp_path / "deploy.json", deploy),
            "ge.resourceConfigPath": write_json(tmp_path / "resources.json", RESOURCES)}


@pytest.fixture
def files(tmp_path):
    return deploy_options(tmp_path)


def plan_devices(compiled) -> dict[str, str]:
    from dfir.om.schema import PartitionType
    from dfir.runtime.om import read_om
    plan = json.loads(bytes(read_om(compiled.om).models[0].partition(PartitionType.FLOW_MODEL).data))
    first = {unit["node"]: unit["device"] for unit in plan["units"] if unit["instance"] == 0}
    return {node["name"]: first[n] for n, node in enumerate(plan["nodes"])}


def test_each_device_runs_its_nodes_in_a_process_of_its_own(files):
    compiled = dfir.compile(three_stages(), files)
    assert plan_devices(compiled) == {"stage_a_fnode": "-1", "stage_b_fnode": "0:0:0",
                                      "stage_c_fnode": "0:0:1"}
    assert "place-nodes: placed 3 nodes (1 on host, 1 on 0:0:0, 1 on 0:0:1); 3 by the deploy info" in str(
        compiled.report)
    with dfir.load(compiled.om) as model:
        assert model._scheduler.devices == ("-1", "0:0:0", "0:0:1")
        model.feed_data({"x": np.array([7])})
        (result,), _, ret = model.fetch_data(timeout=WAIT_MS)
        pids = result.numpy().tolist()[1:]
        assert ret == 0 and pids == model._scheduler.worker_pids
    assert len(set(pids)) == 3 and os.getpid() not in pids


def test_a_flow_graph_takes_the_files_from_its_options(files):
    graph = three_stages(files)
    graph.feed_data({"x": np.array([1])})
    (result,), _, ret = graph.fetch_data(timeout=WAIT_MS)
    assert ret == 0 and len(set(result.numpy().tolist()[1:])) == 3
    df.finalize()


def test_the_resource_config_may_come_from_the_environment(files, monkeypatch):
    monkeypatch.setenv("RESOURCE_CONFIG_PATH", files.pop("ge.resourceConfigPath"))
    compiled = dfir.compile(three_stages(), files)
    assert set(plan_devices(compiled).values()) == {"-1", "0:0:0", "0:0:1"}


def test_without_deploy_info_everything_runs_on_the_host():
    compiled = dfir.compile(three_stages())
    assert set(plan_devices(compiled).values()) == {"-1"}
    assert "place-nodes: placed 3 nodes (3 on host)" in str(compiled.report)


def test_a_device_the_resource_config_lacks_is_refused(files, tmp_path):
    deploy = {"deploy_info": [{"flow_node_name": name, "logic_device_id": device} for name, device in
                              (("stage_a_fnode", "-1"), ("middle", "0:0:9"), ("stage_c_fnode", "0:0:1"))]}
    files["ge.experiment.data_flow_deploy_info_path"] = path = write_json(tmp_path / "far.json", deploy)
    with pytest.raises(GeError) as error:
        dfir.compile(three_stages(), files)
    assert str(error.value) == (
        f"dfir.compile failed; file={files['ge.resourceConfigPath']}; deploy info {path} "
        f"$.deploy_info[1].flow_node_name (node 'middle') names device 0:0:9, which the resource "
        f"config does not declare (server 0 of cluster 0 has devices 0:0:0..0:0:1)")


def test_a_node_the_graph_lacks_is_refused(files, tmp_path):
    deploy = {**DEPLOY, "deploy_info": [*DEPLOY["deploy_info"],
                                        {"flow_node_name": "ghost", "logic_device_id": "0:0:1"}]}
    files["ge.experiment.data_flow_deploy_info_path"] = path = write_json(tmp_path / "ghost.json", deploy)
    with pytest.raises(GeError) as error:
        dfir.compile(three_stages(), files)
    assert str(error.value) == (
        f"dfir.compile failed; file={path}; $.deploy_info[1].flow_node_name: no node is named or aliased "
        f"'ghost'; the nodes are ['stage_a_fnode', 'stage_b_fnode', 'stage_c_fnode']")


def test_every_node_must_be_placed(files, tmp_path):
    deploy = {"batch_deploy_info": DEPLOY["batch_deploy_info"]}
    files["ge.experiment.data_flow_deploy_info_path"] = path = write_json(tmp_path / "partial.json", deploy)
    x = df.FlowData(name="x")
    last = stage_c.fnode()
    graph = df.FlowGraph([last(stage_b.fnode().set_alias("middle")(stage_a.fnode()(x)))])
    with pytest.raises(GeError) as error:
        dfir.compile(graph, files)
    assert str(error.value) == (
        f"dfir.compile failed; file={path}; $: node \"stage_c_fnode\" ({last.loc}) is not placed: name "
        "it or its alias in a flow_node_list or deploy_info entry")


def test_a_node_placed_by_its_name_and_its_alias_is_refused(files, tmp_path):
    deploy = {**DEPLOY, "deploy_info": [*DEPLOY["deploy_info"],
                                        {"flow_node_name": "stage_b_fnode", "logic_device_id": "0:0:1"}]}
    files["ge.experiment.data_flow_deploy_info_path"] = path = write_json(tmp_path / "both.json", deploy)
    with pytest.raises(GeError) as error:
        dfir.compile(three_stages(), files)
    assert str(error.value) == (
        f"dfir.compile failed; file={path}; $.batch_deploy_info[0].flow_node_list[0]: node 'stage_b_fnode' "
        "is placed by its alias 'middle' and by its name at $.deploy_info[1].flow_node_name")
