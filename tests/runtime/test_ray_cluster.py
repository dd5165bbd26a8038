"""Pipelines over several servers on Ray (`dfir.runtime.cluster=ray`, runtime/driver/ray_cluster.py).

One local Ray cluster of two nodes on the loopback serves the whole module: the head offers
`dfir_server_0`, the other node `dfir_server_1`. Each UDF reports the Ray node it ran on.
"""
from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from types import SimpleNamespace

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every Ray process on the loopback (see the fixture)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import ray  # noqa: E402
from ray._private import state as ray_state  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

import dfir  # noqa: E402
import dfir.dataflow as df  # noqa: E402
from dfir.core.flow_info import FlowInfo  # noqa: E402
from dfir.ge.error import GeError  # noqa: E402
from dfir.frontend.flow_func.status import FLOW_FUNC_ERR_TIME_OUT_ERROR  # noqa: E402
from dfir.runtime.driver import ray_cluster  # noqa: E402
from dfir.runtime.driver.process_scheduler import WORKER_FAILED  # noqa: E402

WAIT_MS = 30000        # bound for results that must arrive; a broken runtime fails, never hangs
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def cluster():
    """Two Ray nodes on 127.0.0.1: with RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 Ray takes the
    loopback as the node IP instead of the interface's. Actors import this module (the UDFs)
    from PYTHONPATH."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
        patch.setattr(ray._private.ray_constants, "ENABLE_RAY_CLUSTER", False)
        ray_cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": 1, "resources": {"dfir_server_0": 1}, "node_ip_address": "127.0.0.1",
            "include_dashboard": False})
        try:
            other = ray_cluster.add_node(num_cpus=1, resources={"dfir_server_1": 1}, node_ip_address="127.0.0.1")
            ray_cluster.wait_for_nodes(timeout=120)
            ray.init(address=ray_cluster.address, log_to_driver=False)
            yield SimpleNamespace(head=ray_cluster.head_node.node_id, other=other.node_id)
        finally:
            ray.shutdown()
            ray_cluster.shutdown()


# -- user code (module level: actors import it) -----------------------------------------------

def here() -> str:
    return ray.get_runtime_context().get_node_id()


@df.pyflow
def stage_a(trail):
    return trail + [("a", here())]


@df.pyflow
def stage_b(trail):
    return trail + [("b", here())]


@df.pyflow
def stage_c(trail):
    return trail + [("c", here())]


@df.pyflow
def scale(x):
    if x.size == 1 and x[0] == 13:
        raise ValueError("13 is unlucky")
    return x * 2


@df.pyflow
def shift(x):
    return x + 1


@df.pyflow
def slow(x):
    time.sleep(0.3)
    return x


@df.pyflow
def slower(x):
    """Slow enough that no result follows the first one before a kill of its actor takes effect."""
    time.sleep(1.0)
    return x


@df.pyflow
def same_flow(x):
    return x


@df.pyflow
def late_on_even(x):
    """Even transactions run on instance 0 and finish late: this node emits odd ones first."""
    time.sleep(0.4 if x[0] % 2 == 0 else 0.0)
    return x


@df.pyflow
def late_on_odd(x):
    time.sleep(0.4 if x[0] % 2 == 1 else 0.0)
    return x


@df.pyflow
def paced(x):
    time.sleep(0.02)
    return x * 3


@df.pyflow
def hang_on_two(x):
    if x[0] == 2:
        time.sleep(3600)
    return x * 2


@df.pyflow
def pair_flow(a, b):
    return np.concatenate([a, b])


# -- helpers ------------------------------------------------------------------------------------

SERVERS = [{"node_id": 0, "node_type": "x86", "ipaddr": "10.99.99.1", "item_list": [{"item_id": 0}, {"item_id": 1}]},
           {"node_id": 1, "node_type": "x86", "ipaddr": "10.99.99.2", "item_list": [{"item_id": 0}]}]


def ray_options(folder: Path, placements: dict[str, str], servers=SERVERS, cluster="ray") -> dict[str, str]:
    """Compile options placing each node (a deploy file in the seeds' format) on `servers`."""
    deploy, resources = folder / "data_flow_deploy_info.json", folder / "numa_config.json"
    deploy.write_text(json.dumps({"keep_logic_device_order": False, "batch_deploy_info": [
        {"flow_node_list": [name], "logic_device_list": devices} for name, devices in placements.items()]}))
    resources.write_text(json.dumps({"cluster": [{"cluster_nodes": servers}]}))
    return {"ge.experiment.data_flow_deploy_info_path": str(deploy), "ge.resourceConfigPath": str(resources),
            "dfir.runtime.cluster": cluster}


def chain(*nodes):
    data = df.FlowData(name="x")
    for node in nodes:
        data = node(data)
    return df.FlowGraph([data])


def server_actors_alive() -> int:
    return sum(1 for actor in ray_state.actors().values()
               if actor["State"] == "ALIVE" and actor["ActorClassName"].endswith("ServerActor"))


def wait_until(condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)


# -- tests --------------------------------------------------------------------------------------

def test_the_seeds_deploy_example_runs_each_node_on_its_server(cluster, tmp_path):
    """a on server 0's host CPU, b on server 1, c with one instance on each server: each stage
    appends the Ray node it ran on. c's instances are in device order (the deploy file does not
    keep its own): 0:0:1:0, then 0:1:0:0; transaction t runs on instance t % 2."""
    a, b, c = stage_a.fnode(), stage_b.fnode(), stage_c.fnode()
    options = ray_options(tmp_path, {a.name: "0:0:-1:0", b.name: "0:1:0:0", c.name: "0:1:0:0,0:0:1:0"})
    with dfir.load(dfir.compile(chain(a, b, c), options).om) as model:
        for t in range(1, 5):
            assert model.feed([[t]]) == 0
        trails = [model.fetch(timeout=WAIT_MS) for _ in range(4)]
    assert all(ret == 0 for _, ret in trails), trails
    by_transaction = {values[0][0]: values[0][1:] for values, _ in trails}
    assert by_transaction == {t: [("a", cluster.head), ("b", cluster.other),
                                  ("c", cluster.other if t % 2 else cluster.head)] for t in range(1, 5)}


def test_tensors_flow_info_and_errors_cross_servers(cluster, tmp_path):
    """Small and arena-sized tensors, FlowInfo fields and one failing transaction, over three
    servers: 0 and 1 matched by their dfir_server_N resource, 7 by its IP (127.0.0.1)."""
    servers = SERVERS + [{"node_id": 7, "node_type": "x86", "ipaddr": "127.0.0.1", "item_list": [{"item_id": 0}]}]
    first, second, third = scale.fnode(), shift.fnode(), same_flow.fnode()
    options = ray_options(tmp_path, {first.name: "0:1:0", second.name: "0:0:1", third.name: "0:7:0"}, servers)
    big = np.arange(1 << 18, dtype=np.float32)  # 1 MiB: travels as an arena block inside a server
    with dfir.load(dfir.compile(chain(first, second, third), options).om) as model:
        model.feed_data([np.array([1, 2], dtype=np.int32)], FlowInfo(start_time=5, end_time=6, transaction_id=40))
        model.feed_data([np.array([13], dtype=np.int32)])
        model.feed_data([big])
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(3)]
    (small, info, ret), (_, failed_info, failed), (large, _, large_ret) = results
    assert ret == 0 and small[0].numpy().tolist() == [3, 5]
    assert (info.start_time, info.end_time, info.transaction_id) == (5, 6, 40)
    assert failed == 564000 and failed_info.transaction_id == 1  # the counter ignores fed ids
    assert failed.message.startswith("UDF scale_fnode.scale raised ValueError: 13 is unlucky"), failed.message
    assert large_ret == 0 and np.array_equal(large[0].numpy(), big * 2 + 1)


