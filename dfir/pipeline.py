"""The compiler's phases, as data: each a named tuple of passes with a one-line why.

`dfir.compile(..., stop_after=PHASE)` and `dfir-opt --compile-to=PHASE` stop after PHASE; the
module is verified after every phase. Lowering to `.om` follows the last phase and is not a pass.
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from dfir.passes.place_nodes import PlaceNodes
from dfir.passes.sort_nodes import SortNodes


@dataclass(frozen=True)
class Phase:
    name: str
    passes: tuple[ModulePass, ...]
    why: str


PHASES: tuple[Phase, ...] = (
    Phase("import", (), "the frontend builds the df/ge module; verified as built"),
    Phase("schedule", (SortNodes(),), "put every graph in topological order for lowering and reading"),
    Phase("place", (PlaceNodes(),), "give every node its logical device"),
    Phase("lower", (), "serialize the final module into the .om container"),
)

PHASE_NAMES = [phase.name for phase in PHASES]


def phases_until(stop_after: str | None) -> tuple[Phase, ...]:
    """The phases to run to stop after `stop_after` (all of them for None)."""
    if stop_after is None:
        return PHASES
    if stop_after not in PHASE_NAMES:
        from dfir.ge.error import GeError
        raise GeError(f"unknown phase '{stop_after}', expected one of {PHASE_NAMES}")
    return PHASES[:PHASE_NAMES.index(stop_after) + 1]


def pipeline_spec(stop_after: str) -> str:
    """The `-p` pipeline text equivalent to running the phases up to `stop_after`."""
    return ",".join(str(p.pipeline_pass_spec()) for phase in phases_until(stop_after)
                    for p in phase.passes)


def run_phases(ctx: Context, module: ModuleOp, stop_after: str | None,
               report: list[str]) -> None:
    """Run the phases in place, verifying after each; each pass appends its summary to `report`."""
    module.verify()
    for phase in phases_until(stop_after):
        for compiler_pass in phase.passes:
            compiler_pass.apply(ctx, module)
            summary = getattr(compiler_pass, "summary", None)
            if summary is not None:
                report.append(f"{compiler_pass.name}: {summary(module)}")
        if phase.passes:
            module.verify()
