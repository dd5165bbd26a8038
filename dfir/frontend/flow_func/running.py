"""Where the running UDF is placed: GE's `get_running_device_id()`, `get_running_instance_id()` and
`get_running_instance_num()` (`import dataflow as df`), and `@pyflow`'s `env_hook_func` and
`visible_device_enable`.

The runtime makes a UDF instance's `Placement` current while it builds the instance and, when a
process hosts more than one placement, around each of its calls; with one placement per process
(GE's case: each UDF instance is its own process) it is the process's. Outside a UDF the getters
return None and log an error, as GE's do. With `visible_device_enable`, a UDF on a device sees
that device alone (`ASCEND_RT_VISIBLE_DEVICES` in its process) and its running device id is 0,
as in GE; `env_hook_func` runs once in the UDF's process before the instance is built.
"""
from __future__ import annotations

import functools
import inspect
import os
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable

from dfir.frontend.flow_func.logger import logger

VISIBLE_DEVICES_ENV = "ASCEND_RT_VISIBLE_DEVICES"
ENV_HOOK = "__df_env_hook_func__"
VISIBLE_DEVICE = "__df_visible_device_enable__"


@dataclass(frozen=True)
class Placement:
    """One UDF instance's place: its device id (-1: the host), its instance id and its node's count."""

    device_id: int
    instance_id: int
    instance_num: int


_CURRENT: ContextVar[Placement | None] = ContextVar("dfir_udf_placement", default=None)
_PROCESS: set[Placement] = set()  # the placements this process hosts
_HOOKS_RUN: set[int] = set()  # id() of the env hooks run in this process


def current_placement() -> Placement | None:
    """The placement of the UDF running here: the current one, else the process's only one."""
    placement = _CURRENT.get()
    if placement is None and len(_PROCESS) == 1:
        return next(iter(_PROCESS))
    return placement


def get_running_device_id() -> int | None:
    """The device id the running UDF was placed on (-1: the host); None outside a UDF."""
    placement = _placement("running device id")
    return None if placement is None else placement.device_id


def get_running_instance_id() -> int | None:
    """Which instance of its node the running UDF is (0-based); None outside a UDF."""
    placement = _placement("running instance id")
    return None if placement is None else placement.instance_id


def get_running_instance_num() -> int | None:
    """How many instances the running UDF's node has; None outside a UDF."""
    placement = _placement("running instance num")
    return None if placement is None else placement.instance_num


def _placement(what: str) -> Placement | None:
    placement = current_placement()
    if placement is None:
        logger.error("%s is not set: no UDF is running here (or this process hosts several and the call "
                     "is outside them)", what)
    return placement


def register(placements) -> None:
    """Note the placements a process is about to build (so `placed` knows whether calls need one)."""
    _PROCESS.update(placements)


def build_placed(target: Any, placement: Placement, build: Callable[[], Any]) -> tuple[Any, Placement]:
    """Run `target`'s env hook (once per process), apply `visible_device_enable`, then `build()`
    with the placement current; (what `build` returned, the placement calls run in)."""
    hook = getattr(target, ENV_HOOK, None)
    if hook is not None and id(hook) not in _HOOKS_RUN:
        hook()
        _HOOKS_RUN.add(id(hook))
    if getattr(target, VISIBLE_DEVICE, False) and placement.device_id >= 0:
        os.environ[VISIBLE_DEVICES_ENV] = str(placement.device_id)
        placement = Placement(0, placement.instance_id, placement.instance_num)
    _PROCESS.add(placement)
    token = _CURRENT.set(placement)
    try:
        return build(), placement
    finally:
        _CURRENT.reset(token)


def placed(fn: Callable, placement: Placement) -> Callable:
    """`fn` as it is called: itself while this process hosts one placement (the process's is
    current); else a wrapper making `placement` current around each call (each step of a generator)."""
    if len(_PROCESS) <= 1:
        return fn
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def placed_generator(*args):
            generator = fn(*args)
            while True:
                token = _CURRENT.set(placement)
                try:
                    item = next(generator)
                except StopIteration:
                    return
                finally:
                    _CURRENT.reset(token)
                yield item
        return placed_generator

    @functools.wraps(fn)
    def placed_call(*args):
        token = _CURRENT.set(placement)
        try:
            return fn(*args)
        finally:
            _CURRENT.reset(token)
    return placed_call


def in_placement(placement: Placement) -> Any:
    """A context manager making `placement` current (a UDF project's init and calls)."""
    return _Current(placement)


class _Current:
    __slots__ = ("_placement", "_token")

    def __init__(self, placement: Placement):
        self._placement = placement

    def __enter__(self) -> Placement:
        _PROCESS.add(self._placement)
        self._token = _CURRENT.set(self._placement)
        return self._placement

    def __exit__(self, *exc_info: object) -> None:
        _CURRENT.reset(self._token)
