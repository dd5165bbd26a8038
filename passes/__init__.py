"""dfir's passes, one per file, each named after its CLI flag; `all_passes()` is the lazy registry."""
from __future__ import annotations

from typing import Callable

from xdsl.passes import ModulePass


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass flag -> factory returning the pass class (imported only when asked for)."""

    def get_place_nodes():
        from dfir.passes.place_nodes import PlaceNodes
        return PlaceNodes

    def get_sort_nodes():
        from dfir.passes.sort_nodes import SortNodes
        return SortNodes

    return {
        "place-nodes": get_place_nodes,
        "sort-nodes": get_sort_nodes,
    }
