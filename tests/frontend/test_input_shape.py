"""`ge.inputShape` parsing and resolution, `ge.outputMaxSize` parsing, and GraphProcessPoint
compile configs (dfir/ge/input_shape.py, dfir/ge/graph_config.py)."""
from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import dfir.data_type as dt
from dfir.dialects.ge_types import DimRange
from dfir.frontend.ge.graph_config import (GraphConfig, InputDesc, load_graph_config, parse_graph_config,
                                  parse_output_max_size)
from dfir.frontend.ge.input_shape import ShapeEntry, input_shape_problem, parse_input_shape, resolve_input_shape
from dfir.frontend.options import validate_options
from dfir.ge.error import GeError

R = DimRange


def fixed(n):
    return R(n, n)


# --- parsing ---------------------------------------------------------------------------------------

def test_by_name_as_the_seed_spells_it():
    spec = parse_input_shape("input_name1:8~20,3,5,-1;input_name2:5,3~9,10,-1")
    assert spec.by_name
    assert spec.entries == (
        ShapeEntry("input_name1", (R(8, 20), fixed(3), fixed(5), R(0, None))),
        ShapeEntry("input_name2", (fixed(5), R(3, 9), fixed(10), R(0, None))))


def test_by_index_as_the_seed_spells_it():
    spec = parse_input_shape("1,3,1~1728,1~1728;2")
    assert not spec.by_name
    assert spec.entries == (ShapeEntry(None, (fixed(1), fixed(3), R(1, 1728), R(1, 1728))),
                            ShapeEntry(None, (fixed(2),)))


def test_a_name_runs_to_the_last_colon_and_spaces_are_ignored():
    spec = parse_input_shape(" scope:x:0 : 1 , 2~4 ; y:-1")
    assert spec.entries == (ShapeEntry("scope:x:0", (fixed(1), R(2, 4))), ShapeEntry("y", (R(0, None),)))


def test_an_empty_entry_is_a_scalar():
    assert parse_input_shape("x:;y:3").entries == (ShapeEntry("x", ()), ShapeEntry("y", (fixed(3),)))
    assert parse_input_shape("2;;3").entries[1] == ShapeEntry(None, ())


_dims = st.lists(st.one_of(st.integers(0, 5000).map(fixed), st.just(R(0, None)),
                           st.tuples(st.integers(0, 100), st.integers(0, 100)).map(
                               lambda p: R(min(p), max(p)))), max_size=5)


def _spell(dim: DimRange) -> str:
    if dim.hi is None:
        return "-1"
    return str(dim.lo) if dim.is_fixed else f"{dim.lo}~{dim.hi}"


@given(st.lists(st.tuples(st.from_regex(r"[A-Za-z_][A-Za-z0-9_:./]{0,8}", fullmatch=True), _dims),
                min_size=1, max_size=4, unique_by=lambda e: e[0]))
def test_spelled_entries_parse_back(entries):
    text = ";".join(f"{name}:{','.join(_spell(d) for d in dims)}" for name, dims in entries)
    assert parse_input_shape(text).entries == tuple(ShapeEntry(n, tuple(d)) for n, d in entries)


@pytest.mark.parametrize("text, message", [
    ("x:1;2", 'ge.inputShape "x:1;2" is malformed at column 5: unexpected \'2\', expected an input '
              "name and ':'\n  x:1;2\n      ^"),
    ("1,a", 'ge.inputShape "1,a" is malformed at column 3: unexpected \'a\', expected a size or -1\n'
            "  1,a\n    ^"),
    ("1~-1", 'ge.inputShape "1~-1" is malformed at column 3: unexpected \'-1\', expected a size\n'
             "  1~-1\n    ^"),
    ("x:1,2;", 'ge.inputShape "x:1,2;" is malformed at column 7: unexpected the end, expected an '
               "input name and ':'\n  x:1,2;\n        ^"),
    ("x:1,20~8", 'ge.inputShape "x:1,20~8" is malformed at column 5: range 20~8 has its lower bound '
                 "above its upper bound\n  x:1,20~8\n      ^"),
    ("x:1;x:2", 'ge.inputShape "x:1;x:2" gives input \'x\' more than once'),
    ("  ", 'ge.inputShape "  " is empty; expected entries such as "x:1,3~8" or "1,3~8;2"'),
])
def test_malformed_specs_quote_the_spec_and_point_at_the_column(text, message):
    with pytest.raises(GeError) as error:
        parse_input_shape(text)
    assert error.value.error_message == message
    assert error.value.context == {"option": "ge.inputShape"}


