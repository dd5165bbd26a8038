"""Every `ge` op has its pieces: a family (the module of dialects/ge/ it lives in, whose `OPS` lists
it), a shape function, a lowering to linalg (passes/ge_to_linalg), a reference kernel
(runtime/ge/kernels) and an ONNX export (lowering/onnx_export), or a reason stated here why it has
none; the kernels and exports of an op sit in the module of its family. Its traits say what the
memory plan may do with it, and agree with what the kernels declare. Adding an op without one of
its pieces fails here with a message naming the op and the piece."""
from __future__ import annotations

import numpy as np
import pytest
from xdsl.irdl import IRDLOperation

from dfir.dialects import ge
from dfir.lowering.onnx_export import EXPORTS
from dfir.lowering.onnx_export import FAMILIES as EXPORT_FAMILIES
from dfir.passes.ge_to_linalg import LOWERINGS
from dfir.runtime.ge.graph_runner import OUT_FORMS
from dfir.runtime.ge.kernels import FAMILIES as KERNEL_FAMILIES
from dfir.runtime.ge.kernels import KERNELS

OPS = list(ge.GE.operations)
FAMILY_NAMES = [family.__name__.rpartition(".")[2] for family in ge.FAMILIES]

STRUCTURE = {ge.GraphOp, ge.OutputOp, ge.DataOp}
"""The graph itself, its inputs and its output: no tensor op, so no shape function of their own (a
`ge.data` declares its type), lowered with the graph as a whole (passes/ge_to_linalg/graph.py) and
the plan's inputs and outputs, never run as an op."""
WEIGHTS = {ge.ConstOp, ge.VariableOp}
"""Weights: the runner binds them once, when it is built (no kernel), the ONNX exporter makes them
initializers (no export); their lowering is passes/ge_to_linalg/constants.py."""

NO_LOWERING: dict[type, str] = {op: "lowered with its graph (passes/ge_to_linalg/graph.py)" for op in STRUCTURE}
"""Ops without an entry in `LOWERINGS`, and why."""
NO_KERNEL: dict[type, str] = {**{op: "not an op the runner runs" for op in STRUCTURE},
                              **{op: "a weight the runner binds when it is built" for op in WEIGHTS}}
"""Ops without an entry in `KERNELS`, and why."""
NO_EXPORT: dict[type, str] = {**{op: "the ONNX graph's own inputs and outputs" for op in STRUCTURE},
                              **{op: "an initializer of the ONNX graph" for op in WEIGHTS}}
"""Ops without an entry in `EXPORTS`, and why."""


def plan_name(op: type) -> str:
    """The op's name in a plan entry, which keys the kernels and the exports."""
    return op.name.removeprefix("ge.")


def family_of(op: type) -> str:
    return op.__module__.rpartition(".")[2]


def missing_pieces(op: type) -> list[str]:
    """What `op` lacks, one phrase per piece."""
    family = family_of(op)
    missing = []
    if family not in [*FAMILY_NAMES, "graph"] or op not in getattr(ge, family).OPS:
        families = ", ".join(FAMILY_NAMES)
        missing.append(f"its family: it lives in {op.__module__}, expected one of dialects/ge/{{{families}}}.py, "
                       f"listed in that module's OPS")
    if op not in STRUCTURE and (not issubclass(op, ge.ShapedOp)
                                or op.infer_types.__func__ is ge.ShapedOp.infer_types.__func__):
        missing.append("a shape function (infer_types)")
    if op not in LOWERINGS and op not in NO_LOWERING:
        missing.append("a lowering in passes/ge_to_linalg/ (LOWERINGS), or a reason in NO_LOWERING")
    if plan_name(op) not in KERNELS and op not in NO_KERNEL:
        missing.append(f"a kernel in runtime/ge/kernels/{family}.py (KERNELS[{plan_name(op)!r}]), or a reason "
                       f"in NO_KERNEL")
    if plan_name(op) not in EXPORTS and op not in NO_EXPORT:
        missing.append(f"an ONNX export in lowering/onnx_export/{family}.py (EXPORTS[{plan_name(op)!r}]), or a "
                       f"reason in NO_EXPORT")
    return missing


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
def test_every_op_has_its_pieces(op):
    missing = missing_pieces(op)
    assert not missing, f"{op.name} ({op.__name__}) lacks " + "; ".join(missing)


def test_a_missing_piece_is_named():
    """What the test above says of an op declared without its kernel, lowering and export."""

    class OrphanOp(ge.AddOp):
        name = "ge.orphan"

    OrphanOp.__module__ = ge.elementwise.__name__
    assert missing_pieces(OrphanOp) == [
        "its family: it lives in dfir.dialects.ge.elementwise, expected one of dialects/ge/{activation, contraction, "
        "elementwise, logic, movement, normalization, reduction, resize, window}.py, listed in that module's OPS",
        "a lowering in passes/ge_to_linalg/ (LOWERINGS), or a reason in NO_LOWERING",
        "a kernel in runtime/ge/kernels/elementwise.py (KERNELS['orphan']), or a reason in NO_KERNEL",
        "an ONNX export in lowering/onnx_export/elementwise.py (EXPORTS['orphan']), or a reason in NO_EXPORT"]


