"""Where user code created a graph object: the first stack frame outside dfir itself."""
from __future__ import annotations

import os
import sys

_DFIR_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # dfir/


def user_location() -> str:
    """`path:line` of the innermost caller outside the dfir package (or `<unknown>`)."""
    frame = sys._getframe(1)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_DFIR_ROOT + os.sep):
            return f"{_display_path(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


def _display_path(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative
