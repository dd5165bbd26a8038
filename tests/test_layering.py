"""The package's imports run one way: no cycle between files, no import up the layering.

The source tree is read with `ast`, not imported, so an import inside a function counts like any
other. `MAY_IMPORT` is the intended layering as data: each package (or module prefix) names the
dfir packages below it that it may import; its own package is always allowed.
"""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"dfir": "dfir", "dialects": "dfir.dialects", "passes": "dfir.passes",
           "lowering": "dfir.lowering", "runtime": "dfir.runtime"}

_CORE = {"dfir.core"}
_IR = _CORE | {"dfir.dialects"}
_FRONTEND = _IR | {"dfir.frontend"}
_BELOW_DRIVER = _FRONTEND | {"dfir.om", "dfir.passes", "dfir.lowering", "dfir.runtime"}

# package -> the dfir packages (or module prefixes) it may import, bottom to top
MAY_IMPORT: dict[str, set[str]] = {
    "dfir.core": set(),                          # errors, data types, tensor, FlowInfo, messages
    "dfir.om": _CORE,                            # the container schema and the typed plan
    "dfir.dialects": _CORE,                      # df and ge
    "dfir.frontend": _IR,                        # dataflow, flow_func, GE builder, ONNX, configs
    "dfir.passes": _IR | {"dfir.frontend.deploy"},   # parsed placements, never files
    "dfir.lowering": _IR | {"dfir.om", "dfir.passes"},
    "dfir.runtime": _CORE | {"dfir.om", "dfir.frontend.flow_func", "dfir.frontend.udf"},
    "dfir.driver": _BELOW_DRIVER,                # compile, pipeline, cache, offline compile
    "dfir.tools": _BELOW_DRIVER | {"dfir.driver"},
    # the public import paths: thin re-exports of what lies below
    "dfir": _BELOW_DRIVER | {"dfir.driver"},
    "dfir.dataflow": _FRONTEND, "dfir.flow_func": _FRONTEND, "dfir.data_type": _CORE,
    "dfir.ge": _FRONTEND | {"dfir.driver"},
}

# Imports inside functions: only heavy or optional dependencies loaded when first needed.
MAX_FUNCTION_IMPORTS = 15


def source_modules() -> dict[str, Path]:
    modules = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
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


def imports_of(module: str) -> list[tuple[str, int, bool]]:
    """(imported dfir module, line, inside a function) for every import statement of `module`."""
    tree = ast.parse(MODULES[module].read_text())
    in_function = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                   for n in ast.walk(f)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(module, node):
                owner = _owner(target) if target.split(".")[0] == "dfir" else None
                found.append((owner or target, node.lineno, id(node) in in_function))
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
        for target, line, _ in imports_of(module):
            if target in MODULES and target != module:
                graph.add_edge(module, target, line=line)
    return graph


def test_every_module_belongs_to_a_layer():
    assert [m for m in MODULES if not any(m == p or m.startswith(p + ".") for p in MAY_IMPORT)] == []


def test_no_import_cycle_between_files():
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert cycles == []


def test_imports_run_down_the_layering():
    upward = [f"{m}:{line} imports {target}" for m in MODULES for target, line, _ in imports_of(m)
              if target in MODULES and not _allowed(m, target)]
    assert upward == []


def test_few_imports_inside_functions():
    local = [f"{m}:{line} {target}" for m in MODULES for target, line, inside in imports_of(m) if inside]
    assert len(local) <= MAX_FUNCTION_IMPORTS, "\n".join(local)
    assert [entry for entry in local if entry.split()[1].startswith("dfir")] == []


@pytest.mark.parametrize("importer, imported, allowed", [
    ("dfir.runtime.model", "dfir.core.errors", True),
    ("dfir.runtime.model", "dfir.driver.compiler", False),
    ("dfir.passes.place_nodes", "dfir.frontend.deploy.deploy_info", True),
    ("dfir.passes.place_nodes", "dfir.frontend.importer", False),
    ("dfir.core.tensor", "dfir.dialects.ge", False),
])
def test_the_layering_check_itself(importer, imported, allowed):
    assert _allowed(importer, imported) is allowed
