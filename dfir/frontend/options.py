"""Compile and session options: the seeds' string keys, each validated; unknown keys are errors.

Every option is `str -> str`. A key dfir knows but does not act on yet is accepted with a warning
that says why (never silently), so scripts written for GE run unchanged; an unknown key's error
suggests the closest known one.
"""
from __future__ import annotations

import logging
import os
import re
from typing import Callable, NamedTuple

from dfir.core.backends import AUTO, BACKEND_CHOICES
from dfir.core.closest import closest_name
from dfir.core.errors import GeError
from dfir.core.udf_timeout import udf_timeout_problem
from dfir.frontend.ge.input_shape import input_shape_problem
from dfir.frontend.ge.output_max_size import parse_output_max_size
from dfir.om.plan import (CLUSTER_KINDS, MAX_CHANNEL_DEPTH, MAX_GE_THREADS, RECOVER_CHOICES, SHARED_ARENA_BYTES,
                          TRACE_OPTION, trace_rate)

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
RECOVER_OPTION = "dfir.runtime.recover"
"""What the runtime does when a worker dies: restart (the default) or off (the plan's `recover`)."""
UDF_TIMEOUT_OPTION = "dfir.runtime.udf_timeout_ms"
"""The milliseconds one call of every UDF node may take (the plan's `udf_timeouts`; without it, and
without a node's own, no limit)."""
MEMORY_POOLS_OPTION = "ge.flowGraphMemMaxSize"
"""GE's memory pools of a FlowGraph's messages: the runtime's tensor arena is their total."""


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


def _udf_timeout(value: str) -> str | None:
    if not (value.isascii() and value.isdigit()):
        return udf_timeout_problem(0)  # not a number: the message of a number out of range
    return udf_timeout_problem(int(value))


def _trace(value: str) -> str | None:
    return None if trace_rate(value) is not None else "expected off, on or a sampling rate in (0, 1]"


def _threads(value: str) -> str | None:
    if value.isdigit() and 1 <= int(value) <= MAX_GE_THREADS:
        return None
    return f"expected a thread count in [1, {MAX_GE_THREADS}]"


MAX_MEMORY_POOLS = 128
MEMORY_POOL_BYTES = SHARED_ARENA_BYTES
"""GE's bounds of one `ge.flowGraphMemMaxSize` pool, in bytes; all pools together are at most the upper one."""
MEMORY_POOL_LIMIT_BYTES = (1024, 2 << 30)
"""GE's bounds of a pool's largest single request (`size:limit`; 0 or no limit: unlimited)."""


def _memory_pools(value: str) -> str | None:
    """GE's `ge.flowGraphMemMaxSize`: `size[:limit],size[:limit],...`, 1 to 128 pools."""
    pools = value.split(",")
    if len(pools) > MAX_MEMORY_POOLS:
        return f"expected at most {MAX_MEMORY_POOLS} memory pools, got {len(pools)}"
    total = 0
    for pool in pools:
        size, _, limit = pool.strip().partition(":")
        if not size.isdigit() or not MEMORY_POOL_BYTES[0] <= int(size) <= MEMORY_POOL_BYTES[1]:
            return (f"pool {pool.strip()!r}: expected a pool size in [{MEMORY_POOL_BYTES[0]}, "
                    f"{MEMORY_POOL_BYTES[1]}] bytes, optionally ':' and a request limit")
        if limit and not (limit.isdigit() and (int(limit) == 0 or
                                               MEMORY_POOL_LIMIT_BYTES[0] <= int(limit) <= MEMORY_POOL_LIMIT_BYTES[1])):
            return (f"pool {pool.strip()!r}: expected a request limit of 0 or in "
                    f"[{MEMORY_POOL_LIMIT_BYTES[0]}, {MEMORY_POOL_LIMIT_BYTES[1]}] bytes")
        total += int(size)
    if total > MEMORY_POOL_BYTES[1]:
        return f"the pools add up to {total} bytes, more than {MEMORY_POOL_BYTES[1]}"
    return None


MAX_GEARS = 256
"""The most gears GE takes in a dynamic-gear option (its newest chips'; older ones take 100)."""


def _gears(per_gear: int | None, separator: str) -> Callable[[str], str | None]:
    """GE's gear lists: 2 to MAX_GEARS gears split by `separator`, each a comma-separated list of
    positive sizes, `per_gear` of them (None: any number, the same in every gear)."""
    def problem(value: str) -> str | None:
        gears = [gear.split(",") if separator == ";" else [gear] for gear in value.split(separator)]
        if not 2 <= len(gears) <= MAX_GEARS:
            return f"expected 2 to {MAX_GEARS} gears separated by '{separator}', got {len(gears)}"
        width = per_gear or len(gears[0])
        for gear in gears:
            text = ",".join(gear)
            if not all(size.strip().isdigit() and int(size) > 0 for size in gear):
                return f"gear {text!r} is not a list of positive sizes"
            if len(gear) < width:
                return f"gear {text!r} has {len(gear)} of {width} sizes"
            if len(gear) > width:
                return f"gear {text!r} has {len(gear)} sizes, more than {width}"
        return None
    return problem


_NO_GEARS = ("dfir compiles each GE graph once for every size ge.inputShape allows, so every gear runs "
             "without a graph of its own")