def test_alignment_pairs_replicas_that_run_on_different_servers(cluster, tmp_path):
    """The seed's alignment scenario with A and B replicated over both servers: instance 0 on
    server 1 finishes late, so each branch emits out of order; C pairs by transaction id."""
    x = same_flow.fnode()
    a_node, b_node, c_node = late_on_even.fnode(), late_on_odd.fnode(), pair_flow.fnode()
    data = x(df.FlowData(name="x"))
    graph = df.FlowGraph([c_node(a_node(data), b_node(data))])
    graph.set_inputs_align_attrs(256, -1, False)
    options = ray_options(tmp_path, {x.name: "0:0:0", a_node.name: "0:1:0,0:0:0", b_node.name: "0:1:0,0:0:1",
                                     c_node.name: "0:0:1"})
    with dfir.load(dfir.compile(graph, options).om) as model:
        for t in range(1, 7):
            model.feed_data([np.array([t])])
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(6)]
    assert all(ret == 0 for _, _, ret in results), results
    assert sorted((info.transaction_id, tensors[0].numpy().tolist()) for tensors, info, _ in results) == [
        (t, [t, t]) for t in range(1, 7)]


def test_a_killed_actor_fails_the_model_naming_node_server_and_device_under_recover_off(cluster, tmp_path):
    first, second = same_flow.fnode(), slower.fnode()
    options = ray_options(tmp_path, {first.name: "0:0:0", second.name: "0:1:0"})
    options["dfir.runtime.recover"] = "off"
    model = dfir.load(dfir.compile(chain(first, second), options).om)
    try:
        model.feed_data([np.array([1])])
        assert model.fetch_data(timeout=WAIT_MS)[2] == 0
        for t in range(2, 5):  # after the first result: a worker fires what is ready as one batch
            model.feed_data([np.array([t])])
        ray.kill(model._scheduler.actors[1], no_restart=True)
        failures = [model.fetch_data(timeout=WAIT_MS) for _ in range(3)]
        for tensors, _, ret in failures:
            assert tensors == [] and ret == WORKER_FAILED
            assert ret.message.startswith(f"nodes '{second.name}' on devices 0:1:0 of server 1 (10.99.99.2): "
                                          f"the server's Ray actor died"), ret.message
        assert sorted(info.transaction_id for _, info, _ in failures) == [2, 3, 4]
        with pytest.raises(GeError, match="the model failed: nodes 'slower_fnode' on devices 0:1:0 of server 1"):
            model.feed_data([np.array([9])])
    finally:
        model.close()
    wait_until(lambda: server_actors_alive() == 0)


