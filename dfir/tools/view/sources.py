"""The module `dfir view` draws, from one of three inputs:

- `MODEL.om`: the final IR its IR_TEXT partition holds (a bundle: each member's), parsed and
  never run, as `dfir inspect` reads a file (no UDF payload is unpickled);
- `IR.mlir`: dfir IR text, drawn as it stands (before or after any phase);
- `SCRIPT.py`: the script is run, the graph it builds compiled up to the `place` phase (devices,
  instances and plans are known; nothing is lowered).
"""
from __future__ import annotations

import os
from typing import NamedTuple

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from dfir.core.errors import GeError
from dfir.driver import compiler
from dfir.driver.job import make_context
from dfir.frontend.dataflow.flow_graph import FlowGraph
from dfir.frontend.ge.graph import Graph
from dfir.om.schema import PartitionType
from dfir.runtime.om import OmFile, read_om
from dfir.tools.scripts import find_graph, script_globals

KINDS = {".om": "model", ".mlir": "IR", ".py": "script"}


class Source(NamedTuple):
    """A module to draw, named for the page (`adder.om`, `bundle.om model 1 "mlp"`); a bundle's
    member also keeps its name in the bundle, the name its model's trace has."""

    title: str
    module: ModuleOp
    model: str | None = None


def read_sources(path: str, graph_name: str | None = None) -> list[Source]:
    """The modules of the file at `path` (several for a bundle); `graph_name` picks the graph of
    a script that builds several."""
    suffix = os.path.splitext(path)[1]
    if suffix not in KINDS:
        raise GeError(f"dfir view reads a model (.om), IR (.mlir) or script (.py), got {path!r}")
    if not os.path.isfile(path):
        raise GeError(f"{KINDS[suffix]} {path!r} does not exist")
    title = os.path.basename(path)
    if suffix == ".om":
        return _om_sources(read_om(path), title)
    if suffix == ".mlir":
        with open(path, encoding="utf-8") as file:
            return [Source(title, parse_ir(file.read(), title))]
    graph = find_graph(script_globals(path), graph_name, (FlowGraph, Graph))
    return [Source(title, compiler.compile(graph, stop_after="place").module)]


def parse_ir(text: str, where: str) -> ModuleOp:
    """The verified module `text` holds; a GeError naming `where` and the problem otherwise."""
    try:
        module = Parser(make_context(), text, where).parse_module()
        module.verify()
    except ParseError as error:
        raise GeError(f"{where} is not dfir IR: {error}") from None
    except VerifyException as error:
        raise GeError(f"{where} does not verify: {error}") from None
    return module


def _om_sources(om: OmFile, title: str, member_name: str | None = None) -> list[Source]:
    if om.is_bundle:
        return [source for index, (name, member) in enumerate(om.bundle)
                for source in _om_sources(member, f"{title} model {index} {name!r}", name)]
    sources = []
    for model in om.models:
        partitions = model.partitions_of(PartitionType.IR_TEXT)
        if not partitions:
            raise GeError(f"{title}: model {model.index} has no IR_TEXT partition to draw")
        where = title if len(om.models) == 1 else f"{title} model {model.index}"
        sources.append(Source(where, parse_ir(bytes(partitions[0].data).decode("utf-8"), where), member_name))
    return sources
