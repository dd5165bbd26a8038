"""`@npu_model`: a torch module (a `torch.nn.Module` class with `@method` entry points) or a torch
function as a FlowGraph node, as GE's torch plugin makes it.

    @npu_model(optimize_level=2, input_descs=[TensorDesc(DT_FLOAT, [1, 3, 256, 256])])
    class Normalize(nn.Module):
        @method()
        def forward(self, image):
            return (image - 0.5) / 0.5

    node = Normalize.fnode()          # a FlowNode; node.forward(x) or node(x) wires it

- `optimize_level=1` (the default) and a function: the node is a Python UDF that runs the torch
  code eagerly on the host (dfir has no NPU: torch's CPU backend). Its inputs reach the code as
  torch tensors (a tensor message becomes a `torch.Tensor`), and it must return torch tensors
  (a tuple of `num_returns` of them for several outputs), which travel on as they are: `fetch`
  gives `torch.Tensor`s. The code runs under `torch.no_grad()`.
- `optimize_level=2` (a class only): the module is exported when `fnode()` builds the node
  (`torch.onnx`, with the shapes and dtypes of `input_descs`, -1 marking a dynamic dimension)
  and the node runs the exported GE graph (`GraphProcessPoint`) on its device's backend. The
  class must have one `@method`, the exported entry point.

Options: `num_returns`, `resources`, `env_hook_func`, `visible_device_enable` (as `@pyflow`),
and for a class `optimize_level` (1 or 2) and `input_descs` (a list of `TensorDesc`). GE refuses
anything else with a TypeError, and so does dfir. Every node gets attribute `_npu_sched_model`
= 1, as in GE.
"""
from __future__ import annotations

import functools
import inspect
import os
import tempfile
import warnings
from typing import Any

import numpy as np

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.core.tensor import TensorDesc
from dfir.frontend.dataflow.graph import FlowNode
from dfir.frontend.dataflow.process_points import Framework, GraphProcessPoint
from dfir.frontend.dataflow.pyflow import pyflow
from dfir.frontend.ge.graph import Graph

NPU_MODEL_OPTIONS = ("num_returns", "resources", "env_hook_func", "visible_device_enable")
NPU_CLASS_OPTIONS = NPU_MODEL_OPTIONS + ("optimize_level", "input_descs")
OPTIMIZE_LEVELS = (1, 2)
NPU_SCHED_ATTR = "_npu_sched_model"


class NpuModelError(GeError, TypeError):
    """A misused `@npu_model`: a GeError that is also the TypeError GE raises."""


def _torch():
    try:
        import torch  # lazy: torch is optional (the bench extra) and takes seconds to import
    except ImportError as exc:
        raise NpuModelError("@npu_model needs torch: pip install torch (or dfir's bench extra)") from exc
    return torch


def _as_torch(value: Any, where: str, position: int):
    """An input as the torch code gets it: a torch tensor as it is, an array (a tensor message)
    copied into one (the channel's array may be read-only)."""
    torch = _torch()
    if isinstance(value, torch.Tensor):
        return value
    try:
        return torch.from_numpy(np.array(value))
    except Exception as exc:  # noqa: BLE001 - any unconvertible value is the same user error
        raise GeError(f"{where}: input {position} is a {type(value).__name__}, which is not a "
                      f"tensor: {exc}") from exc


def _checked_outputs(result: Any, where: str):
    """`result` when it is what GE accepts: a torch tensor, or a tuple of them (one per output;
    the UDF runtime checks their count against `num_returns`)."""
    torch = _torch()
    for index, output in enumerate(result if isinstance(result, tuple) else (result,)):
        if not isinstance(output, torch.Tensor):
            raise GeError(f"{where}: output {index} must be a torch tensor, got {type(output).__name__}")
    return result


def _torch_call(fn, where: str, skip_self: bool):
    """`fn` as the UDF calls it: inputs as torch tensors, outputs checked, without autograd."""

    @functools.wraps(fn)
    def call(*args):
        head, inputs = (args[:1], args[1:]) if skip_self else ((), args)
        with _torch().no_grad():
            result = fn(*head, *(_as_torch(x, where, i) for i, x in enumerate(inputs)))
        return _checked_outputs(result, where)
    return call


