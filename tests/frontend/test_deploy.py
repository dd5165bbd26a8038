"""Deploy info and resource config loaders: device lists, the seed's example, and every rule broken
once with its exact message (file, JSON path, value)."""
from __future__ import annotations

import copy
import itertools
import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dfir.frontend.deploy import (HOST, DeviceId, check_deploy_devices, load_deploy_info, load_resource_config,
                         parse_device_list, spell_device_list)
from dfir.ge.error import GeError

DATA = Path(__file__).resolve().parents[1] / "data" / "deploy"
EXPECTED_LIST = ("expected comma-separated ids cluster:server:device[:numa], each part a number or a range "
                 "a~b, the device -1 for a server's host CPU, or -1 alone for the host")


def spellings(devices) -> list[str]:
    return [device.spelling() for device in devices]


def write_json(path: Path, document) -> str:
    path.write_text(json.dumps(document))
    return str(path)


# -- device lists -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("-1", ["-1"]),
    ("0:0:-1", ["-1"]),
    ("0:0:-1:0", ["0:0:-1:0"]),
    ("0:1:2", ["0:1:2"]),
    ("0:0:2~3:0~1", ["0:0:2:0", "0:0:2:1", "0:0:3:0", "0:0:3:1"]),
    ("0:0:0~1:0,0:0:2:1", ["0:0:0:0", "0:0:1:0", "0:0:2:1"]),
    ("0:0:3,0:0:1", ["0:0:3", "0:0:1"]),
    ("0:0:1:1,0:0:1", ["0:0:1:1", "0:0:1"]),
    ("00:0:32767", ["0:0:32767"]),
])
def test_device_lists_expand_in_order(text, expected):
    assert spellings(parse_device_list(text)) == expected


def test_host_is_the_device_minus_one_of_server_zero():
    assert parse_device_list("-1") == (HOST,) == (DeviceId(0, 0, -1),)
    assert HOST.is_host and HOST.spelling() == "-1" and HOST.ids == (0, 0, -1)
    assert DeviceId(0, 0, -1, 0).is_host and not DeviceId(0, 0, 0, 0).is_host
    assert DeviceId(0, 1, 2).ids == (0, 1, 2) and DeviceId(0, 1, 2, 3).ids == (0, 1, 2, 3)


@pytest.mark.parametrize("text, problem", [
    ("", f"'' is not a device list (it is empty); {EXPECTED_LIST}"),
    ("0:0", f"'0:0' is not a device list (it ends early); {EXPECTED_LIST}"),
    ("0:0:1,", f"'0:0:1,' is not a device list (it ends early); {EXPECTED_LIST}"),
    ("0:0:0:0:0", f"'0:0:0:0:0' is not a device list (unexpected ':' at column 8); {EXPECTED_LIST}"),
    ("0:0:0 ", f"'0:0:0 ' is not a device list (unexpected ' ' at column 6); {EXPECTED_LIST}"),
    ("0:-1:0", f"'0:-1:0' is not a device list (unexpected '-1' at column 3); {EXPECTED_LIST}"),
    ("-1,0:0:0", f"'-1,0:0:0' is not a device list (unexpected '-1' at column 1); {EXPECTED_LIST}"),
    ("0:0:a", f"'0:0:a' is not a device list (unexpected 'a' at column 5); {EXPECTED_LIST}"),
    ("0:0:3~1", "'0:0:3~1': the range 3~1 runs backwards; its start must not be greater than its end"),
    ("0:0:123456", "'0:0:123456': the number 123456 has more than 5 digits"),
    ("0:0:40000", "'0:0:40000': 40000 is more than 32767 (INT16_MAX)"),
    ("0:0:0,0:0:0", "'0:0:0,0:0:0' lists device 0:0:0 twice"),
    ("0:0:0~1:0,0:0:1:0", "'0:0:0~1:0,0:0:1:0' lists device 0:0:1:0 twice"),
    ("-1,-1", "'-1,-1' is not a device list (unexpected '-1' at column 1); " + EXPECTED_LIST),
    ("0:0~255:0~255", "'0:0~255:0~255' expands to 65536 devices; at most 65535 are allowed"),
])
def test_bad_device_lists_say_what_is_wrong(text, problem):
    assert parse_device_list(text) == problem


