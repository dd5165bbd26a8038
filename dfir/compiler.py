"""`dfir.compile`: build the IR, run the phases, serialize. It only composes; the work is elsewhere."""
from __future__ import annotations

import io
import os
import time
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from dfir.ge.error import GeError
from dfir.options import validate_options
from dfir.pipeline import phases_until, run_phases


class CompileReport(list):
    """One line per pass that ran, saying what it did (`str()` joins them)."""

    def __str__(self) -> str:
        return "\n".join(self)


@dataclass
class CompiledModel:
    """The result of `dfir.compile`: the final IR, the `.om` bytes (None if stopped early), a report."""

    module: ModuleOp
    om: bytes | None
    report: CompileReport
    timings: dict[str, float] = field(default_factory=dict)
    _ir: str | None = None

    @property
    def ir(self) -> str:
        if self._ir is None:
            self._ir = print_module(self.module)
        return self._ir

    def save(self, path: str | os.PathLike) -> str:
        """Write the `.om` (adding the `.om` suffix if `path` has none); returns the path written."""
        if self.om is None:
            raise GeError("the model was compiled with stop_after before 'lower' and has no .om",
                          "CompiledModel.save")
        path = os.fspath(path)
        if not path.endswith(".om"):
            path += ".om"
        with open(path, "wb") as out:
            out.write(self.om)
        return path


def make_context() -> Context:
    from dfir.dialects.df import DF
    from dfir.dialects.ge import GE
    ctx = Context()
    for dialect in (Builtin, DF, GE):
        ctx.load_dialect(dialect)
    return ctx


def print_module(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue() + "\n"


def _import(graph) -> ModuleOp:
    from dfir.dataflow.graph import FlowGraph
    from dfir.importer import import_flow_graph, import_ge_graph
    if isinstance(graph, FlowGraph):
        return import_flow_graph(graph)
    from dfir.ge.graph import Graph
    if isinstance(graph, Graph):
        return import_ge_graph(graph)
    raise GeError(f"dfir.compile expects a FlowGraph or a GE Graph, got {type(graph).__name__}",
                  "dfir.compile")


def compile(graph, options: dict[str, str] | None = None, stop_after: str | None = None) -> CompiledModel:
    """Compile a FlowGraph or GE Graph: import, run the phases (up to `stop_after`), lower to `.om`."""
    validate_options(options, api="dfir.compile")
    phases = phases_until(stop_after)
    timings: dict[str, float] = {}
    report = CompileReport()
    start = time.perf_counter()
    module = _import(graph)
    timings["import"] = time.perf_counter() - start
    start = time.perf_counter()
    try:
        run_phases(make_context(), module, stop_after, report)
    except (VerifyException, DiagnosticException) as error:
        raise GeError(str(error), "dfir.compile") from error
    timings["passes"] = time.perf_counter() - start
    om = None
    if phases[-1].name == "lower":
        from dfir.lowering.om import om_bytes
        from dfir.lowering.plan import lower_graph
        start = time.perf_counter()
        lowered = lower_graph(module)
        ir_text = print_module(module)
        om = om_bytes(lowered, ir_text)
        timings["lower"] = time.perf_counter() - start
        return CompiledModel(module, om, report, timings, ir_text)
    return CompiledModel(module, om, report, timings)