def test_the_option_validator_reports_the_same_problem():
    assert input_shape_problem("1,3;2") is None
    with pytest.raises(GeError) as error:
        validate_options({"ge.inputShape": "1,a"}, api="dfir.compile")
    assert error.value.error_message == (
        "option ge.inputShape has malformed value '1,a': it is malformed at column 3: unexpected 'a', "
        "expected a size or -1\n  1,a\n    ^")


# --- resolution --------------------------------------------------------------------------------

INPUTS = [("x", 0), ("hw", 1)]


def test_by_name_resolves_to_indexes_and_leaves_other_inputs_alone():
    assert resolve_input_shape(parse_input_shape("hw:2"), INPUTS, "g") == {1: (fixed(2),)}


def test_by_index_gives_every_input_in_index_order():
    resolved = resolve_input_shape(parse_input_shape("1,3~4;2"), [("b", 1), ("a", 0)], "g")
    assert resolved == {0: (fixed(1), R(3, 4)), 1: (fixed(2),)}


def test_a_name_the_graph_lacks_is_an_error_listing_its_inputs():
    with pytest.raises(GeError) as error:
        resolve_input_shape(parse_input_shape("y:1"), INPUTS, "g")
    assert error.value.error_message == ("ge.inputShape names input 'y', but graph g has no input of "
                                         "that name; its inputs are ['x', 'hw']")


def test_by_index_needs_one_entry_per_input():
    with pytest.raises(GeError) as error:
        resolve_input_shape(parse_input_shape("1,2"), INPUTS, "g")
    assert error.value.error_message == 'ge.inputShape "1,2" gives 1 shape by index, but graph g has 2 inputs'


# --- ge.outputMaxSize ----------------------------------------------------------------------------

def test_output_max_size_is_a_list_with_empty_entries_as_gaps():
    assert parse_output_max_size("107495424") == [107495424]
    assert parse_output_max_size("1024; ;2048;") == [1024, None, 2048, None]


@pytest.mark.parametrize("text, problem", [
    ("abcd", "entry 0 'abcd' is not a byte count"),
    ("1;-2", "entry 1 '-2' is not a byte count"),
    ("111111111111111111111111111", "entry 0 111111111111111111111111111 is above the int64 maximum "
                                    "9223372036854775807"),
    (" ", "expected byte counts such as '1024' or '1024;;2048'"),
])
def test_malformed_output_max_size(text, problem):
    with pytest.raises(ValueError, match=f"^{problem}$"):
        parse_output_max_size(text)
    with pytest.raises(GeError) as error:
        validate_options({"ge.outputMaxSize": text}, api="dfir.compile")
    assert error.value.error_message == f"option ge.outputMaxSize has malformed value {text!r}: {problem}"


# --- compile configs ------------------------------------------------------------------------------

SEED_CONFIG = {
    "build_options": {"ge.inputShape": "1,3,1~1728,1~1728;2", "ge.outputMaxSize": "107495424"},
    "inputs_tensor_desc": [{"data_type": "DT_FLOAT", "shape": [1, 3, -1, -1], "format": "NCHW"},
                           {"data_type": "DT_INT32", "shape": [2], "format": "ND"}],
}


def test_the_seed_config_loads(tmp_path):
    path = tmp_path / "resize.json"
    path.write_text(json.dumps(SEED_CONFIG))
    assert load_graph_config(path) == GraphConfig(
        str(path), SEED_CONFIG["build_options"],
        (InputDesc(dt.DT_FLOAT, (1, 3, -1, -1), "NCHW"), InputDesc(dt.DT_INT32, (2,), "ND")))


def test_desc_defaults_are_float_and_nd():
    config = parse_graph_config({"inputs_tensor_desc": [{"shape": [-1]}]}, "c.json")
    assert config == GraphConfig("c.json", {}, (InputDesc(dt.DT_FLOAT, (-1,), "ND"),))
    assert parse_graph_config({}, "c.json").inputs is None