def test_the_largest_list_allowed_expands_fully():
    assert len(parse_device_list("0:0~254:0~256")) == 255 * 257 == 65535


_PART = st.integers(0, 6).flatmap(lambda low: st.tuples(st.just(low), st.integers(low, low + 2)))


@st.composite
def range_lists(draw):
    """Ids with range parts; each id has its own cluster, so no device repeats."""
    clusters = draw(st.lists(st.integers(0, 40), min_size=1, max_size=4, unique=True))
    return [[(c, c)] + draw(st.lists(_PART, min_size=2, max_size=3)) for c in clusters]


def spell_ranges(ids) -> str:
    return ",".join(":".join(str(lo) if lo == hi else f"{lo}~{hi}" for lo, hi in parts) for parts in ids)


@given(range_lists())
def test_ranges_expand_to_the_product_of_their_sizes(ids):
    devices = parse_device_list(spell_ranges(ids))
    assert len(devices) == sum(math.prod(hi - lo + 1 for lo, hi in parts) for parts in ids)
    expected = [DeviceId(*numbers) for parts in ids
                for numbers in itertools.product(*(range(lo, hi + 1) for lo, hi in parts))]
    assert list(devices) == expected


_DEVICE = st.builds(DeviceId, st.integers(0, 32767), st.integers(0, 32767), st.integers(-1, 32767),
                    st.none() | st.integers(0, 32767))


@given(st.lists(_DEVICE.filter(lambda d: d != HOST), min_size=1, max_size=8, unique=True))
def test_spelled_lists_parse_back_to_the_same_devices(devices):
    assert parse_device_list(spell_device_list(tuple(devices))) == tuple(devices)


# -- the seed's example -------------------------------------------------------------------------

def test_the_seed_example_loads_and_its_devices_exist():
    info = load_deploy_info(str(DATA / "seed_example.json"))
    check_deploy_devices(info, load_resource_config(str(DATA / "numa_config.json")))
    assert {name: spellings(p.devices) for name, p in info.placements.items()} == {
        "flowNode1": ["0:0:-1:0"], "flowNode2": ["0:0:-1:0"], "flowNode3": ["0:0:1:1"],
        "flowNode4": ["0:0:0:0", "0:0:1:0"],
        "flowNode5": ["0:0:2:0", "0:0:2:1", "0:0:3:0", "0:0:3:1"],
        "flowNode6": ["0:0:2:0", "0:0:2:1", "0:0:3:0", "0:0:3:1"],
        "flowNode7": ["0:0:0:0", "0:0:1:0", "0:0:2:1"], "flowNode8": ["0:0:0:0", "0:0:1:0", "0:0:2:1"]}
    assert info.placements["flowNode6"].where == "$.batch_deploy_info[3].flow_node_list[1]"
    assert not info.keep_logic_device_order and not info.dynamic_schedule_enable
    flow_graph, ascend_graph = info.placements["flowNode4"].invokes
    assert (ascend_graph.name, spellings(ascend_graph.devices), ascend_graph.deploy_info) == (
        "invoked_flow_graph_name1", ["0:0:0:0"], None)
    assert ascend_graph.where == "$.batch_deploy_info[2].invoke_list[1]"
    assert (flow_graph.name, flow_graph.devices) == ("invoked_flow_graph_name", ())
    nested = flow_graph.deploy_info
    assert nested.path == str(DATA / "data_flow_invoke_flow_graph_deploy_info.json")
    assert nested.keep_logic_device_order
    assert {name: spellings(p.devices) for name, p in nested.placements.items()} == {
        "subNode1": ["0:0:3:1", "0:0:2:1"], "subNode2": ["-1"]}