def test_a_killed_actor_is_started_again_and_only_the_transactions_in_flight_fail(cluster, tmp_path):
    """x -> server 1 -> server 0 -> server 1 -> x: server 1's actor process is killed after the
    first 5 of 40 results. Every stream with it is opened again (the driver's feed and fetch,
    server 0's streams both ways): every transaction comes back once, its result or WORKER_FAILED
    naming the server, and the new actor serves the next ones."""
    first, second, third = same_flow.fnode(), paced.fnode(), shift.fnode()
    options = ray_options(tmp_path, {first.name: "0:1:0", second.name: "0:0:0", third.name: "0:1:0"})
    with dfir.load(dfir.compile(chain(first, second, third), options).om) as model:
        for t in range(1, 41):
            model.feed_data([np.array([t])])
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(5)]
        actor = model._scheduler.actor_of(1)
        pid = ray.get(actor.pid.remote(), timeout=WAIT_MS / 1000)
        (worker_pid,) = ray.get(actor.worker_pids.remote(), timeout=WAIT_MS / 1000)
        killed = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        results += [model.fetch_data(timeout=WAIT_MS) for _ in range(35)]
        for t in range(41, 51):
            model.feed_data([np.array([t])])
        later = [model.fetch_data(timeout=WAIT_MS) for _ in range(10)]
        served_again = time.monotonic() - killed
        stats = model.stats()["workers"]
        new_actor = model._scheduler.actor_of(1)
        assert ray.get(new_actor.pid.remote(), timeout=WAIT_MS / 1000) != pid
    wait_until(lambda: server_actors_alive() == 0)
    assert sorted(info.transaction_id for _, info, _ in results) == list(range(1, 41))
    failed = [ret for _, _, ret in results if ret != 0]
    assert failed, "the transactions in flight fail"
    death = (f"nodes '{first.name}', '{third.name}' on devices 0:1:0 of server 1 (10.99.99.2): the server's Ray "
             f"actor died (ActorDiedError: The actor died unexpectedly before finishing this task.)")
    for ret in failed:
        assert ret == WORKER_FAILED
        assert ret.message == f"{death}; the worker was restarted and this transaction, in flight, failed", ret.message
    assert all(tensors[0].numpy().tolist() == [info.transaction_id * 3 + 1]
               for tensors, info, ret in results if ret == 0)
    assert [(info.transaction_id, ret, tensors[0].numpy().tolist()) for tensors, info, ret in later] == [
        (t, 0, [t * 3 + 1]) for t in range(41, 51)]
    assert served_again < 15.0, served_again
    assert [(w["device"], w["restarts"]) for w in stats] == [("0:1:0", 1), ("0:0:0", 0)]  # in unit order
    assert stats[0]["pid"] != worker_pid
    assert stats[0]["deaths"] == [death]


