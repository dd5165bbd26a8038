"""`dfir inspect` shows a node's replicas and routing as `dfir view` does: the devices of its
instances, its dispatch rule, balance role and input alignment, and the graph's alignment."""
from __future__ import annotations

import json

import pytest

from dfir.core.errors import GeError
from dfir.lowering.om_writer import write_om
from dfir.om.schema import PartitionType
from dfir.tools.inspect_om import inspect_om

ALIGN = {"cache": 8, "dropout": True, "timeout": 1000}


def _node(name: str, inputs: list, **routing) -> dict:
    return {"name": name, "alias": None, "loc": None, "input_num": len(inputs), "output_num": 1,
            "inputs": inputs, "attrs": {}, "invokes": {},
            "pp": {"kind": "py_udf", "udf": 0, "funcs": [{"name": "f", "inputs": list(range(len(inputs))),
                                                          "outputs": [0], "stream_input": False}]},
            **routing}


def _plan(**changes) -> dict:
    plan = {
        "format": 2, "name": "routed",
        "inputs": [{"name": "x", "index": 0, "dtype": None, "shape": None},
                   {"name": "y", "index": 1, "dtype": None, "shape": None}],
        "outputs": [{"node": 2, "port": 0}],
        "nodes": [_node("pre", [{"data": 0}], dispatch="round_robin", balance="scatter", align=None),
                  _node("work", [{"node": 0, "port": 0}], dispatch="route_label", balance=None, align=None),
                  _node("join", [{"node": 1, "port": 0}, {"data": 1}], dispatch="round_robin",
                        balance="gather", align=ALIGN)],
        "units": [{"node": 0, "instance": 0, "device": "-1"},
                  {"node": 1, "instance": 0, "device": "0:0:0"},
                  {"node": 1, "instance": 1, "device": "0:0:1"},
                  {"node": 2, "instance": 0, "device": "-1"}],
        "order": [0, 1, 2], "align": ALIGN,
        "udfs": [{"partition": 0, "sha256": "0" * 64, "size": 0}], "ge_graphs": [],
    }
    return {**plan, **changes}


def _om(plan: dict) -> bytes:
    text = json.dumps(plan, sort_keys=True, separators=(",", ":")).encode()
    return write_om([[(PartitionType.FLOW_MODEL, text), (PartitionType.UDF_PAYLOAD, b"payload")]], name="routed")


def _plan_lines(report: str) -> list[str]:
    lines = report.splitlines()
    return [line.strip() for line in lines[lines.index('  plan "routed" format=2') + 1:]]


def test_replicas_dispatch_balance_and_alignment_are_shown():
    assert _plan_lines(inspect_om(_om(_plan()))) == [
        'input 0 "x" dtype=null shape=null',
        'input 1 "y" dtype=null shape=null',
        "output 0 node=2 port=0",
        'align {"cache":8,"dropout":true,"timeout":1000}',
        'node 0 "pre" pp=py_udf device="-1" inputs=[data:0] balance=scatter udf=0 funcs=[f]',
        'node 1 "work" pp=py_udf device="0:0:0" inputs=[node:0.0] instances=["0:0:0","0:0:1"] '
        'dispatch=route_label udf=0 funcs=[f]',
        'node 2 "join" pp=py_udf device="-1" inputs=[node:1.0,data:1] balance=gather '
        'align={"cache":8,"dropout":true,"timeout":1000} udf=0 funcs=[f]',
        "order [0,1,2]",
    ]


def test_defaults_and_an_older_plan_without_routing_fields_show_nothing_more():
    bare = [{key: value for key, value in node.items() if key not in ("dispatch", "balance", "align")}
            for node in _plan()["nodes"]]
    for plan in (_plan(align=None, nodes=bare), {key: value for key, value in _plan(nodes=bare).items()
                                                 if key != "align"}):
        lines = _plan_lines(inspect_om(_om(plan)))
        assert lines[3:6] == [
            'node 0 "pre" pp=py_udf device="-1" inputs=[data:0] udf=0 funcs=[f]',
            'node 1 "work" pp=py_udf device="0:0:0" inputs=[node:0.0] instances=["0:0:0","0:0:1"] udf=0 funcs=[f]',
            'node 2 "join" pp=py_udf device="-1" inputs=[node:1.0,data:1] udf=0 funcs=[f]',
        ]


@pytest.mark.parametrize("change, message", [
    (lambda p: p["nodes"][2]["align"].pop("cache"),
     "model 0 execution plan: nodes[2].align has no key 'cache', got "
     "{\"dropout\":true,\"timeout\":1000}"),
    (lambda p: p["align"].update(dropout=1),
     "model 0 execution plan: align.dropout must be a boolean, got 1"),
    (lambda p: p["nodes"][0].update(balance=2),
     "model 0 execution plan: nodes[0].balance must be a string, got 2"),
    (lambda p: p["nodes"][1].update(dispatch=None),
     "model 0 execution plan: nodes[1].dispatch must be a string, got null"),
])
def test_a_malformed_routing_field_is_a_ge_error_naming_its_json_path(change, message):
    plan = json.loads(json.dumps(_plan()))
    change(plan)
    with pytest.raises(GeError) as caught:
        inspect_om(_om(plan))
    assert str(caught.value) == message
