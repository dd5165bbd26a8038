"""GE's import names for dfir's modules: `import dataflow`, `import ge.offline_compile`, ...

GE DataFlow scripts and UDF sources say `import dataflow as df`, `import dataflow.flow_func as ff`,
`from ge.offline_compile import ...`. `install()` puts a `sys.meta_path` finder in front that
answers those names with dfir's modules; nothing named `dataflow` or `ge` is installed anywhere.
`dfir exec` installs it and sets `DFIR_GE_IMPORTS=1`, which the processes it starts inherit:
`install_if_requested()` (run before the runtime imports a UDF's sources) installs it there too.

Each GE name gets a module of its own (`dataflow.flow_func`, `dataflow.utils.log`, ...) that reads
every attribute from its dfir module, so importing GE's submodule names never writes into dfir's
modules. A name resolves by `ALIASES`, else to `dfir.<name>` when dfir has that module (a GE
`ge.X` is dfir's `dfir.ge.X`); other names are not found, as for any missing module.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
from typing import Sequence

ENV_VAR = "DFIR_GE_IMPORTS"
"""Set to 1 by `dfir exec`: processes started under it resolve GE's names too."""

TOP_LEVEL = ("dataflow", "ge")
"""The top-level GE packages the finder answers for."""

_UTILS = "dfir.dataflow.utils"

ALIASES: dict[str, str] = {
    "dataflow": "dfir.dataflow",
    "dataflow.dataflow": "dfir.dataflow",
    "dataflow.pyflow": "dfir.dataflow",
    "dataflow.data_type": "dfir.data_type",
    "dataflow.flow_func": "dfir.flow_func",
    "dataflow.flow_func.flow_func": "dfir.flow_func",
    "dataflow.flow_func.func_register": "dfir.flow_func",
    "dataflow.flow_func.func_wrapper": "dfir.flow_func",
    "dataflow.plugin": "dfir.dataflow",
    "dataflow.plugin.torch": "dfir.dataflow",
    "dataflow.plugin.torch.torch_plugin": "dfir.dataflow",
    "dataflow.utils": _UTILS,
    "dataflow.utils.utils": _UTILS,
    "dataflow.utils.log": _UTILS,
    "dataflow.utils.deploy_template": _UTILS,
    "dataflow.utils.msg_type_register": _UTILS,
    "dataflow.utils.name_scope": _UTILS,
}
"""GE module name -> the dfir module holding its public names, where `dfir.<name>` is not it.
GE's submodules that only define what their package re-exports read from that package's module
(a dfir module of the exact name, when one exists, wins: `dataflow.utils.log` -> `dfir.dataflow.utils.log`)."""

ALSO_FROM: dict[str, tuple[str, ...]] = {
    "dataflow.utils.utils": ("dfir.dataflow",),  # get_running_device_id & co.
}
"""GE modules some of whose names dfir keeps elsewhere: the further dfir modules they are read from."""

SUBMODULES: dict[str, tuple[str, ...]] = {
    "dataflow": ("dataflow.data_type", "dataflow.flow_func", "dataflow.utils"),
    "dataflow.utils": ("dataflow.utils.log",),
}
"""Submodules imported with their package, so that they are its attributes as in GE
(`df.flow_func`, `df.data_type`, `df.utils`, `df.utils.log`)."""


def target_of(name: str) -> str | None:
    """The dfir module that GE's module `name` resolves to, or None when there is none."""
    if name.partition(".")[0] not in TOP_LEVEL:
        return None
    own = f"dfir.{name}"
    return own if _exists(own) else ALIASES.get(name)


def _exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that is a module, not a package
        return False


class AliasModule(types.ModuleType):
    """GE's module `name`: a module of its own whose attributes are read from `target`'s (then
    from the `also` modules', in order)."""

    def __init__(self, name: str, target: types.ModuleType, also: Sequence[types.ModuleType] = ()):
        super().__init__(name, target.__doc__)
        self.__dfir_target__ = target
        self.__dfir_also__ = tuple(also)

    def __getattr__(self, attribute: str):
        if attribute.startswith("__dfir"):
            raise AttributeError(attribute)
        for module in (self.__dfir_target__, *self.__dfir_also__):
            try:
                return getattr(module, attribute)
            except AttributeError:
                continue
        raise AttributeError(f"module '{self.__name__}' has no attribute '{attribute}' "
                             f"(it is dfir's {self.__dfir_target__.__name__})")

    def __reduce__(self):
        """Pickled by name, as modules are (a UDF's globals may hold `df`): its process resolves it."""
        return importlib.import_module, (self.__name__,)

    def __dir__(self) -> list[str]:
        targets = (self.__dfir_target__, *self.__dfir_also__)
        return sorted(set(super().__dir__()).union(*(dir(module) for module in targets)))


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> AliasModule:
        also = [importlib.import_module(name) for name in ALSO_FROM.get(spec.name, ())]
        return AliasModule(spec.name, importlib.import_module(self.target), also)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__file__ = getattr(module.__dfir_target__, "__file__", None)
        for submodule in SUBMODULES.get(module.__name__, ()):
            importlib.import_module(submodule)


class GeAliasFinder(importlib.abc.MetaPathFinder):
    """Finds GE's module names (`target_of`) and loads them as `AliasModule`s."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target=None):
        resolved = target_of(fullname)
        if resolved is None:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(resolved), origin=resolved,
                                              is_package=True)
        spec.submodule_search_locations = []  # GE's names are packages: their submodules come from here
        return spec


_FINDER = GeAliasFinder()


def install() -> None:
    """Resolve GE's names in this process and in the processes it starts (first on sys.meta_path)."""
    os.environ[ENV_VAR] = "1"
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def install_if_requested() -> None:
    """`install()` when `DFIR_GE_IMPORTS=1` (a process started under `dfir exec`)."""
    if os.environ.get(ENV_VAR) == "1":
        install()


def installed() -> bool:
    """Whether GE's names resolve in this process."""
    return _FINDER in sys.meta_path