def _check_options(options: dict, allowed: tuple[str, ...], where: str) -> None:
    for key in options:
        if key not in allowed:
            raise NpuModelError(f"{where}: option '{key}' is not supported; supported: {list(allowed)}")


def _optimize_level(options: dict, where: str) -> int:
    level = options.get("optimize_level", 1)
    if not isinstance(level, int) or isinstance(level, bool):
        raise NpuModelError(f"{where}: optimize_level must be an int, got {type(level).__name__}")
    if level not in OPTIMIZE_LEVELS:
        raise NpuModelError(f"{where}: optimize_level {level} is not supported; supported: "
                            f"{list(OPTIMIZE_LEVELS)}")
    return level


def _input_descs(options: dict, where: str) -> list[TensorDesc]:
    descs = options.get("input_descs")
    if descs is None:
        raise NpuModelError(f"{where}: optimize_level is 2, but input_descs is None; give the "
                            "shape and dtype of each input, e.g. input_descs=[TensorDesc(DT_FLOAT, "
                            "[1, 3, 224, 224])]")
    if not isinstance(descs, (list, tuple)) or not all(isinstance(d, TensorDesc) for d in descs):
        raise NpuModelError(f"{where}: input_descs must be a list of TensorDesc, got {descs!r}")
    return list(descs)


class NpuFunction:
    """What `@npu_model` makes of a function: `.fnode()` gives a FlowNode running it."""

    def __init__(self, function, options: dict):
        where = f"@npu_model {function.__qualname__}"
        _check_options(options, NPU_MODEL_OPTIONS, where)
        self._pp = pyflow(**options)(_torch_call(function, where, False))
        functools.update_wrapper(self, function)

    def __call__(self, *args, **kwargs):
        raise GeError(f"{self.__name__} is an @npu_model function: build a node with {self.__name__}.fnode()")

    def fnode(self, *args, name: str | None = None, **kwargs) -> FlowNode:
        """A node running the function, named `name` (default `<function>_fnode`)."""
        node = self._pp.fnode(*args, name=name, **kwargs)
        node.set_attr(NPU_SCHED_ATTR, 1)
        return node


def _entry_methods(cls) -> list[str]:
    return [name for name in dir(cls)
            if not name.startswith("__") and getattr(getattr(cls, name), "__df_method__", False)]


def _eager_class(cls, where: str):
    """A subclass of `cls` whose `@method`s take and give torch tensors (`_torch_call`)."""
    namespace = {name: _torch_call(getattr(cls, name), f"{where}.{name}", True) for name in _entry_methods(cls)}
    namespace.update(__module__=cls.__module__, __qualname__=cls.__qualname__, __doc__=cls.__doc__)
    return type(cls.__name__, (cls,), namespace)


class NpuClass:
    """What `@npu_model` makes of a class: `.fnode(*args, **kwargs)` builds the module with those
    arguments and gives its FlowNode (see the module docstring for the two optimize levels)."""

    def __init__(self, cls, options: dict):
        self._where = f"@npu_model {cls.__qualname__}"
        _check_options(options, NPU_CLASS_OPTIONS, self._where)
        self._cls = cls
        self._level = _optimize_level(options, self._where)
        self._options = {k: v for k, v in options.items() if k not in ("optimize_level", "input_descs")}
        if not _entry_methods(cls):
            raise GeError(f"{self._where}: the class has no @method")
        if self._level == 2:
            self._descs = _input_descs(options, self._where)
            self._method = self._single_method()
        else:
            self._flow_class = pyflow(**self._options)(_eager_class(cls, self._where))
        functools.update_wrapper(self, cls, updated=())

    def __call__(self, *args, **kwargs):
        raise GeError(f"{self._cls.__name__} is an @npu_model class: build a node with "
                      f"{self._cls.__name__}.fnode(...)")

    def _single_method(self) -> str:
        methods = _entry_methods(self._cls)
        if len(methods) != 1:
            raise NpuModelError(f"{self._where}: optimize_level 2 exports one entry point, but the "
                                f"class has {len(methods)} @methods: {methods}")
        return methods[0]

    def fnode(self, *args, **kwargs) -> FlowNode:
        node = self._exported_node(args, kwargs) if self._level == 2 else self._flow_class.fnode(*args, **kwargs)
        node.set_attr(NPU_SCHED_ATTR, 1)
        return node

    def _exported_node(self, args: tuple, kwargs: dict) -> FlowNode:
        name = self._cls.__name__
        graph = export_graph(self._cls(*args, **kwargs), self._method, self._descs, name, self._where)
        if len(graph.inputs) != len(self._descs):
            raise GeError(f"{self._where}: input_descs describes {len(self._descs)} inputs but the "
                          f"exported graph takes {len(graph.inputs)} (torch drops inputs the "
                          f"{self._method} method does not use)")
        outputs = graph.num_outputs
        expected = self._options.get("num_returns")
        if expected is not None and expected != outputs:
            raise GeError(f"{self._where}: num_returns is {expected} but the exported graph has "
                          f"{outputs} outputs")
        pp = GraphProcessPoint(Framework.ONNX, graph, name=name)
        node = pp.fnode(len(self._descs), outputs, name=f"{name}_fnode")
        entry = lambda *inputs: node(*inputs)  # noqa: E731 - node.<method>(x) is node(x)
        setattr(node, self._method, entry)
        return node


