"""dfir's passes, one per file, each named after its CLI flag; `all_passes()` is the registry."""
from __future__ import annotations

from typing import Callable

from xdsl.passes import ModulePass

from dfir.passes.align_inputs import AlignInputs
from dfir.passes.convert_ge_to_linalg import ConvertGeToLinalg
from dfir.passes.fingerprint_subgraphs import FingerprintSubgraphs
from dfir.passes.infer_shape_ranges import InferShapeRanges
from dfir.passes.place_nodes import PlaceNodes
from dfir.passes.plan_memory import PlanMemory
from dfir.passes.plan_output_size import PlanOutputSize
from dfir.passes.replicate_instances import ReplicateInstances
from dfir.passes.sort_nodes import SortNodes

PASSES: tuple[type[ModulePass], ...] = (AlignInputs, ConvertGeToLinalg, FingerprintSubgraphs, InferShapeRanges, PlaceNodes,
                                        PlanMemory, PlanOutputSize, ReplicateInstances, SortNodes)


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass flag -> factory returning the pass class (the form xDSL's registry takes)."""
    return {cls.name: (lambda cls=cls: cls) for cls in PASSES}
