"""Servers of the resource config under `dfir.runtime.cluster=local` (runtime/driver/servers.py): a
server that is not this machine fails the load; one that is (its address, or `is_local`) runs
here. The option's values and the plan's `cluster` field."""
from __future__ import annotations

import json

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.frontend.options import validate_options
from dfir.ge.error import GeError
from dfir.om.plan import Cluster
from dfir.om.schema import PartitionType
from dfir.runtime.driver.servers import Server, check_local, is_host_address, plan_servers
from dfir.runtime.om import read_om

CONFIG = json.dumps({"cluster": [{"cluster_nodes": [
    {"node_id": 0, "node_type": "x86", "ipaddr": "127.0.0.1", "item_list": [{"item_id": 0}]},
    {"node_id": 1, "node_type": "x86", "ipaddr": "10.99.99.99", "item_list": [{"item_id": 0}, {"item_id": 1}]},
    {"node_id": 2, "node_type": "x86", "ipaddr": "10.99.99.98", "is_local": True,
     "item_list": [{"item_id": 0}]}]}]}).encode()


@df.pyflow
def twice(x):
    return x * 2


def options_for(tmp_path, device: str, **extra: str) -> dict[str, str]:
    (tmp_path / "deploy.json").write_text(json.dumps(
        {"batch_deploy_info": [{"flow_node_list": ["twice_fnode"], "logic_device_list": device}]}))
    (tmp_path / "numa.json").write_bytes(CONFIG)
    return {"ge.experiment.data_flow_deploy_info_path": str(tmp_path / "deploy.json"),
            "ge.resourceConfigPath": str(tmp_path / "numa.json"), **extra}


def compiled(tmp_path, device: str, **extra: str) -> bytes:
    graph = df.FlowGraph([twice.fnode()(df.FlowData(name="x"))])
    return dfir.compile(graph, options_for(tmp_path, device, **extra)).om


def test_workers_are_grouped_by_server_and_the_host_belongs_to_none():
    servers = plan_servers(("-1", "0:1:0", "0:0:0", "0:1:1:0"), [["h"], ["a"], ["b"], ["a", "c"]], CONFIG)
    assert servers == [Server(0, 1, "10.99.99.99", False, (1, 3), ("a", "c")),
                       Server(0, 0, "127.0.0.1", False, (2,), ("b",))]
    assert plan_servers(("-1",), [["h"]], None) == []


def test_a_server_the_config_does_not_list_is_an_error():
    with pytest.raises(GeError) as error:
        plan_servers(("0:5:0",), [["a"]], CONFIG)
    assert error.value.error_message == ("devices ['0:5:0'] are on server 5 of cluster 0, which the model's "
                                         "resource config does not list")


def test_an_address_is_this_hosts_when_a_socket_binds_to_it():
    assert is_host_address("127.0.0.1")
    assert not is_host_address("10.99.99.99")
    assert not is_host_address("not an address")


def test_a_remote_server_fails_a_local_load_naming_server_address_and_nodes(tmp_path):
    om = compiled(tmp_path, "0:1:0~1")
    with pytest.raises(GeError) as error:
        dfir.load(om)
    assert error.value.error_message == (
        "server 1 (10.99.99.99) is not this machine, but nodes ['twice_fnode'] are placed on it; run the model "
        "on a Ray cluster (option dfir.runtime.cluster=ray) or place them on this machine")
    assert error.value.context == {"option": "dfir.runtime.cluster"}
    check_local([Server(0, 0, "127.0.0.1", False, (0,), ("x",)), Server(0, 2, "10.0.0.1", True, (1,), ("y",))])


@pytest.mark.parametrize("device", ["0:0:0", "0:2:0"], ids=["address of this host", "is_local"])
def test_a_server_that_is_this_machine_runs_locally(tmp_path, device):
    with dfir.load(compiled(tmp_path, device, **{"dfir.runtime.cluster": "local"})) as model:
        model.feed_data([np.array([4])])
        tensors, _, ret = model.fetch_data(timeout=10000)
    assert ret == 0 and tensors[0].numpy().tolist() == [8]


def test_the_cluster_options_reach_the_plan(tmp_path):
    graph = df.FlowGraph([twice.fnode()(df.FlowData(name="x"))])
    ray = dfir.compile(graph, {"dfir.runtime.cluster": "ray", "dfir.runtime.ray_address": "10.0.0.5:6379"})
    plan = json.loads(_plan_json(ray.om))
    assert plan["cluster"] == {"kind": "ray", "ray_address": "10.0.0.5:6379"}
    assert "cluster" not in json.loads(_plan_json(dfir.compile(graph, {}).om))
    assert Cluster.from_json(plan["cluster"], "plan.cluster") == Cluster("ray", "10.0.0.5:6379")


def _plan_json(om: bytes) -> bytes:
    return bytes(read_om(om).models[0].partition(PartitionType.FLOW_MODEL).data)


@pytest.mark.parametrize("options, message", [
    ({"dfir.runtime.cluster": "mesos"},
     "option dfir.runtime.cluster has malformed value 'mesos': expected one of ['local', 'ray']"),
    ({"dfir.runtime.ray_address": 6379}, "option dfir.runtime.ray_address has a int value 6379, expected str"),
])
def test_malformed_cluster_options_are_errors(options, message):
    with pytest.raises(GeError) as error:
        validate_options(options, "dfir.compile")
    assert error.value.error_message == message
