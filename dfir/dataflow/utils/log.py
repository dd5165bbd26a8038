"""GE's `dataflow.utils.log`: the driver-side log of a DataFlow script.

One logger, `DATAFLOW`, writing to stdout; its level comes from env `ASCEND_GLOBAL_LOG_LEVEL`
as GE reads it (0 debug, 1 info, 2 warning, 3 error; unset or another value: error) when it is
first used, and `set_log_level` changes it. `log(level, msg, *args)`, `debug`, `info`, `warning`
and `error` format as `logging` does; each line names the caller's file and line.
"""
from __future__ import annotations

import functools
import logging
import os
import sys

__all__ = ["DATA_FLOW_LOG_FORMAT", "DEBUG", "ERROR", "INFO", "WARNING", "debug", "error", "get_log_level",
           "get_logger", "info", "log", "set_log_level", "warning"]

DEBUG = logging.DEBUG
INFO = logging.INFO
WARNING = logging.WARNING
ERROR = logging.ERROR

LOGGER_NAME = "DATAFLOW"
LEVEL_ENV = "ASCEND_GLOBAL_LOG_LEVEL"
_LEVELS = {"0": DEBUG, "1": INFO, "2": WARNING, "3": ERROR}
DATA_FLOW_LOG_FORMAT = ("[%(levelname)s] %(name)s(%(process)d):%(asctime)s.%(msecs)03d [%(filename)s:%(lineno)d] "
                        "%(message)s")


@functools.cache
def get_logger() -> logging.Logger:
    """The `DATAFLOW` logger, set up on first use (module docstring)."""
    logger = logging.getLogger(LOGGER_NAME)
    logger.setLevel(_LEVELS.get(os.environ.get(LEVEL_ENV, ""), ERROR))
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter(DATA_FLOW_LOG_FORMAT, datefmt="%Y-%m-%d %H:%M:%S"))
    logger.addHandler(handler)
    return logger


def log(level: int, msg: str, *args, **kwargs) -> None:
    """Log `msg % args` at `level` (DEBUG, INFO, WARNING, ERROR)."""
    kwargs.setdefault("stacklevel", 2)
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg: str, *args, **kwargs) -> None:
    kwargs.setdefault("stacklevel", 2)
    get_logger().debug(msg, *args, **kwargs)


def info(msg: str, *args, **kwargs) -> None:
    kwargs.setdefault("stacklevel", 2)
    get_logger().info(msg, *args, **kwargs)


def warning(msg: str, *args, **kwargs) -> None:
    kwargs.setdefault("stacklevel", 2)
    get_logger().warning(msg, *args, **kwargs)


def error(msg: str, *args, **kwargs) -> None:
    kwargs.setdefault("stacklevel", 2)
    get_logger().error(msg, *args, **kwargs)


def set_log_level(log_level: int) -> None:
    """Log from `log_level` on."""
    get_logger().setLevel(log_level)


def get_log_level() -> int:
    return get_logger().getEffectiveLevel()