def test_the_seed_example_breaks_the_closure_rules_once_its_closures_are_known():
    # flowNode4 has two instances: a sub-FlowGraph closure forbids that, and an AscendGraph closure
    # needs one device per instance; what each closure runs is known only from the graph.
    path = str(DATA / "seed_example.json")
    flow_graph, ascend_graph = load_deploy_info(path).placements["flowNode4"].invokes
    with pytest.raises(GeError) as error:
        flow_graph.check(runs_sub_flow_graph=True)
    assert str(error.value) == (
        f"file={path}; $.batch_deploy_info[2].invoke_list[0].invoke_name: invoke 'invoked_flow_graph_name' "
        f"runs a sub-FlowGraph, so its parent cannot be multi-instance, but the parent's logic_device_list "
        f"'0:0:0:0,0:0:1:0' has 2 devices")
    with pytest.raises(GeError) as error:
        ascend_graph.check(runs_sub_flow_graph=False)
    assert str(error.value) == (
        f"file={path}; $.batch_deploy_info[2].invoke_list[1].logic_device_list: invoke 'invoked_flow_graph_name1' "
        f"runs an AscendGraph and lists 1 device but its parent has 2 instances ('0:0:0:0,0:0:1:0'); "
        f"give one device per parent instance")
    with pytest.raises(GeError) as error:
        flow_graph.check(runs_sub_flow_graph=False)
    assert str(error.value) == (
        f"file={path}; $.batch_deploy_info[2].invoke_list[0].deploy_info_file: invoke 'invoked_flow_graph_name' "
        f"runs an AscendGraph; a deploy_info_file places a sub-FlowGraph: give logic_device_list")


# -- deploy info rules --------------------------------------------------------------------------

BASE = {"batch_deploy_info": [{"flow_node_list": ["a", "b"], "logic_device_list": "0:0:1:0,0:0:0:0",
                               "invoke_list": [{"invoke_name": "g", "logic_device_list": "0:0:3,0:0:2"}]}],
        "deploy_info": [{"flow_node_name": "c", "logic_device_id": "-1"}]}


def test_instances_follow_the_ids_unless_the_file_keeps_its_order(tmp_path):
    info = load_deploy_info(write_json(tmp_path / "d.json", BASE))
    assert spellings(info.placements["a"].devices) == ["0:0:0:0", "0:0:1:0"]
    assert spellings(info.placements["a"].invokes[0].devices) == ["0:0:2", "0:0:3"]
    assert spellings(info.placements["c"].devices) == ["-1"]
    assert info.placements["c"].where == "$.deploy_info[0].flow_node_name"
    kept = load_deploy_info(write_json(tmp_path / "k.json", {**BASE, "keep_logic_device_order": True,
                                                            "dynamic_schedule_enable": True}))
    assert spellings(kept.placements["b"].devices) == ["0:0:1:0", "0:0:0:0"]
    assert spellings(kept.placements["b"].invokes[0].devices) == ["0:0:3", "0:0:2"]
    assert kept.dynamic_schedule_enable


def test_redundant_devices_are_recorded(tmp_path):
    document = copy.deepcopy(BASE)
    document["batch_deploy_info"][0]["redundant_logic_device_list"] = "0:0:5~6"
    document["batch_deploy_info"][0]["invoke_list"][0]["redundant_logic_device_list"] = "0:0:7"
    placement = load_deploy_info(write_json(tmp_path / "d.json", document)).placements["a"]
    assert spellings(placement.redundant) == ["0:0:5", "0:0:6"]
    assert spellings(placement.invokes[0].redundant) == ["0:0:7"]


def _set(path: str, value):
    """A change to a document: set the value at a dotted path (`batch_deploy_info.0.invoke_list`);
    an index one past a list's end appends."""
    *parents, last = path.split(".")

    def change(document):
        for key in parents:
            document = document[int(key) if key.isdigit() else key]
        if isinstance(document, list) and int(last) == len(document):
            document.append(value)
        else:
            document[int(last) if last.isdigit() else last] = value
    return change


def _drop(path: str):
    *parents, last = path.split(".")

    def change(document):
        for key in parents:
            document = document[int(key) if key.isdigit() else key]
        del document[last]
    return change


