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
which `iree-opt` and `iree-compile` parse whatever xDSL's custom forms look like. A constant of a
weight blob becomes a load of a global whose value is the named parameter of the blob's handle,
so the executable carries no weight bytes: the runtime hands them over from `WEIGHTS_DATA`
(runtime/ge/iree_device.py):

    %w = "arith.constant"() <{value = dense_resource<weight_3f2a...> : tensor<4xf32>}> : () -> tensor<4xf32>
  ==>
    "util.global"() <{sym_name = "weight_3f2a..._0", sym_visibility = "private", type = tensor<4xf32>,
                      initial_value = #flow.parameter.named<"dfir"::"weight_3f2a..."> : tensor<4xf32>}> : () -> ()
    %w = "util.global.load"() <{global = @weight_3f2a..._0}> : () -> tensor<4xf32>
"""
from __future__ import annotations

import io

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter

from dfir.core.errors import GeError
from dfir.dialects import ge
from dfir.dialects.blobs import blob_bytes
from dfir.dialects.iree_util import GlobalLoadOp, GlobalOp, NamedParameterAttr
from dfir.om.plan import IREE_PARAMETER_SCOPE

__all__ = ["codegen_module_text", "main_func", "parameter_values"]


def codegen_module_text(graph_op: ge.GraphOp) -> str | None:
    """The graph's `func.func @main` as a standalone module in generic form, its blob constants
    named parameters; None when the graph has no codegen region."""
    main = main_func(graph_op)
    if main is None:
        return None
    main = main.clone()
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(ModuleOp([*_blobs_as_parameters(main), main]))
    return stream.getvalue()


def parameter_values(graph_op: ge.GraphOp) -> dict[str, memoryview]:
    """The named parameters the graph's executable reads, by key: its blobs' bytes by handle
    (what the runtime serves from WEIGHTS_DATA)."""
    main = main_func(graph_op)
    return {op.value.resource_handle.data: blob_bytes(op.value) for op in _blob_constants(main)} if main else {}


def _blobs_as_parameters(main: FuncOp) -> list[GlobalOp]:
    """Replace each blob constant of `main` by a load of a parameter global; the globals, one
    per blob and type."""
    globals_: dict[tuple[str, object], GlobalOp] = {}
    for op in _blob_constants(main):
        handle, tensor = op.value.resource_handle.data, op.result.type
        if (handle, tensor) not in globals_:
            globals_[(handle, tensor)] = GlobalOp(f"{handle}_{len(globals_)}",
                                                  NamedParameterAttr(IREE_PARAMETER_SCOPE, handle, tensor))
        Rewriter.replace_op(op, GlobalLoadOp(globals_[(handle, tensor)].sym_name.data, tensor))
    return list(globals_.values())


def _blob_constants(main: FuncOp) -> list[ConstantOp]:
    return [op for op in main.walk() if isinstance(op, ConstantOp) and isinstance(op.value, DenseResourceAttr)]


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