def export_graph(module, method: str, descs: list[TensorDesc], name: str, where: str) -> Graph:
    """The GE graph of `module.<method>` on inputs described by `descs` (torch.onnx, then
    `Graph.from_onnx`); a GeError naming the cause when torch cannot export it."""
    torch = _torch()
    entry = _entry_module(module, method, torch)
    inputs, dynamic = [], {}
    for index, desc in enumerate(descs):
        shape = [1 if d < 0 else d for d in desc.shape]
        inputs.append(torch.from_numpy(_ones(shape, desc.dtype, where)))
        axes = [axis for axis, d in enumerate(desc.shape) if d < 0]
        if axes:
            dynamic[f"input_{index}"] = axes
    with tempfile.TemporaryDirectory(prefix="dfir-npu-model-") as folder:
        path = os.path.join(folder, f"{name}.onnx")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the exporter's notes on its own future, not the user's
                torch.onnx.export(entry.eval(), tuple(inputs), path, dynamo=False,
                                  input_names=[f"input_{i}" for i in range(len(inputs))],
                                  dynamic_axes=dynamic or None)
        except Exception as exc:  # noqa: BLE001 - whatever torch raises, the user needs its text
            raise GeError(f"{where}: torch.onnx could not export {name}.{method} for inputs {descs}: "
                          f"{type(exc).__name__}: {exc}") from exc
        try:
            return Graph.from_onnx(path, name)
        except GeError as exc:
            raise GeError(f"{where}: the graph torch.onnx exported for {name}.{method} cannot be "
                          f"imported: {exc.error_message} (a method that leaves torch, e.g. through "
                          "numpy, exports as constants)") from exc


def _ones(shape: list[int], dtype: dt.DType, where: str):
    try:
        return np.ones(shape, dtype=dt.to_numpy(dtype))
    except GeError as exc:
        raise GeError(f"{where}: input_descs dtype {dtype} cannot be an input of a torch module: "
                      f"{exc}") from exc


def _entry_module(module, method: str, torch):
    """`module` as a module whose forward is its `method` (what torch.onnx exports)."""

    class Entry(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = module

        def forward(self, *inputs):
            return getattr(self.inner, method)(*inputs)
    return Entry()


def _make(target, options: dict):
    _torch()  # as GE: a missing torch fails at the decorator, not at the first feed
    if inspect.isfunction(target):
        return NpuFunction(target, options)
    if inspect.isclass(target):
        return NpuClass(target, options)
    raise NpuModelError(f"@npu_model applies to a function or a class, got {type(target).__name__}")


def npu_model(*args, **kwargs):
    """`@npu_model`, `@npu_model()` or `@npu_model(optimize_level=2, input_descs=[...])`."""
    if len(args) == 1 and not kwargs and callable(args[0]):
        return _make(args[0], {})
    if args:
        raise NpuModelError("@npu_model takes keyword options only, e.g. @npu_model(optimize_level=1)")
    return functools.partial(_make, options=kwargs)
