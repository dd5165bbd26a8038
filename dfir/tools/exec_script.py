"""`dfir exec SCRIPT.py [ARGS...]`: run a GE DataFlow script as written, on dfir.

The script runs as `python SCRIPT.py ARGS...` would run it: as module `__main__` (kept in
sys.modules), `sys.argv` = [SCRIPT.py, ARGS...], its folder first on sys.path, the working
directory unchanged; an exception it lets out prints Python's traceback (from the script's own
frames) and exits with status 1, `sys.exit(n)` exits with n. GE's import names (`import dataflow`,
`ge.offline_compile`, ...) resolve to dfir's modules (`dfir.core.ge_aliases`), here and in the
processes the run starts.
"""
from __future__ import annotations

import os
import sys
import types
from importlib.machinery import SourceFileLoader
from typing import Sequence

from dfir.core import ge_aliases
from dfir.core.errors import GeError


def exec_script(script: str, args: Sequence[str]) -> int:
    """Run `script` with arguments `args` as `__main__`; returns the exit status (module docstring)."""
    try:
        code = _compiled(script)
    except SyntaxError as error:  # shown as Python shows it, without this runner's frames
        sys.excepthook(type(error), error.with_traceback(None), None)
        return 1
    ge_aliases.install()
    sys.argv = [script, *args]
    sys.path[0:1] = [os.path.dirname(os.path.abspath(script))]
    main = _main_module(code.co_filename)
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as error:  # noqa: BLE001 - the script's own error: Python's report of it
        trimmed = _from_script(error.__traceback__, code.co_filename)
        sys.excepthook(type(error), error.with_traceback(trimmed), trimmed)
        return 130 if isinstance(error, KeyboardInterrupt) else 1
    return 0


def _compiled(script: str) -> types.CodeType:
    """The script's code; a GeError when it cannot be read. A SyntaxError is the script's own."""
    try:
        with open(script, "rb") as stream:
            source = stream.read()
    except OSError as error:
        raise GeError(f"cannot run script {script!r}: {error.strerror}") from None
    return compile(source, os.path.abspath(script), "exec", dont_inherit=True)


def _main_module(path: str) -> types.ModuleType:
    """A fresh `__main__` for the script at absolute `path`, as Python makes one."""
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__loader__ = SourceFileLoader("__main__", path)
    main.__builtins__ = __builtins__
    main.__spec__ = None
    main.__cached__ = None
    main.__package__ = None
    return main


def _from_script(tb: types.TracebackType | None, filename: str) -> types.TracebackType | None:
    """The traceback from the script's first frame on (this runner's frames are not the script's)."""
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    return tb
