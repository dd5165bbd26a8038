"""The package's imports run one way: no cycle between files, no import up the layering.

The source tree is read with `ast`, not imported, so an import inside a function counts like any
other; one under `if TYPE_CHECKING:` never runs and so cannot close a cycle, but it must still go
down the layering. `MAY_IMPORT` is the intended layering as data: each package (or module prefix)
names the dfir packages below it that it may import; its own package is always allowed.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"dfir": "dfir", "dialects": "dfir.dialects", "passes": "dfir.passes",
           "lowering": "dfir.lowering", "runtime": "dfir.runtime"}

_CORE = {"dfir.core"}
_IR = _CORE | {"dfir.dialects"}
_FRONTEND = _IR | {"dfir.om", "dfir.frontend"}
_BELOW_DRIVER = _FRONTEND | {"dfir.passes", "dfir.lowering", "dfir.runtime"}
# the runtime never imports the compiler: what it may use of dfir, and its own roles, bottom to top
_RUNTIME = _CORE | {"dfir.om", "dfir.frontend.flow_func", "dfir.frontend.udf"}
_RUNTIME_ROOT = {f"dfir.runtime.{m}" for m in ("_native", "channels", "alignment", "om", "funcs")}

# package -> the dfir packages (or module prefixes) it may import, bottom to top
MAY_IMPORT: dict[str, set[str]] = {
    "dfir.core": set(),                          # errors, data types, tensor, FlowInfo, messages
    "dfir.om": _CORE,                            # the container schema and the typed plan
    "dfir.dialects": _CORE,                      # df and ge
    "dfir.frontend": _IR | {"dfir.om"},          # dataflow, flow_func, GE builder, ONNX, configs
    "dfir.passes": _IR | {"dfir.frontend.deploy"},   # parsed placements, never files
    "dfir.lowering": _IR | {"dfir.om", "dfir.passes"},
    "dfir.runtime": _RUNTIME,                    # the shared region, channels, funcs, .om reading
    "dfir.runtime.ge": _RUNTIME | _RUNTIME_ROOT,   # graph runners, kernels, IREE devices
    "dfir.runtime.worker": _RUNTIME | _RUNTIME_ROOT | {"dfir.runtime.ge"},
    "dfir.runtime.driver": _RUNTIME | _RUNTIME_ROOT | {"dfir.runtime.ge", "dfir.runtime.worker"},
    "dfir.driver": _BELOW_DRIVER,                # compile, pipeline, cache, offline compile
    "dfir.tools": _BELOW_DRIVER | {"dfir.driver"},
    # the public import paths: thin re-exports of what lies below
    "dfir": _BELOW_DRIVER | {"dfir.driver"},
    "dfir.dataflow": _FRONTEND, "dfir.flow_func": _FRONTEND, "dfir.data_type": _CORE,
    "dfir.ge": _FRONTEND | {"dfir.driver"},
}

# Imports inside functions: only heavy or optional dependencies loaded when first needed (the
# compiler is one for `import dfir` and the `dfir` commands that do not compile: the runtime stands alone).
MAX_FUNCTION_IMPORTS = 24


def source_modules() -> dict[str, Path]:
    modules = {}
    for folder, package in FOLDERS.items():
        # a compiled module counts by its stub (runtime/_native.pyi)
        for path in sorted([*(ROOT / folder).rglob("*.py"), *(ROOT / folder).rglob("*.pyi")]):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = path
    return modules


MODULES = source_modules()


def _owner(name: str) -> str | None:
    """The source module that `import name` runs last (a package's name is its __init__)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]


class Import(NamedTuple):
    target: str          # the dfir module it runs, or the outside module's name
    line: int
    in_function: bool
    type_checking: bool  # under `if TYPE_CHECKING:`
    why: str             # the `# lazy: ...` comment on its line


def _inside(tree: ast.AST, kinds: tuple, test=lambda node: True) -> set[int]:
    return {id(n) for outer in ast.walk(tree) if isinstance(outer, kinds) and test(outer)
            for n in ast.walk(outer)}


def imports_of(module: str) -> list[Import]:
    """Every import statement of `module`, one entry per module it names."""
    text = MODULES[module].read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    in_function = _inside(tree, (ast.FunctionDef, ast.AsyncFunctionDef))
    type_checking = _inside(tree, (ast.If,), lambda node: ast.unparse(node.test) == "TYPE_CHECKING")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            why = lines[node.lineno - 1].partition("# lazy:")[2].strip()
            for target in _targets(module, node):
                owner = _owner(target) if target.split(".")[0] == "dfir" else None
                found.append(Import(owner or target, node.lineno, id(node) in in_function,
                                    id(node) in type_checking, why))
    return found


def _package(module: str) -> str:
    """The most specific key of MAY_IMPORT that `module` belongs to."""
    return max((p for p in MAY_IMPORT if module == p or module.startswith(p + ".")), key=len)


def _allowed(importer: str, imported: str) -> bool:
    package = _package(importer)
    if imported == package or imported.startswith(package + ".") and _package(imported) == package:
        return True
    return any(imported == p or imported.startswith(p + ".") for p in MAY_IMPORT[package])


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from(MODULES)
    for module in MODULES:
        for imp in imports_of(module):
            if imp.target in MODULES and imp.target != module and not imp.type_checking:
                graph.add_edge(module, imp.target, line=imp.line)
    return graph


def test_every_module_belongs_to_a_layer():
    assert [m for m in MODULES if not any(m == p or m.startswith(p + ".") for p in MAY_IMPORT)] == []


def test_no_import_cycle_between_files():
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert cycles == []


def test_imports_run_down_the_layering():
    upward = [f"{m}:{imp.line} imports {imp.target}" for m in MODULES for imp in imports_of(m)
              if imp.target in MODULES and not _allowed(m, imp.target)]
    assert upward == []


def test_few_imports_inside_functions_each_saying_why():
    local = [(f"{m}:{imp.line} {imp.target}", imp.why) for m in MODULES for imp in imports_of(m)
             if imp.in_function]
    assert len(local) <= MAX_FUNCTION_IMPORTS, "\n".join(where for where, _ in local)
    assert [where for where, why in local if not why] == []


@pytest.mark.parametrize("importer, imported, allowed", [
    ("dfir.runtime.driver.model", "dfir.core.errors", True),
    ("dfir.runtime.driver.model", "dfir.driver.compiler", False),
    ("dfir.passes.place_nodes", "dfir.frontend.deploy.deploy_info", True),
    ("dfir.passes.place_nodes", "dfir.frontend.importer", False),
    ("dfir.core.tensor", "dfir.dialects.ge", False),
    ("dfir.runtime.worker.executor", "dfir.runtime.ge.ort_runner", True),
    ("dfir.runtime.ge.ort_runner", "dfir.runtime.worker.host", False),
    ("dfir.runtime.worker.host", "dfir.runtime.driver.model", False),
    ("dfir.runtime.channels", "dfir.runtime.worker.host", False),
])
def test_the_layering_check_itself(importer, imported, allowed):
    assert _allowed(importer, imported) is allowed