def test_an_actor_that_cannot_be_started_again_fails_the_model_naming_the_server_and_why(
        cluster, tmp_path, monkeypatch):
    first, second = same_flow.fnode(), shift.fnode()
    options = ray_options(tmp_path, {first.name: "0:0:0", second.name: "0:1:0"})
    with dfir.load(dfir.compile(chain(first, second), options).om) as model:
        scheduler = model._scheduler
        monkeypatch.setattr(ray_cluster, "SERVER_RESOURCE", "dfir_gone_{}")  # no node offers it any more
        model.feed_data([np.array([1])])
        assert model.fetch_data(timeout=WAIT_MS)[2] == 0
        os.kill(ray.get(scheduler.actor_of(1).pid.remote(), timeout=WAIT_MS / 1000), signal.SIGKILL)
        wait_until(lambda: scheduler.failure is not None)
        with pytest.raises(GeError) as error:
            model.feed_data([np.array([2])])
    wait_until(lambda: server_actors_alive() == 0)
    assert error.value.error_message == (
        f"the model failed: nodes '{second.name}' on devices 0:1:0 of server 1 (10.99.99.2): the server's Ray actor "
        f"died (ActorDiedError: The actor died unexpectedly before finishing this task.); starting the server's Ray "
        f"actor again failed: server 1 (10.99.99.2): no node of the Ray cluster offers the resource dfir_gone_1 or "
        f"has the IP 10.99.99.2; nodes ['{second.name}'] are placed on it; close it and load it again")


def test_an_actor_that_dies_three_times_in_a_row_soon_after_starting_fails_the_model(cluster, tmp_path, monkeypatch):
    """Each restart counts as quick here (QUICK_DEATH_SECONDS raised to a minute): the third
    death in a row fails the model with the history of the three."""
    monkeypatch.setattr(ray_cluster, "QUICK_DEATH_SECONDS", 60.0)
    first, second = same_flow.fnode(), shift.fnode()
    options = ray_options(tmp_path, {first.name: "0:0:0", second.name: "0:1:0"})
    with dfir.load(dfir.compile(chain(first, second), options).om) as model:
        scheduler = model._scheduler
        for restarts in (1, 2):
            os.kill(ray.get(scheduler.actor_of(1).pid.remote(), timeout=WAIT_MS / 1000), signal.SIGKILL)
            wait_until(lambda n=restarts: [w["restarts"] for w in model.stats()["workers"]] == [0, n])
            model.feed_data([np.array([restarts])])
            tensors, _, ret = model.fetch_data(timeout=WAIT_MS)
            assert (ret, tensors[0].numpy().tolist()) == (0, [restarts + 1])
        os.kill(ray.get(scheduler.actor_of(1).pid.remote(), timeout=WAIT_MS / 1000), signal.SIGKILL)
        wait_until(lambda: scheduler.failure is not None)
        with pytest.raises(GeError) as error:
            model.feed_data([np.array([9])])
    wait_until(lambda: server_actors_alive() == 0)
    death = f"nodes '{second.name}' on devices 0:1:0 of server 1 (10.99.99.2): the server's Ray actor died ("
    message = error.value.error_message
    assert message.startswith(f"the model failed: {death}"), message
    history = message.split("; it died 3 times in a row within 60 s of starting: ")[1]
    assert history.count(death) == 3 and history.startswith(death), message


