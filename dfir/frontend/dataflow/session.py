"""Process-wide state: the options given to `init`, and the models loaded by graphs (closed by `finalize`)."""
from __future__ import annotations

import atexit
import logging
import threading
import weakref

from dfir.frontend.dataflow import names

_log = logging.getLogger("dfir.dataflow")
_lock = threading.Lock()
_options: dict[str, str] | None = None
_open_models: "weakref.WeakSet" = weakref.WeakSet()


def init(flow_options: dict[str, str]) -> None:
    """Set the global options (a second call only warns, as in GE)."""
    global _options
    from dfir.frontend.options import validate_options
    with _lock:
        if _options is not None:
            _log.warning("dataflow is already initialized with %s; init ignored", _options)
            return
        _options = validate_options(flow_options, api="init")


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
