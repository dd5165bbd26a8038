"""A misspelt option (`df.init`, a FlowGraph's options, `dfir.compile`, `ge.offline_compile`) or
deploy info key is refused with the closest valid name suggested; GE's documented options
(`ge.flowGraphMemMaxSize`, `ge.externalWeight`, `ge.exec.enableDump`, the dynamic-gear options)
are checked with GE's rules, and those dfir does not act on are accepted with one warning saying
why (`ge.flowGraphMemMaxSize` acts: tests/runtime/test_memory_pools_option.py)."""
from __future__ import annotations

import json
import logging

import pytest

import dfir
import dfir.dataflow as df
from dfir.core.closest import closest_name
from dfir.core.errors import GeError
from dfir.frontend import options
from dfir.frontend.deploy import load_deploy_info
from dfir.frontend.options import KNOWN_OPTIONS, unknown_option_message, validate_options
from dfir.ge.offline_compile import build_finalize, build_initialize

KNOWN = str(sorted(KNOWN_OPTIONS))


@pytest.fixture(autouse=True)
def _fresh_session():
    df.finalize()
    yield
    df.finalize()
    build_finalize()


@pytest.mark.parametrize("word, closest", [
    ("ge.graphKey", "ge.graph_key"), ("ge.exec.deviceID", "ge.exec.deviceId"), ("GE.RUNFLAG", "ge.runFlag"),
    ("ge.inputshape", "ge.inputShape"), ("ge.flowGraphMemMax", "ge.flowGraphMemMaxSize"),
    ("dfir.runtime.channeldepth", "dfir.runtime.channel_depth"), ("ge.bogus", None), ("x", None),
])
def test_the_closest_option_is_found_case_aside(word, closest):
    assert closest_name(word, KNOWN_OPTIONS) == closest


def test_an_unknown_option_to_init_suggests_the_closest():
    with pytest.raises(GeError) as caught:
        df.init({"ge.graphKey": "demo"})
    assert str(caught.value) == ("init failed; option=ge.graphKey; unknown option ge.graphKey "
                                 f"(did you mean ge.graph_key?); known options: {KNOWN}")


def test_an_unknown_option_with_nothing_close_lists_the_known_ones_only():
    assert unknown_option_message("ge.bogus") == f"unknown option ge.bogus; known options: {KNOWN}"


def test_flow_graph_and_compile_options_suggest_too():
    graph_error = "option=ge.exec.deviceID; unknown option ge.exec.deviceID (did you mean ge.exec.deviceId?)"
    with pytest.raises(GeError) as caught:
        df.FlowGraph([df.FlowNode(1, 1)(df.FlowData())], {"ge.exec.deviceID": "0"})
    assert str(caught.value).startswith(f"FlowGraph failed; {graph_error}")
    with pytest.raises(GeError) as caught:
        dfir.compile(df.FlowGraph([df.FlowNode(1, 1)(df.FlowData())]), {"ge.exec.deviceID": "0"})
    assert str(caught.value).startswith(f"dfir.compile failed; {graph_error}")


def test_offline_compile_options_suggest_too():
    with pytest.raises(GeError) as caught:
        build_initialize({"ge.socversion": "Ascend910B"})
    assert str(caught.value) == ("BuildInitialize failed; option=ge.socversion; unknown option ge.socversion "
                                 f"(did you mean ge.socVersion?); known options: {KNOWN}")


def test_an_unknown_deploy_info_key_suggests_the_closest(tmp_path):
    path = tmp_path / "deploy.json"
    path.write_text(json.dumps({"batch_deploy_info": [{"flow_node_list": ["a"], "logic_device_list": "0:0:0"}],
                                "keep_logic_device_orders": True}))
    with pytest.raises(GeError) as caught:
        load_deploy_info(str(path))
    assert str(caught.value) == (f"file={path}; $: unknown key 'keep_logic_device_orders' (did you mean "
                                 "'keep_logic_device_order'?); expected one of batch_deploy_info, deploy_info, "
                                 "dynamic_schedule_enable, keep_logic_device_order")


