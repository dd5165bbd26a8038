"""docs/ge-compat.md is a checked contract: every GE DataFlow name it lists either works in dfir
(present, with GE's parameter names in GE's order) or is refused with a stated reason."""
import enum
import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ge-compat.md"
INCLUDE = ROOT / "runtime" / "include" / "flow_func"
DFIR_MODULE = {"dataflow": "dfir.dataflow", "dataflow.flow_func": "dfir.flow_func",
               "dataflow.data_type": "dfir.data_type", "dataflow.utils": "dfir.dataflow.utils",
               "dataflow.utils.name_scope": "dfir.dataflow.utils.name_scope",
               "dataflow.utils.log": "dfir.dataflow.utils.log"}
ROW = re.compile(r"^\| `(?P<name>[^`]+)` \| (?P<second>[^|]*(?:\\\|[^|]*)*) \| (?P<status>\w+) \| (?P<note>.*) \|$")


def _rows(section: str) -> list[dict]:
    text = DOC.read_text().split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return [m.groupdict() for m in map(ROW.match, text.splitlines()) if m]


PYTHON_ROWS = _rows("Python API")
CPP_ROWS = _rows("C++ API")


def _split_module(qualified: str) -> tuple[str, str]:
    for module in sorted(DFIR_MODULE, key=len, reverse=True):
        if qualified.startswith(module + "."):
            return module, qualified[len(module) + 1:]
    raise AssertionError(f"{qualified} names no GE module")


def _resolve(qualified: str):
    module, path = _split_module(qualified)
    obj = importlib.import_module(DFIR_MODULE[module])
    for part in path.split("."):
        owner = obj
        obj = owner.__dict__[part] if isinstance(owner, type) and part in owner.__dict__ else getattr(owner, part, None)
        if obj is None and isinstance(owner, type):
            obj = getattr(owner(), part)  # an attribute each instance sets, such as FlowInfo.start_time
        assert obj is not None, f"{qualified}: dfir has no {part}"
    return obj


def _parameters(obj) -> list[str]:
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    kinds = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return [kinds.get(p.kind, "") + p.name for p in inspect.signature(obj).parameters.values()
            if p.name not in ("self", "cls")]


def test_the_doc_lists_both_apis():
    assert len(PYTHON_ROWS) > 200 and len(CPP_ROWS) > 180


@pytest.mark.parametrize("row", PYTHON_ROWS + CPP_ROWS, ids=lambda r: r["name"])
def test_every_name_works_or_is_refused_with_a_reason(row):
    assert row["status"] in ("works", "refused")
    if row["status"] == "refused":
        assert row["note"].strip(), f"{row['name']} is refused without a reason"


@pytest.mark.parametrize("row", [r for r in PYTHON_ROWS if r["status"] == "works"], ids=lambda r: r["name"])
def test_python_names_that_work_have_ges_parameters(row):
    obj = _resolve(row["name"])
    expected = row["second"].strip()
    owner, _, attribute = row["name"].rpartition(".")
    if not expected or "*" in expected or isinstance(obj, property) or not callable(obj):
        return  # a property in GE may be a plain attribute here (FlowInfo.start_time)
    if attribute == "__init__" and isinstance(_resolve(owner), enum.EnumMeta):
        return  # GE's enum __init__ stores each member's value; members are looked up the same way
    names = [n.strip() for n in expected.strip("()").split(",") if n.strip()]
    assert _parameters(obj)[:len(names)] == names


def _header_closure(header: str, seen: set[str]) -> str:
    path = INCLUDE / header
    if header in seen or not path.exists():
        return ""
    seen.add(header)
    text = path.read_text()
    for included in re.findall(r'#include\s+"(?:flow_func/)?([\w.]+)"', text):
        text += _header_closure(included, seen)
    return text


@pytest.mark.parametrize("row", [r for r in CPP_ROWS if r["status"] == "works"], ids=lambda r: r["name"])
def test_cpp_names_that_work_are_declared_under_ges_header(row):
    header = row["second"].strip().strip("`")
    assert (INCLUDE / header).exists(), f"no flow_func/{header}"
    identifier = row["name"].split("::")[-1].lstrip("~")
    assert re.search(rf"\b{identifier}\b", _header_closure(header, set()))


def test_the_options_table_says_what_dfir_does_with_each_ge_option():
    from dfir.frontend.options import KNOWN_OPTIONS
    text = DOC.read_text().split("## Options\n", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([^`]+)` \| (acts|no effect) \| .+ \|$", text, re.M))
    rows.update(re.findall(r"^\| `([^`]+)` \| (acts) \|\s+\|$", text, re.M))
    expected = {key: "acts" if known.acted_on else "no effect"
                for key, known in KNOWN_OPTIONS.items() if not key.startswith("dfir.")}
    assert rows == expected
