"""`logger`: the UDF log, routed to Python logging (logger `dfir.flow_func`).

Messages use printf-style arguments as in the seeds (`ff.logger.info("input num %d", n)`). Each
record carries `udf_node`, `udf_func` and `udf_instance` attributes (from the current
`CallScope`; empty outside a UDF call) and its message starts with `get_log_header()`, e.g.
``[Add_pp#0 Add1] input num 2``. `event` and `run_info` log at INFO, `run_error` at ERROR;
event records also carry ``udf_event=True``. The last ERROR record of a failing UDF call also
appears in its transaction's error message (whether or not logging shows it).
"""
from __future__ import annotations

import logging

from dfir.frontend.flow_func.scope import current_scope

LOGGER_NAME = "dfir.flow_func"


class FlowFuncLogger:
    """The seeds' `FlowFuncLogger`; use the module-level `logger`."""

    def __init__(self, name: str = LOGGER_NAME):
        self._log = logging.getLogger(name)

    def debug(self, fmt: str, *args) -> None:
        self._emit(logging.DEBUG, fmt, args)

    def info(self, fmt: str, *args) -> None:
        self._emit(logging.INFO, fmt, args)

    def warn(self, fmt: str, *args) -> None:
        self._emit(logging.WARNING, fmt, args)

    warning = warn

    def error(self, fmt: str, *args) -> None:
        self._emit(logging.ERROR, fmt, args)

    def event(self, fmt: str, *args) -> None:
        self._emit(logging.INFO, fmt, args, event=True)

    def run_info(self, fmt: str, *args) -> None:
        self._emit(logging.INFO, fmt, args)

    def run_error(self, fmt: str, *args) -> None:
        self._emit(logging.ERROR, fmt, args)

    def is_log_enable(self, level: int) -> bool:
        """Whether records of `level` (a `logging` level) are emitted."""
        return self._log.isEnabledFor(level)

    def get_log_header(self) -> str:
        """``[node#instance func]`` of the current UDF call; ``[]`` outside one."""
        scope = current_scope()
        return "[]" if scope is None else f"[{scope.node}#{scope.instance} {scope.func}]"

    def _emit(self, level: int, fmt: str, args: tuple, event: bool = False) -> None:
        scope = current_scope()
        if scope is not None and level >= logging.ERROR:
            scope.last_error = _formatted(fmt, args)
        if not self._log.isEnabledFor(level):
            return
        extra = {"udf_node": scope.node if scope else "", "udf_func": scope.func if scope else "",
                 "udf_instance": scope.instance if scope else -1, "udf_event": event}
        header = self.get_log_header().replace("%", "%%")
        self._log.log(level, f"{header} {fmt}", *args, extra=extra, stacklevel=3)


def _formatted(fmt: str, args: tuple) -> str:
    """`fmt % args` as logging would print it; a mismatch shows both rather than raising."""
    try:
        return str(fmt) % args if args else str(fmt)
    except (TypeError, ValueError):
        return f"{fmt} {args!r}"


logger = FlowFuncLogger()
