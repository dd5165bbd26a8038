"""Process-wide state: the options given to `init`, the engine graphs compile and load with, and
the models loaded by graphs (closed by `finalize`).

The engine is `dfir.compile` and `dfir.load`, which lie above the frontend: the `dfir` package
installs them (`set_engine`) when it is imported, which any `import dfir.<...>` does first. What it
installs imports the compiler and the runtime when a graph first compiles or loads, so importing
this module imports neither (a process that only loads `.om` files imports it with `dfir`).
"""
from __future__ import annotations

import atexit
import logging
import threading
import weakref
from typing import Any, Callable, NamedTuple

from dfir.core.errors import GeError
from dfir.frontend.dataflow import names

_log = logging.getLogger("dfir.dataflow")
_lock = threading.Lock()
_options: dict[str, str] | None = None
_open_models: "weakref.WeakSet" = weakref.WeakSet()


class Engine(NamedTuple):
    """How a FlowGraph compiles itself and loads what it compiled."""

    compile: Callable[[Any, dict[str, str]], Any]   # (graph, options) -> CompiledModel
    load: Callable[[bytes], Any]                    # .om bytes -> runtime model


_engine: Engine | None = None


def set_engine(engine: Engine) -> None:
    global _engine
    _engine = engine


def engine() -> Engine:
    if _engine is None:
        raise GeError("no compiler is installed: import dfir")
    return _engine


def init(flow_options: dict[str, str]) -> None:
    """Set the global options (a second call only warns, as in GE)."""
    global _options
    with _lock:
        if _options is not None:
            _log.warning("dataflow is already initialized with %s; init ignored", _options)
            return
        from dfir.frontend.options import validate_flow_graph_options  # lazy: it parses shapes with xDSL's dialects
        _options = validate_flow_graph_options(flow_options, api="init")


def global_options() -> dict[str, str]:
    with _lock:
        return dict(_options or {})


def track(model) -> None:
    """Remember a loaded model so that `finalize` closes it."""
    _open_models.add(model)


def finalize() -> None:
    """Close every model loaded through a FlowGraph, forget the options and the default names."""
    global _options
    for model in list(_open_models):
        model.close()
    with _lock:
        _options = None
    names.reset()


atexit.register(finalize)
