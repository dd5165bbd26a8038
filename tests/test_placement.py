"""Placement: the deploy info and resource config options put nodes on logical devices, each
device runs in its own worker process, and defects in either file are GeErrors naming the file
and the JSON path."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.deploy import load_deploy_info, load_resource_devices
from dfir.ge.error import GeError

WAIT_MS = 5000
RESOURCES = {"cluster": [{"cluster_nodes": [{"node_id": 0, "node_type": "x86", "ipaddr": "127.0.0.1",
                                              "item_list": [{"item_id": 1}, {"item_id": 2}]}]}]}


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


@pytest.fixture
def files(tmp_path):
    deploy = {"batch_deploy_info": [{"flow_node_list": ["middle"], "logic_device_list": "0:0:1"}],
              "deploy_info": [{"flow_node_name": "stage_c_fnode", "logic_device_id": "0:0:2"}]}
    return {"ge.experiment.data_flow_deploy_info_path": write_json(tmp_path / "deploy.json", deploy),
            "ge.resourceConfigPath": write_json(tmp_path / "resources.json", RESOURCES)}


def plan_devices(compiled) -> dict[str, str]:
    from dfir.lowering.om_schema import PartitionType
    from dfir.runtime.om import read_om
    plan = json.loads(bytes(read_om(compiled.om).models[0].partition(PartitionType.FLOW_MODEL).data))
    return {node["name"]: node["device"] for node in plan["nodes"]}


def test_each_device_runs_its_nodes_in_a_process_of_its_own(files):
    compiled = dfir.compile(three_stages(), files)
    assert plan_devices(compiled) == {"stage_a_fnode": "-1", "stage_b_fnode": "0:0:1", "stage_c_fnode": "0:0:2"}
    assert "place-nodes: placed 3 nodes (1 on host, 1 on 0:0:1, 1 on 0:0:2); 2 by the deploy info" in str(
        compiled.report)
    with dfir.load(compiled.om) as model:
        assert model._scheduler.devices == ("-1", "0:0:1", "0:0:2")
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
    assert set(plan_devices(compiled).values()) == {"-1", "0:0:1", "0:0:2"}


def test_without_deploy_info_everything_runs_on_the_host():
    compiled = dfir.compile(three_stages())
    assert set(plan_devices(compiled).values()) == {"-1"}
    assert "place-nodes: placed 3 nodes (3 on host)" in str(compiled.report)


def test_a_device_the_resource_config_lacks_is_refused(files, tmp_path):
    deploy = {"deploy_info": [{"flow_node_name": "middle", "logic_device_id": "0:0:9"}]}
    files["ge.experiment.data_flow_deploy_info_path"] = write_json(tmp_path / "far.json", deploy)
    with pytest.raises(GeError) as error:
        dfir.compile(three_stages(), files)
    assert str(error.value) == (
        f"dfir.compile failed; file={files['ge.resourceConfigPath']}; deploy info "
        f"$.deploy_info[0].flow_node_name (node 'middle') names device 0:0:9, which the resource "
        f"config does not declare (it declares 0:0:1, 0:0:2)")


def test_a_node_the_graph_lacks_is_refused(files, tmp_path):
    deploy = {"deploy_info": [{"flow_node_name": "ghost", "logic_device_id": "0:0:1"}]}
    files["ge.experiment.data_flow_deploy_info_path"] = path = write_json(tmp_path / "ghost.json", deploy)
    with pytest.raises(GeError) as error:
        dfir.compile(three_stages(), files)
    assert str(error.value) == (
        f"dfir.compile failed; file={path}; $.deploy_info[0].flow_node_name: no node is named or aliased "
        f"'ghost'; the nodes are ['stage_a_fnode', 'stage_b_fnode', 'stage_c_fnode']")


@pytest.mark.parametrize("document, expected", [
    ([], "$: expected an object, got a list"),
    ({"keep_logic_device_order": True}, "$: expected 'deploy_info' or 'batch_deploy_info'"),
    ({"batch_deploy_info": {}}, "$.batch_deploy_info: expected a list, got an object"),
    ({"batch_deploy_info": ["a"]}, "$.batch_deploy_info[0]: expected an object, got a string"),
    ({"batch_deploy_info": [{"flow_node_list": ["a"]}]}, "$.batch_deploy_info[0]: missing 'logic_device_list'"),
    ({"batch_deploy_info": [{"flow_node_list": "a", "logic_device_list": "0:0:1"}]},
     "$.batch_deploy_info[0].flow_node_list: expected a list, got a string"),
    ({"batch_deploy_info": [{"flow_node_list": ["a", 7], "logic_device_list": "0:0:1"}]},
     "$.batch_deploy_info[0].flow_node_list[1]: expected a string, got an integer"),
    ({"batch_deploy_info": [{"flow_node_list": ["a"], "logic_device_list": "0:0:1,0:0:2"}]},
     "$.batch_deploy_info[0].logic_device_list: '0:0:1,0:0:2' lists several devices; give one device "
     "per entry"),
    ({"deploy_info": [{"flow_node_name": "a", "logic_device_id": "0:0"}]},
     "$.deploy_info[0].logic_device_id: '0:0' is not a device id cluster:server:device[:numa] of "
     "numbers up to 5 digits"),
    ({"deploy_info": [{"flow_node_name": "a", "logic_device_id": 1}]},
     "$.deploy_info[0].logic_device_id: expected a string, got an integer"),
    ({"deploy_info": [{"flow_node_name": "a", "logic_device_id": "0:0:1"},
                      {"flow_node_name": "a", "logic_device_id": "0:0:2"}]},
     "$.deploy_info[1].flow_node_name: node 'a' is already placed by $.deploy_info[0].flow_node_name"),
])
def test_deploy_info_defects_name_the_file_and_json_path(tmp_path, document, expected):
    path = write_json(tmp_path / "deploy.json", document)
    with pytest.raises(GeError) as error:
        load_deploy_info(path)
    assert str(error.value) == f"file={path}; {expected}"


@pytest.mark.parametrize("document, expected", [
    ({}, "$: missing 'cluster'"),
    ({"cluster": [{"cluster_nodes": [{"item_list": []}]}]}, "$.cluster[0].cluster_nodes[0]: missing 'node_id'"),
    ({"cluster": [{"cluster_nodes": [{"node_id": True, "item_list": []}]}]},
     "$.cluster[0].cluster_nodes[0].node_id: expected an integer, got a boolean"),
    ({"cluster": [{"cluster_nodes": [{"node_id": 0, "item_list": [{"item_id": "1"}]}]}]},
     "$.cluster[0].cluster_nodes[0].item_list[0].item_id: expected an integer, got a string"),
    ({"cluster": [{"cluster_nodes": [{"node_id": -1, "item_list": []}]}]},
     "$.cluster[0].cluster_nodes[0].node_id: expected a non-negative integer, got -1"),
])
def test_resource_config_defects_name_the_file_and_json_path(tmp_path, document, expected):
    path = write_json(tmp_path / "resources.json", document)
    with pytest.raises(GeError) as error:
        load_resource_devices(path)
    assert str(error.value) == f"file={path}; {expected}"


def test_the_resource_config_declares_cluster_server_and_item(tmp_path):
    document = {"cluster": [RESOURCES["cluster"][0],
                            {"cluster_nodes": [{"node_id": 3, "item_list": [{"item_id": 0}]}]}]}
    devices = load_resource_devices(write_json(tmp_path / "resources.json", document)).devices
    assert devices == {(0, 0, 1), (0, 0, 2), (1, 3, 0)}
