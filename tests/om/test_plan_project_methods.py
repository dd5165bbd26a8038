"""`PyProject.methods`: written only when a func is served by a method of another name."""
import json

import pytest

import dfir
import dfir.dataflow as df
from dfir.core.errors import GeError
from dfir.om.plan import Func, Plan, PyProject, process_point_from_json
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om


def project(methods):
    return PyProject(0, "func_add", "Add", (Func("Add1", (0, 2), (0,), False),), {}, {}, methods)


def test_methods_round_trip_and_are_absent_when_there_are_none():
    renamed = project({"Add1": "add1"})
    assert renamed.to_json()["methods"] == {"Add1": "add1"}
    assert process_point_from_json(renamed.to_json(), "pp") == renamed
    plain = project({})
    assert "methods" not in plain.to_json()
    assert process_point_from_json(plain.to_json(), "pp").methods == {}


def test_a_method_that_is_no_string_is_named_by_its_path():
    document = {**project({}).to_json(), "methods": {"Add1": 3}}
    with pytest.raises(GeError, match=r'pp\.methods\.Add1: expected a string, got 3'):
        process_point_from_json(document, "pp")



@df.pyflow
def identity(x):
    return x


@pytest.mark.parametrize("catching", [False, True])
def test_exception_catch_is_written_only_when_on(catching):
    data = df.FlowData()
    graph = df.FlowGraph([identity.fnode()(data)], name=f"catching_{catching}")
    if catching:
        graph.set_inputs_align_attrs(8, 1000)
        graph.set_exception_catch(True)
    document = json.loads(bytes(read_om(dfir.compile(graph).om).models[0].partition(PartitionType.FLOW_MODEL).data))
    assert document.get("exception_catch", False) is catching
    assert Plan.from_json(document).exception_catch is catching