def test_a_killed_worker_of_a_server_is_restarted_and_only_its_transactions_in_flight_fail(cluster, tmp_path):
    """40 transactions through server 0 then server 1; server 1's worker is killed after the
    first 5 results: every transaction comes back once, its result or WORKER_FAILED naming the
    worker and its server, and the restarted worker serves the next ones."""
    first, second = same_flow.fnode(), paced.fnode()
    options = ray_options(tmp_path, {first.name: "0:0:0", second.name: "0:1:0"})
    with dfir.load(dfir.compile(chain(first, second), options).om) as model:
        for t in range(1, 41):
            model.feed_data([np.array([t])])
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(5)]
        actor = model._scheduler.actors[1]
        (pid,) = ray.get(actor.worker_pids.remote(), timeout=WAIT_MS / 1000)
        os.kill(pid, signal.SIGKILL)
        results += [model.fetch_data(timeout=WAIT_MS) for _ in range(35)]
        for t in range(41, 51):
            model.feed_data([np.array([t])])
        later = [model.fetch_data(timeout=WAIT_MS) for _ in range(10)]
        (new_pid,) = ray.get(actor.worker_pids.remote(), timeout=WAIT_MS / 1000)
        stats = model.stats()["workers"]
    assert sorted(info.transaction_id for _, info, _ in results) == list(range(1, 41))
    failed = [(info.transaction_id, ret) for _, info, ret in results if ret != 0]
    assert failed, "the transactions the killed worker held fail"
    for transaction_id, ret in failed:
        assert ret == WORKER_FAILED
        assert ret.message == (f"node '{second.name}' on device 0:1:0: worker process {pid} was killed by signal 9 "
                               f"(SIGKILL) (server 1 (10.99.99.2), Ray node {cluster.other}); the worker was "
                               f"restarted and this transaction, in flight, failed"), ret.message
    for tensors, info, ret in results:
        if ret == 0:
            assert tensors[0].numpy().tolist() == [info.transaction_id * 3]
    assert [(info.transaction_id, ret, tensors[0].numpy().tolist()) for tensors, info, ret in later] == [
        (t, 0, [t * 3]) for t in range(41, 51)]
    assert new_pid != pid
    assert [(w["device"], w["restarts"]) for w in stats] == [("0:0:0", 0), ("0:1:0", 1)]
    assert stats[1]["deaths"] == [f"node '{second.name}' on device 0:1:0: worker process {pid} was killed by "
                                  f"signal 9 (SIGKILL)"]


def test_a_call_of_a_server_past_its_udf_timeout_fails_with_the_timeout_code_and_the_server_serves_on(
        cluster, tmp_path):
    """Transaction 3 waits behind the hung call of 2: it fails with WORKER_FAILED, or, when the
    server's new worker runs it and its result reaches the driver before the driver hears of the
    restart (through `watch`), it returns its result (each transaction still comes back once)."""
    first, second = same_flow.fnode(), hang_on_two.fnode()
    options = ray_options(tmp_path, {first.name: "0:0:0", second.name: "0:1:0"})
    options["dfir.runtime.udf_timeout_ms"] = "300"
    with dfir.load(dfir.compile(chain(first, second), options).om) as model:
        model.feed_data([np.array([1])])
        results = [model.fetch_data(timeout=WAIT_MS)]
        (pid,) = ray.get(model._scheduler.actors[1].worker_pids.remote(), timeout=WAIT_MS / 1000)
        for t in (2, 3):
            model.feed_data([np.array([t])])
        results += [model.fetch_data(timeout=WAIT_MS) for _ in range(2)]
        model.feed_data([np.array([4])])
        later = model.fetch_data(timeout=WAIT_MS)
    by_id = {info.transaction_id: (tensors, ret) for tensors, info, ret in results}
    assert sorted(by_id) == [1, 2, 3] and (by_id[1][1], by_id[2][1]) == (0, FLOW_FUNC_ERR_TIME_OUT_ERROR)
    assert by_id[2][1].message == (
        f"node '{second.name}' instance 0 on device 0:1:0: a call ran longer than its udf_timeout_ms (300 ms); "
        f"worker process {pid} was stopped (server 1 (10.99.99.2), Ray node {cluster.other})"), by_id[2][1].message
    tensors, ret = by_id[3]
    if ret == 0:
        assert tensors[0].numpy().tolist() == [6]
    else:
        assert ret == WORKER_FAILED
        assert ret.message.endswith("; the worker was restarted and this transaction, in flight, failed")
    assert (later[1].transaction_id, later[2], later[0][0].numpy().tolist()) == (4, 0, [8])