@pytest.mark.parametrize("data, message", [
    ([], "compile config c.json: $: expected an object, got []"),
    ({"build_option": {}}, "compile config c.json: $.build_option is not a graph compile config key; "
                           "expected build_options or inputs_tensor_desc"),
    ({"build_options": []}, "compile config c.json: $.build_options: expected an object, got []"),
    ({"build_options": {"ge.inputShape": "1,a"}},
     "compile config c.json: $.build_options[\"ge.inputShape\"]: option ge.inputShape has malformed "
     "value '1,a': it is malformed at column 3: unexpected 'a', expected a size or -1\n  1,a\n    ^"),
    ({"build_options": {"ge.outputMaxSize": 5}},
     "compile config c.json: $.build_options[\"ge.outputMaxSize\"]: option ge.outputMaxSize has a int "
     "value 5, expected str"),
    ({"build_options": {"ge.bogus": "1"}},
     "compile config c.json: $.build_options[\"ge.bogus\"]: unknown option ge.bogus; known options: "),
    ({"inputs_tensor_desc": {}}, "compile config c.json: $.inputs_tensor_desc: expected a list, got {}"),
    ({"inputs_tensor_desc": [{"shape": [1], "dtype": "DT_FLOAT"}]},
     "compile config c.json: $.inputs_tensor_desc[0].dtype is not a tensor desc key; expected "
     "data_type, shape or format"),
    ({"inputs_tensor_desc": [{"shape": [1]}, {"data_type": "FLOAT", "shape": [1]}]},
     "compile config c.json: $.inputs_tensor_desc[1].data_type: expected a tensor data type such as "
     "\"DT_FLOAT\", got \"FLOAT\""),
    ({"inputs_tensor_desc": [{"data_type": "DT_STRING", "shape": [1]}]},
     "compile config c.json: $.inputs_tensor_desc[0].data_type: expected a tensor data type such as "
     "\"DT_FLOAT\", got \"DT_STRING\""),
    ({"inputs_tensor_desc": [{"shape": [1, -2]}]},
     "compile config c.json: $.inputs_tensor_desc[0].shape: expected a list of ints >= -1 (-1 = "
     "dynamic), got [1, -2]"),
    ({"inputs_tensor_desc": [{"shape": [1]}, {"shape": [2], "format": "NC1HWC0"}]},
     "compile config c.json: $.inputs_tensor_desc[1].format: expected one of ND, NCHW, NHWC, got "
     "\"NC1HWC0\""),
])
def test_config_errors_name_the_file_and_json_path(data, message):
    with pytest.raises(GeError) as error:
        parse_graph_config(data, "c.json")
    assert error.value.error_message.startswith(message)
    assert error.value.context == {"file": "c.json"}


def test_unreadable_and_invalid_config_files(tmp_path):
    with pytest.raises(GeError) as error:
        load_graph_config(tmp_path / "missing.json")
    assert error.value.error_message == (f"compile config {tmp_path / 'missing.json'} cannot be read: "
                                         "No such file or directory")
    bad = tmp_path / "bad.json"
    bad.write_text('{"build_options": {,}}')
    with pytest.raises(GeError) as error:
        load_graph_config(bad)
    assert error.value.error_message == (f"compile config {bad} is not valid JSON: Expecting property "
                                         "name enclosed in double quotes at line 1 column 20")


def test_a_config_file_that_is_no_json_text_is_named(tmp_path):
    config = tmp_path / "deep.json"
    config.write_text('{"build_options": ' + "{\"a\": " * 2000 + "1" + "}" * 2000 + "}")
    with pytest.raises(GeError) as error:
        load_graph_config(config)
    assert error.value.error_message == (f"compile config {config} is not valid JSON: arrays and objects nest "
                                         "deeper than 64 levels")
    config.write_bytes(b'{"build_options": {"ge.inputShape": "\xc3"}}')
    with pytest.raises(GeError) as error:
        load_graph_config(config)
    assert error.value.error_message == (f"compile config {config} is not valid JSON: byte 37 is not UTF-8 "
                                         "text (invalid continuation byte)")
    assert error.value.context == {"file": str(config)}


@pytest.mark.parametrize("key, value", [("ge.inputShape", "x:1,2"), ("ge.outputMaxSize", "64")])
def test_a_flow_graph_refuses_the_options_of_one_ge_graph(key, value):
    import dfir
    import dfir.dataflow as df
    from dfir.frontend.dataflow import session
    x = df.FlowData(name="x")
    node = df.pyflow(lambda a: a).fnode()(x)
    message = (f"option {key} describes one GE graph and has no effect on a FlowGraph: give it in the "
               "build_options of the compile config of the GraphProcessPoint that runs the graph, or compile "
               "the Graph on its own")
    with pytest.raises(GeError) as error:
        df.FlowGraph([node], {key: value})
    assert (error.value.error_message, error.value.api_name, error.value.context) == (message, "FlowGraph",
                                                                                     {"option": key})
    with pytest.raises(GeError) as error:
        dfir.compile(df.FlowGraph([node]), {key: value})
    assert (error.value.error_message, error.value.api_name) == (message, "dfir.compile")
    with pytest.raises(GeError) as error:
        df.init({key: value})
    assert (error.value.error_message, error.value.api_name) == (message, "init")
    assert session.global_options() == {}  # the refused init set nothing
