"""The compiler's phases, as data: each a named tuple of passes with a one-line why.

`dfir.compile(..., stop_after=PHASE)` and `dfir-opt --compile-to=PHASE` stop after PHASE; the
module is verified before the first phase, and after every phase what that phase acts on. Lowering to `.om` follows the last phase and is not a pass.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from dfir.core.errors import GeError
from dfir.passes.align_inputs import AlignInputs
from dfir.passes.convert_ge_to_linalg import ConvertGeToLinalg
from dfir.passes.fingerprint_subgraphs import FingerprintSubgraphs
from dfir.passes.infer_shape_ranges import InferShapeRanges
from dfir.passes.place_nodes import PlaceNodes
from dfir.passes.plan_memory import PlanMemory
from dfir.passes.plan_output_size import PlanOutputSize
from dfir.passes.replicate_instances import ReplicateInstances
from dfir.passes.sort_nodes import SortNodes


@dataclass(frozen=True)
class Phase:
    """A named step of passes. `acts_on` names the top-level ops whose contents its passes read
    and rewrite: the compile cache skips the phase when it compiles none of them again.
    `tops_only` says its passes change the attributes of those ops and nothing nested in them."""

    name: str
    passes: tuple[ModulePass, ...]
    why: str
    acts_on: tuple[str, ...] = ()
    tops_only: bool = False


PHASES: tuple[Phase, ...] = (
    Phase("import", (), "the frontend builds the df/ge module; verified by the first phase"),
    Phase("fingerprint", (FingerprintSubgraphs(),),
          "key every process point and graph by content, before any pass, for the compile cache",
          ("df.func_pp", "df.graph_pp", "df.flow_graph_pp", "ge.graph", "df.graph"), tops_only=True),
    Phase("schedule", (SortNodes(),), "put every graph in topological order for lowering and reading",
          ("df.graph",)),
    Phase("shapes", (InferShapeRanges(),), "narrow every GE tensor type to the ranges its inputs allow",
          ("ge.graph",)),
    Phase("plan", (PlanOutputSize(), PlanMemory()),
          "bound every GE graph output and lay its intermediates out in one arena", ("ge.graph",)),
    Phase("codegen", (ConvertGeToLinalg(),),
          "choose every GE graph's device backend and lower the IREE ones to upstream MLIR", ("ge.graph",)),
    Phase("place", (PlaceNodes(), ReplicateInstances(), AlignInputs()),
          "give every node its logical devices, one node per instance, and its input alignment",
          ("df.graph",)),
    Phase("lower", (), "serialize the final module into the .om container"),
)

PHASE_NAMES = [phase.name for phase in PHASES]


def phases_until(stop_after: str | None) -> tuple[Phase, ...]:
    """The phases to run to stop after `stop_after` (all of them for None)."""
    if stop_after is None:
        return PHASES
    if stop_after not in PHASE_NAMES:
        raise GeError(f"unknown phase '{stop_after}', expected one of {PHASE_NAMES}")
    return PHASES[:PHASE_NAMES.index(stop_after) + 1]


def pipeline_spec(stop_after: str) -> str:
    """The `-p` pipeline text equivalent to running the phases up to `stop_after`."""
    return ",".join(str(p.pipeline_pass_spec()) for phase in phases_until(stop_after)
                    for p in phase.passes)


def run_phases(ctx: Context, module: ModuleOp, stop_after: str | None, report: list[str], *,
               start_after: str | None = None,
               pass_options: Mapping[str, Mapping[str, object]] | None = None,
               verify: Callable[[ModuleOp], None] | None = None, skip_absent: bool = False,
               on_phase: Callable[[str], None] | None = None) -> None:
    """Run the phases in place, verifying after each; each pass appends its summary to `report`.

    `start_after` resumes after a phase already run (the module is then not verified first);
    `pass_options` sets options of passes by pass name (`{"fingerprint-subgraphs": {"salt": s}}`);
    `verify` checks the module (the compile cache checks only what it compiles again); without
    it the whole module is verified first and, after each phase, the top-level ops it acts on
    (`verify_acted_on`: the other ops are as the last verify left them);
    `skip_absent` skips the phases that act on none of the module's top-level ops (the compile
    cache's module holds only what it compiles again); `on_phase` is told the name of each phase
    as it starts (the compile's progress).
    """
    phases = phases_until(stop_after)
    if start_after is None:
        (verify or ModuleOp.verify)(module)
    else:
        phases = phases[len(phases_until(start_after)):]
    present = {op.name for op in module.ops}
    for phase in phases:
        if skip_absent and phase.acts_on and present.isdisjoint(phase.acts_on):
            continue
        if on_phase is not None and phase.passes:  # import and lower are steps of the job, not passes
            on_phase(phase.name)
        for compiler_pass in phase.passes:
            overrides = (pass_options or {}).get(compiler_pass.name)
            if overrides:
                compiler_pass = replace(compiler_pass, **overrides)
            compiler_pass.apply(ctx, module)
            summary = getattr(compiler_pass, "summary", None)
            if summary is not None:
                report.append(f"{compiler_pass.name}: {summary(module)}")
        if phase.passes:
            verify(module) if verify is not None else verify_acted_on(module, phase)


def verify_acted_on(module: ModuleOp, phase: Phase) -> None:
    """Verify the top-level ops `phase` acts on (all of them when it names none), and the ops
    nested in them unless the phase changes only the tops. A phase's passes rewrite only those,
    so verifying the rest again would repeat the cost of the last verify for nothing."""
    if not phase.acts_on:
        module.verify()
        return
    for op in module.ops:
        if op.name in phase.acts_on:
            op.verify(verify_nested_ops=not phase.tops_only)
