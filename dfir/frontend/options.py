"""Compile and session options: the seeds' string keys, each validated; unknown keys are errors.

Every option is `str -> str`. A key dfir knows but does not act on yet is accepted with a warning
(never silently), so scripts written for GE run unchanged.
"""
from __future__ import annotations

import logging
import os
import re
from typing import Callable

from dfir.core.backends import AUTO, BACKEND_CHOICES
from dfir.core.errors import GeError
from dfir.frontend.ge.input_shape import input_shape_problem
from dfir.frontend.ge.output_max_size import parse_output_max_size
from dfir.om.plan import CLUSTER_KINDS, MAX_CHANNEL_DEPTH, MAX_GE_THREADS

_log = logging.getLogger("dfir.options")

CHANNEL_DEPTH_OPTION = "dfir.runtime.channel_depth"
"""How many messages each channel of the runtime holds (the plan's `channel_depth`)."""

BACKEND_OPTION = "dfir.ge.backend"
"""The device backend of GE graphs: auto (the default), reference, iree-cpu, iree-cuda or onnxruntime."""
BACKEND_ENV = "DFIR_GE_BACKEND"
"""The environment variable that replaces the default of `BACKEND_OPTION` (options still win)."""
THREADS_OPTION = "dfir.ge.threads"
"""A compiled GE graph's intra-op threads (default: the cores of the process that runs it)."""

CLUSTER_OPTION = "dfir.runtime.cluster"
"""Where the servers of the resource config run: local (the default) or ray (the plan's `cluster`)."""
RAY_ADDRESS_OPTION = "dfir.runtime.ray_address"
"""The Ray cluster `dfir.runtime.cluster=ray` connects to (default: RAY_ADDRESS, else a local Ray)."""


def _choice(*values: str) -> Callable[[str], str | None]:
    return lambda v: None if v in values else f"expected one of {list(values)}"


def _regex(pattern: str, what: str) -> Callable[[str], str | None]:
    compiled = re.compile(pattern)
    return lambda v: None if compiled.fullmatch(v) else f"expected {what}"


def _any(_: str) -> str | None:
    return None


def _input_shape(value: str) -> str | None:
    problem = input_shape_problem(value)
    return None if problem is None else f"it {problem}"


def _output_max_size(value: str) -> str | None:
    try:
        parse_output_max_size(value)
    except ValueError as error:
        return str(error)
    return None


def _cache_directory(value: str) -> str | None:
    """Empty turns the compile cache off; otherwise the directory must exist, as in GE."""
    if not value or os.path.isdir(value):
        return None
    return "expected an existing directory (the compile cache does not create it)"


_NON_NEGATIVE_INT = _regex(r"\d+", "a non-negative integer")


def _channel_depth(value: str) -> str | None:
    if value.isdigit() and 1 <= int(value) <= MAX_CHANNEL_DEPTH:
        return None
    return f"expected a channel depth in [1, {MAX_CHANNEL_DEPTH}] (messages)"


def _threads(value: str) -> str | None:
    if value.isdigit() and 1 <= int(value) <= MAX_GE_THREADS:
        return None
    return f"expected a thread count in [1, {MAX_GE_THREADS}]"

# key -> (validator, acted on by dfir); an option not acted on is accepted with one warning
KNOWN_OPTIONS: dict[str, tuple[Callable[[str], str | None], bool]] = {
    "ge.runFlag": (_choice("0", "1"), True),
    "ge.graph_key": (_regex(r"[A-Za-z0-9_\-]{1,128}", "1 to 128 of A-Z a-z 0-9 _ -"), True),
    "ge.graph_compiler_cache_dir": (_cache_directory, True),
    "ge.inputShape": (_input_shape, True),
    "ge.outputMaxSize": (_output_max_size, True),
    "ge.experiment.data_flow_deploy_info_path": (_any, True),
    "ge.resourceConfigPath": (_any, True),
    "ge.exec.deviceId": (_NON_NEGATIVE_INT, False),
    "ge.exec.logicalDeviceClusterDeployMode": (_choice("SINGLE", "MULTI"), False),
    "ge.exec.logicalDeviceId": (_regex(r"\[[0-9:,\s]*\]", "a list such as [0:0]"), False),
    "ge.graphRunMode": (_choice("0", "1"), False),
    "ge.socVersion": (_any, False),
    "ge.exec.precision_mode": (_any, False),
    "log_level": (_regex(r"[0-4]", "a log level 0..4"), False),
    "input_format": (_choice("ND", "NCHW", "NHWC"), False),
    CHANNEL_DEPTH_OPTION: (_channel_depth, True),
    BACKEND_OPTION: (_choice(*BACKEND_CHOICES), True),
    THREADS_OPTION: (_threads, True),
    CLUSTER_OPTION: (_choice(*CLUSTER_KINDS), True),
    RAY_ADDRESS_OPTION: (_any, True),
}
_warned: set[str] = set()


def default_backend() -> str:
    """`BACKEND_OPTION`'s value when no option sets it: `BACKEND_ENV`, else auto."""
    value = os.environ.get(BACKEND_ENV)
    if value is None:
        return AUTO
    if value not in BACKEND_CHOICES:
        raise GeError(f"environment variable {BACKEND_ENV} has malformed value {value!r}: expected one of "
                      f"{list(BACKEND_CHOICES)}", context={"option": BACKEND_OPTION})
    return value


def warn_no_effect(what: str) -> None:
    """Warn, once per process, that `what` is accepted but has no effect in dfir."""
    if what not in _warned:
        _warned.add(what)
        _log.warning("%s is accepted but has no effect in this version of dfir", what)


def validate_options(options, api: str) -> dict[str, str]:
    """Check every key and value; return a plain dict copy. A GeError names the bad key."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise GeError(f"options must be a dict of str to str, got {type(options).__name__}", api)
    for key, value in options.items():
        if not isinstance(key, str):
            raise GeError(f"option key {key!r} is a {type(key).__name__}, expected str", api)
        if not isinstance(value, str):
            raise GeError(f"option {key} has a {type(value).__name__} value {value!r}, expected str",
                          api, {"option": key})
        known = KNOWN_OPTIONS.get(key)
        if known is None:
            raise GeError(f"unknown option {key}; known options: {sorted(KNOWN_OPTIONS)}", api,
                          {"option": key})
        validator, acted_on = known
        problem = validator(value)
        if problem:
            raise GeError(f"option {key} has malformed value {value!r}: {problem}", api,
                          {"option": key})
        if not acted_on:
            warn_no_effect(f"option {key}")
    return dict(options)
