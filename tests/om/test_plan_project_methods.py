"""`PyProject.methods`: written only when a func is served by a method of another name."""
import pytest

from dfir.core.errors import GeError
from dfir.om.plan import Func, PyProject, process_point_from_json


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
