"""The graph a Python script builds: run the script (not as __main__) and pick the graph among its
globals (`dfir compile`, `dfir view`, `dfir deploy template`)."""
from __future__ import annotations

import os
import runpy
import sys
from typing import Any, Mapping

from dfir.core.errors import GeError
from dfir.frontend.dataflow import names


def find_graph(namespace: Mapping[str, Any], name: str | None, graph_types: tuple[type, ...]) -> Any:
    """The graph among a script's globals: the one named `name`, else the only one there is."""
    graphs = {key: value for key, value in namespace.items() if isinstance(value, graph_types)}
    kinds = " or ".join(t.__name__ for t in graph_types)
    if name is not None:
        if name not in graphs:
            found = f"; it defines {', '.join(sorted(graphs))}" if graphs else ""
            raise GeError(f"the script has no {kinds} named {name!r}{found}")
        return graphs[name]
    if len(graphs) != 1:
        if not graphs:
            raise GeError(f"the script defines no {kinds} among its globals")
        raise GeError(f"the script defines {len(graphs)} graphs ({', '.join(sorted(graphs))}); "
                      f"choose one with --graph NAME")
    return next(iter(graphs.values()))


def script_globals(script: str) -> dict[str, Any]:
    """The globals of `script` after running it (not as __main__), its folder first on sys.path.
    Default names start afresh, so its graph is named as when the script runs on its own."""
    if not os.path.isfile(script):
        raise GeError(f"script {script!r} does not exist")
    names.reset()
    folder = os.path.dirname(os.path.abspath(script))
    sys.path.insert(0, folder)
    try:
        return runpy.run_path(script, run_name="__dfir_compile__")
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
