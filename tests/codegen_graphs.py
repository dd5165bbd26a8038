"""GE graphs with a hand-written codegen region, compiled through `dfir.compile` (the tests' stand-in
for `convert-ge-to-linalg`).

`with_codegen` gives a `ge.graph` its `backend` and a `codegen` region parsed from MLIR text;
the fixture `codegen_pass` adds `AttachCodegen` to the `plan` phase, which does that to every
`ge.graph` named in `CODEGEN` while `dfir.compile` runs; the fixture `compiler_calls` records
every run of IREE's compiler.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, linalg, tensor
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.passes import ModulePass

import dfir.data_type as dt
from dfir.dialects import ge
from dfir.driver import pipeline
from dfir.ge.graph import Graph
from dfir.lowering import iree_executable

def elementwise(element: str, body: str) -> str:
    """`main` over a dynamic vector of `element`s: `body` computes `%r` from `%x`."""
    return f"""
func.func @main(%a: tensor<?x{element}>) -> tensor<?x{element}> {{
  %c0 = arith.constant 0 : index
  %d = tensor.dim %a, %c0 : tensor<?x{element}>
  %e = tensor.empty(%d) : tensor<?x{element}>
  %y = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}} ins(%a : tensor<?x{element}>) outs(%e : tensor<?x{element}>) {{
  ^bb0(%x: {element}, %o: {element}):
    {body}
    linalg.yield %r : {element}
  }} -> tensor<?x{element}>
  func.return %y : tensor<?x{element}>
}}
"""


DOUBLE_F32 = elementwise("f32", "%r = arith.addf %x, %x : f32")
"""`x + x` over a dynamic vector: the codegen of `double_graph()`."""

MATMUL_F64 = """
func.func @main(%a: tensor<?x3xf64>, %b: tensor<3x2xf64>) -> tensor<?x2xf64> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %a, %c0 : tensor<?x3xf64>
  %e = tensor.empty(%n) : tensor<?x2xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<?x2xf64>) -> tensor<?x2xf64>
  %r = linalg.matmul ins(%a, %b : tensor<?x3xf64>, tensor<3x2xf64>) outs(%f : tensor<?x2xf64>) -> tensor<?x2xf64>
  func.return %r : tensor<?x2xf64>
}
"""
"""A matmul with a dynamic batch, in f64 (which IREE must not demote): `matmul_graph()`'s codegen."""

ADD_I32 = """
func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32> {
  %e = tensor.empty() : tensor<2xi32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]} ins(%a, %b : tensor<2xi32>, tensor<2xi32>)
                       outs(%e : tensor<2xi32>) {
  ^bb0(%x: i32, %z: i32, %o: i32):
    %r = arith.addi %x, %z : i32
    linalg.yield %r : i32
  } -> tensor<2xi32>
  func.return %y : tensor<2xi32>
}
"""
"""`x + y` of two int32 vectors of 2: the codegen of tests/om/plan_samples.py's `closure_graph()`."""

COPY_BOOL = elementwise("i1", "%r = arith.ori %x, %x : i1")
"""A copy of a bool vector: `bool_graph()`'s codegen."""


def double_graph(name: str = "double") -> Graph:
    g = Graph(name)
    x = g.data(0, shape=[-1], dtype=dt.DT_FLOAT, name="x")
    g.set_outputs([g.add(x, x)])
    return g


def matmul_graph(name: str = "mm") -> Graph:
    g = Graph(name)
    a = g.data(0, shape=[-1, 3], dtype=dt.DT_DOUBLE, name="a")
    b = g.data(1, shape=[3, 2], dtype=dt.DT_DOUBLE, name="b")
    g.set_outputs([g.matmul(a, b)])
    return g


def bool_graph(name: str = "flags") -> Graph:
    g = Graph(name)
    x = g.data(0, shape=[-1], dtype=dt.DT_BOOL, name="x")
    g.set_outputs([g.identity(x)])
    return g


def codegen_context() -> Context:
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, linalg.Linalg, tensor.Tensor):
        ctx.load_dialect(dialect)
    return ctx


def codegen_region(func_text: str) -> Region:
    """A single-block region holding the one function of `func_text`."""
    module = Parser(codegen_context(), func_text).parse_module()
    ops = list(module.body.block.ops)
    for op in ops:
        op.detach()
    return Region(Block(ops))


def with_codegen(graph_op: ge.GraphOp, func_text: str, backend: str = "iree-cpu",
                 name: str | None = None) -> ge.GraphOp:
    """A copy of `graph_op` (named `name`) run by `backend`, its codegen region holding
    `func_text`'s function."""
    graph = ge.GraphOp(name or graph_op.sym_name.data, graph_op.body.clone())
    graph.backend = StringAttr(backend)
    graph.add_region(codegen_region(func_text))
    return graph


CODEGEN: dict[str, tuple[str, str | None]] = {}
"""ge.graph symbol -> (backend, function text) that `AttachCodegen` gives it (no codegen region
for None)."""


@dataclass(frozen=True)
class AttachCodegen(ModulePass):
    """Give each `ge.graph` named in `CODEGEN` its backend and codegen region."""

    name = "test-attach-codegen"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph_op in op.walk():
            if isinstance(graph_op, ge.GraphOp) and graph_op.sym_name.data in CODEGEN:
                backend, func_text = CODEGEN[graph_op.sym_name.data]
                graph_op.backend = StringAttr(backend)
                if graph_op.codegen is None and func_text is not None:
                    graph_op.add_region(codegen_region(func_text))


@pytest.fixture
def codegen_pass(monkeypatch):
    """`CODEGEN`, attached to its graphs by every `dfir.compile` of the test."""
    phases = tuple(replace(phase, passes=phase.passes + (AttachCodegen(),)) if phase.name == "plan" else phase
                   for phase in pipeline.PHASES)
    monkeypatch.setattr(pipeline, "PHASES", phases)
    CODEGEN.clear()
    yield CODEGEN
    CODEGEN.clear()


@pytest.fixture
def compiler_calls(monkeypatch):
    """The texts IREE's compiler ran on during the test (the memo emptied before and after)."""
    calls = []
    real = iree_executable.invoke_compiler

    def counted(text, *args):
        calls.append(text)
        return real(text, *args)

    iree_executable.forget_compiled()
    monkeypatch.setattr(iree_executable, "invoke_compiler", counted)
    yield calls
    iree_executable.forget_compiled()