def test_every_op_class_of_the_package_is_in_the_dialect():
    declared = {value for module in (ge.graph, *ge.FAMILIES) for value in vars(module).values()
                if isinstance(value, type) and issubclass(value, IRDLOperation) and value in ge.GE.operations}
    defined = {value for module in (ge.graph, *ge.FAMILIES) for value in vars(module).values()
               if isinstance(value, type) and value.__module__ == module.__name__ and isinstance(
                   getattr(value, "name", None), str) and value.name.startswith("ge.")}
    assert defined - declared == set(), "op classes missing from their family's OPS"
    assert len(OPS) == len(set(OPS)) == sum(len(m.OPS) for m in (ge.graph, *ge.FAMILIES))


def test_registries_name_dialect_ops_only():
    names = {plan_name(op) for op in OPS}
    assert set(KERNELS) - names == set(), "kernels of no ge op"
    assert set(EXPORTS) - names == set(), "exports of no ge op"
    assert set(LOWERINGS) - set(OPS) == set(), "lowerings of no ge op"


def test_a_stated_reason_is_for_a_missing_piece_only():
    assert [op.name for op in NO_LOWERING if op in LOWERINGS] == []
    assert [op.name for op in NO_KERNEL if plan_name(op) in KERNELS] == []
    assert [op.name for op in NO_EXPORT if plan_name(op) in EXPORTS] == []


@pytest.mark.parametrize("layer, families", [("runtime/ge/kernels", KERNEL_FAMILIES),
                                             ("lowering/onnx_export", EXPORT_FAMILIES)])
def test_kernels_and_exports_sit_in_their_op_family(layer, families):
    by_name = {plan_name(op): op for op in OPS}
    misplaced = [f"{name} in {layer}/{family.__name__.rpartition('.')[2]}.py, its family is "
                 f"{family_of(by_name[name])}" for family in families
                 for name in (family.KERNELS if hasattr(family, "KERNELS") else family.EXPORTS)
                 if family_of(by_name[name]) != family.__name__.rpartition(".")[2]]
    assert misplaced == []


# --- traits ------------------------------------------------------------------------------------------

def test_every_elementwise_op_runs_in_place_or_is_a_view():
    """An element-wise op reads each operand element only to write the result element at its
    index, so the memory plan may put its result over an operand that dies there."""
    neither = [op.name for op in OPS if op.has_trait(ge.Elementwise)
               and not op.has_trait(ge.InPlace) and not op.has_trait(ge.View)]
    assert neither == []
    assert not [op.name for op in OPS if op.has_trait(ge.InPlace) and op.has_trait(ge.View)]


def test_the_kernels_of_the_elementwise_family_are_elementwise():
    elementwise = {plan_name(op) for op in OPS if op.has_trait(ge.Elementwise)}
    for family in ("elementwise", "activation", "logic"):
        (module,) = [m for m in KERNEL_FAMILIES if m.__name__.endswith("." + family)]
        kernels = set(module.KERNELS)
        assert kernels - elementwise == set(), f"{family} kernels of ops without the Elementwise trait"


def test_out_forms_that_write_over_an_operand_are_of_in_place_ops():
    """The runner computes an op into a dying operand's memory only where its kernel's `out=`
    form says that is safe and the plan put the result there; the plan does so only for ops with
    the InPlace trait, so each such form must belong to one (else it never runs in place)."""
    by_name = {plan_name(op): op for op in OPS}
    assert set(OUT_FORMS) <= set(KERNELS)
    declared = {name for name, form in OUT_FORMS.items() if form.over_operand}
    assert [name for name in declared if not by_name[name].has_trait(ge.InPlace)] == []
    assert [name for name, form in OUT_FORMS.items()
            if by_name[name].has_trait(ge.InPlace) and not form.over_operand] == []


def test_a_view_kernel_returns_a_view():
    """The ops with the View trait are numpy views in the reference kernels."""
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    attrs = {"identity": {}, "reshape": {"shape": [6, 4]}, "flatten": {"axis": 1}, "squeeze": {"axes": []},
             "unsqueeze": {"axes": [0]}, "transpose": {"perm": [2, 1, 0]}, "bitcast": {"to": "DT_INT32"},
             "slice": {"starts": [0], "ends": [2], "axes": [2], "steps": [1]},
             "split": {"axis": 2, "sizes": [2, 2]}}
    views = {plan_name(op) for op in OPS if op.has_trait(ge.View)}
    assert views == set(attrs)
    for name in views:
        for result in KERNELS[name]([x], attrs[name]):
            assert np.shares_memory(result, x), f"{name}'s kernel copies"