_B0 = "$.batch_deploy_info[0]"
_INVOKE = f"{_B0}.invoke_list[0]"
DEPLOY_RULES = {
    "unknown top-level key": (lambda d: d.clear() or d.update(x=1), "$: unknown key 'x'; expected one of "
                              "batch_deploy_info, deploy_info, dynamic_schedule_enable, keep_logic_device_order"),
    "unknown entry key": (_set("batch_deploy_info.0.logic_devices", "0:0:0"),
                          f"{_B0}: unknown key 'logic_devices' (did you mean 'logic_device_list'?); expected one of flow_node_list, invoke_list, "
                          f"logic_device_list, redundant_logic_device_list, udf_timeout_ms"),
    "timeout out of range": (_set("batch_deploy_info.0.udf_timeout_ms", 0),
                             f"{_B0}.udf_timeout_ms: expected a timeout in [1, 86400000] (milliseconds), got 0"),
    "timeout not an integer": (_set("batch_deploy_info.0.udf_timeout_ms", 2.5),
                               f"{_B0}.udf_timeout_ms: expected an integer, got a number 2.5"),
    "unknown invoke key": (_set("batch_deploy_info.0.invoke_list.0.device", 1),
                           f"{_INVOKE}: unknown key 'device'; expected one of deploy_info_file, invoke_name, "
                           f"logic_device_list, redundant_logic_device_list"),
    "wrong kind": (_set("keep_logic_device_order", "yes"),
                   '$.keep_logic_device_order: expected a boolean, got a string "yes"'),
    "node list is a string": (_set("batch_deploy_info.0.flow_node_list", "a,b"),
                              f'{_B0}.flow_node_list: expected a list, got a string "a,b"'),
    "node name is a number": (_set("batch_deploy_info.0.flow_node_list.0", 1),
                              f"{_B0}.flow_node_list[0]: expected a string, got an integer 1"),
    "missing device": (_drop("deploy_info.0.logic_device_id"), "$.deploy_info[0]: missing 'logic_device_id'"),
    "empty node list": (_set("batch_deploy_info.0.flow_node_list", []),
                        f"{_B0}.flow_node_list: expected a non-empty list, got []"),
    "no placements": (lambda d: d.clear() or d.update(keep_logic_device_order=True),
                      "$: neither 'deploy_info' nor 'batch_deploy_info' is given; give at least one"),
    "bad device list": (_set("batch_deploy_info.0.logic_device_list", "0:0:3~1"),
                        f"{_B0}.logic_device_list: '0:0:3~1': the range 3~1 runs backwards; its start must "
                        f"not be greater than its end"),
    "bad redundant list": (_set("batch_deploy_info.0.redundant_logic_device_list", "0:0"),
                           f"{_B0}.redundant_logic_device_list: '0:0' is not a device list (it ends early); "
                           f"{EXPECTED_LIST}"),
    "node twice in a list": (_set("batch_deploy_info.0.flow_node_list", ["a", "a"]),
                             f"{_B0}.flow_node_list[1]: node 'a' is already placed by {_B0}.flow_node_list[0]"),
    "node twice in the file": (_set("deploy_info.0.flow_node_name", "b"),
                               f"$.deploy_info[0].flow_node_name: node 'b' is already placed by "
                               f"{_B0}.flow_node_list[1]"),
    "host and device": (_set("deploy_info.0.logic_device_id", "0:0:-1:0,0:0:1:0"),
                        "$.deploy_info[0].logic_device_id: '0:0:-1:0,0:0:1:0' puts a node both on a host "
                        "(0:0:-1:0) and on a device (0:0:1:0); a node runs on hosts or on devices, not both"),
    "invoke without a name": (_drop("batch_deploy_info.0.invoke_list.0.invoke_name"),
                              f"{_INVOKE}: missing 'invoke_name'"),
    "invoke with both": (_set("batch_deploy_info.0.invoke_list.0.deploy_info_file", "sub.json"),
                         f"{_INVOKE}: invoke 'g' gives both 'deploy_info_file' and 'logic_device_list'; "
                         f"give exactly one"),
    "invoke with neither": (_drop("batch_deploy_info.0.invoke_list.0.logic_device_list"),
                            f"{_INVOKE}: invoke 'g' gives neither 'deploy_info_file' nor 'logic_device_list'; "
                            f"give exactly one"),
    "invoke twice": (_set("batch_deploy_info.0.invoke_list.1", {"invoke_name": "g", "logic_device_list": "-1"}),
                     f"{_B0}.invoke_list[1].invoke_name: invoke 'g' is already listed at {_INVOKE}"),
    "bad invoke device list": (
        _set("batch_deploy_info.0.invoke_list.0.logic_device_list", "0:0:3,-1"),
        f"{_INVOKE}.logic_device_list: '0:0:3,-1' is not a device list (unexpected '-1' at column 7); "
        f"{EXPECTED_LIST}"),
}


