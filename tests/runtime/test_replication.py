"""Replicated nodes at run time: instances in their devices' processes, dispatch by transaction
id or route label, gather, data labels through replicas, balance scatter and merge.

Plans are written by hand here (the plan fields of docs/execution-plan.md), so these tests pin
the runtime's side of the contract whatever the compiler emits.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

import dfir
from dfir.core.udf_payload import UdfPayload
import dfir.dataflow as df
from dfir.frontend.udf.sources import pack_sources
from dfir.ge.error import GeError
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.driver.process_scheduler import plan_wiring
from dfir.runtime.worker import host

WAIT_MS = 10000  # generous bound for results that must arrive; a broken runtime fails, never hangs
TWO_DEVICES = ["0:0:0", "0:0:1"]


# -- plan building ------------------------------------------------------------------------------

def data(k):
    return {"data": k}


def out(node, port=0):
    return {"node": node, "port": port}


def node_entry(name, inputs, output_num, pp, instances=("-1",), dispatch="round_robin", align=None):
    """A plan node; `instances` (one device per instance) become its units in `make_plan`."""
    return {"name": name, "alias": None, "loc": "test", "input_num": len(inputs), "output_num": output_num,
            "inputs": inputs, "instances": list(instances), "dispatch": dispatch,
            "balance": None, "align": align, "invokes": {}, "attrs": {}, "pp": pp}


def fn_pp(udf, fn, inputs, outputs):
    return {"kind": "py_udf", "udf": udf,
            "funcs": [{"name": fn.__name__, "inputs": inputs, "outputs": outputs, "stream_input": False}]}


def project_pp(udf, cls, func, inputs, outputs):
    return {"kind": "py_project", "udf": udf, "py_module": "replicas", "py_class": cls, "init_params": {},
            "closures": {}, "funcs": [{"name": func, "inputs": inputs, "outputs": outputs, "stream_input": False}]}


def make_plan(input_num, nodes, outputs):
    inputs = [{"name": f"i{k}", "index": k, "dtype": None, "shape": None} for k in range(input_num)]
    nodes = [dict(node) for node in nodes]
    units = [{"node": n, "instance": k, "device": device}
             for n, node in enumerate(nodes) for k, device in enumerate(node.pop("instances"))]
    return {"format": 2, "name": "test", "inputs": inputs, "outputs": outputs, "nodes": nodes, "units": units,
            "order": list(range(len(nodes))), "udfs": udf_entries(nodes), "ge_graphs": []}


def format_1_plan(input_num, nodes, outputs):
    """The plan of `make_plan` as a format-1 compile wrote it: each node lists its instances."""
    plan = {**make_plan(input_num, [], outputs), "format": 1, "udfs": udf_entries(nodes),
            "nodes": [{**node, "device": node["instances"][0]} for node in nodes]}
    del plan["units"]
    return plan


def udf_entries(nodes):
    """A `udfs` entry per payload the nodes index (RuntimeModel takes the payloads as given)."""
    count = 1 + max((node["pp"]["udf"] for node in nodes if "udf" in node["pp"]), default=-1)
    return [{"partition": k, "sha256": "0" * 64, "size": 0} for k in range(count)]


def fn_payload(fn):
    return UdfPayload("function", fn).dumps()


def project_payload(source: str) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "replicas.py").write_text(textwrap.dedent(source))
        return pack_sources(Path(folder))


def fetch_all(model, count):
    """`count` results as {transaction id: [array per output]}; fails on an error or a timeout."""
    results = {}
    for _ in range(count):
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        assert ret == 0, repr(ret)
        results[info.transaction_id] = [t.numpy() for t in tensors]
    return results


def worker_of(model, device):
    """The pid of the worker process serving `device`."""
    scheduler = model._scheduler
    return scheduler.worker_pids[scheduler.devices.index(device)]


# -- user code (module level: payloads pickle functions by reference) ---------------------------

def pid_of(x):
    return np.array([x[0], os.getpid()], dtype=np.int64)


def inc(x):
    return x + 1


def double_part(x):
    return np.array([x[0] * 2, os.getpid()], dtype=np.int64)


MEETING: list = []  # a multiprocessing.Barrier the test sets before the workers fork


def meet(x):
    MEETING[0].wait(timeout=WAIT_MS / 1000)  # both instances must be inside a call at once
    return x


PROJECT = '''
import os

import numpy as np

import dfir.flow_func as ff


class WhoAmI:
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        self.facts = [meta_params.get_running_instance_id(), meta_params.get_running_instance_num(),
                      meta_params.get_running_device_id()]
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper()
    def whoami(self, run_context, inputs):
        return run_context.set_output(0, np.array(self.facts + [os.getpid()], dtype=np.int64))


class Scatter:
    @ff.proc_wrapper()
    def scatter(self, run_context, inputs):
        values = inputs[0].get_tensor().numpy()
        config = ff.BalanceConfig(1, len(values))
        config.set_data_pos([(0, c) for c in range(len(values))])
        return run_context.set_multi_outputs(0, [np.array([v], dtype=np.int64) for v in values], config)


class Merge:
    """Collects the 4 parts of each transaction by data label; emits [label, part...] rows."""

    def __init__(self):
        self.parts = {}

    @ff.proc_wrapper()
    def merge(self, run_context, inputs):
        msg = inputs[0]
        parts = self.parts.setdefault(msg.get_transaction_id(), {})
        parts[msg.get_data_label()] = msg.get_tensor().numpy().tolist()
        if len(parts) < 4:
            return ff.FLOW_FUNC_SUCCESS
        del self.parts[msg.get_transaction_id()]
        rows = [[label] + parts[label] for label in sorted(parts)]
        return run_context.set_output(0, np.array(rows, dtype=np.int64))
'''


# -- dispatch -----------------------------------------------------------------------------------

def test_round_robin_sends_transaction_t_to_instance_t_mod_n_each_in_its_own_process():
    plan = make_plan(1, [node_entry("who", [data(0)], 1, project_pp(0, "WhoAmI", "whoami", [0], [0]),
                                    TWO_DEVICES)], [out(0)])
    with RuntimeModel(plan, [project_payload(PROJECT)], None, "rr") as model:
        for t in range(1, 9):
            assert model.feed_data([np.array([t])]) == 0
        results = fetch_all(model, 8)
        pids = [worker_of(model, device) for device in TWO_DEVICES]
    assert sorted(results) == list(range(1, 9))
    for t, (facts,) in results.items():
        instance = t % 2
        assert facts.tolist() == [instance, 2, instance, pids[instance]]
    assert pids[0] != pids[1] and os.getpid() not in pids


def test_replicated_instances_run_concurrently():
    MEETING[:] = [multiprocessing.Barrier(2)]  # inherited by the forked workers
    plan = make_plan(1, [node_entry("meet", [data(0)], 1, fn_pp(0, meet, [0], [0]), TWO_DEVICES)], [out(0)])
    with RuntimeModel(plan, [fn_payload(meet)], None, "meet") as model:
        model.feed_data([np.array([1])])
        model.feed_data([np.array([2])])
        results = fetch_all(model, 2)
    assert {t: v[0].tolist() for t, v in results.items()} == {1: [1], 2: [2]}


def test_route_label_dispatch_ignores_messages_without_a_label():
    plan = make_plan(1, [node_entry("who", [data(0)], 1, fn_pp(0, pid_of, [0], [0]), TWO_DEVICES,
                                    dispatch="route_label")], [out(0)])
    with RuntimeModel(plan, [fn_payload(pid_of)], None, "labels") as model:
        for t in range(1, 5):
            model.feed_data([np.array([t])])
        results = fetch_all(model, 4)
        pids = [worker_of(model, device) for device in TWO_DEVICES]
    assert {t: v[0][1] for t, v in results.items()} == {t: pids[t % 2] for t in range(1, 5)}


def test_instances_gather_into_a_single_consumer_on_another_device():
    nodes = [node_entry("who", [data(0)], 1, fn_pp(0, pid_of, [0], [0]), TWO_DEVICES),
             node_entry("inc", [out(0)], 1, fn_pp(1, inc, [0], [0]), ["0:0:2"])]
    plan = make_plan(1, nodes, [out(1)])
    with RuntimeModel(plan, [fn_payload(pid_of), fn_payload(inc)], None, "gather") as model:
        for t in range(1, 21):
            model.feed_data([np.array([t])])
        results = fetch_all(model, 20)
        pids = [worker_of(model, device) for device in TWO_DEVICES]
    assert {t: v[0].tolist() for t, v in results.items()} == {t: [t + 1, pids[t % 2] + 1] for t in range(1, 21)}


def test_two_instances_on_one_device_share_its_worker_and_feed_a_local_consumer():
    nodes = [node_entry("who", [data(0)], 1, fn_pp(0, pid_of, [0], [0]), ["0:0:0", "0:0:0"]),
             node_entry("inc", [out(0)], 1, fn_pp(1, inc, [0], [0]), ["0:0:0"])]
    plan = make_plan(1, nodes, [out(1)])
    with RuntimeModel(plan, [fn_payload(pid_of), fn_payload(inc)], None, "local") as model:
        for t in range(1, 21):
            model.feed_data([np.array([t])])
        results = fetch_all(model, 20)
        assert len(model._scheduler.worker_pids) == 1
        pid = model._scheduler.worker_pids[0]
    assert {t: v[0].tolist() for t, v in results.items()} == {t: [t + 1, pid + 1] for t in range(1, 21)}


def test_wiring_gives_each_instance_its_channels_and_one_worker_per_device():
    nodes = [node_entry("a", [data(0)], 1, fn_pp(0, inc, [0], [0]), ["0:0:0", "0:0:1", "0:0:0"]),
             node_entry("b", [out(0)], 1, fn_pp(0, inc, [0], [0]), ["0:0:0"])]
    wiring = plan_wiring(make_plan(1, nodes, [out(1)]), "w", 8)
    assert wiring.devices == ("0:0:0", "0:0:1")
    assert wiring.unit_workers == (0, 1, 0, 0)
    assert [(unit.node, unit.instance, unit.device) for unit in wiring.device.units] == [
        (0, 0, "0:0:0"), (0, 1, "0:0:1"), (0, 2, "0:0:0"), (1, 0, "0:0:0")]
    assert wiring.device.unit_inputs == ((0,), (1,), (2,), (3,))
    # b's input is shared: one of a's instances runs in another process
    assert [spec.shared for spec in wiring.channel_specs] == [True, True, True, True, True]
    (dispatcher, group), = wiring.input_routes[0].spread
    assert (dispatcher.instances, group, wiring.input_routes[0].fixed) == (3, (0, 1, 2), ())


def test_wiring_runs_the_units_of_a_format_1_plan_as_those_of_format_2():
    nodes = [node_entry("a", [data(0)], 1, fn_pp(0, inc, [0], [0]), ["0:0:1", "0:0:0"], "route_label"),
             node_entry("b", [out(0)], 1, fn_pp(0, inc, [0], [0]), ["0:0:0"])]
    old, new = (plan_wiring(plan(1, nodes, [out(1)]), "w", 8) for plan in (format_1_plan, make_plan))
    assert (old.devices, old.unit_workers, old.device.units) == (new.devices, new.unit_workers, new.device.units)
    assert [(unit.node, unit.instance, unit.device) for unit in new.device.units] == [
        (0, 0, "0:0:1"), (0, 1, "0:0:0"), (1, 0, "0:0:0")]
    assert new.devices == ("0:0:1", "0:0:0") and new.device.instance_nums == (2, 1)


@pytest.mark.parametrize("field, value, expected", [
    ("instances", [], "plan.units: node 0 has no unit: every node runs at least one instance"),
    ("instances", ["0:0:0", 3], 'plan.units[1].device: 3 is not a device: "-1" (the host) or '
                                '"cluster:server:device[:numa]"'),
    ("dispatch", "random", 'plan.nodes[0].dispatch: "random" is not one of "round_robin", "route_label"'),
    ("align", {"cache": 2000, "timeout": -1, "dropout": True}, "plan.nodes[0].align.cache: 2000 is out of range "
                                                              "[0, 1024]"),
    ("align", {"cache": 4, "timeout": 0, "dropout": True}, "plan.nodes[0].align.timeout: 0 is neither -1 nor in "
                                                          "[1, 600000]"),
])
def test_malformed_deployment_fields_are_plan_errors(field, value, expected):
    node = node_entry("a", [data(0)], 1, fn_pp(0, inc, [0], [0]))
    node[field] = value
    with pytest.raises(GeError) as caught:
        plan_wiring(make_plan(1, [node], [out(0)]), "w", 8)
    assert caught.value.error_message == expected


def test_a_format_1_plan_without_deployment_fields_runs_one_instance_per_node():
    node = node_entry("a", [data(0)], 1, fn_pp(0, inc, [0], [0]))
    plan = format_1_plan(1, [node], [out(0)])
    for field in ("device", "instances", "dispatch", "balance", "align", "invokes"):
        del plan["nodes"][0][field]
    assert plan_wiring(plan, "w", 8).devices == ("-1",)
    with RuntimeModel(plan, [fn_payload(inc)], None, "bare") as model:
        model.feed_data([np.array([1])])
        assert fetch_all(model, 1) == {1: [np.array([2])]}


# -- balance: scatter, replicas by route label, merge by data label (compiled from a FlowGraph) ---

@df.pyflow
def double_flow(x):
    return double_part(x)


def project_node(folder: Path, cls: str, func: str) -> df.FlowNode:
    """A one-input, one-output node running `cls` of PROJECT (a flow_func Python project)."""
    sources = folder / f"{func}_ws" / "src_python"
    sources.mkdir(parents=True)
    (sources / "replicas.py").write_text(textwrap.dedent(PROJECT))
    config = folder / f"{func}.json"
    config.write_text(json.dumps({"func_list": [{"func_name": func, "inputs_index": [0], "outputs_index": [0]}],
                                  "input_num": 1, "output_num": 1, "workspace": f"./{func}_ws",
                                  "target_bin": f"lib{func}.so", "py_module": "replicas", "py_class": cls}))
    node = df.FlowNode(input_num=1, output_num=1, name=func)
    node.add_process_point(df.FuncProcessPoint(compile_config_path=str(config)))
    return node


def deploy_files(folder: Path, placements: dict[str, str]) -> dict[str, str]:
    """Compile options: a deploy file placing each node, a resource config with devices 0 and 1."""
    deploy, resources = folder / "deploy.json", folder / "resources.json"
    deploy.write_text(json.dumps({"batch_deploy_info": [{"flow_node_list": [name], "logic_device_list": devices}
                                                        for name, devices in placements.items()]}))
    resources.write_text(json.dumps({"cluster": [{"cluster_nodes": [{
        "node_id": 0, "node_type": "x86", "ipaddr": "127.0.0.1", "item_list": [{"item_id": 0}, {"item_id": 1}]}]}]}))
    return {"ge.experiment.data_flow_deploy_info_path": str(deploy), "ge.resourceConfigPath": str(resources)}


def test_balance_scatter_routes_parts_by_label_and_the_merge_reassembles_them(tmp_path):
    scatter, merge = project_node(tmp_path, "Scatter", "scatter"), project_node(tmp_path, "Merge", "merge")
    scatter.set_balance_scatter()
    merge.set_balance_gather()
    graph = df.FlowGraph([merge(double_flow.fnode()(scatter(df.FlowData(name="x"))))])
    options = deploy_files(tmp_path, {"scatter": "-1", "double_flow_fnode": "0:0:0~1", "merge": "-1"})
    with dfir.load(dfir.compile(graph, options).om) as model:
        for t in range(1, 4):
            model.feed_data([np.array([10 * t + 1, 10 * t + 2, 10 * t + 3, 10 * t + 4])])
        results = fetch_all(model, 3)
        pids = [worker_of(model, device) for device in TWO_DEVICES]
    assert sorted(results) == [1, 2, 3]
    for t, (rows,) in results.items():
        assert rows.tolist() == [[label, 2 * (10 * t + label), pids[(label - 1) % 2]] for label in range(1, 5)]