def test_a_killed_worker_of_the_driver_is_restarted_while_the_servers_keep_serving(cluster, tmp_path):
    """The paced node is placed on the host (-1), no server: its worker runs in the driver's process, which
    restarts it as on one machine."""
    first, second = paced.fnode(), shift.fnode()
    options = ray_options(tmp_path, {first.name: "-1", second.name: "0:1:0"})
    with dfir.load(dfir.compile(chain(first, second), options).om) as model:
        for t in range(1, 21):
            model.feed_data([np.array([t])])
        results = [model.fetch_data(timeout=WAIT_MS) for _ in range(3)]
        (pid,) = model._scheduler.worker_pids
        os.kill(pid, signal.SIGKILL)
        results += [model.fetch_data(timeout=WAIT_MS) for _ in range(17)]
        model.feed_data([np.array([21])])
        later = model.fetch_data(timeout=WAIT_MS)
        stats = model.stats()["workers"]
    assert sorted(info.transaction_id for _, info, _ in results) == list(range(1, 21))
    failed = [ret for _, _, ret in results if ret != 0]
    assert failed and all(ret == WORKER_FAILED for ret in failed)
    assert {ret.message for ret in failed} == {
        f"node '{first.name}' on device host: worker process {pid} was killed by signal 9 (SIGKILL); the worker "
        f"was restarted and this transaction, in flight, failed"}
    assert all(tensors[0].numpy().tolist() == [info.transaction_id * 3 + 1]
               for tensors, info, ret in results if ret == 0)
    assert (later[1].transaction_id, later[2], later[0][0].numpy().tolist()) == (21, 0, [64])
    assert [(w["device"], w["restarts"]) for w in stats] == [("-1", 1), ("0:1:0", 0)]


def test_a_killed_worker_of_a_server_fails_the_model_naming_its_server_under_recover_off(cluster, tmp_path):
    first, second = same_flow.fnode(), slow.fnode()
    options = ray_options(tmp_path, {first.name: "0:0:0", second.name: "0:1:0"})
    options["dfir.runtime.recover"] = "off"
    with dfir.load(dfir.compile(chain(first, second), options).om) as model:
        model.feed_data([np.array([1])])
        (pid,) = ray.get(model._scheduler.actors[1].worker_pids.remote(), timeout=WAIT_MS / 1000)
        os.kill(pid, signal.SIGKILL)
        _, info, ret = model.fetch_data(timeout=WAIT_MS)
    assert ret == WORKER_FAILED and info.transaction_id == 1
    assert ret.message.startswith(f"node '{second.name}' on device 0:1:0: worker process {pid} was killed by "
                                  f"signal 9 (SIGKILL) (server 1 (10.99.99.2), Ray node {cluster.other})"), ret.message