@pytest.mark.parametrize("rule", DEPLOY_RULES)
def test_each_deploy_info_rule_names_file_path_and_value(tmp_path, rule):
    change, message = DEPLOY_RULES[rule]
    document = copy.deepcopy(BASE)
    change(document)
    path = write_json(tmp_path / "deploy.json", document)
    with pytest.raises(GeError) as error:
        load_deploy_info(path)
    assert str(error.value) == f"file={path}; {message}"


def write_invoking(path: Path, *files: str) -> str:
    """A deploy file at `path` whose one node "p" invokes sub-FlowGraphs "m0", "m1"... placed by `files`."""
    invokes = [{"invoke_name": f"m{i}", "deploy_info_file": file} for i, file in enumerate(files)]
    return write_json(path, {"batch_deploy_info": [{"flow_node_list": ["p"], "logic_device_list": "0:0:0",
                                                    "invoke_list": invokes}]})


def write_leaf(path: Path, device: str) -> str:
    """A deploy file at `path` placing one node "q" on `device`."""
    return write_json(path, {"deploy_info": [{"flow_node_name": "q", "logic_device_id": device}]})


def test_nested_files_resolve_against_the_folder_of_the_file_naming_them(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    write_leaf(tmp_path / "sub" / "inner.json", "0:0:1")
    write_invoking(tmp_path / "sub" / "middle.json", "inner.json")
    top = write_invoking(tmp_path / "top.json", "sub/middle.json")
    monkeypatch.chdir(tmp_path / "sub")
    middle = load_deploy_info(top).placements["p"].invokes[0].deploy_info
    inner = middle.placements["p"].invokes[0].deploy_info
    assert middle.path == str(tmp_path / "sub" / "middle.json")
    assert inner.path == str(tmp_path / "sub" / "inner.json")
    assert spellings(inner.placements["q"].devices) == ["0:0:1"]


def test_a_missing_nested_file_is_named_where_it_is_given(tmp_path):
    top = write_invoking(tmp_path / "top.json", "none.json")
    with pytest.raises(GeError) as error:
        load_deploy_info(top)
    assert str(error.value) == (f"file={top}; $.batch_deploy_info[0].invoke_list[0].deploy_info_file: "
                                f"'none.json' does not exist (looked for {tmp_path / 'none.json'})")


def test_a_defect_in_a_nested_file_names_that_file(tmp_path):
    inner = write_json(tmp_path / "inner.json", {"deploy_info": [{"flow_node_name": "q"}]})
    top = write_invoking(tmp_path / "top.json", "inner.json")
    with pytest.raises(GeError) as error:
        load_deploy_info(top)
    assert str(error.value) == f"file={inner}; $.deploy_info[0]: missing 'logic_device_id'"


def test_a_file_including_itself_is_a_cycle(tmp_path):
    top = write_invoking(tmp_path / "top.json", "./top.json")
    with pytest.raises(GeError) as error:
        load_deploy_info(top)
    assert str(error.value) == (f"file={top}; $.batch_deploy_info[0].invoke_list[0].deploy_info_file: "
                                f"'./top.json' includes itself: {top} -> {top}")


def test_files_including_each_other_are_a_cycle_named_in_full(tmp_path):
    a = write_invoking(tmp_path / "a.json", "b.json")
    b = write_invoking(tmp_path / "b.json", "a.json")
    with pytest.raises(GeError) as error:
        load_deploy_info(a)
    assert str(error.value) == (f"file={b}; $.batch_deploy_info[0].invoke_list[0].deploy_info_file: "
                                f"'a.json' includes itself: {a} -> {b} -> {a}")


def test_a_file_may_be_included_twice_without_a_cycle(tmp_path):
    write_leaf(tmp_path / "leaf.json", "0:0:1")
    top = write_invoking(tmp_path / "top.json", "leaf.json", "leaf.json")
    invokes = load_deploy_info(top).placements["p"].invokes
    assert [invoke.deploy_info.path for invoke in invokes] == [str(tmp_path / "leaf.json")] * 2


@pytest.mark.parametrize("content, message", [
    (None, "cannot read the deploy info: No such file or directory"),
    ("{", "the deploy info is not valid JSON: Expecting property name enclosed in double quotes at "
          "line 1 column 2"),
    ("[" * 5000 + "]" * 5000, "the deploy info is not valid JSON: arrays and objects nest deeper than 64 levels"),
    ('{"deploy_info": "\xff"}'.encode("latin-1"),
     "the deploy info is not valid JSON: byte 17 is not UTF-8 text (invalid start byte)"),
    ("[]", "$: expected an object, got a list []"),
])
def test_unreadable_deploy_files(tmp_path, content, message):
    path = tmp_path / "deploy.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(GeError) as error:
        load_deploy_info(str(path))
    assert str(error.value) == f"file={path}; {message}"


# -- resource config ----------------------------------------------------------------------------

RESOURCES = {"cluster": [{"cluster_nodes": [
    {"node_id": 0, "node_type": "server", "ipaddr": "10.0.0.1", "item_list": [{"item_id": 5}, {"item_id": 7}]},
    {"node_id": 2, "node_type": "server", "ipaddr": "10.0.0.2", "port": 2509, "item_list": []}]}],
    "node_def": [{"node_type": "server", "resource_type": "X86", "support_links": "[PCIE]", "item_type": "npu",
                  "inter_item_memory_access_mode": "PCIE"}],
    "item_def": [{"item_type": "npu", "resource_type": "Ascend", "memory": "[DDR:64GB]", "aic_type": "[V100:32]"}]}


def test_devices_are_items_by_position_and_servers_by_node_id(tmp_path):
    config = load_resource_config(write_json(tmp_path / "numa.json", RESOURCES))
    assert spellings(config.devices) == ["0:0:0", "0:0:1"]
    assert [(s.node_id, s.device_count, s.ipaddr) for s in config.clusters[0]] == [(0, 2, "10.0.0.1"),
                                                                                  (2, 0, "10.0.0.2")]
    assert config.server(0, 2).node_type == "server"
    assert config.server(0, 1) is None and config.server(1, 0) is None


def test_the_seed_numa_config_declares_four_devices():
    config = load_resource_config(str(DATA / "numa_config.json"))
    assert spellings(config.devices) == ["0:0:0", "0:0:1", "0:0:2", "0:0:3"]


@pytest.mark.parametrize("device", ["0:0:0", "0:0:1:7", "0:0:-1", "0:2:-1:0", "-1"])
def test_declared_devices_pass_the_check(tmp_path, device):
    config = load_resource_config(write_json(tmp_path / "numa.json", RESOURCES))
    config.check(parse_device_list(device)[0], "here")


@pytest.mark.parametrize("device, why", [
    ("0:0:2", "server 0 of cluster 0 has devices 0:0:0..0:0:1"),
    ("0:0:9:0", "server 0 of cluster 0 has devices 0:0:0..0:0:1"),
    ("0:2:0", "server 2 of cluster 0 has no devices"),
    ("0:1:0", "cluster 0 has servers 0, 2"),
    ("0:1:-1:0", "cluster 0 has servers 0, 2"),
    ("1:0:0", "it declares cluster 0"),
])
def test_undeclared_devices_are_named_with_what_is_declared(tmp_path, device, why):
    path = write_json(tmp_path / "numa.json", RESOURCES)
    with pytest.raises(GeError) as error:
        load_resource_config(path).check(parse_device_list(device)[0], "deploy info d.json $.x")
    assert str(error.value) == (f"file={path}; deploy info d.json $.x names device {device}, which the "
                                f"resource config does not declare ({why})")


def test_one_device_is_named_alone(tmp_path):
    resources = copy.deepcopy(RESOURCES)
    resources["cluster"][0]["cluster_nodes"][0]["item_list"].pop()
    resources["cluster"].append(resources["cluster"][0])
    path = write_json(tmp_path / "numa.json", resources)
    config = load_resource_config(path)
    for device, why in (("0:0:1", "server 0 of cluster 0 has device 0:0:0"),
                        ("2:0:0", "it declares clusters 0..1")):
        with pytest.raises(GeError) as error:
            config.check(parse_device_list(device)[0], "x")
        assert str(error.value) == (f"file={path}; x names device {device}, which the resource config does "
                                    f"not declare ({why})")


_NODE0 = "$.cluster[0].cluster_nodes[0]"
RESOURCE_RULES = {
    "no clusters key": (_drop("cluster"), "$: missing 'cluster'"),
    "no clusters": (_set("cluster", []), "$.cluster: expected a non-empty list, got []"),
    "no nodes": (_set("cluster.0.cluster_nodes", []),
                 "$.cluster[0].cluster_nodes: expected a non-empty list, got []"),
    "unknown root key": (_set("clusters", []),
                         "$: unknown key 'clusters' (did you mean 'cluster'?); expected one of cluster, item_def, node_def"),
    "unknown node key": (_set("cluster.0.cluster_nodes.0.devices", 2),
                         f"{_NODE0}: unknown key 'devices'; expected one of auth_lib_path, data_panel, deploy_res_path, "
                         f"ipaddr, is_local, item_list, memory, node_id, node_type, port"),
    "unknown item key": (_set("cluster.0.cluster_nodes.0.item_list.0.id", 2),
                         f"{_NODE0}.item_list[0]: unknown key 'id'; expected one of device_id, ipaddr, item_id"),
    "missing node_id": (_drop("cluster.0.cluster_nodes.0.node_id"), f"{_NODE0}: missing 'node_id'"),
    "missing item_list": (_drop("cluster.0.cluster_nodes.0.item_list"), f"{_NODE0}: missing 'item_list'"),
    "missing item_id": (_drop("cluster.0.cluster_nodes.0.item_list.1.item_id"),
                        f"{_NODE0}.item_list[1]: missing 'item_id'"),
    "negative node_id": (_set("cluster.0.cluster_nodes.0.node_id", -1),
                         f"{_NODE0}.node_id: expected an id in [0, 32767] (what a device list can name), got -1"),
    "node_id too large": (_set("cluster.0.cluster_nodes.0.node_id", 32768),
                          f"{_NODE0}.node_id: expected an id in [0, 32767] (what a device list can name), "
                          "got 32768"),
    "item_id too large": (_set("cluster.0.cluster_nodes.0.item_list.0.item_id", 2 ** 40),
                          f"{_NODE0}.item_list[0].item_id: expected an id in [0, 32767] (what a device list "
                          f"can name), got {2 ** 40}"),
    "node_id is text": (_set("cluster.0.cluster_nodes.0.node_id", "0"),
                        f'{_NODE0}.node_id: expected an integer, got a string "0"'),
    "bad ipaddr": (_set("cluster.0.cluster_nodes.0.ipaddr", "10.0.0"),
                   f'{_NODE0}.ipaddr: expected a dotted IPv4 address such as "192.168.1.2", got "10.0.0"'),
    "bad item ipaddr": (_set("cluster.0.cluster_nodes.0.item_list.0.ipaddr", "::1"),
                        f'{_NODE0}.item_list[0].ipaddr: expected a dotted IPv4 address such as "192.168.1.2", '
                        f'got "::1"'),
    "bad port": (_set("cluster.0.cluster_nodes.0.port", 70000),
                 f"{_NODE0}.port: expected a port number in [1, 65535], got 70000"),
    "is_local is text": (_set("cluster.0.cluster_nodes.0.is_local", "true"),
                         f'{_NODE0}.is_local: expected a boolean, got a string "true"'),
    "node_id twice": (_set("cluster.0.cluster_nodes.1.node_id", 0),
                      "$.cluster[0].cluster_nodes[1].node_id: node_id 0 is already used by "
                      "$.cluster[0].cluster_nodes[0]"),
    "item_id twice": (_set("cluster.0.cluster_nodes.0.item_list.1.item_id", 5),
                      f"{_NODE0}.item_list[1].item_id: item_id 5 is already used by {_NODE0}.item_list[0]"),
    "undefined node type": (_set("cluster.0.cluster_nodes.1.node_type", "arm"),
                            '$.cluster[0].cluster_nodes[1].node_type: "arm" is not defined in $.node_def '
                            '(it defines "server")'),
    "undefined item type": (_set("node_def.0.item_type", "gpu"),
                            '$.node_def[0].item_type: "gpu" is not defined in $.item_def (it defines "npu")'),
    "node type defined twice": (_set("node_def.1", copy.deepcopy(RESOURCES["node_def"][0])),
                                "$.node_def[1].node_type: node_type 'server' is already used by $.node_def[0]"),
    "node_def incomplete": (_drop("node_def.0.inter_item_memory_access_mode"),
                            "$.node_def[0]: missing 'inter_item_memory_access_mode'"),
    "topology without topos": (_set("cluster.0.nodes_topology", {"type": "star"}),
                               "$.cluster[0].nodes_topology: missing 'topos'"),
    "topology device is text": (_set("cluster.0.nodes_topology", {"type": "star", "topos": [
                                    {"plane_id": 0, "devices": ["0"]}]}),
                                "$.cluster[0].nodes_topology.topos[0].devices[0]: expected an integer, "
                                'got a string "0"'),
}


def test_a_resource_config_nested_too_deep_is_refused_naming_the_file(tmp_path):
    from dfir.driver.cache.resource_config import load_resource_config as load_for_the_cache
    path = tmp_path / "numa.json"
    path.write_text('{"cluster": ' + "[" * 3000 + "]" * 3000 + "}")
    for load in (load_resource_config, load_for_the_cache):
        with pytest.raises(GeError) as error:
            load(str(path))
        assert str(error.value) == (f"file={path}; the resource config is not valid JSON: arrays and objects "
                                    "nest deeper than 64 levels")


@pytest.mark.parametrize("rule", RESOURCE_RULES)
def test_each_resource_config_rule_names_file_path_and_value(tmp_path, rule):
    change, message = RESOURCE_RULES[rule]
    document = copy.deepcopy(RESOURCES)
    change(document)
    path = write_json(tmp_path / "numa.json", document)
    with pytest.raises(GeError) as error:
        load_resource_config(path)
    assert str(error.value) == f"file={path}; {message}"


def test_without_definition_lists_node_types_are_free(tmp_path):
    resources = {"cluster": copy.deepcopy(RESOURCES["cluster"])}
    resources["cluster"][0]["cluster_nodes"][1]["node_type"] = "anything"
    assert len(load_resource_config(write_json(tmp_path / "numa.json", resources)).clusters[0]) == 2


# -- deploy devices against the resource config -------------------------------------------------

@pytest.mark.parametrize("change, where, device", [
    (_set("batch_deploy_info.0.logic_device_list", "0:0:0,0:0:2"), "$.batch_deploy_info[0].flow_node_list[0] "
     "(node 'a')", "0:0:2"),
    (_set("deploy_info.0.logic_device_id", "0:1:-1"), "$.deploy_info[0].flow_node_name (node 'c')", "0:1:-1"),
    (_set("batch_deploy_info.0.redundant_logic_device_list", "0:0:4"),
     "$.batch_deploy_info[0].flow_node_list[0] (node 'a')", "0:0:4"),
    (_set("batch_deploy_info.0.invoke_list.0.logic_device_list", "0:0:0,0:0:3"),
     "$.batch_deploy_info[0].invoke_list[0] (invoke 'g')", "0:0:3"),
])
def test_every_device_of_the_deploy_info_must_be_declared(tmp_path, change, where, device):
    document = copy.deepcopy(BASE)
    document["batch_deploy_info"][0]["logic_device_list"] = "0:0:0,0:0:1"
    document["batch_deploy_info"][0]["invoke_list"][0]["logic_device_list"] = "0:0:1,0:0:0"
    change(document)
    deploy = write_json(tmp_path / "deploy.json", document)
    resources = write_json(tmp_path / "numa.json", RESOURCES)
    with pytest.raises(GeError) as error:
        check_deploy_devices(load_deploy_info(deploy), load_resource_config(resources))
    assert str(error.value).startswith(f"file={resources}; deploy info {deploy} {where} names device {device}, ")


def test_devices_of_nested_files_are_checked(tmp_path):
    inner = write_leaf(tmp_path / "inner.json", "0:0:2")
    top = write_invoking(tmp_path / "top.json", "inner.json")
    resources = write_json(tmp_path / "numa.json", RESOURCES)
    with pytest.raises(GeError) as error:
        check_deploy_devices(load_deploy_info(top), load_resource_config(resources))
    assert str(error.value) == (f"file={resources}; deploy info {inner} $.deploy_info[0].flow_node_name (node 'q') "
                                f"names device 0:0:2, which the resource config does not declare (server 0 of "
                                f"cluster 0 has devices 0:0:0..0:0:1)")