_NO_DUMP = "dfir dumps no operator data; `dfir inspect` and `dfir view` show what a model holds"
_NO_EXTERNAL_WEIGHTS = ("dfir keeps weights in the .om's WEIGHTS_DATA partition, which every instance of a "
                        "model maps without copying")
_ONE_ARENA = ("the runtime's one tensor arena takes the pools' total; it serves requests of every size "
              "up to its whole size")


class KnownOption(NamedTuple):
    """How an option's value is checked (None: fine, else what is wrong), whether dfir acts on
    it, and, for one it does not act on, why (said in its one warning)."""

    validator: Callable[[str], str | None]
    acted_on: bool
    why_no_effect: str | None = None


# key -> KnownOption; an option not acted on is accepted with one warning
KNOWN_OPTIONS: dict[str, KnownOption] = {key: KnownOption(*known) for key, known in {
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
    MEMORY_POOLS_OPTION: (_memory_pools, True),
    "ge.externalWeight": (_choice("0", "1", "2"), False, _NO_EXTERNAL_WEIGHTS),
    "ge.externalWeightDir": (_any, False, _NO_EXTERNAL_WEIGHTS),
    "ge.exec.enableDump": (_choice("0", "1"), False, _NO_DUMP),
    "ge.exec.dumpPath": (_any, False, _NO_DUMP),
    "ge.exec.dumpStep": (_any, False, _NO_DUMP),
    "ge.exec.dumpMode": (_choice("input", "output", "all"), False, _NO_DUMP),
    "ge.dynamicDims": (_gears(None, ";"), False, _NO_GEARS),
    "ge.dynamicBatchSize": (_gears(1, ","), False, _NO_GEARS),
    "ge.dynamicImageSize": (_gears(2, ";"), False, _NO_GEARS),
    "ge.dynamicNodeType": (_choice("0", "1"), False, _NO_GEARS),
    CHANNEL_DEPTH_OPTION: (_channel_depth, True),
    BACKEND_OPTION: (_choice(*BACKEND_CHOICES), True),
    THREADS_OPTION: (_threads, True),
    CLUSTER_OPTION: (_choice(*CLUSTER_KINDS), True),
    RAY_ADDRESS_OPTION: (_any, True),
    RECOVER_OPTION: (_choice(*RECOVER_CHOICES), True),
    UDF_TIMEOUT_OPTION: (_udf_timeout, True),
    TRACE_OPTION: (_trace, True),
}.items()}
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


def warn_no_effect(what: str, why: str | None = None) -> None:
    """Warn, once per process, that `what` is accepted but has no effect in dfir (and `why`)."""
    if what not in _warned:
        _warned.add(what)
        _log.warning("%s is accepted but has no effect in this version of dfir%s", what,
                     f": {why}" if why else "")


def memory_pool_bytes(options: dict[str, str]) -> int | None:
    """The runtime's tensor arena the (validated) options ask for: the total of the pools of
    `ge.flowGraphMemMaxSize` (None without it). Several pools or request limits, which dfir's one
    arena does not keep apart, are warned of once."""
    value = options.get(MEMORY_POOLS_OPTION)
    if value is None:
        return None
    pools = [pool.strip().partition(":") for pool in value.split(",")]
    if len(pools) > 1 or any(int(limit or "0") for _, _, limit in pools):
        warn_no_effect(f"option {MEMORY_POOLS_OPTION}'s division into pools (and their request limits)", _ONE_ARENA)
    return sum(int(size) for size, _, _ in pools)


def unknown_option_message(key: str) -> str:
    """`unknown option K (did you mean C?); known options: [...]`: the closest known key, when
    one is close enough to be what was meant."""
    closest = closest_name(key, KNOWN_OPTIONS)
    hint = f" (did you mean {closest}?)" if closest else ""
    return f"unknown option {key}{hint}; known options: {sorted(KNOWN_OPTIONS)}"


GE_GRAPH_OPTIONS = ("ge.inputShape", "ge.outputMaxSize")
"""Options that describe one GE graph's inputs and outputs: they act where a GE graph compiles on
its own (`dfir.compile` of a Graph, `ge.offline_compile`) or in the build options of the compile
config of the GraphProcessPoint that runs it, never on a FlowGraph, whose GE graphs they cannot name."""


def validate_flow_graph_options(options, api: str) -> dict[str, str]:
    """`validate_options` for options that reach FlowGraphs (`df.init`'s, a FlowGraph's own),
    which also refuses GE_GRAPH_OPTIONS."""
    validated = validate_options(options, api)
    refuse_ge_graph_options(validated, api)
    return validated


def refuse_ge_graph_options(options: dict[str, str], api: str) -> None:
    """A GeError for the first of GE_GRAPH_OPTIONS among a FlowGraph's `options`."""
    for key in GE_GRAPH_OPTIONS:
        if key in options:
            raise GeError(f"option {key} describes one GE graph and has no effect on a FlowGraph: give it in "
                          f"the build_options of the compile config of the GraphProcessPoint that runs the graph, "
                          f"or compile the Graph on its own", api, {"option": key})


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
            raise GeError(unknown_option_message(key), api, {"option": key})
        validator, acted_on, why = known
        problem = validator(value)
        if problem:
            raise GeError(f"option {key} has malformed value {value!r}: {problem}", api,
                          {"option": key})
        if not acted_on:
            warn_no_effect(f"option {key}", why)
    return dict(options)
