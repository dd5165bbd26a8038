"""`convert-ge-to-linalg`: choose each `ge.graph`'s device backend; lower the IREE ones to upstream MLIR.

Reads: every `ge.graph`, its `requested_backend` (a GraphProcessPoint's build option
`dfir.ge.backend`, written by the importer) or else the pass option `backend` (the compile's
`dfir.ge.backend`, by default `auto`). Writes: `backend` on every graph and, for one an IREE
backend runs, its `codegen` region: the graph as `func.func @main` over func, arith, math, tensor
and linalg (`dfir.passes.ge_to_linalg`), with the bounds of its dynamic dimensions stated by
`util.assume.int`.

    ge.graph @g {                                    ge.graph @g backend "iree-cpu" {
      %x = ge.data 0 "x" : !ge.tensor<[1:8], f32>  ==>   ... (unchanged)
      %y = ge.relu %x : !ge.tensor<[1:8], f32>         } codegen {
      ge.output %y : !ge.tensor<[1:8], f32>              func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    }                                                      %n = util.assume.int %d<umin = 1, umax = 8>
                                                           %y = linalg.generic ... arith.maximumf ...
                                                         }
                                                       }

`reference` runs the graph on the numpy kernels, `onnxruntime` on an onnxruntime session of the
graph exported to ONNX at lowering (no codegen region). `iree-cpu` / `iree-cuda` need every op of
the graph to lower: an op that does not is an error naming it. `auto` takes `auto_backend` (the
compiler sets it to the fastest backend of the machine it runs on) for a graph that lowers and
`reference` for one that does not, recording why in `backend_fallback`, which the summary
reports, and marks the graph `auto`: the compiler then measures what else can run it and may
choose another backend when it lowers the graph (`dfir.driver.backend_choice`), replacing the
mark by what it measured:

    ge.graph @g backend "iree-cpu" attributes {auto} { ... } codegen { ... }

A graph that has a `codegen` region already is left as it is.
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, UnitAttr
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from dfir.core.backends import AUTO, IREE_BACKENDS, IREE_CPU, REFERENCE
from dfir.dialects import ge
from dfir.passes.ge_to_linalg.graph import NoLowering, lower_graph

__all__ = ["AUTO", "AUTO_ATTR", "ConvertGeToLinalg", "FALLBACK_ATTR"]

AUTO_ATTR = "auto"
"""Marks a graph whose backend `auto` chose: unit before it is measured, then what was measured."""
FALLBACK_ATTR = "backend_fallback"


@dataclass(frozen=True)
class ConvertGeToLinalg(ModulePass):
    name = "convert-ge-to-linalg"

    backend: str = AUTO
    """The backend of graphs that request none: auto, reference, iree-cpu or iree-cuda."""
    auto_backend: str = IREE_CPU
    """What `auto` means for a graph that lowers."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for name, value in (("backend", self.backend), ("auto_backend", self.auto_backend)):
            allowed = (AUTO, *ge.BACKENDS) if name == "backend" else ge.BACKENDS
            if value not in allowed:
                raise DiagnosticException(f"{self.name}: {name} must be one of {list(allowed)}, got \"{value}\"")
        for graph in op.ops:
            if isinstance(graph, ge.GraphOp) and graph.codegen is None:
                self._convert(graph)

    def _convert(self, graph: ge.GraphOp) -> None:
        requested = graph.attributes.get(ge.REQUESTED_BACKEND_ATTR)
        requested = requested.data if isinstance(requested, StringAttr) else self.backend
        target = self.auto_backend if requested == AUTO else requested
        if requested == AUTO:
            graph.attributes[AUTO_ATTR] = UnitAttr()
        if target not in IREE_BACKENDS:
            graph.backend = StringAttr(target)
            return
        try:
            main = lower_graph(graph)
        except NoLowering as missing:
            if requested != AUTO:
                loc = missing.op.attributes.get(ge.LOC_ATTR)
                at = f" ({loc.data})" if isinstance(loc, StringAttr) else ""
                message = (f"ge.graph @{graph.sym_name.data}: backend {target} cannot run {missing}{at}; "
                           f"use backend reference or auto for this graph")
                missing.op.emit_error(message, DiagnosticException(message))
            graph.backend = StringAttr(REFERENCE)
            graph.attributes[FALLBACK_ATTR] = StringAttr(str(missing))
            return
        graph.backend = StringAttr(target)
        graph.add_region(Region(Block([main])))

    def summary(self, op: ModuleOp) -> str:
        graphs = [g for g in op.ops if isinstance(g, ge.GraphOp)]
        if not graphs:
            return "no ge graphs"
        return "; ".join(_describe(g) for g in graphs)


def _describe(graph: ge.GraphOp) -> str:
    backend = graph.backend.data if graph.backend is not None else REFERENCE
    fallback = graph.attributes.get(FALLBACK_ATTR)
    why = f" (auto: {fallback.data})" if isinstance(fallback, StringAttr) else ""
    measured = graph.attributes.get(AUTO_ATTR)
    why += f" (auto: {measured.data})" if isinstance(measured, StringAttr) else ""
    return f"@{graph.sym_name.data} {backend}{why}"
