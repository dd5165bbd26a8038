"""The compiled form of a GE graph: its `codegen` region as a module IREE parses.

`convert-ge-to-linalg` gives a `ge.graph` a `backend` and a `codegen` region holding one
`func.func @main` in upstream dialects (func, arith, math, tensor, linalg, IREE's
`util.assume.int`): one argument per `ge.data` in index order, results in `ge.output` order.

    ge.graph @double backend "iree-cpu" {
      %x = ge.data 0 "x" : !ge.tensor<[-1], f32>
      ...
    } codegen {
      func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> { ... }
    }

`codegen_module_text` prints that function alone in a `builtin.module`, in MLIR's generic form,
which `iree-opt` and `iree-compile` parse whatever xDSL's custom forms look like, followed by
the resource section of the weight blobs its constants name (`dfir.dialects.blobs`).
"""
from __future__ import annotations

import io

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.printer import Printer

from dfir.core.errors import GeError
from dfir.dialects import ge
from dfir.dialects.blobs import resource_section

__all__ = ["codegen_module_text", "main_func"]


def codegen_module_text(graph_op: ge.GraphOp) -> str | None:
    """The graph's `func.func @main` as a standalone module in generic form; None when the graph
    has no codegen region."""
    main = main_func(graph_op)
    if main is None:
        return None
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(ModuleOp([main.clone()]))
    blobs = [op.value.resource_handle.data for op in main.walk()
             if isinstance(op, ConstantOp) and isinstance(op.value, DenseResourceAttr)]
    return stream.getvalue() + "\n" + resource_section(blobs)


def main_func(graph_op: ge.GraphOp) -> FuncOp | None:
    """The `func.func @main` of the graph's codegen region; None without a region, a GeError
    naming the graph when the region holds anything else."""
    if graph_op.codegen is None:
        return None
    ops = list(graph_op.codegen.block.ops)
    if len(ops) != 1 or not isinstance(ops[0], FuncOp) or ops[0].sym_name.data != "main":
        found = ", ".join(_spelled(op) for op in ops) or "nothing"
        raise GeError(f"ge.graph @{graph_op.sym_name.data}: its codegen region must hold exactly one "
                      f"func.func @main, found {found}")
    return ops[0]


def _spelled(op) -> str:
    return f"{op.name} @{op.sym_name.data}" if isinstance(op, FuncOp) else op.name