def test_a_killed_worker_of_a_server_fails_a_model_that_pairs_outputs_by_order(cluster, tmp_path):
    """Two graph outputs fetched together, not aligned: a lost message would shift their pairs,
    which on one machine restarts every worker; on Ray the death fails the model."""
    first, second = slow.fnode(), shift.fnode()
    data = df.FlowData(name="x")
    graph = df.FlowGraph([first(data), second(data)])
    options = ray_options(tmp_path, {first.name: "0:1:0", second.name: "0:1:0"})
    with dfir.load(dfir.compile(graph, options).om) as model:
        model.feed_data([np.array([1])])
        (pid,) = ray.get(model._scheduler.actors[0].worker_pids.remote(), timeout=WAIT_MS / 1000)
        os.kill(pid, signal.SIGKILL)
        tensors, info, ret = model.fetch_data(timeout=WAIT_MS)
        with pytest.raises(GeError, match="the model failed: node"):
            model.feed_data([np.array([2])])
    assert (tensors, ret) == ([], WORKER_FAILED)  # its transaction may count as settled: one output holds its result
    death = (f"on device 0:1:0: worker process {pid} was killed by signal 9 (SIGKILL) (server 1 (10.99.99.2), "
             f"Ray node {cluster.other})")
    # the node the worker was running when killed, or both when it ran neither
    assert ret.message in (f"node '{first.name}' {death}", f"node '{second.name}' {death}",
                           f"nodes '{first.name}', '{second.name}' {death}"), ret.message


def test_a_server_no_ray_node_matches_fails_the_load(cluster, tmp_path):
    servers = SERVERS + [{"node_id": 2, "node_type": "x86", "ipaddr": "10.99.99.3", "item_list": [{"item_id": 0}]}]
    node = same_flow.fnode()
    om = dfir.compile(chain(node), ray_options(tmp_path, {node.name: "0:2:0"}, servers)).om
    with pytest.raises(GeError) as error:
        dfir.load(om)
    assert error.value.error_message == ("server 2 (10.99.99.3): no node of the Ray cluster offers the resource "
                                         "dfir_server_2 or has the IP 10.99.99.3; nodes ['same_flow_fnode'] are "
                                         "placed on it")
    assert server_actors_alive() == 0


def test_twenty_loads_and_closes_leave_no_actors_behind(cluster, tmp_path):
    node = shift.fnode()
    om = dfir.compile(chain(node), ray_options(tmp_path, {node.name: "0:1:0"})).om
    pids = []
    for cycle in range(20):
        with dfir.load(om) as model:
            model.feed_data([np.array([cycle])])
            tensors, _, ret = model.fetch_data(timeout=WAIT_MS)
            assert ret == 0 and tensors[0].numpy().tolist() == [cycle + 1]
            pids += ray.get(model._scheduler.actors[0].worker_pids.remote(), timeout=WAIT_MS / 1000)
    wait_until(lambda: server_actors_alive() == 0)
    assert [pid for pid in pids if Path(f"/proc/{pid}").exists()] == []


def test_a_traced_model_gathers_the_slices_of_every_server(cluster, tmp_path, monkeypatch):
    """Nodes on the driver's host worker, server 0 and server 1: every transaction has a slice in
    each, on one clock, and the file names every server's device."""
    first, second, third = shift.fnode(), same_flow.fnode(), shift.fnode()
    options = ray_options(tmp_path, {first.name: "0:1:0", second.name: "0:0:1", third.name: "0:1:0"})
    monkeypatch.setenv("DFIR_TRACE", "on")
    with dfir.load(dfir.compile(chain(first, second, third), options).om) as model:
        for k in range(6):
            assert model.feed_data([np.array([k])]) == 0
        assert [model.fetch_data(timeout=WAIT_MS)[0][0].numpy().tolist() for _ in range(6)] == [[k + 2] for k in range(6)]
        trace = model._scheduler.tracer.collect()
        model.trace(tmp_path / "run.json")
    assert trace.devices == ("0:1:0", "0:0:1")
    nodes = {}
    for s in trace.slices:
        if s.worker >= 0:
            nodes.setdefault(s.transaction, []).append((s.begin_ns, s.name, trace.devices[s.worker]))
    assert sorted(nodes) == list(range(1, 7))
    for transaction, hops in nodes.items():
        assert [(name, device) for _, name, device in sorted(hops)] == [
            (f"node '{first.name}' instance 0", "0:1:0"), (f"node '{second.name}' instance 0", "0:0:1"),
            (f"node '{third.name}' instance 0", "0:1:0")]
    written = json.loads((tmp_path / "run.json").read_text())
    processes = {e["args"]["name"] for e in written["traceEvents"] if e["name"] == "process_name"}
    assert processes == {f"{trace.model} driver", f"{trace.model} 0:1:0", f"{trace.model} 0:0:1"}
