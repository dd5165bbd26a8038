"""Where the C++ UDF headers are, for CMake (`-DDFIR_INCLUDE_DIR=$(python -c ...)`)."""
from __future__ import annotations

import importlib.util
from pathlib import Path


def include_dir() -> str:
    """The folder holding `flow_func/flow_func.h`: `#include "flow_func/flow_func.h"` from it.

    The headers ship inside the runtime package; it is located, not imported (the UDF API lies
    below the runtime)."""
    runtime = importlib.util.find_spec("dfir.runtime")
    return str(Path(runtime.origin).resolve().parent / "include")
