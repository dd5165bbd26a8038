"""Where user code created a graph object: the first stack frame outside dfir itself, its file
named as `dfir.core.source_paths` names files (stable across working directories)."""
from __future__ import annotations

import os
import sys

from dfir.core.source_paths import display_path

_DFIR_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # dfir/


def user_location() -> str:
    """`path:line` of the innermost caller outside the dfir package (or `<unknown>`)."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_DFIR_ROOT + os.sep):
            return f"{display_path(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"
