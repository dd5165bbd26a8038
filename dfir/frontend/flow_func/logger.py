"""`logger`: the UDF log, routed to Python logging (logger `dfir.flow_func`).

Messages use printf-style arguments as in the seeds (`ff.logger.info("input num %d", n)`). Each
record carries `udf_node`, `udf_func` and `udf_instance` attributes (from the current
`CallScope`; empty outside a UDF call) and its message starts with `get_log_header()`, e.g.
``[Add_pp#0 Add1] input num 2``. `event` and `run_info` log at INFO, `run_error` at ERROR;
event records also carry ``udf_event=True``. The last ERROR record of a failing UDF call also
appears in its transaction's error message (whether or not logging shows it). As in GE, a message
whose arguments do not fit its format is logged as written, and `is_log_enable` takes GE's
`(FlowFuncLogType, FlowFuncLogLevel)` pair (or a `logging` level).
"""
from __future__ import annotations

import logging
from enum import IntEnum

from dfir.frontend.flow_func.scope import current_scope

LOGGER_NAME = "dfir.flow_func"


class FlowFuncLogType(IntEnum):
    """GE's log types: the debug log and the run log."""

    DEBUG_LOG = 0
    RUN_LOG = 1


class FlowFuncLogLevel(IntEnum):
    """GE's log levels."""

    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3


DEBUG_LOG, RUN_LOG = FlowFuncLogType.DEBUG_LOG, FlowFuncLogType.RUN_LOG
DEBUG, INFO, WARN, ERROR = FlowFuncLogLevel.DEBUG, FlowFuncLogLevel.INFO, FlowFuncLogLevel.WARN, FlowFuncLogLevel.ERROR
_LOGGING_LEVEL = {DEBUG: logging.DEBUG, INFO: logging.INFO, WARN: logging.WARNING, ERROR: logging.ERROR}


class FlowFuncLogger:
    """The seeds' `FlowFuncLogger`; use the module-level `logger`."""

    def __init__(self, name: str = LOGGER_NAME):
        self._log = logging.getLogger(name)

    def debug(self, message: str, *args) -> None:
        self._emit(logging.DEBUG, message, args)

    def info(self, message: str, *args) -> None:
        self._emit(logging.INFO, message, args)

    def warn(self, message: str, *args) -> None:
        self._emit(logging.WARNING, message, args)

    warning = warn

    def error(self, message: str, *args) -> None:
        self._emit(logging.ERROR, message, args)

    def event(self, message: str, *args) -> None:
        self._emit(logging.INFO, message, args, event=True)

    def run_info(self, message: str, *args) -> None:
        self._emit(logging.INFO, message, args)

    def run_error(self, message: str, *args) -> None:
        self._emit(logging.ERROR, message, args)

    def is_log_enable(self, log_type, log_level=None) -> bool:
        """Whether records of a level are emitted: GE's `is_log_enable(DEBUG_LOG, INFO)` (False for
        arguments of other types, as in GE), or `is_log_enable(logging.INFO)`."""
        if log_level is None:
            return self._log.isEnabledFor(log_type)
        if not isinstance(log_type, FlowFuncLogType) or not isinstance(log_level, FlowFuncLogLevel):
            return False
        return self._log.isEnabledFor(_LOGGING_LEVEL[log_level])

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
        if args and not _fits(fmt, args):
            args = ()  # GE logs such a message as written
        header = self.get_log_header()
        if args:
            header = header.replace("%", "%%")
        self._log.log(level, f"{header} {fmt}", *args, extra=extra, stacklevel=3)


def _fits(fmt: str, args: tuple) -> bool:
    try:
        str(fmt) % args
    except (TypeError, ValueError):
        return False
    return True


def _formatted(fmt: str, args: tuple) -> str:
    """`fmt % args` as logging would print it; a mismatch gives the message as written (GE's)."""
    try:
        return str(fmt) % args if args else str(fmt)
    except (TypeError, ValueError):
        return str(fmt)


logger = FlowFuncLogger()
