"""Where the C++ UDF headers are, for CMake (`-DDFIR_INCLUDE_DIR=$(python -c ...)`)."""
from __future__ import annotations

from pathlib import Path


def include_dir() -> str:
    """The folder holding `flow_func/flow_func.h`: `#include "flow_func/flow_func.h"` from it."""
    import dfir.runtime
    return str(Path(dfir.runtime.__file__).resolve().parent / "include")
