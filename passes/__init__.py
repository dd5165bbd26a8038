"""dfir's passes, one per file, each named after its CLI flag; `all_passes()` is the lazy registry."""
from __future__ import annotations

from typing import Callable

from xdsl.passes import ModulePass


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass flag -> factory returning the pass class (imported only when asked for)."""

    def get_align_inputs():
        from dfir.passes.align_inputs import AlignInputs
        return AlignInputs

    def get_fingerprint_subgraphs():
        from dfir.passes.fingerprint_subgraphs import FingerprintSubgraphs
        return FingerprintSubgraphs

    def get_place_nodes():
        from dfir.passes.place_nodes import PlaceNodes
        return PlaceNodes

    def get_infer_shape_ranges():
        from dfir.passes.infer_shape_ranges import InferShapeRanges
        return InferShapeRanges

    def get_plan_memory():
        from dfir.passes.plan_memory import PlanMemory
        return PlanMemory

    def get_plan_output_size():
        from dfir.passes.plan_output_size import PlanOutputSize
        return PlanOutputSize

    def get_replicate_instances():
        from dfir.passes.replicate_instances import ReplicateInstances
        return ReplicateInstances

    def get_sort_nodes():
        from dfir.passes.sort_nodes import SortNodes
        return SortNodes

    return {
        "align-inputs": get_align_inputs,
        "fingerprint-subgraphs": get_fingerprint_subgraphs,
        "infer-shape-ranges": get_infer_shape_ranges,
        "place-nodes": get_place_nodes,
        "plan-memory": get_plan_memory,
        "plan-output-size": get_plan_output_size,
        "replicate-instances": get_replicate_instances,
        "sort-nodes": get_sort_nodes,
    }
