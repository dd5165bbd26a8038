"""Config text decoded once for every config reader (dfir/core/json_text.py): documents, and the
reasons text is not one."""
from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dfir.core.json_text import MAX_NESTING, NotJson, decode_json

documents = st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                         lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                         max_leaves=20)


@given(documents)
def test_a_document_decodes_as_json_decodes_it(document):
    text = json.dumps(document)
    assert decode_json(text) == decode_json(text.encode()) == json.loads(text)


@given(st.integers(1, 3 * MAX_NESTING), st.sampled_from(["[", '{"k": ']))
def test_a_document_may_nest_max_nesting_levels(depth, opener):
    closer = "]" if opener == "[" else "}"
    text = opener * depth + ("1" if opener != "[" else "") + closer * depth
    if depth <= MAX_NESTING:
        assert decode_json(text) is not None
    else:
        with pytest.raises(NotJson) as error:
            decode_json(text)
        assert str(error.value) == "arrays and objects nest deeper than 64 levels"


@pytest.mark.parametrize("text, reason", [
    ("[" * 100_000, "arrays and objects nest deeper than 64 levels"),  # past Python's recursion limit
    ('{"a": 1', "Expecting ',' delimiter at line 1 column 8"),
    ("", "Expecting value at line 1 column 1"),
    (b'["\xff"]', "byte 2 is not UTF-8 text (invalid start byte)"),
])
def test_text_that_is_no_document_says_why(text, reason):
    with pytest.raises(NotJson) as error:
        decode_json(text)
    assert str(error.value) == reason
    assert isinstance(error.value, ValueError)