GE_OPTIONS = {
    "ge.externalWeight": ("1", "dfir keeps weights in the .om's WEIGHTS_DATA partition, which every instance "
                          "of a model maps without copying"),
    "ge.externalWeightDir": ("/tmp/weights", "dfir keeps weights in the .om's WEIGHTS_DATA partition, which "
                             "every instance of a model maps without copying"),
    "ge.exec.enableDump": ("1", "dfir dumps no operator data; `dfir inspect` and `dfir view` show what a "
                           "model holds"),
    "ge.exec.dumpPath": ("/tmp/dump", "dfir dumps no operator data; `dfir inspect` and `dfir view` show what a "
                         "model holds"),
    "ge.exec.dumpStep": ("0|5|10-20", "dfir dumps no operator data; `dfir inspect` and `dfir view` show what a "
                         "model holds"),
    "ge.exec.dumpMode": ("all", "dfir dumps no operator data; `dfir inspect` and `dfir view` show what a "
                         "model holds"),
    "ge.dynamicDims": ("20,20,1,1;40,40,2,2;80,60,4,4", None),
    "ge.dynamicBatchSize": ("1,2,4,8", None),
    "ge.dynamicImageSize": ("416,416;832,832", None),
    "ge.dynamicNodeType": ("0", None),
}
NO_GEARS = ("dfir compiles each GE graph once for every size ge.inputShape allows, so every gear runs without "
            "a graph of its own")


@pytest.mark.parametrize("key", GE_OPTIONS)
def test_a_documented_ge_option_is_accepted_with_one_warning_saying_why(key, caplog, monkeypatch):
    value, why = GE_OPTIONS[key]
    monkeypatch.setattr(options, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="dfir.options"):
        assert validate_options({key: value}, "init") == {key: value}
        df.init({key: value})
        df.FlowGraph([df.FlowNode(1, 1)(df.FlowData())], {key: value})
    assert caplog.messages == [f"option {key} is accepted but has no effect in this version of dfir: "
                               f"{why or NO_GEARS}"]


@pytest.mark.parametrize("key, value, problem", [
    ("ge.flowGraphMemMaxSize", "10", "pool '10': expected a pool size in [1024, 274877906944] bytes, "
                                     "optionally ':' and a request limit"),
    ("ge.flowGraphMemMaxSize", "4096:512", "pool '4096:512': expected a request limit of 0 or in "
                                           "[1024, 2147483648] bytes"),
    ("ge.flowGraphMemMaxSize", "4096:0,2048:1024", None),
    ("ge.flowGraphMemMaxSize", "274877906944,1024", "the pools add up to 274877907968 bytes, more than "
                                                    "274877906944"),
    ("ge.flowGraphMemMaxSize", ",".join(["1024"] * 129), "expected at most 128 memory pools, got 129"),
    ("ge.flowGraphMemMaxSize", "ten", "pool 'ten': expected a pool size in [1024, 274877906944] bytes, "
                                      "optionally ':' and a request limit"),
    ("ge.externalWeight", "3", "expected one of ['0', '1', '2']"),
    ("ge.exec.enableDump", "2", "expected one of ['0', '1']"),
    ("ge.exec.dumpMode", "some", "expected one of ['input', 'output', 'all']"),
    ("ge.dynamicDims", "1,2", "expected 2 to 256 gears separated by ';', got 1"),
    ("ge.dynamicDims", "1,2;3", "gear '3' has 1 of 2 sizes"),
    ("ge.dynamicDims", "1;2,3", "gear '2,3' has 2 sizes, more than 1"),
    ("ge.dynamicDims", "1,x;2,3", "gear '1,x' is not a list of positive sizes"),
    ("ge.dynamicDims", "1;2;4", None),
    ("ge.dynamicBatchSize", "8", "expected 2 to 256 gears separated by ',', got 1"),
    ("ge.dynamicBatchSize", "1,0", "gear '0' is not a list of positive sizes"),
    ("ge.dynamicBatchSize", ",".join(["1"] * 257), "expected 2 to 256 gears separated by ',', got 257"),
    ("ge.dynamicImageSize", "416,416;832", "gear '832' has 1 of 2 sizes"),
    ("ge.dynamicImageSize", "416,416,3;832,832,3", "gear '416,416,3' has 3 sizes, more than 2"),
    ("ge.dynamicNodeType", "2", "expected one of ['0', '1']"),
])
def test_documented_ge_options_are_checked_with_ges_rules(key, value, problem):
    if problem is None:
        assert validate_options({key: value}, "init") == {key: value}
        return
    with pytest.raises(GeError) as caught:
        validate_options({key: value}, "init")
    assert str(caught.value) == f"init failed; option={key}; option {key} has malformed value {value!r}: {problem}"
